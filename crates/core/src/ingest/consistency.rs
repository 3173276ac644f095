//! Whether the ranks that loaded can be one job. Inputs of different jobs are never mixed
//! silently: ranks that state different world sizes, declare one process group with
//! different members, ran on different device models, were profiled hours apart on the
//! wall clock, or — none naming its rank — share neither a step nor a collective are refused
//! in one line naming two of the files; a rank whose events last about a thousand times its
//! peers' (timestamps in another unit) is skipped, said, and not diagnosed.

use super::RankDraft;
use crate::error::Error;
use crate::model::RankId;
use crate::time::Ns;

/// A wall-clock start after this (2001-09 in Unix-epoch ns) is on the epoch scale: ranks on
/// such clocks can be compared across hosts.
const EPOCH_NS: Ns = 1_000_000_000_000_000_000;

/// Ranks profiled further apart than this on epoch clocks are not one job's (the ranks of a
/// job profile the same steps, seconds apart).
const APART_NS: Ns = 3_600_000_000_000;

/// A rank whose typical event lasts this many times its peers' median, or that fraction of
/// it, is in another time unit (ns written as µs is 1000×).
const UNIT_RATIO: u128 = 300;

/// A draft and the rank id its file name states.
type Draft = (RankDraft, Option<RankId>);
type Drafts = Vec<Draft>;

/// Checks the drafts (their rank ids resolved) against each other: `Err` when they are not
/// one job; otherwise the drafts that must be skipped (removed from `drafts`), with why.
pub(super) fn check(drafts: &mut Drafts) -> Result<Vec<Error>, Error> {
    stated(drafts)?;
    anonymous(drafts)?;
    sums(drafts)?;
    Ok(time_units(drafts))
}

/// Two inputs that claim one rank id (the trace's own, else its file name's): `Err` names
/// both. Reads no resolved id, so it can judge a set of drafts before they are resolved.
pub(super) fn claims(drafts: &[Draft]) -> Result<(), Error> {
    let mut claimed: std::collections::BTreeMap<RankId, &str> = Default::default();
    for (d, hint) in drafts {
        let Some(id) = d.declared_rank.or(*hint) else {
            continue;
        };
        // A rank read from a summary is named by the summary: the two may be of one trace.
        let file = d
            .rank
            .source
            .summary
            .as_deref()
            .unwrap_or(&d.rank.source.path);
        if let Some(other) = claimed.insert(id, file) {
            return Err(Error::input(
                file,
                format!(
                    "rank {id} is claimed by both {other} and this file: two runs? {}",
                    two_runs(other, file)
                ),
            ));
        }
    }
    Ok(())
}

/// What the drafts state of their job agrees: world size, process groups, device model, wall
/// clock. Reads nothing the rank ids decide, so it can judge a set of drafts before their
/// ids are resolved (`jobs.rs` asks it of each directory of inputs).
pub(super) fn stated(drafts: &[Draft]) -> Result<(), Error> {
    world_sizes(drafts)?;
    groups(drafts)?;
    devices(drafts)?;
    wall_clocks(drafts)
}

/// The job's durations, and apart its ranks' window widths, add up to at most
/// [`MAX_JOB_SUM_NS`]: any sum an analysis forms of them then fits in i64.
fn sums(drafts: &[Draft]) -> Result<(), Error> {
    use crate::time::MAX_JOB_SUM_NS;
    let busy = drafts
        .iter()
        .fold(0, |a: Ns, (d, _)| a.saturating_add(d.busy_ns));
    let widths = drafts.iter().fold(0, |a: Ns, (d, _)| {
        a.saturating_add(d.rank.window.map_or(0, |(lo, hi)| hi - lo))
    });
    if busy <= MAX_JOB_SUM_NS && widths <= MAX_JOB_SUM_NS {
        return Ok(());
    }
    // The first of the ranks that sum the most.
    let Some((d, _)) = drafts
        .iter()
        .reduce(|a, b| if b.0.busy_ns > a.0.busy_ns { b } else { a })
    else {
        return Ok(());
    };
    Err(Error::input(
        path(d),
        format!(
            "the job's events last {busy} ns in sum over {} ranks (the most here), their windows \
             {widths} ns: beyond 2^62 ns, out of range",
            drafts.len()
        ),
    ))
}

fn path(d: &RankDraft) -> &str {
    &d.rank.source.path
}

/// Two files stating different things of one job: a usage error on `b` naming `a` —
/// "`b`: {here}, but `a` {there}: …", suggesting the diff of the two.
fn different_jobs(a: &RankDraft, b: &RankDraft, here: String, there: String) -> Error {
    Error::usage(
        path(b),
        format!(
            "{here}, but {} {there}: inputs of different jobs; {}",
            path(a),
            two_runs(path(a), path(b))
        ),
    )
}

/// What to do with two files of different runs: compare them (`stepscope diff`, naming
/// their directories when they differ) or load each on its own.
pub(super) fn two_runs(a: &str, b: &str) -> String {
    let dir = |p: &str| {
        std::path::Path::new(p)
            .parent()
            .map(|d| d.display().to_string())
    };
    let (x, y) = match (dir(a), dir(b)) {
        (Some(x), Some(y)) if x != y && !x.is_empty() && !y.is_empty() => (x, y),
        _ => (a.to_string(), b.to_string()),
    };
    format!("compare them with `stepscope diff {x} {y}`, or load each on its own")
}

/// Every declared world size is the same, and no rank id is beyond it.
fn world_sizes(drafts: &[Draft]) -> Result<(), Error> {
    let declared: Vec<(&RankDraft, u32)> = drafts
        .iter()
        .filter_map(|(d, _)| d.world_size.map(|w| (d, w)))
        .collect();
    if let Some(&(a, wa)) = declared.first() {
        if let Some(&(b, wb)) = declared.iter().find(|(_, w)| *w != wa) {
            return Err(different_jobs(
                a,
                b,
                format!("states world size {wb}"),
                format!("states {wa}"),
            ));
        }
        // Ranks numbered in discovery order have no id of their own to contradict.
        let stated =
            |d: &RankDraft| d.rank.source.rank_from != crate::model::RankFrom::DiscoveryOrder;
        if let Some((d, _)) = drafts.iter().find(|(d, _)| stated(d) && d.rank.id.0 >= wa) {
            return Err(Error::usage(
                path(d),
                format!(
                    "rank {} in a world of {wa} ({} says so): inputs of different jobs?",
                    d.rank.id,
                    path(a)
                ),
            ));
        }
    }
    Ok(())
}

/// A process group declared by two ranks has the same members in both.
fn groups(drafts: &[Draft]) -> Result<(), Error> {
    let mut seen: std::collections::BTreeMap<&str, (&RankDraft, &[RankId])> = Default::default();
    for (d, _) in drafts {
        for g in &d.groups {
            match seen.get(g.name.as_str()) {
                Some(&(a, ranks)) if ranks != g.ranks.as_slice() => {
                    let ids =
                        |v: &[RankId]| format!("{:?}", v.iter().map(|r| r.0).collect::<Vec<_>>());
                    return Err(different_jobs(
                        a,
                        d,
                        format!(
                            "declares process group {} of ranks {}",
                            g.name,
                            ids(&g.ranks)
                        ),
                        format!("of ranks {}", ids(ranks)),
                    ));
                }
                Some(_) => {}
                None => {
                    seen.insert(&g.name, (d, &g.ranks));
                }
            }
        }
    }
    Ok(())
}

/// Ranks that name their devices name the same model (a job does not span an A100 and a
/// V100; two runs compared do).
fn devices(drafts: &[Draft]) -> Result<(), Error> {
    let names = |d: &RankDraft| -> Vec<String> {
        let mut v: Vec<String> = d
            .rank
            .devices
            .iter()
            .map(|s| d.strings.resolve(*s).to_string())
            .collect();
        v.sort();
        v.dedup();
        v
    };
    let named: Vec<(&RankDraft, Vec<String>)> = drafts
        .iter()
        .map(|(d, _)| (d, names(d)))
        .filter(|(_, n)| !n.is_empty())
        .collect();
    let Some((a, na)) = named.first() else {
        return Ok(());
    };
    match named
        .iter()
        .find(|(_, n)| n.iter().all(|x| !na.contains(x)))
    {
        Some((b, nb)) => Err(different_jobs(
            a,
            b,
            format!("ran on {}", nb.join(", ")),
            format!("on {}", na.join(", ")),
        )),
        None => Ok(()),
    }
}

/// Ranks on wall (epoch) clocks were profiled at about the same time.
fn wall_clocks(drafts: &[Draft]) -> Result<(), Error> {
    let mut on_epoch: Vec<(&RankDraft, Ns, Ns)> = drafts
        .iter()
        .filter_map(|(d, _)| d.rank.window.map(|(lo, hi)| (d, lo, hi)))
        .filter(|&(_, lo, _)| lo >= EPOCH_NS)
        .collect();
    on_epoch.sort_by_key(|&(_, lo, _)| lo);
    // After sorting by start, a gap shows between consecutive windows.
    let mut reach = match on_epoch.first() {
        Some(&(d, _, hi)) => (d, hi),
        None => return Ok(()),
    };
    for &(d, lo, hi) in &on_epoch[1..] {
        if lo - reach.1 > APART_NS {
            let hours = (lo - reach.1) / APART_NS;
            let apart = match hours {
                0..48 => format!("{hours} hour(s)"),
                _ => format!("{} days", hours / 24),
            };
            return Err(Error::usage(
                path(d),
                format!(
                    "was profiled {apart} after {} ended (wall clock): inputs of different \
                     jobs; {}",
                    path(reach.0),
                    two_runs(path(reach.0), path(d))
                ),
            ));
        }
        if hi > reach.1 {
            reach = (d, hi);
        }
    }
    Ok(())
}

/// Inputs of which none names its rank (no `distributedInfo`, no rank in the file name) are
/// one job only if something joins them: a step number every one of them profiled, or
/// collectives (a distributed job communicates). Unrelated traces in one folder share
/// neither.
fn anonymous(drafts: &[Draft]) -> Result<(), Error> {
    use crate::model::RankFrom;
    let anonymous = drafts.len() >= 2
        && drafts
            .iter()
            .all(|(d, _)| d.rank.source.rank_from == RankFrom::DiscoveryOrder);
    if !anonymous || drafts.iter().any(|(d, _)| !d.rank.collectives.is_empty()) {
        return Ok(());
    }
    let steps = |d: &RankDraft| -> Vec<u32> { d.rank.steps.iter().map(|s| s.number.0).collect() };
    let (a, _) = &drafts[0];
    let first = steps(a);
    match drafts[1..]
        .iter()
        .find(|(d, _)| !steps(d).iter().any(|n| first.contains(n)))
    {
        Some((b, _)) => Err(Error::usage(
            path(b),
            format!(
                "shares no step and no collective with {}, and no input names its rank: inputs \
                 of different jobs; {}",
                path(a),
                two_runs(path(a), path(b))
            ),
        )),
        None => Ok(()),
    }
}

/// Ranks (of three or more) whose typical event is ~1000× longer or shorter than the
/// median rank's: skipped with the reason, so that no finding blames them for a unit.
fn time_units(drafts: &mut Drafts) -> Vec<Error> {
    let typ: Vec<Option<Ns>> = drafts.iter().map(|(d, _)| d.typical_dur).collect();
    let mut known: Vec<Ns> = typ.iter().flatten().copied().collect();
    if known.len() < 3 {
        return Vec::new();
    }
    let mid = known.len() / 2;
    let median = *known.select_nth_unstable(mid).1;
    let odd = |t: Ns| {
        let (t, m) = (t.unsigned_abs() as u128, median.unsigned_abs() as u128);
        t > m * UNIT_RATIO || t * UNIT_RATIO < m
    };
    let mut skipped = Vec::new();
    let mut i = 0;
    drafts.retain(|(d, _)| {
        let t = typ[i];
        i += 1;
        match t {
            Some(t) if odd(t) => {
                skipped.push(Error::input(
                    path(d),
                    format!(
                        "its events last {} in the middle, its peers' {}: timestamps in \
                         another unit (ns written as µs?); not analysed",
                        crate::format::human(t),
                        crate::format::human(median)
                    ),
                ));
                false
            }
            _ => true,
        }
    });
    skipped
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{EventIx, Interner, Kind, ProcessGroup, Rank, RawSpan};

    /// A draft of rank `id` from `path` with events `(start, dur)`.
    fn draft(id: u32, path: &str, events: &[(Ns, Ns)]) -> (RankDraft, Option<RankId>) {
        let mut r = Rank {
            id: RankId(id),
            ..Rank::default()
        };
        r.source.path = path.into();
        r.source.rank_from = crate::model::RankFrom::DistributedInfo;
        for &(s, d) in events {
            let e = &mut r.events;
            e.start.push(s);
            e.dur.push(d);
            e.name.push(0);
            e.lane.push(0);
            e.kind.push(Kind::Compute);
            e.step.push(0);
            e.link.push(EventIx::NONE);
            e.op.push(EventIx::NONE);
            e.raw.push(RawSpan::default());
        }
        let mut d = RankDraft::undeclared(r, Interner::default(), Vec::new());
        crate::ingest::bounds::check(&mut d).unwrap();
        (d, None)
    }

    const EPOCH: Ns = 1_700_000_000_000_000_000;

    #[test]
    fn ranks_profiled_hours_apart_on_wall_clocks_are_two_jobs() {
        let hour = APART_NS;
        let mut ok = vec![
            draft(0, "a", &[(EPOCH, 1_000)]),
            draft(1, "b", &[(EPOCH + hour, 1_000)]),
        ];
        assert!(check(&mut ok).is_ok());
        let mut apart = vec![
            draft(0, "a", &[(EPOCH, 1_000)]),
            draft(1, "b", &[(EPOCH + 3 * hour, 1_000)]),
        ];
        let e = check(&mut apart).unwrap_err().to_string();
        assert_eq!(
            e,
            "b: was profiled 2 hour(s) after a ended (wall clock): inputs of different jobs; \
             compare them with `stepscope diff a b`, or load each on its own"
        );
        // Monotonic clocks (far below the epoch scale) differ by host uptime: no verdict.
        let mut uptime = vec![
            draft(0, "a", &[(1_000, 1_000)]),
            draft(1, "b", &[(90 * 24 * hour, 1_000)]),
        ];
        assert!(check(&mut uptime).is_ok());
    }

    #[test]
    fn disjoint_device_models_and_different_group_members_are_two_jobs() {
        let mut v = vec![draft(0, "a", &[(0, 1)]), draft(1, "b", &[(0, 1)])];
        let a100 = v[0].0.strings.intern("A100");
        let v100 = v[1].0.strings.intern("V100");
        v[0].0.rank.devices = vec![a100];
        v[1].0.rank.devices = vec![v100];
        let e = check(&mut v).unwrap_err().to_string();
        assert!(
            e.starts_with("b: ran on V100, but a on A100: inputs of different jobs"),
            "{e}"
        );
        let group = |ranks: &[u32]| ProcessGroup {
            name: "0".into(),
            description: "default_pg".into(),
            ranks: ranks.iter().map(|&r| RankId(r)).collect(),
        };
        let mut v = vec![draft(0, "a", &[(0, 1)]), draft(1, "b", &[(0, 1)])];
        v[0].0.groups = vec![group(&[0, 1])];
        v[1].0.groups = vec![group(&[0, 1, 2, 3])];
        let e = check(&mut v).unwrap_err().to_string();
        assert!(
            e.contains("declares process group 0 of ranks [0, 1, 2, 3], but a of ranks [0, 1]"),
            "{e}"
        );
    }

    #[test]
    fn a_job_whose_durations_sum_past_2_62_is_refused() {
        // 2^49-ns events, 2^11 of them on each of 5 ranks: 2^60 per rank, 5 × 2^60 > 2^62.
        let big = 1 << 49;
        let events: Vec<(Ns, Ns)> = (0..2048).map(|k| (k % 2, big)).collect();
        let mut v: Vec<_> = (0..5)
            .map(|r| draft(r, &format!("r{r}"), &events))
            .collect();
        let e = check(&mut v).unwrap_err().to_string();
        assert!(
            e.starts_with("r0: the job's events last 5764607523034234880 ns in sum over 5 ranks"),
            "{e}"
        );
        v.truncate(4);
        assert!(check(&mut v).is_ok(), "4 × 2^60 = 2^62 is in range");
    }

    #[test]
    fn a_rank_a_thousand_times_slower_is_skipped_only_among_three_or_more() {
        let us = |id, p| draft(id, p, &[(0, 10_000), (20_000, 30_000), (60_000, 20_000)]);
        // The same events written 1000× larger; median durations 20 µs and 20 ms.
        let ns = |id, p| {
            draft(
                id,
                p,
                &[
                    (0, 10_000_000),
                    (20_000_000, 30_000_000),
                    (60_000_000, 20_000_000),
                ],
            )
        };
        let mut v = vec![us(0, "a"), us(1, "b"), ns(2, "c"), us(3, "d")];
        let skipped = check(&mut v).unwrap();
        assert_eq!(skipped.len(), 1);
        assert!(
            skipped[0]
                .to_string()
                .starts_with("c: its events last 20.0 ms in the middle, its peers' 20.0 µs"),
            "{}",
            skipped[0]
        );
        assert_eq!(
            v.iter().map(|(d, _)| d.rank.id.0).collect::<Vec<_>>(),
            [0, 1, 3]
        );
        // 299× is another job's mix of work, not a unit.
        let mut v = vec![us(0, "a"), us(1, "b"), draft(2, "c", &[(0, 20_000 * 299)])];
        assert!(check(&mut v).unwrap().is_empty());
        // Two ranks: which one is off cannot be told.
        let mut v = vec![us(0, "a"), ns(1, "b")];
        assert!(check(&mut v).unwrap().is_empty());
    }
}
