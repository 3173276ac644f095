//! The canonical problems the demo job can carry (`--scenario NAME`): each scenario is the
//! default job with its knobs turned, so users learn what each problem looks like and tests
//! can assert that the advisor's first finding names it.

use crate::time::Ns;

/// One well-known problem (or a healthy job that looks like one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Scenario {
    /// A straggler rank (25% slower kernels) and one data-loader pause in one step.
    #[default]
    Default,
    /// One rank's kernels run 25% slower in every step; the others wait for it.
    Straggler,
    /// Every rank's kernels run 60% longer in one step (a batch of long sequences).
    SlowStep,
    /// Two pipeline stages, the second with 1.3× the layers; the first waits in receives.
    StageImbalance,
    /// Gradients all-reduced as 200 small collectives after backward, none overlapped.
    SmallMessages,
    /// Every rank waits ~25 ms for its data loader in every step.
    Dataloader,
    /// A small micro-batch: kernels shorter than their launches, the device waits on Python.
    LaunchBound,
    /// The caching allocator bypassed: a synchronizing cudaFree + cudaMalloc per layer.
    AllocatorChurn,
    /// The forward pass re-captured into a CUDA graph in every step, then replayed.
    GraphCapture,
    /// Ranks' clocks up to ±80 ms apart, nothing else wrong.
    SkewedClocksButHealthy,
    /// Gradient buckets all-reduced on two streams at once, behind a straggler: the waits
    /// of overlapping collectives must count once.
    OverlappingBuckets,
    /// Two balanced pipeline stages, and one slow worker (rank 3's kernels 25% slower) in
    /// the first: a straggler inside a pipeline, not a stage imbalance.
    PipelineStraggler,
}

impl Scenario {
    /// Every scenario, the default first.
    pub const ALL: [Scenario; 12] = [
        Scenario::Default,
        Scenario::Straggler,
        Scenario::SlowStep,
        Scenario::StageImbalance,
        Scenario::SmallMessages,
        Scenario::Dataloader,
        Scenario::LaunchBound,
        Scenario::AllocatorChurn,
        Scenario::GraphCapture,
        Scenario::SkewedClocksButHealthy,
        Scenario::OverlappingBuckets,
        Scenario::PipelineStraggler,
    ];

    /// The name `--scenario` takes.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Default => "default",
            Scenario::Straggler => "straggler",
            Scenario::SlowStep => "slow-step",
            Scenario::StageImbalance => "stage-imbalance",
            Scenario::SmallMessages => "small-messages",
            Scenario::Dataloader => "dataloader",
            Scenario::LaunchBound => "launch-bound",
            Scenario::AllocatorChurn => "allocator-churn",
            Scenario::GraphCapture => "graph-capture",
            Scenario::SkewedClocksButHealthy => "skewed-clocks-but-healthy",
            Scenario::OverlappingBuckets => "overlapping-buckets",
            Scenario::PipelineStraggler => "pipeline-straggler",
        }
    }

    /// The scenario called `name`.
    pub fn parse(name: &str) -> Option<Scenario> {
        Scenario::ALL.into_iter().find(|s| s.name() == name)
    }

    /// What the job carries, in one line (`--help`, the demo command's message).
    pub fn about(self) -> &'static str {
        match self {
            Scenario::Default => {
                "a straggler (rank 3, 25% slower kernels) and a 300 ms data-loader pause (rank 5, step 13)"
            }
            Scenario::Straggler => "rank 3's kernels run 25% slower in every step; the others wait",
            Scenario::PipelineStraggler => {
                "two balanced pipeline stages; rank 3 of the first runs its kernels 25% slower"
            }
            Scenario::SlowStep => "every rank's kernels run 60% longer in step 13 (long sequences)",
            Scenario::StageImbalance => {
                "two pipeline stages, the second with 1.3x the layers; the first waits in receives"
            }
            Scenario::SmallMessages => {
                "gradients all-reduced as 200 small collectives after backward, none overlapped"
            }
            Scenario::Dataloader => "every rank waits ~25 ms for its data loader in every step",
            Scenario::LaunchBound => {
                "a small micro-batch: kernels shorter than their launches, the device waits on the host"
            }
            Scenario::AllocatorChurn => {
                "caching allocator bypassed: a synchronizing cudaFree and a cudaMalloc per layer"
            }
            Scenario::GraphCapture => {
                "the forward pass re-captured into a CUDA graph in every step, then replayed"
            }
            Scenario::SkewedClocksButHealthy => {
                "ranks' clocks up to 80 ms apart, nothing else wrong"
            }
            Scenario::OverlappingBuckets => {
                "a straggler, with gradient buckets all-reduced on two streams at once"
            }
        }
    }

    /// The advisor rule whose finding should come first; `None` for a healthy job.
    pub fn expected_rule(self) -> Option<&'static str> {
        match self {
            Scenario::Default | Scenario::Dataloader => Some("dataloader"),
            Scenario::Straggler | Scenario::OverlappingBuckets | Scenario::PipelineStraggler => {
                Some("straggler")
            }
            Scenario::SlowStep => Some("slow_step"),
            Scenario::StageImbalance => Some("stage_imbalance"),
            Scenario::SmallMessages => Some("small_messages"),
            Scenario::LaunchBound => Some("launch_bound"),
            Scenario::AllocatorChurn => Some("allocator_churn"),
            Scenario::GraphCapture => Some("graph_capture"),
            Scenario::SkewedClocksButHealthy => None,
        }
    }

    /// The knobs of the same job without its problem (same seed, model and everything
    /// else): the run a fix of the expected finding should predict. `None` for a healthy
    /// job, and for launch-bound, whose problem is its workload (a smaller micro-batch has
    /// no launch-free twin to simulate).
    pub(super) fn clean_knobs(self) -> Option<Knobs> {
        let k = self.knobs();
        Some(match self {
            Scenario::Default => Knobs { pause: None, ..k },
            Scenario::Straggler | Scenario::OverlappingBuckets | Scenario::PipelineStraggler => {
                Knobs {
                    straggler: None,
                    ..k
                }
            }
            Scenario::SlowStep => Knobs {
                slow_step_pct: 0,
                ..k
            },
            // The stages as even as whole layers allow (11 | 12 of 23).
            Scenario::StageImbalance => Knobs {
                first_stage_layers: 11,
                ..k
            },
            Scenario::SmallMessages => Knobs { split: 1, ..k },
            Scenario::Dataloader => Knobs {
                loader_ns: Knobs::default().loader_ns,
                ..k
            },
            Scenario::AllocatorChurn => Knobs {
                allocator_churn: false,
                ..k
            },
            Scenario::GraphCapture => Knobs {
                capture_forward: false,
                ..k
            },
            Scenario::LaunchBound | Scenario::SkewedClocksButHealthy => return None,
        })
    }

    /// The knobs of the simulation that make this problem.
    pub(super) fn knobs(self) -> Knobs {
        let base = Knobs::default();
        // Every scenario but the default and the two straggler ones carries its problem alone.
        let healthy = Knobs {
            straggler: None,
            pause: None,
            ..base
        };
        match self {
            Scenario::Default => base,
            Scenario::Straggler => Knobs {
                pause: None,
                ..base
            },
            Scenario::SlowStep => Knobs {
                slow_step_pct: 60,
                ..healthy
            },
            Scenario::StageImbalance => Knobs {
                pipeline: true,
                ..healthy
            },
            Scenario::SmallMessages => Knobs {
                split: 50,
                allreduce_after_backward: true,
                collective_latency_ns: 25_000,
                ..healthy
            },
            Scenario::Dataloader => Knobs {
                loader_ns: 25_000_000,
                ..healthy
            },
            Scenario::LaunchBound => Knobs {
                kernel_pct: 3,
                ..healthy
            },
            Scenario::AllocatorChurn => Knobs {
                allocator_churn: true,
                ..healthy
            },
            Scenario::GraphCapture => Knobs {
                capture_forward: true,
                ..healthy
            },
            Scenario::SkewedClocksButHealthy => Knobs {
                clock_skew_ms: 80,
                ..healthy
            },
            Scenario::OverlappingBuckets => Knobs {
                pause: None,
                split: 3,
                comm_streams: 2,
                ..base
            },
            // The stages as even as whole layers allow (11 | 12 of 23).
            Scenario::PipelineStraggler => Knobs {
                pause: None,
                pipeline: true,
                first_stage_layers: 11,
                ..base
            },
        }
    }
}

/// What the simulation does differently in a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Knobs {
    /// This rank's kernels take this many percent longer, in every step.
    pub straggler: Option<(u32, i64)>,
    /// The data loader of this rank pauses this long in the step at this offset.
    pub pause: Option<(u32, u32, Ns)>,
    /// Every rank's kernels take this many percent longer in the slow step.
    pub slow_step_pct: i64,
    /// Kernel times in percent of the H100 times of `layer.rs`.
    pub kernel_pct: i64,
    /// Data loading per step on every rank.
    pub loader_ns: Ns,
    /// Each bucket all-reduced as this many collectives (times the spec's split).
    pub split: u32,
    /// Launch every all-reduce after backward instead of as each bucket is ready.
    pub allreduce_after_backward: bool,
    /// Fixed cost of one collective on top of its transfer.
    pub collective_latency_ns: Ns,
    /// Communication streams (process groups) buckets are spread over.
    pub comm_streams: u32,
    /// A synchronizing cudaFree and a cudaMalloc before each layer's work.
    pub allocator_churn: bool,
    /// The forward pass captured into a CUDA graph in every step, then replayed.
    pub capture_forward: bool,
    /// A Python GC pause of this rank, in the step at this offset, this long (mid-forward).
    /// Whether a `gc` annotation records it (else nothing is recorded while it lasts).
    pub gc_pause: Option<(u32, u32, Ns, bool)>,
    /// The host time of one operator's dispatch (Python and framework), outside a capture.
    pub dispatch_ns: Ns,
    /// A `.item()` (copy back and wait for the device) after each of the first this many
    /// operators of every forward layer: a value read in the loop (a logged loss, a norm).
    pub syncs_per_layer: u32,
    /// The point-to-point link between this first-stage rank and its partner moves data
    /// this many percent slower (a link fallen back from NVLink to PCIe or sockets).
    pub slow_link: Option<(u32, i64)>,
    /// Ranks' clocks are at most this many ms apart from true time.
    pub clock_skew_ms: i64,
    /// Two pipeline stages exchanging activations and gradients instead of data parallel.
    pub pipeline: bool,
    /// Layers (per unit of scale) of the first pipeline stage, of 23.
    pub first_stage_layers: u32,
}

impl Default for Knobs {
    fn default() -> Self {
        Knobs {
            straggler: Some((3, super::STRAGGLER_SLOWDOWN_PCT)),
            pause: Some((5, 3, super::PAUSE_NS)),
            slow_step_pct: 0,
            kernel_pct: 100,
            loader_ns: 1_500_000,
            split: 1,
            allreduce_after_backward: false,
            collective_latency_ns: 0,
            comm_streams: 1,
            allocator_churn: false,
            capture_forward: false,
            gc_pause: None,
            dispatch_ns: 24_000,
            syncs_per_layer: 0,
            slow_link: None,
            clock_skew_ms: 6,
            pipeline: false,
            first_stage_layers: 10,
        }
    }
}
