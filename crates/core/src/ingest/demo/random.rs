//! Random demo jobs (`stepscope demo --random SEED`, `tests/scale/random_jobs.rs`): a layout (data
//! parallel, or two pipeline stages each data parallel), 4 to 64 ranks, 0–2 causes drawn
//! from the catalogue the simulation can make, each with a random magnitude and position,
//! random clock skew — and the same job's twin without its causes. Jobs nobody wrote a
//! scenario for, to check that the advisor names what was injected.

use super::scenario::Knobs;
use crate::time::Ns;

/// A cause the generator injects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// This rank's kernels run this many percent slower in every step.
    Straggler {
        /// The rank.
        rank: u32,
        /// Extra kernel time, percent.
        pct: i64,
    },
    /// This rank's data loader pauses this long in the step at this offset.
    LoaderStall {
        /// The rank.
        rank: u32,
        /// The step, from the first profiled one.
        step: u32,
        /// The pause.
        ns: Ns,
    },
    /// Every rank's kernels run this many percent longer in one step.
    SlowStep {
        /// Extra kernel time, percent.
        pct: i64,
    },
    /// Every rank waits this long for its data loader in every step.
    SlowLoader {
        /// Loading time per step.
        ns: Ns,
    },
    /// Gradients all-reduced as this many small collectives per bucket after backward.
    SmallBuckets {
        /// Collectives per bucket.
        split: u32,
    },
    /// A synchronizing cudaFree and a cudaMalloc before each layer.
    AllocatorChurn,
    /// The forward pass re-captured into a CUDA graph in every step.
    GraphCapture,
    /// The first pipeline stage holds this many of the 23 layers (11 is as even as whole
    /// layers allow).
    StageImbalance {
        /// Layers of the first stage.
        first_layers: u32,
    },
    /// Every operator's dispatch takes this long on the host (a slow Python loop, a debug
    /// mode, a CPU-starved process): launches come late and the device waits.
    SlowDispatch {
        /// Host time per operator.
        ns: Ns,
    },
    /// A Python GC pause on this rank, mid-forward in the step at this offset: recorded as
    /// a `gc` annotation (a callback in `gc.callbacks`), or not recorded at all — what a
    /// trace usually shows: a stretch in which nothing ran.
    GcPause {
        /// The rank.
        rank: u32,
        /// The step, from the first profiled one.
        step: u32,
        /// The pause.
        ns: Ns,
        /// Whether the trace records it (a `gc` annotation).
        recorded: bool,
    },
    /// A `.item()` after each of the first this many operators of every forward layer, on
    /// every rank: the host waits for the device to drain, which then idles while the next
    /// operator is dispatched.
    SyncInLoop {
        /// Synchronizations per layer (1–3).
        per_layer: u32,
    },
    /// The point-to-point link between this first-stage rank and its partner in the
    /// second stage moves activations and gradients this many percent slower (NVLink
    /// fallen back to PCIe or sockets: a degraded or misconfigured link).
    SlowLink {
        /// The pair's first-stage rank.
        pair: u32,
        /// Extra transfer time, percent.
        pct: i64,
    },
}

impl Cause {
    /// The advisor rule whose finding names this cause.
    pub fn rule(self) -> &'static str {
        match self {
            Cause::Straggler { .. } => "straggler",
            Cause::LoaderStall { .. } | Cause::SlowLoader { .. } => "dataloader",
            Cause::SlowStep { .. } => "slow_step",
            Cause::SmallBuckets { .. } => "small_messages",
            Cause::AllocatorChurn => "allocator_churn",
            Cause::GraphCapture => "graph_capture",
            Cause::StageImbalance { .. } => "stage_imbalance",
            Cause::GcPause { recorded: true, .. } => "gc",
            Cause::GcPause { .. } => "host_gap",
            Cause::SlowDispatch { .. } => "launch_bound",
            Cause::SyncInLoop { .. } => "sync_points",
            Cause::SlowLink { .. } => "slow_link",
        }
    }

    /// Whether its rule's fix gives the twin: false for slow dispatch, whose fix (a captured
    /// graph: no dispatch at all) goes further than the twin's ordinary dispatch, so that
    /// the twin bounds the predicted step from above only.
    pub fn twin_is_fix(self) -> bool {
        !matches!(self, Cause::SlowDispatch { .. })
    }

    /// Whether it is a problem (an anomaly against the job's own baseline) rather than an
    /// opportunity, as the advisor's rule table classes its rule.
    pub fn is_problem(self) -> bool {
        !matches!(
            self,
            Cause::SmallBuckets { .. } | Cause::SlowDispatch { .. }
        )
    }
}

/// A random job: its shape, its clock skew and its causes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RandomJob {
    /// The seed it was drawn from.
    pub seed: u64,
    /// World size.
    pub ranks: u32,
    /// Profiled steps.
    pub steps: u32,
    /// Two pipeline stages (else data parallel).
    pub pipeline: bool,
    /// Ranks' clocks at most this many ms apart.
    pub skew_ms: i64,
    /// The injected causes (none: a healthy job).
    pub causes: Vec<Cause>,
}

/// SplitMix64: a small, well-mixed generator, stable across platforms and versions.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
}

impl RandomJob {
    /// The job of `seed`.
    pub fn new(seed: u64) -> RandomJob {
        let mut g = Rng(seed);
        let pipeline = g.range(0, 3) == 0;
        let ranks = [4, 8, 16, 32, 64][g.range(0, 4) as usize];
        let steps = g.range(4, 6) as u32;
        let skew_ms = g.range(0, 80);
        let wanted = g.range(0, 2);
        let mut causes: Vec<Cause> = Vec::new();
        // Draw kinds until `wanted` distinct ones fit together (a stall and a slow step
        // would make one step slow twice over).
        for _ in 0..32 {
            if causes.len() as i64 >= wanted {
                break;
            }
            let c = draw(&mut g, ranks, steps, pipeline);
            let same = |a: &Cause| std::mem::discriminant(a) == std::mem::discriminant(&c);
            // One slow step per job: a stall, a GC pause and slower kernels each make one.
            let one_step = |x: &Cause| {
                matches!(
                    x,
                    Cause::LoaderStall { .. } | Cause::SlowStep { .. } | Cause::GcPause { .. }
                )
            };
            // Slower kernels behind a host that cannot keep up cost nothing: no cause.
            let hidden = |a: &Cause, b: &Cause| {
                matches!(a, Cause::SlowDispatch { .. })
                    && matches!(b, Cause::Straggler { .. } | Cause::SlowStep { .. })
            };
            let clash = causes.iter().any(|a| {
                same(a) || (one_step(a) && one_step(&c)) || hidden(a, &c) || hidden(&c, a)
            });
            if !clash {
                causes.push(c);
            }
        }
        RandomJob {
            seed,
            ranks,
            steps,
            pipeline,
            skew_ms,
            causes,
        }
    }

    /// What the job is, in one line: layout, size, skew and causes (`clean`: none).
    pub fn describe(&self, clean: bool) -> String {
        let causes: Vec<String> = if clean {
            Vec::new()
        } else {
            self.causes.iter().map(|c| format!("{c:?}")).collect()
        };
        format!(
            "{} × {} steps, {}, clocks ±{} ms; causes: {}",
            self.ranks,
            self.steps,
            if self.pipeline {
                "two pipeline stages"
            } else {
                "data parallel"
            },
            self.skew_ms,
            if causes.is_empty() {
                "none".to_string()
            } else {
                causes.join(", ")
            }
        )
    }

    /// The simulation's knobs: with the causes, or (`clean`) its twin without them.
    pub(super) fn knobs(&self, clean: bool) -> Knobs {
        let mut k = Knobs {
            straggler: None,
            pause: None,
            pipeline: self.pipeline,
            first_stage_layers: 11,
            clock_skew_ms: self.skew_ms,
            ..Knobs::default()
        };
        if clean {
            return k;
        }
        for &c in &self.causes {
            match c {
                Cause::Straggler { rank, pct } => k.straggler = Some((rank, pct)),
                Cause::LoaderStall { rank, step, ns } => k.pause = Some((rank, step, ns)),
                Cause::SlowStep { pct } => k.slow_step_pct = pct,
                Cause::SlowLoader { ns } => k.loader_ns = ns,
                Cause::SmallBuckets { split } => {
                    k.split = split;
                    k.allreduce_after_backward = true;
                    k.collective_latency_ns = 25_000;
                }
                Cause::AllocatorChurn => k.allocator_churn = true,
                Cause::GraphCapture => k.capture_forward = true,
                Cause::StageImbalance { first_layers } => k.first_stage_layers = first_layers,
                Cause::GcPause {
                    rank,
                    step,
                    ns,
                    recorded,
                } => k.gc_pause = Some((rank, step, ns, recorded)),
                Cause::SlowDispatch { ns } => k.dispatch_ns = ns,
                Cause::SyncInLoop { per_layer } => k.syncs_per_layer = per_layer,
                Cause::SlowLink { pair, pct } => k.slow_link = Some((pair, pct)),
            }
        }
        k
    }
}

/// One cause of the catalogue, with its magnitude and position.
fn draw(g: &mut Rng, ranks: u32, steps: u32, pipeline: bool) -> Cause {
    let rank = g.range(0, i64::from(ranks) - 1) as u32;
    // The catalogue: stage imbalance needs stages; the simulation's pipeline step has no
    // gradient buckets, allocator churn or graph capture. A sync in the loop costs a data
    // parallel step of the simulation about 0.4 ms for each sync per layer (23 drains and
    // dispatches of ~17 µs), under the healthy job's own 1.5 ms loader wait: drawn where
    // micro-batches repeat it (pipeline), so that it is a cause worth finding.
    // A slow link is told from its peers' links: drawn where there are three pairs or more.
    let kinds: &[u8] = if pipeline && ranks >= 6 {
        &[0, 1, 2, 3, 7, 8, 9, 10, 11]
    } else if pipeline {
        &[0, 1, 2, 3, 7, 8, 9, 10]
    } else {
        &[0, 1, 2, 3, 4, 5, 6, 8, 9]
    };
    match kinds[g.range(0, kinds.len() as i64 - 1) as usize] {
        0 => Cause::Straggler {
            rank,
            pct: g.range(15, 50),
        },
        1 => Cause::LoaderStall {
            rank,
            step: g.range(1, i64::from(steps) - 1) as u32,
            ns: g.range(100, 400) * 1_000_000,
        },
        2 => Cause::SlowStep {
            pct: g.range(30, 100),
        },
        3 => Cause::SlowLoader {
            ns: g.range(10, 40) * 1_000_000,
        },
        4 => Cause::SmallBuckets {
            split: g.range(20, 60) as u32,
        },
        5 => Cause::AllocatorChurn,
        6 => Cause::GraphCapture,
        7 => Cause::StageImbalance {
            first_layers: g.range(6, 9) as u32,
        },
        // Unrecorded, the pause is a stretch in which nothing ran only once the work queued
        // before it has drained: at least 250 ms, over the 200 ms a host gap needs.
        8 => {
            let step = g.range(1, i64::from(steps) - 1) as u32;
            let recorded = g.range(0, 1) == 0;
            Cause::GcPause {
                rank,
                step,
                ns: g.range(if recorded { 100 } else { 250 }, 400) * 1_000_000,
                recorded,
            }
        }
        10 => Cause::SyncInLoop {
            per_layer: g.range(2, 3) as u32,
        },
        // 66 µs over NVLink becomes 1.3–4 ms: 20–60× slower, PCIe to TCP sockets.
        11 => Cause::SlowLink {
            pair: g.range(0, i64::from(ranks / 2) - 1) as u32,
            pct: g.range(19, 59) * 100,
        },
        // Slower than the kernels it launches: a pipeline's micro-batch kernels are a
        // quarter of a data-parallel step's.
        _ => Cause::SlowDispatch {
            ns: if pipeline {
                g.range(150, 400)
            } else {
                g.range(400, 900)
            } * 1_000,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_is_one_job_and_its_twin_has_no_cause() {
        assert_eq!(RandomJob::new(7), RandomJob::new(7));
        let jobs: Vec<RandomJob> = (0..200).map(RandomJob::new).collect();
        // Every count of causes, both layouts, every size occur.
        for n in 0..=2 {
            assert!(jobs.iter().any(|j| j.causes.len() == n), "{n} causes");
        }
        assert!(jobs.iter().any(|j| j.pipeline) && jobs.iter().any(|j| !j.pipeline));
        let link = |j: &RandomJob| j.causes.iter().any(|c| matches!(c, Cause::SlowLink { .. }));
        assert!(jobs.iter().any(link));
        for j in &jobs {
            assert!(j.ranks % 2 == 0 && (4..=64).contains(&j.ranks));
            let clean = j.knobs(true);
            assert_eq!(
                (clean.straggler, clean.pause, clean.slow_step_pct),
                (None, None, 0)
            );
            assert_eq!(clean.first_stage_layers, 11);
            for c in &j.causes {
                let dp_only = matches!(
                    c,
                    Cause::SmallBuckets { .. } | Cause::AllocatorChurn | Cause::GraphCapture
                );
                assert!(!j.pipeline || !dp_only);
                assert!(j.pipeline || !matches!(c, Cause::StageImbalance { .. }));
                // A slow link is told from three pairs or more.
                assert!(j.pipeline && j.ranks >= 8 || !matches!(c, Cause::SlowLink { .. }));
            }
        }
    }
}
