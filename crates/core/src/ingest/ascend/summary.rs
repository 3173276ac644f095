//! A rank that kept only the profiler's summaries — `analysis.db` (MindSpore:
//! `communication_analyzer.db`), `step_trace_time.csv`, `communication.json` — and no
//! timeline: a common shape of a trimmed collection. It loads with what it has, marked
//! "summary only" ([`crate::model::Rank::summary_only`]): its steps and their breakdown from
//! the step summary, its HCCL ops placed in time by their start timestamps (so collectives
//! match across ranks and show who arrived last), its traffic and links. One process that
//! profiled several devices wrote a step row per device: each device is a rank of its own.
//! A step row without a step number is one step over the trace.

use super::RankDir;
use super::communication::OpTiming;
use super::hccl::op_collective;
use super::info::Info;
use super::lanes::{Ev, Extra, LaneKey, assemble};
use crate::error::Error;
use crate::ingest::RankDraft;
use crate::ingest::chrome::chunk::NO_ID;
use crate::model::{
    EventIx, HostStep, Interner, Kind, NO_STEP, ProfilerStep, Rank, RankId, StepNo,
};
use crate::time::Ns;
use std::collections::{BTreeMap, BTreeSet};

/// What the summaries of one rank directory hold.
#[derive(Default)]
struct Tables {
    /// Step rows, each with its device when the summary names one.
    steps: Vec<ProfilerStep>,
    /// HCCL ops placed in time, each with its device when the table names one.
    ops: Vec<(Option<u32>, OpTiming)>,
    /// Traffic per op and transport, elapse and transit per op, traffic per link (not split
    /// by device: kept for a single-device rank only).
    transports: Vec<crate::model::TransportUse>,
    times: Vec<crate::model::HcclOpTime>,
    links: Vec<crate::model::LinkUse>,
    /// The files read, for the rank's size.
    bytes: u64,
}

/// True when the directory holds a summary a rank can be loaded from.
pub(crate) fn has_summaries(dir: &RankDir) -> bool {
    summary_db(dir).is_some() || dir.output_file("step_trace_time.csv").is_some()
}

/// `analysis.db`, else MindSpore's `communication_analyzer.db`.
fn summary_db(dir: &RankDir) -> Option<std::path::PathBuf> {
    dir.output_file("analysis.db")
        .or_else(|| dir.output_file("communication_analyzer.db"))
}

/// The rank (or, for a multi-device summary, the ranks) of a directory that kept only the
/// summaries.
pub fn read(dir: &RankDir, info: Info) -> Result<Vec<RankDraft>, Error> {
    let t = tables(dir)?;
    let label = dir.label();
    if t.steps.is_empty() {
        return Err(Error::input(
            &label,
            "no trace_view.json, profiler database or kernel table, and its step summary has \
             no rows: nothing to analyse",
        ));
    }
    let devices: BTreeSet<u32> = t.steps.iter().filter_map(|s| s.device).collect();
    if devices.len() < 2 {
        let mut d = draft(&label, t.steps, t.ops)?;
        d.rank.transports = t.transports;
        d.rank.hccl_times = t.times;
        d.rank.links = t.links;
        d.rank.source.file_bytes = t.bytes;
        d.declared_rank = info.rank;
        d.world_size = info.world_size;
        d.groups = info.groups;
        d.parallel = info.parallel;
        d.rank.env = info.env;
        return Ok(vec![d]);
    }
    per_device(&label, t, &devices)
}

/// One rank per device, named `DIR (device N)`, its rank id the device's: the summaries of
/// one process say nothing else about which rank a device was.
fn per_device(label: &str, t: Tables, devices: &BTreeSet<u32>) -> Result<Vec<RankDraft>, Error> {
    let mut warnings = Vec::new();
    let unplaced = t.ops.iter().filter(|(d, _)| d.is_none()).count();
    if unplaced > 0 {
        warnings.push(format!(
            "{label}: {unplaced} HCCL op(s) name no device, though its step summary has {} \
             devices: left out",
            devices.len()
        ));
    }
    if !t.transports.is_empty() || !t.links.is_empty() {
        warnings.push(format!(
            "{label}: its traffic tables are not split by device: left out"
        ));
    }
    let mut out = Vec::with_capacity(devices.len());
    for &dev in devices {
        let steps = t.steps.iter().filter(|s| s.device == Some(dev)).copied();
        let ops = t.ops.iter().filter(|(d, _)| *d == Some(dev)).cloned();
        let name = format!("{label} (device {dev})");
        let mut d = draft(&name, steps.collect(), ops.collect())?;
        d.declared_rank = Some(RankId(dev));
        out.push(d);
    }
    out[0].warnings.append(&mut warnings);
    Ok(out)
}

/// Reads the tables: the database's where it has them, else the text files'.
fn tables(dir: &RankDir) -> Result<Tables, Error> {
    let mut t = Tables::default();
    let size = |p: &std::path::Path| std::fs::metadata(p).map_or(0, |m| m.len());
    if let Some(db) = summary_db(dir) {
        t.bytes += size(&db);
        t.steps = super::db::step_trace(&db)?;
        t.ops = super::db::op_timings(&db)?;
        t.transports = super::db::transports(&db)?;
        t.times = super::db::op_times(&db)?;
        t.links = super::db::links(&db)?;
    }
    if let Some(p) = dir
        .output_file("step_trace_time.csv")
        .filter(|_| t.steps.is_empty())
    {
        t.bytes += size(&p);
        t.steps = super::step_trace::read(&p)?;
    }
    if let Some(p) = dir
        .output_file("communication.json")
        .filter(|_| t.ops.is_empty())
    {
        t.bytes += size(&p);
        let s = super::communication::read(&p)?;
        t.ops = s.timings.into_iter().map(|o| (None, o)).collect();
        t.transports = s.transports;
        t.times = s.times;
    }
    if let Some(p) = dir
        .output_file("communication_matrix.json")
        .filter(|_| t.links.is_empty())
    {
        t.bytes += size(&p);
        t.links = super::matrix::read(&p)?;
    }
    Ok(t)
}

/// One summary-only rank from its step rows and ops.
pub fn draft(
    label: &str,
    mut steps: Vec<ProfilerStep>,
    ops: Vec<(Option<u32>, OpTiming)>,
) -> Result<RankDraft, Error> {
    steps.sort_by_key(|s| s.step);
    let mut strings = Interner::default();
    let ops: Vec<OpTiming> = ops.into_iter().map(|(_, o)| o).collect();
    let windows = windows(&steps, &ops).map_err(|m| Error::input(label, m))?;
    let mut notes = vec![format!(
        "{label}: summary only (no trace_view.json, profiler database or kernel table): its \
         breakdown is the profiler's step summary, its timeline its HCCL ops"
    )];
    if ops.is_empty() {
        notes.push(format!(
            "{label}: no HCCL op carries a start time: its steps are laid end to end from 0, \
             not aligned with other ranks"
        ));
    }
    let mut rank = timeline(&ops, &windows, &mut strings);
    rank.steps = windows;
    rank.profiler_steps = steps;
    rank.summary_only = true;
    rank.devices = vec![strings.intern("Ascend NPU")];
    rank.source = crate::model::SourceInfo {
        path: label.to_string(),
        format: crate::model::SourceFormat::Ascend,
        platform: super::PLATFORM,
        ..crate::model::SourceInfo::default()
    };
    Ok(RankDraft::undeclared(rank, strings, notes))
}

/// Each step's window. A step with ops ends at their last end and lasts the profiler's device
/// span (Computing + Communication(Not Overlapped) + Free), or longer when its ops need more;
/// one without ops follows the previous window (the first starts at 0). Steps are the rows'
/// numbers; rows without one are a single step over the trace.
fn windows(steps: &[ProfilerStep], ops: &[OpTiming]) -> Result<Vec<HostStep>, String> {
    let numbered = steps.iter().all(|s| s.step.is_some());
    if !numbered && steps.len() > 1 {
        return Err(format!(
            "{} step rows and some have no step number: which step each is cannot be told",
            steps.len()
        ));
    }
    let mut extent: BTreeMap<Option<StepNo>, (Ns, Ns)> = BTreeMap::new();
    for o in ops {
        let key = if numbered { o.step } else { None };
        let end = o
            .start_ns
            .checked_add(o.elapse_ns)
            .ok_or(format!("op {} ends past the range of time", o.op))?;
        let e = extent.entry(key).or_insert((o.start_ns, end));
        *e = (e.0.min(o.start_ns), e.1.max(end));
    }
    let mut out = Vec::with_capacity(steps.len());
    let mut prev_end: Ns = 0;
    for s in steps {
        let span = device_span(s).ok_or("a step's summary overflows")?;
        let (start, end) = match extent.get(&s.step) {
            Some(&(lo, hi)) => (lo.min(hi.saturating_sub(span)), hi),
            None => (prev_end, prev_end.saturating_add(span)),
        };
        prev_end = end;
        out.push(HostStep {
            number: s.step.unwrap_or(StepNo(0)),
            start,
            end,
            synthetic: s.step.is_none(),
        });
    }
    Ok(out)
}

/// The profiler's device span of a step: Computing + Communication(Not Overlapped) + Free
/// (= Stage + Bubble).
pub(crate) fn device_span(s: &ProfilerStep) -> Option<Ns> {
    s.computing
        .checked_add(s.comm_not_overlapped)?
        .checked_add(s.free)
}

/// The ops as communication events on one lane per group, each in the step whose window
/// holds its start.
fn timeline(ops: &[OpTiming], windows: &[HostStep], strings: &mut Interner) -> Rank {
    let groups: BTreeMap<&str, i64> = ops
        .iter()
        .map(|o| o.group.as_str())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .zip(0..)
        .collect();
    let mut evs = Vec::with_capacity(ops.len());
    let mut extra = Extra::default();
    for o in ops {
        let step = windows
            .iter()
            .position(|w| w.start <= o.start_ns && o.start_ns < w.end.max(w.start + 1))
            .map_or(NO_STEP, |k| k as u32);
        let mut c = op_collective(EventIx::NONE, &o.op, None, None, strings);
        if !o.group.is_empty() {
            c.group = Some(strings.intern(&o.group));
        }
        extra.collectives.push((evs.len(), c));
        evs.push(Ev {
            lane: LaneKey::Group(groups[o.group.as_str()]),
            start: o.start_ns,
            dur: o.elapse_ns,
            name: strings.intern(&o.op),
            kind: Kind::Comm,
            corr: NO_ID,
            ext: NO_ID,
            step,
        });
    }
    assemble(evs, extra, strings)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(step: Option<u32>, computing: Ns, cno: Ns, free: Ns) -> ProfilerStep {
        ProfilerStep {
            step: step.map(StepNo),
            computing,
            comm_not_overlapped: cno,
            free,
            ..ProfilerStep::default()
        }
    }

    fn op(step: u32, start: Ns, elapse: Ns) -> OpTiming {
        OpTiming {
            step: Some(StepNo(step)),
            op: "hcom_allReduce__1_0_1".into(),
            group: "7".into(),
            start_ns: start,
            elapse_ns: elapse,
        }
    }

    #[test]
    fn a_step_ends_at_its_last_op_and_lasts_the_profiler_s_span() {
        // Step 5: span 60 + 30 + 10 = 100; its ops run [950, 980) and [1 000, 1 040): the
        // window is [940, 1 040). Step 6 has no ops: it follows, [1 040, 1 140). Step 7's ops
        // need more than its span of 20: [2 000, 2 050).
        let steps = [
            row(Some(5), 60, 30, 10),
            row(Some(6), 50, 40, 10),
            row(Some(7), 10, 5, 5),
        ];
        let ops = [op(5, 950, 30), op(5, 1_000, 40), op(7, 2_000, 50)];
        let w = windows(&steps, &ops).unwrap();
        let got: Vec<(u32, Ns, Ns)> = w.iter().map(|s| (s.number.0, s.start, s.end)).collect();
        assert_eq!(got, [(5, 940, 1_040), (6, 1_040, 1_140), (7, 2_000, 2_050)]);
    }

    #[test]
    fn a_row_without_a_step_is_one_step_over_the_trace() {
        let w = windows(&[row(None, 70, 20, 10)], &[]).unwrap();
        assert_eq!(
            (w.len(), w[0].synthetic, w[0].start, w[0].end),
            (1, true, 0, 100)
        );
        let e = windows(&[row(None, 1, 1, 1), row(Some(2), 1, 1, 1)], &[]).unwrap_err();
        assert!(e.contains("no step number"), "{e}");
        let huge = row(Some(1), Ns::MAX, 1, 0);
        assert!(windows(&[huge], &[]).is_err());
    }

    #[test]
    fn ops_become_communication_on_their_group_s_lane() {
        let steps = [row(Some(5), 60, 30, 10)];
        let ops = [op(5, 950, 30), op(5, 1_000, 40)];
        let w = windows(&steps, &ops).unwrap();
        let mut strings = Interner::default();
        let r = timeline(&ops, &w, &mut strings);
        assert_eq!(r.events.len(), 2);
        assert!(r.events.kind.iter().all(|k| *k == Kind::Comm));
        assert_eq!(r.events.step, [0, 0]);
        assert_eq!(r.collectives.len(), 2);
        assert_eq!(
            r.collectives[1].group.map(|g| strings.resolve(g)),
            Some("7")
        );
    }

    /// A day of ns: the largest step summary value the property tries.
    const DAY: Ns = 86_400_000_000_000;

    proptest::proptest! {
        /// A summary-only rank built from any step rows and HCCL ops (starts anywhere in the
        /// range the readers accept, values up to a day) is refused in one line or loads,
        /// analyses, and breaks each step down into parts that sum to its span exactly.
        #[test]
        fn summary_ranks_load_or_refuse_and_partition(
            rows in proptest::collection::vec((0u32..6, 0..DAY, 0..DAY, 0..DAY, 0..DAY), 1..6),
            ops in proptest::collection::vec(
                (0u32..7, crate::time::MIN_NS..crate::time::MAX_NS, 0..DAY, 0u8..3), 0..12),
        ) {
            let mut seen = BTreeSet::new();
            let steps: Vec<ProfilerStep> = rows
                .iter()
                .filter(|r| seen.insert(r.0))
                .map(|&(n, c, m, o, f)| ProfilerStep {
                    overlapped: o,
                    ..row(Some(n), c, m, f)
                })
                .collect();
            let ops = ops
                .iter()
                .map(|&(n, start, elapse, g)| {
                    let o = OpTiming { group: g.to_string(), ..op(n, start, elapse) };
                    (None, o)
                })
                .collect();
            let Ok(mut d) = draft("p", steps, ops) else {
                return Ok(());
            };
            if crate::ingest::check_bounds(&mut d).is_err() {
                return Ok(());
            }
            let roles = crate::ingest::roles::RoleTable::embedded();
            let loaded = crate::ingest::assemble_drafts(vec![d], &roles).expect("one rank");
            let a = crate::analysis::analyze(&loaded.job, &Default::default());
            for b in &a.breakdown {
                let parts = b.compute_ns + b.overlap_ns + b.comm_ns + b.memory_ns
                    + b.host_bound_ns + b.free_ns;
                proptest::prop_assert_eq!(parts, b.span_ns);
                proptest::prop_assert!(b.free_ns >= 0 && b.compute_ns >= 0 && b.comm_ns >= 0);
            }
        }
    }
}
