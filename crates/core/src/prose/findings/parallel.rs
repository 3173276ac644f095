//! Parallelism findings in words.

use super::Words;
use crate::analysis::advisor::rules::parallel::Claim;
use crate::format::human;

/// The words of a parallelism finding.
pub(super) fn words(c: &Claim) -> Words {
    match c {
        Claim::Straggler {
            rank,
            imposed_wait_ns,
            others,
            share,
            group,
            loaded,
            collective,
        } => straggler(
            *rank,
            *imposed_wait_ns,
            *others,
            *share,
            group,
            *loaded,
            collective.as_deref(),
        ),
        Claim::SlowWorker {
            rank,
            stage,
            compute_ns,
            excess_ns,
        } => slow_worker(*rank, *stage, *compute_ns, *excess_ns),
        Claim::SlowStep(s) if s.shared_growth => Words {
            title: slow_step_title(s),
            cause: "every rank did more work in this step: a larger or longer batch (variable sequence lengths), a recompilation or a cluster-wide slowdown",
            suggestions: &[
                "bucket or pack sequences by length so every step carries similar work",
                "recompilations: static or marked-dynamic shapes (torch._dynamo logs name the guard)",
                "a cluster-wide slowdown (shared storage, network, thermal): compare the step's kernels with the median step's",
            ],
        },
        Claim::SlowStep(s) => Words {
            title: slow_step_title(s),
            cause: "one rank's own work grew in these steps (a pause, a data stall, a recompilation) and the others waited for it",
            suggestions: &[
                "look at the culprit rank's timeline in that step (the part that grew is in the evidence)",
                "data loader pauses: more workers, prefetching, faster storage; recompilations: static shapes",
                "a periodic stall (checkpointing, evaluation, logging) belongs outside the training step or asynchronous",
            ],
        },
        Claim::StageImbalance {
            stage,
            excess,
            ranks,
            pace_cost_ns,
            others_wait_ns,
            others_ranks,
        } => stage_imbalance(
            stage,
            excess,
            ranks,
            pace_cost_ns,
            others_wait_ns,
            others_ranks,
        ),
        Claim::RankImbalance(i) => Words {
            title: format!(
                "{} differs across group {}: rank {} {} vs rank {} {} ({:.0}% of the step)",
                i.part.as_str(),
                i.group,
                i.max_rank,
                human(i.max_ns),
                i.min_rank,
                human(i.min_ns),
                i.spread * 100.0
            ),
            cause: "ranks do unequal work or run at unequal speed, though no single rank is late every step",
            suggestions: &[
                "balance the data (sequence lengths, packing) across ranks",
                "check for shared or oversubscribed hosts (CPU cores, NICs)",
            ],
        },
    }
}

/// A slow worker of a pipeline stage in words.
fn slow_worker(
    rank: crate::model::RankId,
    stage: u32,
    compute_ns: crate::time::Ns,
    excess_ns: crate::time::Ns,
) -> Words {
    Words {
        title: format!(
            "rank {rank} is a straggler in pipeline stage {stage}: it computes {} per step, {} more than its stage's median worker",
            human(compute_ns),
            human(excess_ns)
        ),
        cause: "one worker of a balanced stage runs its work slower than its peers: the stages it exchanges with wait in receives for it",
        suggestions: &[
            "compare the rank's kernels with a peer's of the same stage (the layout pane puts them side by side)",
            "check its node: thermal throttling, clocks, a noisy neighbour, a slower device (isolate or replace the node)",
            "check data/work balance: uneven sequence lengths or shards on that rank",
        ],
    }
}

/// "step N took T (X over the median); why".
fn slow_step_title(s: &crate::analysis::cluster::SlowStep) -> String {
    format!(
        "step {} took {} ({} over the median); {}",
        s.step,
        human(s.time_ns),
        human(s.time_ns - s.median_ns),
        crate::prose::slow_step_reason(s)
    )
}

/// A straggler in words; a rank that is not loaded gets the advice to load it.
fn straggler(
    rank: crate::model::RankId,
    imposed_wait_ns: crate::time::Ns,
    others: u64,
    share: f64,
    group: &str,
    loaded: bool,
    collective: Option<&str>,
) -> Words {
    Words {
        title: format!(
            "rank {rank}{} is a straggler: the others waited {} for it (Σ over {others} rank(s) and the steps){} ({:.0}% of group {group}'s waiting)",
            if loaded { "" } else { " (not loaded)" },
            human(imposed_wait_ns),
            collective.map_or(String::new(), |c| format!(", most in {c}")),
            share * 100.0
        ),
        cause: if loaded {
            "one rank reaches the collectives late in most steps; everyone else waits in them"
        } else {
            "a rank whose trace is not loaded reaches the collectives late: the loaded ranks' own waits for it (HCCL Notify_Wait) measure the delay"
        },
        suggestions: if loaded {
            &[
                "compare the rank's own work with its peers (the breakdown part named in the evidence)",
                "check its node: thermal throttling, clocks, a noisy neighbour, a slower device (isolate or replace the node)",
                "check data/work balance: uneven sequence lengths or shards on that rank",
            ]
        } else {
            &[
                "load that rank's profile with these (its directory is missing from the job) to see what delayed it",
                "check its node: thermal throttling, clocks, a noisy neighbour, a slower device (isolate or replace the node)",
                "check data/work balance: uneven sequence lengths or shards on that rank",
            ]
        },
    }
}

/// The words of [`Claim::StageImbalance`].
fn stage_imbalance(
    stage: &u32,
    excess: &f64,
    ranks: &[crate::model::RankId],
    pace_cost_ns: &crate::time::Ns,
    others_wait_ns: &crate::time::Ns,
    others_ranks: &usize,
) -> Words {
    Words {
        title: format!(
            "pipeline stage {stage} (ranks {}) sets the pace: it computes {:+.0}% over the stage mean ({} per step); the other stages wait {} per step in receives (Σ over {others_ranks} rank(s))",
            crate::format::ranges(ranks),
            excess * 100.0,
            human(*pace_cost_ns),
            human(*others_wait_ns)
        ),
        cause: "layers are split unevenly across pipeline stages: the other stages wait in receives (bubbles)",
        suggestions: &[
            "rebalance layers across stages (fewer on the heavy stage; embedding and loss layers count)",
            "use interleaved / virtual pipeline stages to shrink bubbles",
        ],
    }
}
