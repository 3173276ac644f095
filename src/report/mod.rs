//! The report: one serializable structure built from the load and the analyses, rendered as
//! text (humans, ≤ 100 columns), markdown, or JSON (the stable schema of
//! `docs/report-schema.md`). Rendering never computes a number; the words come from
//! `crate::prose`.

mod advice;
mod cluster;
mod cluster_tables;
mod critical;
pub mod diff;
pub mod hang;
mod job;
pub mod json;
pub mod layout_tables;
mod markdown;
pub mod perfetto;
mod table;
mod tasks;
mod text;
mod text_grid;
mod transports;
pub mod watch;
pub mod whatif;
pub mod whatif_cmd;

pub use cluster::{ClusterSection, CommSection, GroupInfo};
pub use job::JobInfo;
pub use table::Table;

use crate::analysis::Analysis;
use crate::analysis::breakdown::Breakdown;
use crate::analysis::critical_path::CriticalPath;
use crate::analysis::host::Host;
use crate::analysis::ops::Scope;
use crate::format::human;
use crate::model::{RankId, StepNo};
use crate::session::Loaded;
use crate::time::Ns;
use json::{FindingRow, RooflineView};
use serde::Serialize;
use std::collections::BTreeMap;

/// Tables as text (at `page` columns) or markdown; JSON is the caller's.
pub(crate) fn tables_in(tables: &[Table], format: Format, page: usize) -> String {
    let mut o = String::new();
    for t in tables {
        match format {
            Format::Md => markdown::table(&mut o, t),
            _ => text::table(&mut o, t, page),
        }
    }
    o
}

/// The hang section of a report with Flight Recorder dumps (empty without).
fn hang_in(r: &Report, format: Format, page: usize) -> String {
    r.hang
        .as_ref()
        .map_or_else(String::new, |h| tables_in(&hang::tables(h), format, page))
}

/// Version tag of the JSON schema; bumped only on incompatible changes.
pub const SCHEMA: &str = "stepscope.report/1";
/// Operators listed in the JSON report (text and markdown show fewer).
pub const JSON_TOP_OPS: usize = 50;
/// Critical-path stretches (and critical operators) listed in the JSON report.
pub const JSON_PATH_OPS: usize = 500;

/// Output format of `report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Plain text for terminals and logs.
    Text,
    /// JSON (schema `stepscope.report/1`).
    Json,
    /// Markdown (for PR comments and wikis).
    Md,
}

/// The whole report.
#[derive(Debug, Serialize)]
pub struct Report {
    /// Schema tag, `stepscope.report/1`.
    pub schema: &'static str,
    /// What was loaded.
    pub job: JobInfo,
    /// Per-step times across ranks.
    pub steps: Vec<StepRow>,
    /// One row per (step, rank).
    pub breakdown: Vec<BreakdownRow>,
    /// `device` or `host_self`: what `top_ops` totals.
    pub top_ops_basis: &'static str,
    /// Operators by total time.
    pub top_ops: Vec<OpRow>,
    /// Clock offsets, slow steps, stragglers, imbalance, pipeline stages.
    pub cluster: ClusterSection,
    /// Collective statistics, worst instances, point-to-point matrix, slow links.
    pub communication: CommSection,
    /// The critical path of the slowest step (or `--step`, or `--window`).
    pub critical_path: Option<CriticalPath>,
    /// That step replayed over its dependency graph with its measured durations.
    pub whatif: Option<whatif::WhatIfView>,
    /// Launch, synchronization, data loading, GC, allocator and pageable-copy findings.
    pub host: Host,
    /// Roofline classes and operators.
    pub roofline: RooflineView,
    /// Findings, largest impact first: what to fix first.
    pub findings: Vec<FindingRow>,
    /// The profiler's own step summary (Ascend's `step_trace_time.csv`) against the same
    /// columns recomputed from the events; absent for profilers that write none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub profiler_checks: Vec<crate::analysis::profiler_check::StepCheck>,
    /// The triage of the Flight Recorder dumps given with the traces (absent without).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hang: Option<hang::HangReport>,
    /// HCCL's traffic per rank and transport (Ascend `communication.json`); absent when no
    /// rank has it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub transports: Vec<crate::analysis::comm::transports::TransportStat>,
    /// HCCL's traffic per link (Ascend `communication_matrix.json`); absent when no rank has
    /// it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub link_matrix: Vec<crate::analysis::comm::link_matrix::LinkStat>,
    /// HCCL transfers whose size is not a multiple of 512 B, timed against their aligned
    /// neighbours (Ascend Level1 and above); absent when no rank recorded transfer sizes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unaligned_transfers: Option<crate::analysis::comm::unaligned::Unaligned>,
    /// The kernel table's sums against the profiler's own (`op_statistic.csv`); absent
    /// without one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub op_stat_checks: Vec<crate::analysis::tasks::OpStatCheck>,
    /// Steps a rank's device clock ran below the job's top one; absent when no rank recorded
    /// its clock.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clocks: Option<crate::analysis::clocks::Clocks>,
    /// Fused torch_npu APIs that replace runs of the job's operators (Ascend); absent when
    /// none applies.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub affinity: Vec<crate::analysis::affinity::AffinityMatch>,
    /// The accelerator's kernel table (Ascend): dynamic-shape and AI CPU tasks; absent
    /// without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tasks: Option<crate::analysis::tasks::Tasks>,
    /// Wall time of load and analysis (the only non-deterministic part).
    pub timings: Timings,
    /// Inputs that could not be read while others loaded.
    pub skipped: Vec<Skipped>,
    /// The scope the report was restricted to (`--step`, `--rank`).
    pub scope: ScopeInfo,
    /// The step shown in detail: `--step`, else the slowest.
    #[serde(skip)]
    pub focus_step: Option<StepNo>,
}

/// One step across ranks.
#[derive(Debug, Serialize)]
pub struct StepRow {
    /// Step number.
    pub step: StepNo,
    /// Ranks concerned.
    pub ranks: u32,
    /// Distribution of rank span lengths.
    pub time_ns: TimeStats,
    /// Rank with the most own work.
    pub slowest_rank: RankId,
    /// That rank's own work (span − exposed comm).
    pub slowest_rank_work_ns: Ns,
}

/// Max / median / min of rank span lengths.
#[derive(Debug, Serialize)]
pub struct TimeStats {
    /// The longest span (the cluster's step time).
    pub max: Ns,
    /// Median (even count: floor of the mean of the middle two).
    pub median: Ns,
    /// The shortest span.
    pub min: Ns,
}

/// The breakdown of one (step, rank), and the rank's own work in it.
#[derive(Debug, Serialize)]
pub struct BreakdownRow {
    /// step, rank, span and the six parts (`analysis::breakdown`).
    #[serde(flatten)]
    pub parts: Breakdown,
    /// span − comm: the rank's own work in the step (not a part of the partition).
    pub own_work_ns: Ns,
    /// The rank is summary only: these are the profiler's step summary, not a timeline's
    /// (absent when false).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub summary_only: bool,
}

/// One operator's totals.
#[derive(Debug, Serialize)]
pub struct OpRow {
    /// The operator's name.
    pub name: String,
    /// Event kind.
    pub kind: &'static str,
    /// Its occurrences in scope.
    pub count: u64,
    /// Total time.
    pub total_ns: Ns,
    /// Mean time (floor).
    pub mean_ns: Ns,
    /// Total / sum over all operators.
    pub share: f64,
}

/// Wall times.
#[derive(Debug, Serialize)]
pub struct Timings {
    /// Loading wall time.
    pub load_ns: u64,
    /// Analysis wall time.
    pub analysis_ns: u64,
}

/// An input that could not be read.
#[derive(Debug, Serialize)]
pub struct Skipped {
    /// The input path as given.
    pub path: String,
    /// The one-line error, position included.
    pub reason: String,
}

/// The `--step` / `--rank` restriction.
#[derive(Debug, Serialize)]
pub struct ScopeInfo {
    /// Step number.
    pub step: Option<StepNo>,
    /// Rank id.
    pub rank: Option<RankId>,
}

/// Builds the report from a load and its analysis.
pub fn build(loaded: &Loaded, a: &Analysis, scope: Scope) -> Report {
    let job = &loaded.job;
    let (cluster, communication) = cluster::build(a);
    Report {
        cluster,
        communication,
        critical_path: a.critical_path.as_ref().map(critical::for_json),
        whatif: whatif::WhatIfView::of(&a.whatif),
        host: a.host.clone(),
        roofline: RooflineView::of(&a.roofline),
        findings: a.findings.iter().map(FindingRow::of).collect(),
        profiler_checks: a.profiler_checks.clone(),
        hang: None,
        transports: a.transports.clone(),
        link_matrix: a.link_matrix.clone(),
        unaligned_transfers: a.unaligned.recorded.then(|| a.unaligned.clone()),
        affinity: a.affinity.clone(),
        clocks: a.clocks.top_mhz.map(|_| a.clocks.clone()),
        op_stat_checks: a.op_stat_checks.clone(),
        tasks: (a.tasks.tasks > 0).then(|| a.tasks.clone()),
        schema: SCHEMA,
        job: job::job_info(loaded, a),
        focus_step: scope.step.or(a.slowest_step),
        steps: a
            .step_times
            .iter()
            .map(|s| StepRow {
                step: s.step,
                ranks: s.ranks,
                time_ns: TimeStats {
                    max: s.max_ns,
                    median: s.median_ns,
                    min: s.min_ns,
                },
                slowest_rank: s.slowest_rank,
                slowest_rank_work_ns: s.slowest_rank_work_ns,
            })
            .collect(),
        breakdown: a
            .breakdown
            .iter()
            .map(|b| BreakdownRow {
                parts: *b,
                own_work_ns: b.own_work_ns(),
                summary_only: job.is_summary_only(b.rank),
            })
            .collect(),
        top_ops_basis: a.op_basis.as_str(),
        top_ops: a
            .top_ops
            .iter()
            .take(JSON_TOP_OPS)
            .map(|o| OpRow {
                name: job.strings.resolve(o.name).to_string(),
                kind: o.kind.as_str(),
                count: o.count,
                total_ns: o.total_ns,
                mean_ns: o.mean_ns,
                share: crate::analysis::ser::round6(o.share),
            })
            .collect(),
        timings: Timings {
            load_ns: loaded.load_ns,
            analysis_ns: a.analysis_ns,
        },
        skipped: loaded
            .skipped
            .iter()
            .map(|e| Skipped {
                path: e.path.clone(),
                reason: e.to_string(),
            })
            .collect(),
        scope: ScopeInfo {
            step: scope.step,
            rank: scope.rank,
        },
    }
}

/// Renders the report in a format. Text and markdown are printed on terminals: trace names
/// in them are made [`printable`](crate::format::printable) where they are placed, and the
/// whole document passes [`printable_lines`](crate::format::printable_lines) last. JSON keeps
/// names and escapes what a terminal must not see raw ([`crate::format::json`]).
pub fn render(r: &Report, format: Format) -> String {
    render_in(r, format, text::PAGE)
}

/// The text report's width off a terminal.
pub fn text_page() -> usize {
    text::PAGE
}

/// [`render`] with the text report laid out in `page` columns (a terminal's width).
pub fn render_in(r: &Report, format: Format, page: usize) -> String {
    // The whole report is copied only when it holds something to escape.
    let printable = |s: String| {
        match crate::format::printable_lines(&s) {
            std::borrow::Cow::Owned(escaped) => Some(escaped),
            std::borrow::Cow::Borrowed(_) => None,
        }
        .unwrap_or(s)
    };
    match format {
        Format::Text => printable(text::render_in(r, page) + &hang_in(r, format, page)),
        Format::Md => printable(markdown::render(r) + &hang_in(r, format, page)),
        Format::Json => {
            let mut s = crate::format::json::to_string_pretty(r).expect("the report serializes");
            s.push('\n');
            s
        }
    }
}

impl StepRow {
    /// Display cells: step, max, median, min, ranks, slowest rank (own work).
    pub fn cells(&self) -> [String; 6] {
        [
            self.step.to_string(),
            human(self.time_ns.max),
            human(self.time_ns.median),
            human(self.time_ns.min),
            self.ranks.to_string(),
            format!(
                "{} ({})",
                self.slowest_rank,
                human(self.slowest_rank_work_ns)
            ),
        ]
    }
}

impl BreakdownRow {
    /// Display cells: rank (`*`: summary only), span, then the six parts in partition order.
    pub fn cells(&self) -> [String; 8] {
        let b = &self.parts;
        [
            format!("{}{}", b.rank, if self.summary_only { "*" } else { "" }),
            human(b.span_ns),
            human(b.compute_ns),
            human(b.overlap_ns),
            human(b.comm_ns),
            human(b.memory_ns),
            human(b.host_bound_ns),
            human(b.free_ns),
        ]
    }
}

impl OpRow {
    /// Display cells after the name: kind, count, total, mean, share (%).
    pub fn cells(&self) -> [String; 5] {
        [
            self.kind.to_string(),
            self.count.to_string(),
            human(self.total_ns),
            human(self.mean_ns),
            crate::format::pct(self.share),
        ]
    }
}

/// `name count` for every non-zero entry of a count map, in key order.
pub fn nonzero_counts<K: std::fmt::Display>(m: &BTreeMap<K, u64>) -> Vec<String> {
    m.iter()
        .filter(|(_, n)| **n > 0)
        .map(|(k, n)| format!("{k} {n}"))
        .collect()
}

/// The closing lists of a report, each with its title: notes, warnings, skipped inputs.
pub fn closing_lists(r: &Report) -> [(&'static str, Vec<&str>); 3] {
    [
        ("Notes", r.job.notes.iter().map(String::as_str).collect()),
        (
            "Warnings",
            r.job.warnings.iter().map(String::as_str).collect(),
        ),
        (
            "Skipped (could not be read)",
            r.skipped.iter().map(|s| s.reason.as_str()).collect(),
        ),
    ]
}

/// Every section table after the per-step ones, in reading order.
pub fn tables(r: &Report) -> Vec<Table> {
    let mut out = cluster_tables::tables(&r.cluster, &r.communication);
    if let Some(c) = &r.critical_path {
        out.push(critical::table(c));
    }
    if let Some(w) = &r.whatif {
        out.push(whatif::steps_table(w));
        out.extend(w.slowdown.as_ref().map(whatif::slowdown_table));
    }
    out.extend(advice::roofline(&r.roofline));
    out.extend(tasks::pmu(&r.roofline.roofline));
    out.extend(r.tasks.as_ref().and_then(tasks::tasks));
    out.extend(tasks::affinity(&r.affinity));
    out.extend(r.clocks.as_ref().and_then(tasks::clocks));
    out.extend(tasks::op_stat_checks(&r.op_stat_checks));
    out.extend(advice::host(&r.host));
    out.extend(profiler_table(&r.profiler_checks));
    out.extend(transports::table(&r.transports));
    out.extend(transports::links(&r.link_matrix));
    out.extend(
        r.unaligned_transfers
            .as_ref()
            .and_then(transports::unaligned),
    );
    out
}

/// The profiler's step summary beside the same columns from the events, two rows per
/// (rank, step); `None` when the profiler wrote none.
fn profiler_table(checks: &[crate::analysis::profiler_check::StepCheck]) -> Option<Table> {
    use crate::analysis::profiler_check::columns;
    if checks.is_empty() {
        return None;
    }
    let mut rows = Vec::new();
    for c in checks {
        for (who, row) in [("profiler", &c.theirs), ("events", &c.ours)] {
            let mut cells = if who == "profiler" {
                vec![c.rank.to_string(), c.step.to_string(), who.to_string()]
            } else {
                vec![String::new(), String::new(), who.to_string()]
            };
            cells.extend(
                columns(row)
                    .iter()
                    .filter(|(name, _)| *name != "Communication")
                    .map(|(_, v)| human(*v)),
            );
            cells.push(row.preparing.map_or("-".into(), human));
            cells.push(if who == "events" {
                crate::format::pct(c.worst_deviation())
            } else {
                String::new()
            });
            rows.push(cells);
        }
    }
    Some(Table {
        title: "Profiler step summary (step_trace_time.csv) against the events".into(),
        header: vec![
            "rank",
            "step",
            "<source",
            "computing",
            "comm exposed",
            "overlapped",
            "free",
            "stage",
            "bubble",
            "preparing",
            "dev",
        ],
        rows,
        notes: vec![
            "events: the same columns from each step's device work by torch_npu's definitions; \
             dev: the largest difference as a share of the device span (docs/metrics.md)"
                .into(),
        ],
    })
}

/// The timings line (the one part of a report that varies between runs).
pub fn timings_line(r: &Report) -> String {
    format!(
        "timings: load {}, analysis {}",
        human(r.timings.load_ns as i64),
        human(r.timings.analysis_ns as i64)
    )
}

/// Breakdown rows of one step, most own work first (ties by rank).
pub fn rows_of_step(r: &Report, step: StepNo) -> Vec<&BreakdownRow> {
    let mut rows: Vec<&BreakdownRow> = r
        .breakdown
        .iter()
        .filter(|b| b.parts.step == step)
        .collect();
    rows.sort_by(|a, b| {
        b.own_work_ns
            .cmp(&a.own_work_ns)
            .then(a.parts.rank.cmp(&b.parts.rank))
    });
    rows
}
