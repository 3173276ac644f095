//! Host-side findings (io, cpu, memory) in words.

use super::Words;
use crate::analysis::advisor::rules::host::Claim;
use crate::format::human;

/// The words of a host-side finding.
pub fn words(c: &Claim) -> Words {
    match c {
        Claim::DataLoader { share, longest_ns } => Words {
            title: format!(
                "the device idles {:.1}% of the step while the data loader runs (longest {})",
                share * 100.0,
                human(*longest_ns)
            ),
            cause: "batches are not ready when the step starts: loading/augmentation is slower than compute",
            suggestions: &[
                "DataLoader(num_workers=N, pin_memory=True, prefetch_factor=2+, persistent_workers=True)",
                "move decoding/augmentation to the GPU or preprocess offline; faster storage or caching",
            ],
        },
        Claim::LaunchBound { share } => Words {
            title: format!(
                "host-bound {:.1}% of the step: the device idles while the host dispatches work",
                share * 100.0
            ),
            cause: "Python and framework dispatch, plus kernel launches, are slower than the kernels they issue",
            suggestions: &[
                "capture the step in CUDA graphs, or torch.compile (mode=\"reduce-overhead\")",
                "fuse small ops; larger batches per launch",
            ],
        },
        Claim::TinyKernels { share, launched } => Words {
            title: format!(
                "{:.0}% of {launched} kernels run shorter than their launch call",
                share * 100.0
            ),
            cause: "many tiny kernels: launch overhead, not the device, sets the pace",
            suggestions: &[
                "fuse elementwise chains (torch.compile, fused optimizers, fused norms)",
                "CUDA graphs for the static part of the step",
            ],
        },
        Claim::SyncPoints {
            count,
            call,
            caused_by,
            idle_ns,
        } => Words {
            title: format!(
                "{count} × {call} from {caused_by}: the device then idles {} until the host catches up",
                human(*idle_ns)
            ),
            cause: "the host waits for the device (.item(), .cpu(), printing a tensor), so it cannot queue the next work ahead",
            suggestions: &[
                "remove .item()/.cpu()/print of device tensors from the step; log asynchronously every N steps",
                "use non_blocking copies and check results after the next step is queued",
            ],
        },
        Claim::Gc {
            pauses,
            recorded,
            longest_ns,
            rank,
            step,
        } => Words {
            title: format!(
                "{pauses} {} pause(s), longest {} (rank {rank}, step {step})",
                if *recorded {
                    "garbage-collection"
                } else {
                    "likely garbage-collection"
                },
                human(*longest_ns)
            ),
            cause: if *recorded {
                "Python's garbage collector stops the training loop"
            } else {
                "nothing runs for ≥ 200 ms inside a step — the signature of a GC pause (or another stop the profiler does not record)"
            },
            suggestions: &[
                "gc.freeze() after model setup; raise thresholds (gc.set_threshold) or gc.disable() and collect every N steps",
                "avoid creating many short-lived Python objects per step",
            ],
        },
        Claim::FreeTime { share } => Words {
            title: format!(
                "{:.1}% of the step is free: neither the device nor the launching threads work",
                share * 100.0
            ),
            cause: "time outside recorded work: Python between ops, other threads, I/O, or waits the profiler does not see",
            suggestions: &[
                "profile with with_stack=True to see the Python between ops",
                "move logging, checkpointing and metrics out of the step or make them asynchronous",
            ],
        },
        Claim::CriticalPathHost {
            share,
            window,
            led_by,
        } => Words {
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
        },
        Claim::AllocatorChurn { calls, total_ns } => Words {
            title: format!(
                "{calls} cudaMalloc/cudaFree calls ({}) after the first step",
                human(*total_ns)
            ),
            cause: "the caching allocator keeps returning and requesting memory: fragmentation or varying shapes",
            suggestions: &[
                "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True; avoid torch.cuda.empty_cache() in the loop",
                "keep shapes static (pad to buckets) so blocks are reused",
            ],
        },
        Claim::PageableCopies { copies, total_ns } => Words {
            title: format!(
                "{copies} host→device copies from pageable memory ({})",
                human(*total_ns)
            ),
            cause: "pageable copies are staged through a bounce buffer and block the host",
            suggestions: &[
                "pin host memory (DataLoader pin_memory=True, tensor.pin_memory()) and copy with non_blocking=True",
            ],
        },
    }
}
