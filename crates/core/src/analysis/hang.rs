//! Hang and desync triage from Flight Recorder dumps (docs/flight-recorder.md). Per process
//! group — matched across ranks by its description and member set, never by its local name
//! — each rank's collectives are lined up by sequence number: the highest any member entered
//! is where the group got to. A member that never entered it is **absent** (what the others
//! wait for); members that entered it and did not complete it are **waiting**; a sequence
//! number whose operation, sizes or element types differ between members is a **desync**.
//! The verdict names the first cause: a desync, else absent ranks, else a collective every
//! member entered that none completed (the network or a device).

use crate::model::flight::{FlightDump, FlightEntry, FlightState};
use serde::Serialize;
use std::collections::BTreeMap;

/// The job's state when the dumps were written.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Hang {
    /// Ranks with a dump.
    pub dumped: Vec<u32>,
    /// Ranks whose dump recorded no operation.
    pub empty: Vec<u32>,
    /// Ranks some group lists that wrote no dump.
    pub missing: Vec<u32>,
    /// Per process group, the ones that did not finish first.
    pub groups: Vec<GroupState>,
    /// What to look at first (absent when every group finished what it entered).
    pub verdict: Option<Verdict>,
}

/// One process group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupState {
    /// Its description (`default_pg`, `tp:0`), or `pg <name>` when no dump describes it.
    pub desc: String,
    /// Its members (as the dumps list them; else the ranks that recorded it).
    pub ranks: Vec<u32>,
    /// The highest collective sequence number any member entered.
    pub last_seq: u64,
    /// Per member with a dump: how far it got.
    pub members: Vec<Member>,
    /// The collective the group is stuck in (absent: every member completed all it entered).
    pub stuck: Option<Stuck>,
    /// Sequence numbers whose operation differs between members, first first.
    pub mismatches: Vec<Mismatch>,
    /// Point-to-point operations entered and not completed.
    pub open_p2p: Vec<OpenP2p>,
}

/// How far one member got in its group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Member {
    /// The rank.
    pub rank: u32,
    /// The last collective it entered (`None`: none recorded).
    pub last_entered: Option<u64>,
    /// The last collective it completed.
    pub last_completed: Option<u64>,
}

/// The collective a group is stuck in.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stuck {
    /// Its sequence number.
    pub seq: u64,
    /// What it is (`nccl:all_reduce`).
    pub op: String,
    /// Its input shapes, as the first waiting member recorded them.
    pub input_sizes: Vec<Vec<i64>>,
    /// Members that entered it and did not complete it.
    pub waiting: Vec<u32>,
    /// Members with a dump that never entered it.
    pub absent: Vec<u32>,
    /// Members without a dump (what they did is unknown).
    pub no_dump: Vec<u32>,
    /// Its timeout, ms, when recorded.
    pub timeout_ms: Option<u64>,
}

/// One member's operation at a sequence number against what the others ran there.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mismatch {
    /// The sequence number.
    pub seq: u64,
    /// The member that differs.
    pub rank: u32,
    /// What it ran: operation, input shapes, element types.
    pub op: String,
    /// Its input shapes.
    pub input_sizes: Vec<Vec<i64>>,
    /// Its input element types.
    pub input_dtypes: Vec<String>,
    /// What most members ran there.
    pub expected_op: String,
    /// Their input shapes.
    pub expected_sizes: Vec<Vec<i64>>,
    /// Their input element types.
    pub expected_dtypes: Vec<String>,
}

/// A point-to-point operation left open.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpenP2p {
    /// The rank.
    pub rank: u32,
    /// Its point-to-point sequence number in the group.
    pub p2p_seq: u64,
    /// What it is (`nccl:send 0->1`).
    pub op: String,
    /// Where it got to.
    pub state: &'static str,
}

/// What to look at first.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Verdict {
    /// Members ran different operations at one sequence number: the job's code diverged.
    Desync {
        /// The group.
        group: String,
        /// The mismatch.
        mismatch: Mismatch,
    },
    /// Members never entered a collective their peers wait in.
    Absent {
        /// The group.
        group: String,
        /// The collective.
        stuck: Stuck,
    },
    /// Every member with a dump entered the collective and none completed it.
    Stalled {
        /// The group.
        group: String,
        /// The collective.
        stuck: Stuck,
    },
}

/// The hang of a job's dumps.
pub fn hang(dumps: &[FlightDump]) -> Hang {
    let mut dumped: Vec<u32> = dumps.iter().map(|d| d.rank).collect();
    dumped.sort_unstable();
    dumped.dedup();
    let empty = dumps
        .iter()
        .filter(|d| d.entries.is_empty())
        .map(|d| d.rank)
        .collect();
    let mut groups: Vec<GroupState> = by_group(dumps)
        .into_iter()
        .map(|(key, per_rank)| group_state(key, per_rank, dumps))
        .collect();
    let mut missing: Vec<u32> = groups
        .iter()
        .flat_map(|g| g.ranks.iter().copied())
        .filter(|r| dumped.binary_search(r).is_err())
        .collect();
    missing.sort_unstable();
    missing.dedup();
    // Groups with something left open first, those with absent members before the others.
    groups.sort_by_key(|g| {
        let s = g.stuck.as_ref();
        (
            g.mismatches.is_empty(),
            s.is_none_or(|s| s.absent.is_empty()),
            s.is_none(),
            std::cmp::Reverse(g.ranks.len()),
        )
    });
    let verdict = groups.iter().find_map(verdict);
    Hang {
        dumped,
        empty,
        missing,
        groups,
        verdict,
    }
}

/// A group's identity across ranks: (description, members).
type GroupKey = (String, Vec<u32>);

/// Each rank's entries (indices into its dump) per group.
fn by_group(dumps: &[FlightDump]) -> BTreeMap<GroupKey, BTreeMap<u32, (usize, Vec<usize>)>> {
    let mut out: BTreeMap<GroupKey, BTreeMap<u32, (usize, Vec<usize>)>> = BTreeMap::new();
    for (d, dump) in dumps.iter().enumerate() {
        let key_of = |name: &str| -> GroupKey {
            match dump.groups.iter().find(|g| g.name == name) {
                Some(g) if !g.desc.is_empty() => (g.desc.clone(), g.ranks.clone()),
                Some(g) => (format!("pg {name}"), g.ranks.clone()),
                None => (format!("pg {name}"), Vec::new()),
            }
        };
        // Every group the rank belongs to, recorded or not: a member with no entry in it
        // is absent from it.
        for g in &dump.groups {
            let k = key_of(&g.name);
            if k.1.is_empty() || k.1.contains(&dump.rank) {
                out.entry(k)
                    .or_default()
                    .entry(dump.rank)
                    .or_insert((d, Vec::new()));
            }
        }
        for (i, e) in dump.entries.iter().enumerate() {
            let slot = out.entry(key_of(&e.group)).or_default();
            slot.entry(dump.rank).or_insert((d, Vec::new())).1.push(i);
        }
    }
    out
}

/// Mismatches listed per group, at most.
const MAX_MISMATCHES: usize = 16;

fn group_state(
    (desc, listed): GroupKey,
    per_rank: BTreeMap<u32, (usize, Vec<usize>)>,
    dumps: &[FlightDump],
) -> GroupState {
    let ranks: Vec<u32> = if listed.is_empty() {
        per_rank.keys().copied().collect()
    } else {
        listed
    };
    let mut members = Vec::new();
    let mut at_seq: BTreeMap<u64, Vec<(u32, &FlightEntry)>> = BTreeMap::new();
    let mut open_p2p = Vec::new();
    for (&rank, (d, idx)) in &per_rank {
        let entries: Vec<&FlightEntry> = idx.iter().map(|&i| &dumps[*d].entries[i]).collect();
        let colls = || entries.iter().filter(|e| !e.is_p2p && e.seq > 0);
        members.push(Member {
            rank,
            last_entered: colls().map(|e| e.seq).max(),
            last_completed: colls()
                .filter(|e| e.state == FlightState::Completed)
                .map(|e| e.seq)
                .max(),
        });
        for e in colls() {
            at_seq.entry(e.seq).or_default().push((rank, e));
        }
        open_p2p.extend(
            entries
                .iter()
                .filter(|e| e.is_p2p && e.state != FlightState::Completed)
                .map(|e| OpenP2p {
                    rank,
                    p2p_seq: e.p2p_seq,
                    op: e.op.clone(),
                    state: e.state.as_str(),
                }),
        );
    }
    let last_seq = members
        .iter()
        .filter_map(|m| m.last_entered)
        .max()
        .unwrap_or(0);
    let stuck = stuck(&ranks, &members, &at_seq);
    GroupState {
        desc,
        ranks,
        last_seq,
        members,
        stuck,
        mismatches: mismatches(&at_seq),
        open_p2p,
    }
}

/// The lowest collective some member entered and did not complete, with who waits in it
/// and who never entered it.
fn stuck(
    ranks: &[u32],
    members: &[Member],
    at_seq: &BTreeMap<u64, Vec<(u32, &FlightEntry)>>,
) -> Option<Stuck> {
    let (&seq, here) = at_seq
        .iter()
        .find(|(_, v)| v.iter().any(|(_, e)| e.state != FlightState::Completed))?;
    let waiting: Vec<u32> = here
        .iter()
        .filter(|(_, e)| e.state != FlightState::Completed)
        .map(|(r, _)| *r)
        .collect();
    let first = here
        .iter()
        .find(|(_, e)| e.state != FlightState::Completed)?
        .1;
    let absent = members
        .iter()
        .filter(|m| m.last_entered.is_none_or(|s| s < seq))
        .map(|m| m.rank)
        .collect();
    let no_dump = ranks
        .iter()
        .copied()
        .filter(|r| members.iter().all(|m| m.rank != *r))
        .collect();
    Some(Stuck {
        seq,
        op: first.op.clone(),
        input_sizes: first.input_sizes.clone(),
        waiting,
        absent,
        no_dump,
        timeout_ms: first.timeout_ms,
    })
}

/// What an operation's members must agree on: its name, its element types, and its shapes
/// unless the operation lets them differ (all-to-all's splits, a gather's or scatter's root).
fn signature(e: &FlightEntry) -> (&str, &[String], Option<&[Vec<i64>]>) {
    let op = e.op.to_ascii_lowercase();
    let free = op.contains("to_all")
        || op.contains("alltoall")
        || (op.contains("scatter") && !op.contains("reduce_scatter"))
        || (op.contains("gather") && !op.contains("all_gather") && !op.contains("allgather"));
    let sizes = (!free).then_some(e.input_sizes.as_slice());
    (e.op.as_str(), e.input_dtypes.as_slice(), sizes)
}

/// Members whose operation at a sequence number differs from what most members ran there.
fn mismatches(at_seq: &BTreeMap<u64, Vec<(u32, &FlightEntry)>>) -> Vec<Mismatch> {
    let mut out = Vec::new();
    for (&seq, v) in at_seq {
        if v.len() < 2 {
            continue;
        }
        let count = |e: &FlightEntry| {
            v.iter()
                .filter(|(_, x)| signature(x) == signature(e))
                .count()
        };
        let Some(common) = v.iter().map(|(_, e)| *e).max_by_key(|e| count(e)) else {
            continue;
        };
        for (rank, e) in v {
            if signature(e) != signature(common) && out.len() < MAX_MISMATCHES {
                out.push(Mismatch {
                    seq,
                    rank: *rank,
                    op: e.op.clone(),
                    input_sizes: e.input_sizes.clone(),
                    input_dtypes: e.input_dtypes.clone(),
                    expected_op: common.op.clone(),
                    expected_sizes: common.input_sizes.clone(),
                    expected_dtypes: common.input_dtypes.clone(),
                });
            }
        }
    }
    out
}

fn verdict(g: &GroupState) -> Option<Verdict> {
    if let Some(m) = g.mismatches.first() {
        return Some(Verdict::Desync {
            group: g.desc.clone(),
            mismatch: m.clone(),
        });
    }
    let s = g.stuck.clone()?;
    Some(if s.absent.is_empty() {
        Verdict::Stalled {
            group: g.desc.clone(),
            stuck: s,
        }
    } else {
        Verdict::Absent {
            group: g.desc.clone(),
            stuck: s,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::flight::{DumpGroup, FlightEntry};
    use proptest::prelude::*;

    fn entry(seq: u64, op: &str, state: FlightState) -> FlightEntry {
        FlightEntry {
            record_id: seq,
            group: "0".into(),
            seq,
            p2p_seq: 0,
            is_p2p: false,
            op: op.into(),
            input_sizes: vec![vec![1024]],
            input_dtypes: vec!["Float".into()],
            output_sizes: vec![vec![1024]],
            state,
            created_ns: 0,
            duration_ns: None,
            timeout_ms: Some(600_000),
        }
    }

    /// `n` ranks of one group; every rank completes 1..s; the ranks of `entered` enter `s`
    /// and wait; each rank's ring lost its first `lost[r]` entries; rank `odd` (when some)
    /// ran all_gather at `odd_seq` where the others ran all_reduce.
    fn job(
        n: u32,
        s: u64,
        entered: &[u32],
        lost: &[usize],
        odd: Option<(u32, u64)>,
    ) -> Vec<FlightDump> {
        (0..n)
            .map(|r| {
                let mut entries: Vec<FlightEntry> = (1..s)
                    .map(|k| {
                        let op = match odd {
                            Some((o, at)) if o == r && at == k => "nccl:all_gather",
                            _ => "nccl:all_reduce",
                        };
                        entry(k, op, FlightState::Completed)
                    })
                    .collect();
                if entered.contains(&r) {
                    entries.push(entry(s, "nccl:all_reduce", FlightState::Started));
                }
                let cut = lost[r as usize].min(entries.len().saturating_sub(1));
                entries.drain(..cut);
                FlightDump {
                    rank: r,
                    source: format!("rank {r}"),
                    version: Some("2.10".into()),
                    groups: vec![DumpGroup {
                        name: "0".into(),
                        desc: "default_pg".into(),
                        ranks: (0..n).collect(),
                    }],
                    entries,
                }
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        /// Whatever the job's size, how far it got, and how much each ring lost: the ranks
        /// that never entered the collective the others wait in are named, and only they.
        #[test]
        fn absent_ranks_are_found(n in 2u32..24, s in 2u64..40, mask in any::<u32>(), lost in proptest::collection::vec(0usize..30, 24)) {
            let entered: Vec<u32> = (0..n).filter(|r| mask & (1 << r) != 0).collect();
            prop_assume!(!entered.is_empty() && entered.len() < n as usize);
            let h = hang(&job(n, s, &entered, &lost, None));
            let absent: Vec<u32> = (0..n).filter(|r| !entered.contains(r)).collect();
            match &h.verdict {
                Some(Verdict::Absent { group, stuck }) => {
                    prop_assert_eq!(group, "default_pg");
                    prop_assert_eq!(stuck.seq, s);
                    prop_assert_eq!(&stuck.absent, &absent);
                    prop_assert_eq!(&stuck.waiting, &entered);
                }
                v => prop_assert!(false, "{v:?}"),
            }
        }

        /// One rank that ran another operation at a sequence number both it and the others
        /// still hold is a desync naming it, whatever else hangs.
        #[test]
        fn a_desync_names_its_rank(n in 3u32..24, s in 3u64..40, odd in 0u32..24, at in 1u64..40) {
            let (odd, at) = (odd % n, 1 + at % (s - 1));
            let all: Vec<u32> = (0..n).collect();
            let h = hang(&job(n, s, &all[1..], &[0; 24], Some((odd, at))));
            match &h.verdict {
                Some(Verdict::Desync { mismatch, .. }) => {
                    prop_assert_eq!((mismatch.rank, mismatch.seq), (odd, at));
                    prop_assert_eq!(mismatch.op.as_str(), "nccl:all_gather");
                }
                v => prop_assert!(false, "{v:?}"),
            }
        }
    }

    #[test]
    fn a_finished_job_has_no_verdict_and_shapes_of_all_to_all_may_differ() {
        let mut d = job(2, 3, &[], &[0, 0], None);
        for (r, x) in d.iter_mut().enumerate() {
            let mut e = entry(3, "nccl:all_to_all", FlightState::Completed);
            e.input_sizes = vec![vec![10 + r as i64]];
            x.entries.push(e);
        }
        let h = hang(&d);
        assert_eq!(h.verdict, None);
        assert!(h.groups[0].mismatches.is_empty());
        assert_eq!(h.groups[0].last_seq, 3);
    }
}
