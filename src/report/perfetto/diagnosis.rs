//! The tracks only stepscope can add to a trace, in each rank's process: the findings (a
//! slice per step of the rank they name, with the saving), the critical path's stretches
//! joined by flow arrows where the path crosses ranks, each collective's wait and transit,
//! and the slowest step replayed with every fix (the ideal timeline beside the actual).

use super::nest;
use super::track;
use super::writer::{Flow, Writer};
use crate::analysis::Analysis;
use crate::analysis::whatif::{self, Fix};
use crate::model::{Job, RankId};
use crate::time::Ns;
use std::io;

/// The tracks, by thread id, with their names.
const TRACKS: [(u64, &str); 5] = [
    (track::FINDINGS, "stepscope: findings"),
    (track::CRITICAL_PATH, "stepscope: critical path"),
    (track::WAIT, "stepscope: collective wait"),
    (track::TRANSIT, "stepscope: collective transit"),
    (track::IDEAL, "stepscope: ideal (every fix replayed)"),
];

/// Writes the tracks; returns (slices, flow arrows).
pub fn write(w: &mut Writer, job: &Job, a: &Analysis) -> io::Result<(u64, u64)> {
    let off = |r: RankId| -> Option<Ns> {
        let ix = job.rank_ix(r)?.get();
        Some(a.comm.offsets.get(ix).map_or(0, |o| o.offset_ns))
    };
    let mut t = Tracks::default();
    findings(&mut t, job, a, &off);
    path(&mut t, a, &off);
    collectives(&mut t, a);
    ideal(&mut t, job, a);
    t.write(w, job)
}

/// A slice of a stepscope track, held until its track's slices are all known and placed
/// on sub-tracks where they nest ([`nest`]).
struct Slice {
    pid: u64,
    tid: u64,
    name: String,
    cat: &'static str,
    start: Ns,
    dur: Ns,
    args: String,
}

/// The slices of every stepscope track, and the arrows between slices (indices).
#[derive(Default)]
struct Tracks {
    slices: Vec<Slice>,
    arrows: Vec<(usize, usize)>,
}

impl Tracks {
    fn push(&mut self, s: Slice) -> usize {
        self.slices.push(s);
        self.slices.len() - 1
    }

    /// Names every track of every rank (and the sub-tracks its slices need), then writes
    /// the slices and arrows; returns (slices, arrows).
    fn write(self, w: &mut Writer, job: &Job) -> io::Result<(u64, u64)> {
        let mut groups: std::collections::BTreeMap<(u64, u64), Vec<usize>> = Default::default();
        for (i, s) in self.slices.iter().enumerate() {
            groups.entry((s.pid, s.tid)).or_default().push(i);
        }
        let mut sub = vec![0u32; self.slices.len()];
        let mut extra = std::collections::BTreeMap::new();
        for (key, ix) in &groups {
            let spans: Vec<(Ns, Ns)> = ix
                .iter()
                .map(|&i| (self.slices[i].start, self.slices[i].dur))
                .collect();
            let (s, n) = nest::place_all(&spans);
            for (&i, k) in ix.iter().zip(s) {
                sub[i] = k;
            }
            extra.insert(*key, n);
        }
        for rank in &job.ranks {
            let pid = u64::from(rank.id.0);
            let base = rank.lanes.len() as u64;
            for (k, (tid, name)) in TRACKS.into_iter().enumerate() {
                w.thread(pid, tid, name, base + k as u64)?;
                for s in 1..=extra.get(&(pid, tid)).copied().unwrap_or(0) {
                    let sort = base + k as u64;
                    w.thread(pid, nest::sub_tid(tid, s), &nest::sub_name(name, s), sort)?;
                }
            }
        }
        let tid = |i: usize| nest::sub_tid(self.slices[i].tid, sub[i]);
        for (i, s) in self.slices.iter().enumerate() {
            w.slice(s.pid, tid(i), &s.name, s.cat, s.start, s.dur, &s.args)?;
        }
        for (k, &(a, b)) in self.arrows.iter().enumerate() {
            let at = |i: usize| (self.slices[i].pid, tid(i), self.slices[i].start);
            w.flow(Flow::CriticalPath, k as u64, at(a), at(b))?;
        }
        Ok((self.slices.len() as u64, self.arrows.len() as u64))
    }
}

/// Each finding on each (rank, step) of its evidence (every rank / step where it names none).
fn findings(t: &mut Tracks, job: &Job, a: &Analysis, off: &dyn Fn(RankId) -> Option<Ns>) {
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
                    t.push(Slice {
                        pid: u64::from(rank.id.0),
                        tid: track::FINDINGS,
                        name: name.clone(),
                        cat: "stepscope.finding",
                        start: s.start.saturating_add(shift),
                        dur: s.len(),
                        args: args.clone(),
                    });
                }
            }
        }
    }
}

/// The critical path's stretches, and a flow arrow wherever it passes to another rank.
fn path(t: &mut Tracks, a: &Analysis, off: &dyn Fn(RankId) -> Option<Ns>) {
    let Some(cp) = &a.critical_path else {
        return;
    };
    let mut prev: Option<(u64, usize)> = None;
    for op in &cp.ops {
        let pid = u64::from(op.rank.0);
        let args = format!(
            "\"category\": \"{}\", \"lane\": {}, \"window\": {}",
            op.category.as_str(),
            super::writer::string(&op.lane),
            super::writer::string(&cp.window.to_string())
        );
        let at = t.push(Slice {
            pid,
            tid: track::CRITICAL_PATH,
            name: op.name.clone(),
            cat: "stepscope.critical_path",
            start: op.start_ns.saturating_add(off(op.rank).unwrap_or(0)),
            dur: op.dur_ns,
            args,
        });
        if let Some((_, from)) = prev.filter(|(p, _)| *p != pid) {
            t.arrows.push((from, at));
        }
        prev = Some((pid, at));
    }
}

/// Each matched collective's wait (own start to the last arrival) and transit (the last
/// arrival to own end) on each member.
fn collectives(t: &mut Tracks, a: &Analysis) {
    for (inst, timing) in a.comm.instances() {
        let name = inst.op.as_str();
        let step = inst.step.map_or("null".to_string(), |s| s.to_string());
        let args = format!(
            "\"group\": {}, \"step\": {step}, \"last_arriver\": {}",
            inst.group, timing.timing.last_arriver
        );
        for m in &timing.members {
            let pid = u64::from(m.rank.0);
            let transit_from = m.end_ns.saturating_sub(m.transit_ns);
            for (tid, what, cat, start, dur) in [
                (track::WAIT, "wait", "stepscope.wait", m.start_ns, m.wait_ns),
                (
                    track::TRANSIT,
                    "transit",
                    "stepscope.transit",
                    transit_from,
                    m.transit_ns,
                ),
            ] {
                if dur > 0 {
                    t.push(Slice {
                        pid,
                        tid,
                        name: format!("{name} {what}"),
                        cat,
                        start,
                        dur,
                        args: args.clone(),
                    });
                }
            }
        }
    }
}

/// The slowest step replayed with every fix, per rank, on the aligned clock.
fn ideal(t: &mut Tracks, job: &Job, a: &Analysis) {
    let Some(step) = a.slowest_step else {
        return;
    };
    if whatif::unreplayable(job).is_some() {
        return;
    }
    let cx = whatif::Context::of(job, a);
    let Some(b) = whatif::bands::bands(job, &a.comm, &cx, step, &[Fix::Ideal], job.ranks.len())
    else {
        return;
    };
    let args = format!(
        "\"step\": {step}, \"measured_ns\": {}, \"predicted_ns\": {}",
        b.measured_ns, b.predicted_ns
    );
    for r in &b.ranks {
        for band in &r.replayed {
            t.push(Slice {
                pid: u64::from(r.rank.0),
                tid: track::IDEAL,
                name: band.cat.as_str().to_string(),
                cat: "stepscope.ideal",
                start: band.start,
                dur: band.end.saturating_sub(band.start),
                args: args.clone(),
            });
        }
    }
}
