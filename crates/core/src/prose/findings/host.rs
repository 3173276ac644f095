//! Host-side findings (io, cpu, memory) in words.

use super::Words;
use crate::analysis::advisor::rules::host::Claim;
use crate::format::human;

/// The words of a host-side finding.
pub(super) fn words(c: &Claim) -> Words {
    match c {
        Claim::DataLoader {
            share,
            longest_ns,
            longest_at,
            stalls,
            ranks,
        } => data_loader(share, longest_ns, longest_at, stalls, ranks),
        Claim::GraphCapture {
            share,
            captures,
            launches,
            replays,
        } => graph_capture(share, captures, launches, replays),
        Claim::LaunchBound { share, uses_graphs } => launch_bound(share, uses_graphs),
        Claim::TinyKernels {
            share,
            launched,
            uses_graphs,
        } => tiny_kernels(share, launched, uses_graphs),
        Claim::SyncPoints {
            count,
            call,
            caused_by,
            idle_ns,
        } => sync_points(count, call, caused_by, idle_ns),
        Claim::Gc {
            pauses,
            longest_ns,
            rank,
            step,
        } => gc(pauses, longest_ns, rank, step),
        Claim::HostGap {
            gaps,
            longest_ns,
            rank,
            step,
            within,
            waited_ns,
            others,
        } => host_gap(gaps, longest_ns, rank, step, within, waited_ns, others),
        Claim::FreeTime {
            share,
            host_recorded: true,
        } => free_time_recorded(share),
        Claim::FreeTime {
            share,
            host_recorded: false,
        } => free_time_unrecorded(share),
        Claim::CriticalPathHost {
            share,
            window,
            led_by,
        } => critical_path_host(share, window, led_by),
        Claim::AllocatorChurn {
            calls,
            total_ns,
            every_call,
            ranks,
        } => allocator_churn(calls, total_ns, every_call, ranks),
        Claim::OpDispatch {
            calls,
            total_ns,
            idle_ns,
        } => op_dispatch(calls, total_ns, idle_ns),
        Claim::PageableCopies { copies, total_ns } => pageable_copies(copies, total_ns),
        Claim::EnvSettings { settings } => env_words(settings),
    }
}

/// Environment settings in words: each variable with its value, or `unset`.
fn env_words(settings: &[(String, Option<String>)]) -> Words {
    let list = settings
        .iter()
        .map(|(var, value)| match value {
            Some(v) => format!("{var}={v}"),
            None => format!("{var} unset"),
        })
        .collect::<Vec<_>>()
        .join(", ");
    Words {
        title: format!(
            "{} environment setting(s) Ascend's tuning guide advises against: {list}",
            settings.len()
        ),
        cause: "recorded in the profile (ENV_VARIABLES): small operator caches repeat host-side operator selection every step, a fragmenting allocator wastes device memory, and debugging switches serialize the work",
        suggestions: &[
            "ACLNN_CACHE_LIMIT=100000 and HOST_CACHE_CAPACITY=20 (operator caches on the host)",
            "PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
            "unset ASCEND_LAUNCH_BLOCKING (a debugging switch) and HCCL_ALGO unless tuned; ASCEND_GLOBAL_LOG_LEVEL=3; set HCCL_RDMA_TC/SL only to match the RoCE network's QoS",
        ],
    }
}

/// Where the data loader stalls, in its real scope: one step, some, or every step of every
/// rank; a single-rank job is not worded in ranks.
fn loader_title(
    share: f64,
    longest: crate::time::Ns,
    at: Option<crate::analysis::host::RankStep>,
    (hit, of): (u64, u64),
    (ranks_hit, ranks): (u32, u32),
) -> String {
    let idle = format!(
        "the device idles {:.1}% of the steps while it loads",
        share * 100.0
    );
    let rank = |r| {
        if ranks > 1 {
            format!("rank {r} ")
        } else {
            String::new()
        }
    };
    match at {
        Some(a) if hit <= 1 => format!(
            "the data loader stalled {}for {} in step {}; {idle}",
            rank(a.rank),
            human(longest),
            a.step
        ),
        _ if hit >= of && of > 0 => format!(
            "the data loader stalls every step{}: {idle} (longest {})",
            if ranks > 1 { " of every rank" } else { "" },
            human(longest)
        ),
        _ => format!(
            "the data loader stalls {hit} of {of} {}: {idle} (longest {}{})",
            if ranks > 1 {
                format!("rank-steps on {ranks_hit} of {ranks} ranks")
            } else {
                "steps".to_string()
            },
            human(longest),
            at.map_or(String::new(), |a| format!(
                ", {}step {}",
                rank(a.rank),
                a.step
            ))
        ),
    }
}

/// The words of [`Claim::GraphCapture`].
fn graph_capture(share: &f64, captures: &u64, launches: &u64, replays: &u64) -> Words {
    Words {
        title: format!(
            "graph capture, not steady state: {captures} capture(s) record {launches} kernel launches while the device idles {:.1}% of the step{}",
            share * 100.0,
            if *replays > 0 {
                format!(" ({replays} replays in the trace)")
            } else {
                String::new()
            }
        ),
        cause: "launches inside a stream capture are recorded into a graph, not run: the device idles by design, once per captured shape",
        suggestions: &[
            "profile steady-state steps that replay the graphs (start the profiler schedule after capture/warm-up)",
            "if capture recurs every step, the graph cache misses: keep batch sizes and shapes within the captured set",
        ],
    }
}

/// The words of [`Claim::LaunchBound`].
fn launch_bound(share: &f64, uses_graphs: &bool) -> Words {
    Words {
        title: format!(
            "host-bound {:.1}% of the step: the device idles while the host dispatches work",
            share * 100.0
        ),
        cause: "Python and framework dispatch, plus kernel launches, are slower than the kernels they issue",
        suggestions: if *uses_graphs {
            &[
                "the trace already uses graphs: move the eager work between replays into the graphs, or torch.compile it",
                "fuse small ops; larger batches per launch",
            ]
        } else {
            &[
                "capture the step in a graph (CUDA graphs; on Ascend torch_npu's NPUGraph or torchair), or torch.compile (mode=\"reduce-overhead\")",
                "fuse small ops; larger batches per launch",
            ]
        },
    }
}

/// The words of [`Claim::TinyKernels`].
fn tiny_kernels(share: &f64, launched: &u64, uses_graphs: &bool) -> Words {
    Words {
        title: format!(
            "{:.0}% of {launched} kernels run shorter than their launch call",
            share * 100.0
        ),
        cause: "many tiny kernels: launch overhead, not the device, sets the pace",
        suggestions: if *uses_graphs {
            &["fuse elementwise chains (torch.compile, fused optimizers, fused norms)"]
        } else {
            &[
                "fuse elementwise chains (torch.compile, fused optimizers, fused norms)",
                "CUDA graphs for the static part of the step",
            ]
        },
    }
}

/// The words of [`Claim::SyncPoints`].
fn sync_points(count: &u64, call: &str, caused_by: &str, idle_ns: &crate::time::Ns) -> Words {
    Words {
        title: format!(
            "{count} × {call} {}: the device then idles {} until the host catches up",
            if caused_by == "-" {
                "outside any framework operator".to_string()
            } else {
                format!("from {caused_by}")
            },
            human(*idle_ns)
        ),
        cause: "the host waits for the device (.item(), .cpu(), printing a tensor), so it cannot queue the next work ahead",
        suggestions: &[
            "remove .item()/.cpu()/print of device tensors from the step; log asynchronously every N steps",
            "use non_blocking copies and check results after the next step is queued",
        ],
    }
}

/// The words of [`Claim::Gc`].
fn gc(
    pauses: &u64,
    longest_ns: &crate::time::Ns,
    rank: &crate::model::RankId,
    step: &crate::model::StepNo,
) -> Words {
    Words {
        title: format!(
            "{pauses} garbage-collection pause(s), longest {} (rank {rank}, step {step})",
            human(*longest_ns)
        ),
        cause: "Python's garbage collector stops the training loop",
        suggestions: &[
            "gc.freeze() after model setup; raise thresholds (gc.set_threshold) or gc.disable() and collect every N steps",
            "avoid creating many short-lived Python objects per step",
        ],
    }
}

/// The words of [`Claim::HostGap`].
fn host_gap(
    gaps: &u64,
    longest_ns: &crate::time::Ns,
    rank: &crate::model::RankId,
    step: &crate::model::StepNo,
    within: &Option<String>,
    waited_ns: &crate::time::Ns,
    others: &u32,
) -> Words {
    Words {
        title: format!(
            "rank {rank} stalled {} in step {step}: nothing ran on it{}{}{}",
            human(*longest_ns),
            within
                .as_deref()
                .map_or(String::new(), |w| format!(", its main thread inside {w}")),
            if *waited_ns > 0 {
                format!(
                    "; the others waited {} each for it",
                    human(*waited_ns / crate::time::Ns::from((*others).max(1)))
                )
            } else {
                String::new()
            },
            if *gaps > 1 {
                format!(" ({gaps} such gaps)")
            } else {
                String::new()
            }
        ),
        cause: "≥ 200 ms with no operator, runtime call or device work recorded: a GC pause, Python work between ops, a lock or I/O wait the profiler does not see, or the process descheduled",
        suggestions: &[
            "profile with with_stack=True (or py-spy) to see the Python at that point",
            "if it is GC: gc.freeze() after setup, gc.disable() and collect every N steps",
            "check CPU oversubscription: ranks or data workers sharing cores, pinned threads (OMP_NUM_THREADS)",
        ],
    }
}

/// The words of [`Claim::FreeTime`] where the host threads are recorded.
fn free_time_recorded(share: &f64) -> Words {
    Words {
        title: format!(
            "{:.1}% of the step is free: neither the device nor the launching threads work",
            share * 100.0
        ),
        cause: "time outside recorded work: Python between ops, other threads, I/O, or waits the profiler does not see",
        suggestions: &[
            "profile with with_stack=True to see the Python between ops",
            "move logging, checkpointing and metrics out of the step or make them asynchronous",
        ],
    }
}

/// The words of [`Claim::FreeTime`] from a device-only input.
fn free_time_unrecorded(share: &f64) -> Words {
    Words {
        title: format!(
            "{:.1}% of the step the device is idle, and no host thread is recorded to say why",
            share * 100.0
        ),
        cause: "the input holds the device's tasks only (an Ascend kernel table without trace_view.json): the idle time may be host dispatch, data loading or waits, which it cannot tell apart",
        suggestions: &[
            "keep trace_view.json (or export the db) and load it, to see what the host did meanwhile",
            "profile with the CPU activity on (torch_npu: ProfilerActivity.CPU)",
        ],
    }
}

/// The words of [`Claim::CriticalPathHost`].
fn critical_path_host(
    share: &f64,
    window: &crate::analysis::critical_path::Window,
    led_by: &Option<String>,
) -> Words {
    Words {
        title: format!(
            "{:.0}% of the critical path of {window} is host work, led by {}",
            share * 100.0,
            led_by.as_deref().unwrap_or("-")
        ),
        cause: "the step waits on host operators: the device is starved, not slow",
        suggestions: &[
            "speed up or remove the host operators named (allocation: warm the caching allocator; data: prefetch)",
            "overlap host work with device work (asynchronous copies, CUDA graphs)",
        ],
    }
}

/// The words of [`Claim::AllocatorChurn`].
fn allocator_churn(
    calls: &u64,
    total_ns: &crate::time::Ns,
    every_call: &bool,
    ranks: &usize,
) -> Words {
    Words {
        title: format!(
            "{calls} device malloc/free calls{} take {}{} {}",
            if *ranks > 1 {
                format!(" on {ranks} ranks")
            } else {
                String::new()
            },
            human(*total_ns),
            if *ranks > 1 { " summed" } else { "" },
            if *every_call {
                "(the trace has one step or none: every call counted)"
            } else {
                "after the first step"
            }
        ),
        cause: "the caching allocator keeps returning and requesting memory: fragmentation or varying shapes",
        suggestions: &[
            "PYTORCH_CUDA_ALLOC_CONF (Ascend: PYTORCH_NPU_ALLOC_CONF)=expandable_segments:True; avoid torch.cuda/npu.empty_cache() in the loop",
            "keep shapes static (pad to buckets) so blocks are reused",
        ],
    }
}

/// The words of [`Claim::OpDispatch`].
fn op_dispatch(calls: &u64, total_ns: &crate::time::Ns, idle_ns: &crate::time::Ns) -> Words {
    Words {
        title: format!(
            "{calls} operator call(s) compiled at run time (aclopCompileAndExecute) take {} on the host; the device idles {} inside them",
            human(*total_ns),
            human(*idle_ns)
        ),
        cause: "these operators go through Ascend's single-operator mode, which compiles or looks up each one as it is called, instead of a prebuilt aclnn kernel",
        suggestions: &[
            "torch_npu.npu.set_compile_mode(jit_compile=False) and torch_npu.npu.config.allow_internal_format = False",
            "update torch_npu and CANN: newer versions run more operators through aclnn",
        ],
    }
}

/// The words of [`Claim::DataLoader`].
fn data_loader(
    share: &f64,
    longest_ns: &crate::time::Ns,
    longest_at: &Option<crate::analysis::host::RankStep>,
    stalls: &(u64, u64),
    ranks: &(u32, u32),
) -> Words {
    Words {
        title: loader_title(*share, *longest_ns, *longest_at, *stalls, *ranks),
        cause: "batches are not ready when the step starts: loading/augmentation is slower than compute",
        suggestions: &[
            "DataLoader(num_workers=N, pin_memory=True, prefetch_factor=2+, persistent_workers=True)",
            "move decoding/augmentation to the GPU or preprocess offline; faster storage or caching",
        ],
    }
}

/// The words of [`Claim::PageableCopies`].
fn pageable_copies(copies: &u64, total_ns: &crate::time::Ns) -> Words {
    Words {
        title: format!(
            "{copies} host→device copies from pageable memory ({})",
            human(*total_ns)
        ),
        cause: "pageable copies are staged through a bounce buffer and block the host",
        suggestions: &[
            "pin host memory (DataLoader pin_memory=True, tensor.pin_memory()) and copy with non_blocking=True",
        ],
    }
}
