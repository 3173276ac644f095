//! The tracks only stepscope can add to a trace, in each rank's process: the findings (a
//! slice per step of the rank they name, with the saving), the critical path's stretches
//! joined by flow arrows where the path crosses ranks, each collective's wait and transit,
//! and the slowest step replayed with every fix (the ideal timeline beside the actual).

use super::track;
use super::writer::Writer;
use crate::analysis::Analysis;
use crate::analysis::whatif::{self, Fix};
use crate::model::{Job, RankId};
use crate::time::Ns;
use std::io;

/// Writes the tracks; returns (slices, flow arrows).
pub fn write(w: &mut Writer, job: &Job, a: &Analysis) -> io::Result<(u64, u64)> {
    let off = |r: RankId| -> Option<Ns> {
        let ix = job.rank_ix(r)?.get();
        Some(a.comm.offsets.get(ix).map_or(0, |o| o.offset_ns))
    };
    for rank in &job.ranks {
        let pid = u64::from(rank.id.0);
        let base = rank.lanes.len() as u64;
        for (k, (tid, name)) in [
            (track::FINDINGS, "stepscope: findings"),
            (track::CRITICAL_PATH, "stepscope: critical path"),
            (track::WAIT, "stepscope: collective wait"),
            (track::TRANSIT, "stepscope: collective transit"),
            (track::IDEAL, "stepscope: ideal (every fix replayed)"),
        ]
        .into_iter()
        .enumerate()
        {
            w.thread(pid, tid, name, base + k as u64)?;
        }
    }
    let mut n = findings(w, job, a, &off)?;
    let (p, flows) = path(w, a, &off)?;
    n += p + collectives(w, a)? + ideal(w, job, a)?;
    Ok((n, flows))
}

/// Each finding on each (rank, step) of its evidence (every rank / step where it names none).
fn findings(
    w: &mut Writer,
    job: &Job,
    a: &Analysis,
    off: &dyn Fn(RankId) -> Option<Ns>,
) -> io::Result<u64> {
    let mut n = 0;
    for (k, f) in a.findings.iter().enumerate() {
        let words = crate::prose::words(f);
        let args = format!(
            "\"rule\": \"{}\", \"severity\": \"{}\", \"impact_ns\": {}, \"saves_ns\": {}, \"impact_pct\": {:.6}",
            f.rule,
            f.severity.as_str(),
            f.impact_ns,
            f.saves_ns.map_or("null".to_string(), |s| s.to_string()),
            f.impact_pct
        );
        let name = format!("#{} {}", k + 1, words.title);
        for (ix, rank) in job.ranks.iter().enumerate() {
            if !f.evidence.ranks.is_empty() && !f.evidence.ranks.contains(&rank.id) {
                continue;
            }
            let shift = off(rank.id).unwrap_or(0);
            for s in &a.spans[ix] {
                if f.evidence.steps.is_empty() || f.evidence.steps.contains(&s.number) {
                    let pid = u64::from(rank.id.0);
                    w.slice(
                        pid,
                        track::FINDINGS,
                        &name,
                        "stepscope.finding",
                        s.start.saturating_add(shift),
                        s.len(),
                        &args,
                    )?;
                    n += 1;
                }
            }
        }
    }
    Ok(n)
}

/// The critical path's stretches, and a flow arrow wherever it passes to another rank.
fn path(
    w: &mut Writer,
    a: &Analysis,
    off: &dyn Fn(RankId) -> Option<Ns>,
) -> io::Result<(u64, u64)> {
    let Some(cp) = &a.critical_path else {
        return Ok((0, 0));
    };
    let (mut n, mut flows) = (0, 0);
    let mut prev: Option<(u64, Ns)> = None;
    for op in &cp.ops {
        let pid = u64::from(op.rank.0);
        let start = op.start_ns.saturating_add(off(op.rank).unwrap_or(0));
        let args = format!(
            "\"category\": \"{}\", \"lane\": {}, \"window\": {}",
            op.category.as_str(),
            super::writer::string(&op.lane),
            super::writer::string(&cp.window.to_string())
        );
        w.slice(
            pid,
            track::CRITICAL_PATH,
            &op.name,
            "stepscope.critical_path",
            start,
            op.dur_ns,
            &args,
        )?;
        n += 1;
        if let Some((p, at)) = prev.filter(|(p, _)| *p != pid) {
            w.flow(
                flows,
                (p, track::CRITICAL_PATH, at),
                (pid, track::CRITICAL_PATH, start),
            )?;
            flows += 1;
        }
        prev = Some((pid, start));
    }
    Ok((n, flows))
}

/// Each matched collective's wait (own start to the last arrival) and transit (the last
/// arrival to own end) on each member.
fn collectives(w: &mut Writer, a: &Analysis) -> io::Result<u64> {
    let mut n = 0;
    for (inst, t) in a.comm.instances() {
        let name = inst.op.as_str();
        let step = inst.step.map_or("null".to_string(), |s| s.to_string());
        let args = format!(
            "\"group\": {}, \"step\": {step}, \"last_arriver\": {}",
            inst.group, t.timing.last_arriver
        );
        for m in &t.members {
            let pid = u64::from(m.rank.0);
            if m.wait_ns > 0 {
                w.slice(
                    pid,
                    track::WAIT,
                    &format!("{name} wait"),
                    "stepscope.wait",
                    m.start_ns,
                    m.wait_ns,
                    &args,
                )?;
                n += 1;
            }
            if m.transit_ns > 0 {
                let from = m.end_ns.saturating_sub(m.transit_ns);
                w.slice(
                    pid,
                    track::TRANSIT,
                    &format!("{name} transit"),
                    "stepscope.transit",
                    from,
                    m.transit_ns,
                    &args,
                )?;
                n += 1;
            }
        }
    }
    Ok(n)
}

/// The slowest step replayed with every fix, per rank, on the aligned clock.
fn ideal(w: &mut Writer, job: &Job, a: &Analysis) -> io::Result<u64> {
    let Some(step) = a.slowest_step else {
        return Ok(0);
    };
    if whatif::unreplayable(job).is_some() {
        return Ok(0);
    }
    let cx = whatif::Context::new(job, &a.comm, &a.breakdown, a.stages.as_deref());
    let Some(b) = whatif::bands::bands(job, &a.comm, &cx, step, &[Fix::Ideal], job.ranks.len())
    else {
        return Ok(0);
    };
    let mut n = 0;
    let args = format!(
        "\"step\": {step}, \"measured_ns\": {}, \"predicted_ns\": {}",
        b.measured_ns, b.predicted_ns
    );
    for r in &b.ranks {
        for band in &r.replayed {
            let pid = u64::from(r.rank.0);
            w.slice(
                pid,
                track::IDEAL,
                band.cat.as_str(),
                "stepscope.ideal",
                band.start,
                band.end.saturating_sub(band.start),
                &args,
            )?;
            n += 1;
        }
    }
    Ok(n)
}
