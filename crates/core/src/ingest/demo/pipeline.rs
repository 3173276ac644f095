//! One pipeline-parallel step of one rank (the stage-imbalance scenario): ranks pair into
//! two stages, the first holding 10 of [`LAYERS`] layers and the second 13
//! (1.3× the work). Each step runs [`MICRO`] micro-batches, GPipe style: the first stage runs
//! every forward and sends each activation, then receives each gradient and runs its
//! backward; the second receives an activation, runs forward and backward, and sends the
//! gradient back. Sends complete without waiting for their receiver (an eager protocol); a
//! receive ends when its data has arrived.

use super::DemoSpec;
use super::sim::{RankSim, StepPlan, Tid};
use crate::time::Ns;

/// Micro-batches per step.
const MICRO: u32 = 4;
/// Layers of both stages, per unit of scale: 10 | 13 (the second 1.3× the first), or as
/// the scenario's knobs split them.
const LAYERS: u32 = 23;
/// Elements (bf16) of one micro-batch's activation or gradient: [1, 2048, 2048].
const ACT_ELEMS: u64 = 2048 * 2048;
/// One activation transfer over NVLink (8 MiB at ~150 GB/s, plus latency).
const P2P_NS: Ns = 66_000;
const SEND_RECV: &str = "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)";

/// The first stage's ranks (the lower half).
pub(super) fn first_stage(spec: DemoSpec) -> std::ops::Range<u32> {
    0..spec.ranks / 2
}

/// The rank in the other stage that `rank` exchanges activations and gradients with.
pub(super) fn partner(spec: DemoSpec, rank: u32) -> u32 {
    let half = spec.ranks / 2;
    if rank < half {
        rank + half
    } else {
        rank - half
    }
}

/// The point-to-point process groups of a pipeline job (none otherwise): (name, ranks) of
/// each pair, lower rank first.
pub(super) fn groups(spec: DemoSpec) -> Vec<(String, [u32; 2])> {
    if !spec.knobs().pipeline {
        return Vec::new();
    }
    first_stage(spec)
        .map(|r| (format!("pp{r}"), [r, partner(spec, r)]))
        .collect()
}

/// The stage of a rank (0: the first).
pub(super) fn stage_of(spec: DemoSpec, rank: u32) -> usize {
    usize::from(!first_stage(spec).contains(&rank))
}

/// The data-parallel process groups of a pipeline job: each stage's ranks, whose gradients
/// are all-reduced at the end of the step.
pub(super) fn stage_groups(spec: DemoSpec) -> Vec<(String, Vec<u32>)> {
    if !spec.knobs().pipeline {
        return Vec::new();
    }
    let half = spec.ranks / 2;
    vec![
        ("dp0".to_string(), (0..half).collect()),
        ("dp1".to_string(), (half..spec.ranks).collect()),
    ]
}

impl RankSim<'_> {
    /// A pipeline step from host start `t0`; returns the host end and when each of this
    /// rank's sends ended, then when its stage's gradient all-reduce was ready to start.
    pub(super) fn pipeline_step(&mut self, t0: Ns, plan: &StepPlan) -> (Ns, Vec<Ns>) {
        let arrivals = plan
            .arrivals
            .get(self.rank as usize)
            .cloned()
            .unwrap_or_default();
        let mut sent = Vec::new();
        let h = self.inputs(t0);
        let scale = self.spec.scale.max(1);
        let h = if self.rank < self.spec.ranks / 2 {
            self.first_stage(
                h,
                0..self.knobs.first_stage_layers * scale,
                &arrivals,
                &mut sent,
            )
        } else {
            let layers = self.knobs.first_stage_layers * scale..LAYERS * scale;
            self.second_stage(h, layers, &arrivals, &mut sent)
        };
        let stage = stage_of(self.spec, self.rank);
        let (h, ready) = self.stage_allreduce(h, plan.allreduce_ends.get(stage).copied());
        sent.push(ready);
        (self.optimizer_and_sync(h + 20_000), sent)
    }

    /// The stage's gradient all-reduce over its data-parallel group, launched from the main
    /// thread at `h` once the backward is done; it ends at `end` (its last member's start
    /// plus the transfer), or is only timed when `end` is not known yet. Returns the host
    /// time after the launch and when the kernel was ready to start.
    fn stage_allreduce(&mut self, h: Ns, end: Option<Ns>) -> (Ns, Ns) {
        self.ext += 1;
        self.corr += 1;
        let stage = stage_of(self.spec, self.rank);
        let (name, ranks) = &stage_groups(self.spec)[stage];
        let list: Vec<String> = ranks.iter().map(u32::to_string).collect();
        let elems = self.spec.bucket_elems();
        let meta = format!(
            r#", "Collective name": "allreduce", "In msg nelems": {elems}, "Out msg nelems": {elems}, "Group size": {}, "dtype": "BFloat16", "Process Group Name": "{name}", "Process Group Description": "dp", "Process Group Ranks": "[{}]""#,
            ranks.len(),
            list.join(", ")
        );
        let op_args = format!(r#"{{"External id": {}, "Ev Idx": 0{meta}}}"#, self.ext);
        self.sink.x(
            "cpu_op",
            "record_param_comms",
            Tid::Main,
            h,
            45_000,
            &op_args,
        );
        let launch = h + 30_000;
        self.runtime(Tid::Main, "cudaLaunchKernel", 211, launch, 7_000);
        let ready = (launch + 10_000)
            .max(self.compute_free)
            .max(self.comm_free[0]);
        if let Some(end) = end {
            let end = end.max(ready);
            self.comm_free[0] = end;
            self.compute_free = self.compute_free.max(end);
            self.kernel(super::layer::NCCL_AR, Tid::Comm, ready, end - ready, &meta);
            self.sink
                .flow(self.corr, Tid::Main, launch, Tid::Comm, ready);
        }
        (h + 45_000, ready)
    }

    /// Every forward with its send, then every receive with its backward.
    fn first_stage(
        &mut self,
        mut h: Ns,
        layers: std::ops::Range<u32>,
        arrivals: &[Ns],
        sent: &mut Vec<Ns>,
    ) -> Ns {
        for _ in 0..MICRO {
            h = self.forward(h, layers.clone(), MICRO);
            h = self.p2p(Tid::Main, h, None, sent);
        }
        let mut a = h + 30_000;
        for mb in 0..MICRO as usize {
            a = self.p2p(Tid::Autograd, a, Some(arrivals.get(mb).copied()), sent);
            a = self.backward_layers(&layers, a);
        }
        a
    }

    /// The backward of one micro-batch through `layers`, last first, from host time `a`.
    fn backward_layers(&mut self, layers: &std::ops::Range<u32>, mut a: Ns) -> Ns {
        for l in layers.clone().rev() {
            a = self.backward_layer(l, a, MICRO);
        }
        a
    }

    /// For each micro-batch: receive, forward, backward, send the gradient back.
    fn second_stage(
        &mut self,
        mut h: Ns,
        layers: std::ops::Range<u32>,
        arrivals: &[Ns],
        sent: &mut Vec<Ns>,
    ) -> Ns {
        for mb in 0..MICRO as usize {
            h = self.p2p(Tid::Main, h, Some(arrivals.get(mb).copied()), sent);
            h = self.forward(h, layers.clone(), MICRO);
            let a = self.backward_layers(&layers, h + 30_000);
            h = self.p2p(Tid::Autograd, a, None, sent) + 5_000;
        }
        h
    }

    /// One transfer over the link of the pair whose first-stage rank is `lo`: slower by the
    /// knobs' percentage on a slow link.
    fn p2p_ns(&self, lo: u32) -> Ns {
        match self.knobs.slow_link {
            Some((pair, pct)) if pair == lo => P2P_NS + P2P_NS * pct / 100,
            _ => P2P_NS,
        }
    }

    /// A send (`recv` None) or a receive (`recv` Some(arrival, if known)) with the partner,
    /// from `tid` at `t`: `record_param_comms` launching a SendRecv kernel on the
    /// communication stream. A send starts once the compute stream has produced its data
    /// and records its end in `sent`; the compute stream waits for a receive. Returns the
    /// host time after the call.
    fn p2p(&mut self, tid: Tid, t: Ns, recv: Option<Option<Ns>>, sent: &mut Vec<Ns>) -> Ns {
        self.ext += 1;
        let peer = partner(self.spec, self.rank);
        let (lo, hi) = (self.rank.min(peer), self.rank.max(peer));
        let (name, peer_key) = match recv {
            Some(_) => ("recv", "Src Rank"),
            None => ("send", "Dst Rank"),
        };
        // `Src Rank` / `Dst Rank` are ranks within the group.
        let local = u32::from(peer == hi);
        let meta = format!(
            r#", "Collective name": "{name}", "In msg nelems": {ACT_ELEMS}, "Out msg nelems": {ACT_ELEMS}, "Group size": 2, "dtype": "BFloat16", "Process Group Name": "pp{lo}", "Process Group Description": "pipeline", "Process Group Ranks": "[{lo}, {hi}]", "{peer_key}": {local}"#
        );
        let op_args = format!(r#"{{"External id": {}, "Ev Idx": 0{meta}}}"#, self.ext);
        self.sink
            .x("cpu_op", "record_param_comms", tid, t, 30_000, &op_args);
        let launch = t + 15_000;
        self.runtime(tid, "cudaLaunchKernel", 211, launch, 6_000);
        let ready = (launch + 8_500).max(self.comm_free[0]);
        let transfer = self.p2p_ns(lo);
        let (start, end) = match recv {
            None => {
                let start = ready.max(self.compute_free);
                sent.push(start + transfer);
                (start, start + transfer)
            }
            Some(arrival) => {
                let end = (ready + transfer).max(arrival.unwrap_or(0));
                self.compute_free = self.compute_free.max(end);
                (ready, end)
            }
        };
        self.comm_free[0] = end;
        self.kernel(SEND_RECV, Tid::Comm, start, end - start, &meta);
        self.sink.flow(self.corr, tid, launch, Tid::Comm, start);
        t + 30_000
    }
}
