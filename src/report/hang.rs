//! The hang report of Flight Recorder dumps (docs/flight-recorder.md; JSON schema
//! `stepscope.hang/1` in docs/report-schema.md): what to look at first, then per process
//! group how far each member got, the desyncs and the open point-to-point operations.

use super::table::Table;
use super::{Format, tables_in};
use crate::analysis::hang::{GroupState, Hang, Stuck, Verdict};
use crate::format::ranges;
use crate::session::flight::Flight;
use serde::Serialize;

/// Version tag of the hang report's JSON.
pub const SCHEMA: &str = "stepscope.hang/1";

/// The hang report.
#[derive(Debug, Clone, Serialize)]
pub struct HangReport {
    /// Schema tag, `stepscope.hang/1`.
    pub schema: &'static str,
    /// The dumps read, by rank.
    pub dumps: Vec<DumpRow>,
    /// The dumps that could not be read, each as its error.
    pub skipped: Vec<String>,
    /// The triage.
    pub hang: Hang,
}

/// One dump.
#[derive(Debug, Clone, Serialize)]
pub struct DumpRow {
    /// Its rank.
    pub rank: u32,
    /// Its file.
    pub source: String,
    /// Its format version.
    pub version: Option<String>,
    /// Operations it recorded.
    pub entries: usize,
}

/// The report of a job's dumps.
pub fn build(f: &Flight) -> HangReport {
    HangReport {
        schema: SCHEMA,
        dumps: f
            .dumps
            .iter()
            .map(|d| DumpRow {
                rank: d.rank,
                source: d.source.clone(),
                version: d.version.clone(),
                entries: d.entries.len(),
            })
            .collect(),
        skipped: f.skipped.clone(),
        hang: f.hang.clone(),
    }
}

/// The report in `format` (text and markdown escaped: names come from the dumps).
pub fn render(r: &HangReport, format: Format, page: usize) -> String {
    match format {
        Format::Json => crate::format::json::to_string_pretty(r).expect("serializes") + "\n",
        _ => {
            let body = tables_in(&tables(r), format, page);
            crate::format::printable_lines(&body).into_owned()
        }
    }
}

/// The sections of the text and markdown reports.
pub fn tables(r: &HangReport) -> Vec<Table> {
    let h = &r.hang;
    let mut first = Table {
        title: format!(
            "Flight Recorder: {} dump(s), ranks {}",
            r.dumps.len(),
            ranges(&h.dumped)
        ),
        ..Table::default()
    };
    first.notes.push(match &h.verdict {
        Some(v) => headline(v),
        None => "every process group completed every collective its members entered: no hang in these dumps".into(),
    });
    if !h.missing.is_empty() {
        first.notes.push(format!(
            "no dump from rank(s) {}: what they ran is unknown (a crashed process, a dump not collected)",
            ranges(&h.missing)
        ));
    }
    if !h.empty.is_empty() {
        first.notes.push(format!(
            "rank(s) {} recorded no operation (the recorder off, or the buffer empty)",
            ranges(&h.empty)
        ));
    }
    first
        .notes
        .extend(r.skipped.iter().map(|s| format!("skipped: {s}")));
    let mut out = vec![first, groups_table(&h.groups)];
    out.extend(
        h.groups
            .iter()
            .filter(|g| g.stuck.is_some())
            .map(members_table),
    );
    out.extend(desyncs_table(&h.groups));
    out.extend(open_p2p_table(&h.groups));
    out
}

/// The desyncs of every group (`None`: none).
fn desyncs_table(groups: &[GroupState]) -> Option<Table> {
    let mut t = Table {
        title: "Desyncs: one sequence number, different operations".into(),
        header: vec!["<group", "seq", "rank", "<ran", "<the others ran"],
        ..Table::default()
    };
    for g in groups {
        for m in &g.mismatches {
            t.rows.push(vec![
                g.desc.clone(),
                m.seq.to_string(),
                m.rank.to_string(),
                op_text(&m.op, &m.input_sizes, &m.input_dtypes),
                op_text(&m.expected_op, &m.expected_sizes, &m.expected_dtypes),
            ]);
        }
    }
    (!t.rows.is_empty()).then_some(t)
}

/// The point-to-point operations left open in every group (`None`: none).
fn open_p2p_table(groups: &[GroupState]) -> Option<Table> {
    let mut t = Table {
        title: "Point-to-point operations left open".into(),
        header: vec!["<group", "rank", "p2p seq", "<op", "<state"],
        ..Table::default()
    };
    for g in groups {
        for p in &g.open_p2p {
            t.rows.push(vec![
                g.desc.clone(),
                p.rank.to_string(),
                p.p2p_seq.to_string(),
                p.op.clone(),
                p.state.to_string(),
            ]);
        }
    }
    (!t.rows.is_empty()).then_some(t)
}

/// The verdict in one sentence.
pub fn headline(v: &Verdict) -> String {
    match v {
        Verdict::Desync { group, mismatch: m } => format!(
            "desync in group {group}: at collective #{} rank {} ran {} while the others ran {} — the ranks' code took different paths; look at what rank {} did differently before it",
            m.seq,
            m.rank,
            op_text(&m.op, &m.input_sizes, &m.input_dtypes),
            op_text(&m.expected_op, &m.expected_sizes, &m.expected_dtypes),
            m.rank
        ),
        Verdict::Absent { group, stuck: s } => format!(
            "rank(s) {} never entered {} #{} of group {group}; {} wait in it{} — look at rank(s) {}: their stacks (py-spy dump), their hosts, what they ran after #{}",
            ranges(&s.absent),
            s.op,
            s.seq,
            peers(s),
            timeout(s),
            ranges(&s.absent),
            s.seq.saturating_sub(1)
        ),
        Verdict::Stalled { group, stuck: s } => format!(
            "every member of group {group} with a dump entered {} #{} and none completed it ({} wait{}){} — the collective itself hangs: the network, a device, or a member without a dump",
            s.op,
            s.seq,
            peers(s),
            if s.no_dump.is_empty() {
                String::new()
            } else {
                format!("; no dump from {}", ranges(&s.no_dump))
            },
            timeout(s)
        ),
    }
}

fn peers(s: &Stuck) -> String {
    format!("rank(s) {}", ranges(&s.waiting))
}

fn timeout(s: &Stuck) -> String {
    s.timeout_ms
        .map_or_else(String::new, |t| format!(" (timeout {t} ms)"))
}

/// `nccl:all_reduce [[1024]] Float`.
fn op_text(op: &str, sizes: &[Vec<i64>], dtypes: &[String]) -> String {
    format!("{op} {sizes:?} {}", dtypes.join(","))
}

fn groups_table(groups: &[GroupState]) -> Table {
    let mut t = Table {
        title: "Process groups (those left hanging first)".into(),
        header: vec![
            "<group", "<ranks", "last seq", "stuck at", "<op", "<waiting", "<absent", "<no dump",
        ],
        ..Table::default()
    };
    for g in groups {
        let s = g.stuck.as_ref();
        let list = |f: fn(&Stuck) -> &Vec<u32>| s.map_or_else(|| "-".into(), |s| ranges(f(s)));
        t.rows.push(vec![
            g.desc.clone(),
            ranges(&g.ranks),
            g.last_seq.to_string(),
            s.map_or_else(|| "-".into(), |s| format!("#{}", s.seq)),
            s.map_or_else(|| "-".into(), |s| s.op.clone()),
            list(|s| &s.waiting),
            list(|s| &s.absent),
            list(|s| &s.no_dump),
        ]);
    }
    t
}

fn members_table(g: &GroupState) -> Table {
    let mut t = Table {
        title: format!("Members of {}: how far each got", g.desc),
        header: vec!["rank", "last entered", "last completed"],
        ..Table::default()
    };
    let seq = |s: Option<u64>| s.map_or_else(|| "-".into(), |x| format!("#{x}"));
    for m in &g.members {
        t.rows.push(vec![
            m.rank.to_string(),
            seq(m.last_entered),
            seq(m.last_completed),
        ]);
    }
    t
}
