//! One job from the ranks that loaded: rank ids resolved (the trace's own, then a file-name
//! token, then discovery order), ranks sorted by id, every name interned once job-wide, and
//! each name's role assigned.

use super::roles::RoleTable;
use super::{Assembled, RankDraft};
use crate::error::Error;
use crate::model::{Job, ProcessGroup, Rank, RankFrom, RankId, StepNo};
use rayon::prelude::*;
use rustc_hash::FxHashSet;
use std::collections::BTreeMap;

/// Assembles the job. `hints` are the rank ids file names state, per input; when no input
/// loaded, the first error is returned.
pub(super) fn assemble(
    results: Vec<Result<RankDraft, Error>>,
    hints: &[Option<RankId>],
    roles: &RoleTable,
    job: Option<u32>,
) -> Result<Assembled, Error> {
    let mut skipped = Vec::new();
    let mut drafts = Vec::new();
    for (r, hint) in results.into_iter().zip(hints) {
        match r {
            Ok(d) => drafts.push((d, *hint)),
            Err(e) => skipped.push(e),
        }
    }
    if drafts.is_empty() {
        return Err(skipped
            .into_iter()
            .next()
            .unwrap_or_else(|| Error::input("-", "no inputs")));
    }
    check_one_format(&drafts)?;
    let mut drafts = super::jobs::one_job(drafts, job)?;
    let mut notes = resolve_ranks(&mut drafts)?;
    notes.extend(super::membership::declare(&mut drafts));
    skipped.extend(super::consistency::check(&mut drafts)?);
    if drafts.is_empty() {
        return Err(skipped.remove(0));
    }
    drafts.sort_by_key(|(d, _)| d.rank.id);
    let mut job = Job::default();
    let mut warnings = Vec::new();
    // Every rank repeats the groups it belongs to (a 10 000-rank world group 10 000 times):
    // each (name, ranks) is kept once as it comes.
    let mut groups: FxHashSet<ProcessGroup> = FxHashSet::default();
    let mut maps = Vec::with_capacity(drafts.len());
    let mut ranks = Vec::with_capacity(drafts.len());
    for (mut d, _) in drafts {
        warnings.append(&mut d.warnings);
        job.world_size = job.world_size.max(d.world_size);
        groups.extend(d.groups.drain(..));
        job.parallel = job.parallel.or(d.parallel);
        notes.extend(rank_notes(&d.rank, roles));
        // Names are made job-wide in rank order (the ids are the same on every run); each
        // rank's events are then renamed on its own, the ranks side by side.
        maps.push(
            d.strings
                .iter()
                .map(|(_, s)| job.strings.intern(s))
                .collect::<Vec<u32>>(),
        );
        ranks.push(d.rank);
    }
    ranks
        .par_iter_mut()
        .zip(&maps)
        .for_each(|(r, map)| rename(r, map));
    job.ranks = ranks;
    job.groups = groups.into_iter().collect();
    job.groups.sort();
    job.notes = notes;
    job.roles = roles.assign(&job.strings);
    job.steps = step_numbers(&job.ranks);
    Ok(Assembled {
        job,
        skipped,
        warnings,
    })
}

/// What the user should know about one rank as loaded: its trace has no step markers (the
/// whole trace is one step), or device work launched before the window was left out.
fn rank_notes(r: &Rank, roles: &RoleTable) -> Vec<String> {
    let mut notes = Vec::new();
    if r.steps.len() == 1 && r.steps[0].synthetic {
        let what = match roles.step_range() {
            Some(name) => format!("no range named {}", crate::format::echo(name)),
            None => "no ProfilerStep markers".to_string(),
        };
        notes.push(format!(
            "rank {}: {what}; the whole trace is analysed as one step",
            r.id
        ));
    }
    if r.pre_window.events > 0 {
        notes.push(format!(
            "rank {}: {} device events ({}) launched before the trace window are left out of the steps",
            r.id,
            r.pre_window.events,
            crate::format::human(r.pre_window.busy_ns)
        ));
    }
    notes
}

/// Every step number any rank has, ascending, once.
fn step_numbers(ranks: &[Rank]) -> Vec<StepNo> {
    let mut steps: Vec<StepNo> = ranks
        .iter()
        .flat_map(|r| r.steps.iter().map(|s| s.number))
        .collect();
    steps.sort_unstable();
    steps.dedup();
    steps
}

/// Sets each draft's rank id: the trace's own, else its file name's, else the lowest id not
/// taken (in discovery order, with a note). Two inputs claiming one id is an error.
fn resolve_ranks(drafts: &mut [(RankDraft, Option<RankId>)]) -> Result<Vec<String>, Error> {
    super::consistency::claims(drafts)?;
    let mut notes = Vec::new();
    let mut claimed: BTreeMap<RankId, String> = BTreeMap::new();
    let mut unresolved = Vec::new();
    for (idx, (d, hint)) in drafts.iter_mut().enumerate() {
        let (id, from) = match (d.declared_rank, *hint) {
            // The reader says which record declared it (NCCL's payload), else distributedInfo.
            (Some(r), _) => match d.rank.source.rank_from {
                RankFrom::NcclInit => (r, RankFrom::NcclInit),
                _ => (r, RankFrom::DistributedInfo),
            },
            (None, Some(r)) => (r, RankFrom::FileName),
            (None, None) => {
                unresolved.push(idx);
                continue;
            }
        };
        claimed.insert(id, d.rank.source.path.clone());
        d.rank.id = id;
        d.rank.source.rank_from = from;
    }
    let mut next = 0u32;
    for idx in unresolved {
        while claimed.contains_key(&RankId(next)) {
            next += 1;
        }
        let d = &mut drafts[idx].0;
        d.rank.id = RankId(next);
        d.rank.source.rank_from = RankFrom::DiscoveryOrder;
        claimed.insert(RankId(next), d.rank.source.path.clone());
        notes.push(format!(
            "{}: no rank in the trace or its file name; taken as rank {next} (discovery order)",
            d.rank.source.path
        ));
    }
    Ok(notes)
}

/// The rank with its names renamed from its own table to the job's (`map`: old id → new).
fn rename(r: &mut crate::model::Rank, map: &[u32]) {
    r.events
        .name
        .par_iter_mut()
        .for_each(|n| *n = map[*n as usize]);
    for l in &mut r.lanes {
        l.pid = map[l.pid as usize];
        l.tid = map[l.tid as usize];
        l.name = map[l.name as usize];
    }
    r.devices.iter_mut().for_each(|n| *n = map[*n as usize]);
    r.unknown_categories
        .iter_mut()
        .for_each(|(n, _)| *n = map[*n as usize]);
    for c in &mut r.collectives {
        for s in [&mut c.name, &mut c.dtype, &mut c.group, &mut c.group_ranks]
            .into_iter()
            .flatten()
        {
            *s = map[*s as usize];
        }
    }
    for o in &mut r.shapes {
        for s in [&mut o.dims, &mut o.types].into_iter().flatten() {
            *s = map[*s as usize];
        }
    }
    for t in &mut r.tasks {
        for s in [&mut t.op_type, &mut t.input_shapes, &mut t.input_types]
            .into_iter()
            .flatten()
        {
            *s = map[*s as usize];
        }
    }
}

/// Kineto and Ascend ranks cannot be one job (a renamed `trace_view.json` is only told apart
/// once read): their steps, clocks and collectives do not match.
fn check_one_format(drafts: &[(RankDraft, Option<RankId>)]) -> Result<(), Error> {
    let first = &drafts[0].0.rank.source;
    match drafts
        .iter()
        .find(|(d, _)| d.rank.source.format != first.format)
    {
        Some((d, _)) => Err(Error::usage(
            &d.rank.source.path,
            format!(
                "{} profiler output, but {} is {}: load the two kinds separately",
                d.rank.source.format.as_str(),
                first.path,
                first.format.as_str()
            ),
        )),
        None => Ok(()),
    }
}
