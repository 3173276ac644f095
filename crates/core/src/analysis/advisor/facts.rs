//! What the rules read: borrowed results of the other analyses. One constructor, used by
//! the analysis and by the rules' tests alike.

use crate::analysis::affinity::AffinityMatch;
use crate::analysis::breakdown::Breakdown;
use crate::analysis::clocks::{ClockDrop, Clocks};
use crate::analysis::cluster::{Imbalance, SlowStep, Stage, Straggler};
use crate::analysis::comm::link_matrix::LinkStat;
use crate::analysis::comm::slow_links::SlowLink;
use crate::analysis::comm::stalls::Stall;
use crate::analysis::comm::stats::TypeStats;
use crate::analysis::comm::unaligned::Unaligned;
use crate::analysis::critical_path::CriticalPath;
use crate::analysis::host::Host;
use crate::analysis::layout::health::GroupHealth;
use crate::analysis::roofline::Roofline;
use crate::analysis::step_times::StepTime;
use crate::analysis::tasks::Tasks;
use crate::model::RankId;
use crate::time::Ns;

/// The analysis results the rules read.
#[derive(Debug, Default, Clone, Copy)]
pub struct Facts<'a> {
    /// Ranks in scope (those with breakdown rows).
    pub ranks: u32,
    /// Per-step cluster times in scope.
    pub steps: &'a [StepTime],
    /// Breakdown rows in scope.
    pub rows: &'a [Breakdown],
    /// Communication per type and group.
    pub comm: &'a [TypeStats],
    /// Ranks with outlier transit.
    pub slow_links: &'a [SlowLink],
    /// Transfers far slower than their type's best, every loaded rank present.
    pub stalls: &'a [Stall],
    /// HCCL's per-link traffic, slow links flagged.
    pub links: &'a [LinkStat],
    /// HCCL transfers not a multiple of 512 B, measured (`None` before the analysis runs).
    pub unaligned: Option<&'a Unaligned>,
    /// Slow steps.
    pub slow_steps: &'a [SlowStep],
    /// Ranks the others waited for, per communication domain.
    pub stragglers: &'a [Straggler],
    /// Part imbalance.
    pub imbalance: &'a [Imbalance],
    /// Pipeline stages.
    pub stages: Option<&'a [Stage]>,
    /// Host analyses.
    pub host: Option<&'a Host>,
    /// The roofline: kernel time by class, operators on it.
    pub roofline: Option<&'a Roofline>,
    /// Critical path.
    pub critical: Option<&'a CriticalPath>,
    /// The accelerator's kernel table.
    pub tasks: Option<&'a Tasks>,
    /// Fused APIs the job could use (Ascend).
    pub affinity: &'a [AffinityMatch],
    /// Steps run at a dropped device clock.
    pub clock_drops: &'a [ClockDrop],
    /// The job's top device clock, MHz.
    pub top_mhz: Option<u32>,
    /// Each communication group's members and health.
    pub groups: &'a [GroupHealth],
}

impl<'a> Facts<'a> {
    /// Facts over these step times and breakdown rows (the ranks are the rows' ranks), with
    /// no other results yet.
    pub fn new(steps: &'a [StepTime], rows: &'a [Breakdown]) -> Facts<'a> {
        let mut ranks: Vec<RankId> = rows.iter().map(|b| b.rank).collect();
        ranks.sort_unstable();
        ranks.dedup();
        Facts {
            ranks: ranks.len() as u32,
            steps,
            rows,
            ..Facts::default()
        }
    }

    /// With the communication results.
    pub fn comm(mut self, types: &'a [TypeStats], slow_links: &'a [SlowLink]) -> Facts<'a> {
        self.comm = types;
        self.slow_links = slow_links;
        self
    }

    /// With the device clock drops.
    pub fn clocks(mut self, c: &'a Clocks) -> Facts<'a> {
        self.clock_drops = &c.drops;
        self.top_mhz = c.top_mhz;
        self
    }

    /// With the fused APIs the job could use.
    pub fn affinity(mut self, a: &'a [AffinityMatch]) -> Facts<'a> {
        self.affinity = a;
        self
    }

    /// With the unaligned HCCL transfers.
    pub fn unaligned(mut self, u: &'a Unaligned) -> Facts<'a> {
        self.unaligned = Some(u);
        self
    }

    /// With each group's health (its members, its dimension).
    pub fn groups(mut self, groups: &'a [GroupHealth]) -> Facts<'a> {
        self.groups = groups;
        self
    }

    /// True when `group`'s members are in more than one pipeline stage: its waits are the
    /// pipeline's (its drain, a heavier stage), not a late rank's.
    pub fn across_stages(&self, group: &str) -> bool {
        let (Some(stages), Some(g)) = (self.stages, self.groups.iter().find(|g| g.group == group))
        else {
            return false;
        };
        use crate::analysis::cluster::{spans_stages, stage_map};
        spans_stages(&stage_map(stages), &g.ranks)
    }

    /// With the stalled transfers.
    pub fn stalls(mut self, stalls: &'a [Stall]) -> Facts<'a> {
        self.stalls = stalls;
        self
    }

    /// With HCCL's per-link traffic.
    pub fn links(mut self, links: &'a [LinkStat]) -> Facts<'a> {
        self.links = links;
        self
    }

    /// With the cluster results.
    pub fn cluster(
        mut self,
        slow_steps: &'a [SlowStep],
        stragglers: &'a [Straggler],
        imbalance: &'a [Imbalance],
        stages: Option<&'a [Stage]>,
    ) -> Facts<'a> {
        self.slow_steps = slow_steps;
        self.stragglers = stragglers;
        self.imbalance = imbalance;
        self.stages = stages;
        self
    }

    /// With the host, roofline and critical-path results.
    pub fn causes(
        mut self,
        host: &'a Host,
        roofline: &'a Roofline,
        critical: Option<&'a CriticalPath>,
    ) -> Facts<'a> {
        self.host = Some(host);
        self.roofline = Some(roofline);
        self.critical = critical;
        self
    }

    /// With the kernel table's facts.
    pub fn tasks(mut self, tasks: &'a Tasks) -> Facts<'a> {
        self.tasks = Some(tasks);
        self
    }

    /// Σ cluster step time (max rank span) over the steps: what impacts are relative to.
    pub fn step_ns(&self) -> Ns {
        self.steps.iter().map(|s| s.max_ns).sum()
    }
}
