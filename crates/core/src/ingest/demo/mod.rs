//! The embedded demo cluster, an input source like a trace directory: a deterministic data-parallel transformer job on H100s, written as
//! real Kineto JSON (the same bytes `stepscope demo --out` saves), so the demo exercises the
//! real loader. Defaults: 8 ranks × 6 profiled steps (`ProfilerStep#10..#15`), a straggler
//! rank whose kernels run 25% slower, and one slow step in which one rank's data loader pauses
//! for 300 ms while every other rank waits for it in the first gradient all-reduce. The other
//! [`Scenario`]s turn the simulation's knobs to make one canonical problem each.
//!
//! The timeline is simulated, not drawn: kernels queue on their stream behind earlier work and
//! their launch, each all-reduce ends together on every rank (the last arriver's start plus
//! the transfer), and each step ends with a `.item()` that synchronizes the host with the
//! device. Ranks get small clock offsets, as ranks on different hosts do.

mod json;
mod layer;
mod nsys;
mod pipeline;
mod random;
mod scenario;
mod schedule;
mod sim;
mod step;

use super::source::{self, Source};
use crate::time::Ns;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Size and shape of the generated job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DemoSpec {
    /// Number of ranks (world size).
    pub ranks: u32,
    /// Profiled steps per rank.
    pub steps: u32,
    /// Multiplies transformer layers (and so events per step) for benchmarks.
    pub scale: u32,
    /// Each gradient bucket is all-reduced as this many smaller collectives (more
    /// collectives per step without bigger traces, for scale benchmarks).
    pub split: u32,
    /// The problem the job carries.
    pub scenario: Scenario,
    /// The scenario's clean twin: the same job without its problem (`demo --clean`).
    pub clean: bool,
    /// A random job of this seed instead of the scenario ([`RandomJob`]; its size is
    /// [`DemoSpec::random`]'s).
    pub random: Option<u64>,
}

impl Default for DemoSpec {
    fn default() -> Self {
        DemoSpec {
            ranks: 8,
            steps: 6,
            scale: 1,
            split: 1,
            scenario: Scenario::Default,
            clean: false,
            random: None,
        }
    }
}

/// The number of the first profiled step (profiler schedules skip warm-up steps).
pub const FIRST_STEP: u32 = 10;
/// Extra kernel time of the straggler rank, in percent.
pub(crate) const STRAGGLER_SLOWDOWN_PCT: i64 = 25;
/// The data-loader pause of the slow step's culprit.
pub const PAUSE_NS: Ns = 300_000_000;
const LAYERS_PER_SCALE: u32 = 12;
/// Transformer layers whose gradients share one all-reduce bucket.
pub(super) const LAYERS_PER_BUCKET: u32 = 3;
/// Elements (bf16) of a gradient bucket: 48 MiB.
pub(super) const BUCKET_ELEMS: u64 = 25_165_824;
/// Clock origin of the traces (µs, arbitrary as in newer Kineto) and the epoch base.
pub(super) const ORIGIN_NS: Ns = 4_458_676_000_000_000;
pub(super) const BASE_TIME_NS: Ns = 1_795_300_000_000_000_000;

impl DemoSpec {
    /// The random job of `seed` (its size, steps and causes), or its twin (`clean`).
    pub fn random(seed: u64, clean: bool) -> DemoSpec {
        let j = RandomJob::new(seed);
        DemoSpec {
            ranks: j.ranks,
            steps: j.steps,
            clean,
            random: Some(seed),
            ..DemoSpec::default()
        }
    }

    /// Why this spec cannot be simulated, if it cannot (a pipeline needs pairs of ranks).
    pub fn check(&self) -> Result<(), String> {
        if self.clean && self.random.is_none() && self.scenario.clean_knobs().is_none() {
            return Err(format!(
                "scenario {} has no clean twin to generate",
                self.scenario.name()
            ));
        }
        if self.knobs().pipeline && (self.ranks < 2 || self.ranks % 2 == 1) {
            return Err(format!(
                "scenario {} pairs ranks into two pipeline stages: --ranks must be even",
                self.scenario.name()
            ));
        }
        Ok(())
    }
    /// What the generated job carries, for messages: the scenario, its straggler, slow
    /// step and culprit where it has them.
    pub fn summary(&self) -> String {
        if let Some(seed) = self.random {
            let j = RandomJob::new(seed);
            return format!(
                "random job {seed}{}: {}",
                if self.clean { " (twin)" } else { "" },
                j.describe(self.clean)
            );
        }
        let mut parts = Vec::new();
        if let Some(r) = self.straggler() {
            parts.push(format!("straggler rank {r}"));
        }
        match (self.slow_step(), self.culprit()) {
            (Some(s), Some(r)) => parts.push(format!("slow step {s} caused by rank {r}")),
            (Some(s), None) => parts.push(format!("slow step {s}")),
            _ => {}
        }
        if parts.is_empty() {
            parts.push(self.scenario.about().to_string());
        }
        format!("scenario {}: {}", self.scenario.name(), parts.join(", "))
    }
    fn knobs(&self) -> scenario::Knobs {
        if let Some(seed) = self.random {
            return RandomJob::new(seed).knobs(self.clean);
        }
        if self.clean {
            if let Some(k) = self.scenario.clean_knobs() {
                return k;
            }
        }
        self.scenario.knobs()
    }
    /// The rank whose kernels are slower in every step, if the scenario has one.
    pub fn straggler(&self) -> Option<u32> {
        self.knobs().straggler.map(|(r, _)| r.min(self.ranks - 1))
    }
    /// The rank that pauses in the slow step, if the scenario has one.
    pub fn culprit(&self) -> Option<u32> {
        self.knobs().pause.map(|(r, _, _)| r.min(self.ranks - 1))
    }
    /// The step number made slow (by a pause or by slower kernels), if any.
    pub fn slow_step(&self) -> Option<u32> {
        let k = self.knobs();
        let offset = k
            .pause
            .map(|(_, s, _)| s)
            .or((k.slow_step_pct > 0).then_some(SLOW_STEP_OFFSET))?;
        Some(FIRST_STEP + offset.min(self.steps - 1))
    }
    pub(super) fn layers(&self) -> u32 {
        LAYERS_PER_SCALE * self.scale.max(1)
    }
    /// Collectives each gradient bucket is all-reduced as.
    fn parts(&self) -> u32 {
        self.split.max(1) * self.knobs().split
    }
    /// All-reduces per step (none in a pipeline).
    pub(super) fn buckets(&self) -> u32 {
        if self.knobs().pipeline {
            return 0;
        }
        self.layers().div_ceil(LAYERS_PER_BUCKET) * self.parts()
    }
    /// Elements of one all-reduce.
    pub(super) fn bucket_elems(&self) -> u64 {
        BUCKET_ELEMS / u64::from(self.parts())
    }
    /// Clock offset of a rank's host, within ± the scenario's skew (6 ms by default): its
    /// trace reads true time + this.
    pub fn clock_offset(&self, rank: u32) -> Ns {
        let skew = self.knobs().clock_skew_ms;
        (i64::from(rank * 7919 % 13) - 6) * skew * 1_000_000 / 6 + i64::from(rank) * 1_337
    }
}

/// The step a scenario slows (as an offset from [`FIRST_STEP`]).
const SLOW_STEP_OFFSET: u32 = 3;

pub use random::{Cause, RandomJob};
pub use scenario::Scenario;
pub use schedule::BUSBW_GBPS;

/// A demo job ready to generate: its spec and the cluster schedule (simulated once, shared by
/// every rank's input).
#[derive(Debug)]
pub struct DemoJob {
    spec: DemoSpec,
    schedule: schedule::Schedule,
}

impl DemoJob {
    /// Simulates the cluster of `spec`.
    pub fn new(spec: DemoSpec) -> Arc<DemoJob> {
        Arc::new(DemoJob {
            spec,
            schedule: schedule::schedule(spec),
        })
    }

    /// The spec.
    pub fn spec(&self) -> DemoSpec {
        self.spec
    }

    /// One rank's trace text.
    pub fn rank_text(&self, rank: u32) -> String {
        json::rank_json(self.spec, rank, &self.schedule)
    }

    /// One rank's trace as a source labelled `demo:rank-N`.
    pub fn source(&self, rank: u32) -> Source {
        source::from_memory(
            format!("demo:rank-{rank}"),
            self.rank_text(rank).into_bytes(),
        )
        .expect("generated JSON is not gzip")
    }
}

/// Writes the demo job as `rank-N.pt.trace.json.gz` (or `.json` when `gzip` is false).
pub fn write(spec: DemoSpec, dir: &Path, gzip: bool) -> std::io::Result<Vec<PathBuf>> {
    use rayon::prelude::*;
    std::fs::create_dir_all(dir)?;
    let job = DemoJob::new(spec);
    (0..spec.ranks)
        .into_par_iter()
        .map(|r| {
            let text = job.rank_text(r);
            let name = if gzip {
                format!("rank-{r}.pt.trace.json.gz")
            } else {
                format!("rank-{r}.pt.trace.json")
            };
            let path = dir.join(name);
            crate::output::write(&path, &[], |w| {
                if gzip {
                    let mut enc = flate2::write::GzEncoder::new(w, flate2::Compression::fast());
                    enc.write_all(text.as_bytes())?;
                    enc.finish().map(|_| ())
                } else {
                    w.write_all(text.as_bytes())
                }
            })
            .map_err(|e| std::io::Error::other(e.to_string()))?;
            Ok(path)
        })
        .collect()
}

/// Writes the demo job as Nsight Systems SQLite exports, one per rank (`report_N.sqlite`,
/// `nsys profile -o report_%q{RANK}`'s names).
pub fn write_nsys(spec: DemoSpec, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    use rayon::prelude::*;
    std::fs::create_dir_all(dir)?;
    let job = DemoJob::new(spec);
    (0..spec.ranks)
        .into_par_iter()
        .map(|r| {
            let path = dir.join(format!("report_{r}.sqlite"));
            crate::output::write_at(&path, &[], |at| {
                nsys::write_rank(spec, r, &job.schedule, at).map_err(std::io::Error::other)
            })
            .map_err(|e| std::io::Error::other(e.to_string()))?;
            Ok(path)
        })
        .collect()
}
