//! `stepscope diff`: two runs compared (docs/metrics.md "Diff"), as text, markdown, or JSON
//! (schema `stepscope.diff/1`, docs/report-schema.md), and the regression gate's verdict.
//! Rendering never computes a number; the findings' words come from `crate::prose`.

mod pair;
mod tables;

pub use pair::of_pair;

use super::Format;
use crate::analysis::Analysis;
use crate::analysis::diff::{
    CollDelta, Delta, Diff, FindingDelta, OpDiff, Parts, PathDelta, StepPair,
};

use crate::format::human;
use crate::model::RankId;
use crate::time::Ns;
use serde::Serialize;

/// The JSON schema tag.
pub const SCHEMA: &str = "stepscope.diff/1";

/// Rows of each operator table in JSON (text and markdown show fewer).
pub const JSON_ROWS: usize = 200;

/// One run as the diff names it.
#[derive(Debug, Serialize)]
pub struct RunInfo {
    /// What was opened (a path, `demo cluster`).
    pub title: String,
    /// Its rank ids.
    pub ranks: Vec<RankId>,
    /// Its profiled steps.
    pub steps: usize,
    /// Its devices, once each.
    pub devices: Vec<String>,
}

/// The step time over the aligned steps.
#[derive(Debug, Serialize)]
pub struct StepSummary {
    /// Σ cluster step time over the pairs.
    #[serde(flatten)]
    pub total: Delta,
    /// Mean per pair, each run.
    pub mean_ns: [Ns; 2],
    /// The change, % of the first run's (null: it had none).
    #[serde(serialize_with = "crate::analysis::ser::opt_f64_6")]
    pub delta_pct: Option<f64>,
}

/// A finding's change with its words.
#[derive(Debug, Serialize)]
pub struct FindingView {
    /// The change.
    #[serde(flatten)]
    pub delta: FindingDelta,
    /// Its title in the run that has it (the second where both do).
    pub title: String,
    /// A resolved finding: the measured change of the step time per step (first − second).
    pub measured_ns: Option<Ns>,
}

/// Where the time of `stepscope diff` went (the only figures that differ between two runs
/// of the same command).
#[derive(Debug, Default, Serialize)]
pub struct Timings {
    /// Loading each run.
    pub load_ns: [u64; 2],
    /// Analysing each run.
    pub analysis_ns: [u64; 2],
    /// Comparing them.
    pub diff_ns: u64,
}

/// The whole diff.
#[derive(Debug, Serialize)]
pub struct DiffReport {
    /// `stepscope.diff/1`.
    pub schema: &'static str,
    /// The first run (baseline).
    pub before: RunInfo,
    /// The second run.
    pub after: RunInfo,
    /// `number`, `order` or `pairs`.
    pub aligned_by: &'static str,
    /// `id`, or `order`: ranks paired by position (no shared id, as many ranks).
    pub ranks_by: &'static str,
    /// The aligned steps.
    pub pairs: Vec<StepPair>,
    /// The step time.
    pub step: StepSummary,
    /// The change split into parts and ranks.
    pub breakdown: Parts,
    /// `device` or `host_self`: what operator time is.
    pub ops_basis: &'static str,
    /// Operators and kernels (each list cut at [`JSON_ROWS`], the largest |change| first).
    pub ops: OpDiff,
    /// Collectives per step.
    pub collectives: Vec<CollDelta>,
    /// The critical paths.
    pub critical_path: Option<PathDelta>,
    /// Host-side work by role (host time and device idle per step).
    pub host: Vec<crate::analysis::diff::host::HostDelta>,
    /// The findings.
    pub findings: Vec<FindingView>,
    /// Where the command's time went.
    pub timings: Timings,
}

/// The report of `d`, the runs described by their titles and analyses.
pub fn build(d: &Diff, runs: [RunInfo; 2], analyses: [&Analysis; 2]) -> DiffReport {
    let [before, after] = runs;
    let [mb, ma] = d.mean_step_ns();
    let measured = (mb - ma).round() as Ns;
    let findings = d
        .findings
        .iter()
        .map(|f| FindingView {
            title: title(f, analyses),
            measured_ns: (f.status == crate::analysis::diff::Status::Resolved).then_some(measured),
            delta: f.clone(),
        })
        .collect();
    let mut ops = d.ops.clone();
    ops.operators.truncate(JSON_ROWS);
    ops.kernels.truncate(JSON_ROWS);
    DiffReport {
        schema: SCHEMA,
        before,
        after,
        aligned_by: d.aligned_by,
        ranks_by: d.ranks_by,
        pairs: d.pairs.clone(),
        step: StepSummary {
            total: d.step,
            mean_ns: [mb.round() as Ns, ma.round() as Ns],
            delta_pct: d.step_ratio().map(|r| r * 100.0),
        },
        breakdown: d.parts.clone(),
        ops_basis: d.basis,
        ops,
        collectives: d.collectives.clone(),
        critical_path: d.critical_path.clone(),
        host: d.host.clone(),
        findings,
        timings: Timings::default(),
    }
}

/// The finding's title, from the run that has it (the second where both do).
fn title(f: &FindingDelta, analyses: [&Analysis; 2]) -> String {
    let (side, k) = match f.index {
        [_, Some(k)] => (1, k),
        [Some(k), None] => (0, k),
        [None, None] => return String::new(),
    };
    analyses[side]
        .findings
        .get(k)
        .map(|x| crate::prose::words(x).title)
        .unwrap_or_default()
}

/// The diff in `format`.
pub fn render(r: &DiffReport, format: Format, page: usize) -> String {
    let line = crate::format::printable(&headline(r)).into_owned();
    match format {
        Format::Json => {
            crate::format::json::to_string_pretty(r).expect("the diff serializes") + "\n"
        }
        Format::Text => format!(
            "{line}\n{}",
            super::tables_in(&tables::all(r), format, page)
        ),
        Format::Md => format!(
            "# {line}\n{}",
            super::tables_in(&tables::all(r), format, page)
        ),
    }
}

/// One line: what was compared and the step time's change.
pub fn headline(r: &DiffReport) -> String {
    format!(
        "stepscope diff: {} → {}: step time {} → {} ({}){} over {} step pair(s) aligned by {}",
        r.before.title,
        r.after.title,
        human(r.step.mean_ns[0]),
        human(r.step.mean_ns[1]),
        pct(r.step.delta_pct),
        explained_by(r).map_or(String::new(), |e| format!(", mostly {e},")),
        r.pairs.len(),
        r.aligned_by
    )
}

/// What explains most of the step time's change: the finding whose impact per step moved
/// with it by at least half of it (`dataloader resolved`), else the breakdown part that
/// changed most with it (`comm -41.1 ms`); `None` when the step time did not change.
fn explained_by(r: &DiffReport) -> Option<String> {
    let change = r.step.mean_ns[1].saturating_sub(r.step.mean_ns[0]);
    if change == 0 {
        return None;
    }
    let with = |d: Ns| d.signum() == change.signum();
    let finding = r
        .findings
        .iter()
        .filter(|f| with(f.delta.impact.delta_ns()))
        .max_by_key(|f| f.delta.impact.delta_ns().unsigned_abs());
    if let Some(f) =
        finding.filter(|f| f.delta.impact.delta_ns().unsigned_abs() * 2 >= change.unsigned_abs())
    {
        let status = format!("{:?}", f.delta.status).to_lowercase();
        return Some(format!("{} {status}", f.delta.rule));
    }
    let rows = r.breakdown.rows.max(1) as Ns;
    let part = r
        .breakdown
        .parts
        .iter()
        .filter(|p| with(p.time.delta_ns()))
        .max_by_key(|p| p.time.delta_ns().unsigned_abs())?;
    let d = part.time.delta_ns() / rows;
    Some(format!(
        "{} {}{}",
        part.part.as_str(),
        if d > 0 { "+" } else { "" },
        human(d)
    ))
}

/// `+12.3%`, or `n/a`.
fn pct(p: Option<f64>) -> String {
    p.map_or_else(|| "n/a".to_string(), |p| format!("{p:+.1}%"))
}

/// The regression gate: `Some(why)` when the step time grew more than `limit_pct` %; why
/// names the parts, the rank, the operator and the findings behind it (one line).
pub fn regression(r: &DiffReport, limit_pct: f64) -> Option<String> {
    let grew = r.step.delta_pct.unwrap_or(if r.step.total.delta_ns() > 0 {
        f64::INFINITY
    } else {
        0.0
    });
    if grew <= limit_pct {
        return None;
    }
    let rows = r.breakdown.rows.max(1) as Ns;
    let mut why = vec![format!(
        "step time {} → {} ({}, over --fail-on-regression {limit_pct}%)",
        human(r.step.mean_ns[0]),
        human(r.step.mean_ns[1]),
        pct(r.step.delta_pct)
    )];
    // The rank whose own work grew most is the likeliest cause; the parts show where.
    let grown = r
        .breakdown
        .ranks
        .iter()
        .max_by_key(|k| (k.own_work.delta_ns(), std::cmp::Reverse(k.rank)));
    if let Some(k) = grown.filter(|k| k.own_work.delta_ns() > 0) {
        why.push(format!(
            "rank {}'s own work +{} ({} {})",
            k.rank,
            human(k.own_work.delta_ns()),
            k.top_part.as_str(),
            crate::format::signed(k.top_part_delta_ns)
        ));
    }
    let mut parts: Vec<_> = r
        .breakdown
        .parts
        .iter()
        .filter(|p| p.time.delta_ns() > 0)
        .collect();
    parts.sort_by_key(|p| std::cmp::Reverse(p.time.delta_ns()));
    if let Some(p) = parts.first() {
        why.push(format!(
            "{} +{} per rank-step",
            p.part.as_str(),
            human(p.time.delta_ns() / rows)
        ));
    }
    if let Some(op) = r.ops.operators.iter().find(|o| o.total.delta_ns() > 0) {
        why.push(format!(
            "operator {} +{}",
            op.name,
            human(op.total.delta_ns())
        ));
    }
    for f in r
        .findings
        .iter()
        .filter(|f| f.delta.status == crate::analysis::diff::Status::Appeared)
        .take(2)
    {
        why.push(format!("new finding: {}", f.title));
    }
    Some(why.join("; "))
}
