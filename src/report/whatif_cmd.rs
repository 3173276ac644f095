//! `stepscope whatif`: the steps replayed with a fix (docs/metrics.md "Replay"), against
//! their measured times; the saving of every finding; the slowdown decomposition. Text,
//! markdown, or JSON (schema `stepscope.whatif/1`, docs/report-schema.md).

use super::Format;
use super::table::Table;
use super::whatif::slowdown_table;
use crate::analysis::Analysis;
use crate::analysis::whatif;
use crate::analysis::whatif::asked::Predicted;
use crate::analysis::whatif::choice::{Choice, NoFix};
use crate::analysis::whatif::slowdown::Slowdown;
use crate::format::human;
use crate::model::Job;
use crate::time::Ns;
use serde::Serialize;

/// The JSON schema tag.
pub const SCHEMA: &str = "stepscope.whatif/1";

/// The command's result.
#[derive(Debug, Serialize)]
pub struct WhatIfRun {
    /// `stepscope.whatif/1`.
    pub schema: &'static str,
    /// The fix asked for (`ideal`, `all`, a rule id, `rank R`).
    pub fix: String,
    /// Per step replayed.
    pub steps: Vec<Predicted>,
    /// Σ measured over the steps.
    pub measured_ns: Ns,
    /// Σ predicted.
    pub predicted_ns: Ns,
    /// Per finding: what its own fix saves over the steps (null: not replayed).
    pub findings: Vec<FindingSaving>,
    /// S, S_t, S_w and the verdict.
    pub slowdown: Option<Slowdown>,
    /// Why no step was replayed, when the job cannot be (its findings keep their rules'
    /// estimates).
    pub not_replayed: Option<String>,
}

/// A finding and what fixing it saves.
#[derive(Debug, Serialize)]
pub struct FindingSaving {
    /// Rule id.
    pub rule: &'static str,
    /// Severity (from the saving when replayed).
    pub severity: &'static str,
    /// Replayed saving over the steps shown (null: not replayed).
    pub saves_ns: Option<Ns>,
    /// Its impact (the saving, else the rule's estimate).
    pub impact_ns: Ns,
    /// One line.
    pub title: String,
}

/// Replays the analysed steps with `choice`.
pub fn run(job: &Job, a: &Analysis, choice: &Choice) -> Result<WhatIfRun, NoFix> {
    let asked = whatif::asked::replay(job, a, choice)?;
    Ok(WhatIfRun {
        schema: SCHEMA,
        fix: choice.name(),
        steps: asked.steps,
        measured_ns: asked.measured_ns,
        predicted_ns: asked.predicted_ns,
        findings: a
            .findings
            .iter()
            .map(|f| FindingSaving {
                rule: f.rule,
                severity: f.severity.as_str(),
                saves_ns: f.saves_ns,
                impact_ns: f.impact_ns,
                title: crate::prose::words(f).title,
            })
            .collect(),
        slowdown: a.whatif.slowdown.clone(),
        not_replayed: asked.not_replayed,
    })
}

/// The tables of the text and markdown outputs.
fn tables(r: &WhatIfRun) -> Vec<Table> {
    let mut steps = Table {
        title: format!("What-if: fix {} (per step, max over ranks)", r.fix),
        header: vec!["step", "measured", "predicted", "saves", "error"],
        ..Table::default()
    };
    for s in &r.steps {
        steps.rows.push(vec![
            s.step.to_string(),
            human(s.measured_ns),
            human(s.predicted_ns),
            human(s.measured_ns.saturating_sub(s.predicted_ns)),
            format!(
                "{:.2}%{}",
                s.replay_error * 100.0,
                if s.explains { "" } else { " !" }
            ),
        ]);
    }
    let saved = r.measured_ns.saturating_sub(r.predicted_ns);
    steps.notes.push(format!(
        "over {} step(s): measured {}, predicted {}, saves {} ({:.1}%)",
        r.steps.len(),
        human(r.measured_ns),
        human(r.predicted_ns),
        human(saved),
        100.0 * saved as f64 / r.measured_ns.max(1) as f64
    ));
    steps.notes.extend(r.not_replayed.clone());
    if r.steps.iter().any(|s| !s.explains) {
        steps.notes.push(
            "! the graph does not explain the step (replay error > 2%): no saving is claimed"
                .into(),
        );
    }
    let mut findings = Table {
        title: "What fixing each finding saves (replayed)".into(),
        header: vec!["<rule", "<severity", "saves", "<finding"],
        ..Table::default()
    };
    for f in &r.findings {
        findings.rows.push(vec![
            f.rule.to_string(),
            f.severity.to_string(),
            f.saves_ns
                .map_or_else(|| format!("≈{} (not replayed)", human(f.impact_ns)), human),
            f.title.clone(),
        ]);
    }
    let mut out = vec![steps, findings];
    out.extend(r.slowdown.as_ref().map(slowdown_table));
    out
}

/// The command's output in `format`.
pub fn render(r: &WhatIfRun, format: Format, page: usize) -> String {
    match format {
        Format::Json => {
            crate::format::json::to_string_pretty(r).expect("the what-if serializes") + "\n"
        }
        _ => super::tables_in(&tables(r), format, page),
    }
}
