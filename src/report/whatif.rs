//! The what-if in the report (docs/metrics.md "Replay" and "Slowdown"; JSON in
//! docs/report-schema.md): the replay's self-check per step, the ideal step, and the
//! slowdown decomposition; as tables for text and markdown.

use super::table::Table;
use crate::analysis::whatif::joint::JointSaving;
use crate::analysis::whatif::slowdown::{Slowdown, Verdict};
use crate::analysis::whatif::{MAX_REPLAY_ERROR, StepWhatIf, WhatIf};
use crate::format::human;
use crate::time::Ns;
use serde::Serialize;

/// The what-if as the report carries it.
#[derive(Debug, Clone, Serialize)]
pub struct WhatIfView {
    /// The largest replay error over the steps (a fraction of the step time).
    #[serde(serialize_with = "crate::analysis::ser::f64_6")]
    pub replay_error: f64,
    /// Some step's replay error is at most [`MAX_REPLAY_ERROR`], so savings are claimed
    /// (only from the steps whose graph explains them).
    pub explains: bool,
    /// Per step.
    pub steps: Vec<StepWhatIf>,
    /// S, S_t, S_w and the verdict (absent when no step is explained).
    pub slowdown: Option<Slowdown>,
    /// Why the job was not replayed (absent when it was).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_replayed: Option<String>,
    /// The first replayed findings' fixes together: 1, 1+2, 1+2+3 … (docs/metrics.md,
    /// "Joint savings").
    pub joint: Vec<JointSaving>,
    /// What every fix together saves over the steps the graph explains (Σ measured − ideal).
    pub ideal_saves_ns: Ns,
}

impl WhatIfView {
    /// The view of a what-if; `None` when no step was replayed and nothing says why.
    pub fn of(w: &WhatIf) -> Option<WhatIfView> {
        (!w.steps.is_empty() || w.not_replayed.is_some()).then(|| WhatIfView {
            replay_error: w.replay_error(),
            explains: w.explains(),
            steps: w.steps.clone(),
            slowdown: w.slowdown.clone(),
            not_replayed: w.not_replayed.clone(),
            joint: w.joint.clone(),
            ideal_saves_ns: w.ideal_saves(),
        })
    }

    /// The joint savings as one line (`None`: fewer than two replayed findings): Σ over the
    /// steps shown, each with its share of Σ step time.
    pub fn joint_line(&self) -> Option<String> {
        if self.joint.is_empty() {
            return None;
        }
        let total: Ns = self.steps.iter().map(|s| s.measured_ns).sum();
        let part = |ns: Ns| {
            format!(
                "{} ({})",
                human(ns),
                crate::format::pct(ns as f64 / total.max(1) as f64)
            )
        };
        let mut v: Vec<String> = self
            .joint
            .iter()
            .enumerate()
            .map(|(k, j)| {
                let rule = j.rules.last().copied().unwrap_or_default();
                let plus = if k == 0 { "" } else { "+ " };
                format!("{plus}{rule} {}", part(j.saves_ns))
            })
            .collect();
        v.push(format!("ideal {}", part(self.ideal_saves_ns)));
        Some(format!(
            "the first replayed findings' fixes added one by one (Σ over the steps shown; savings do not add): {}",
            v.join(" · ")
        ))
    }
}

/// The verdict in words.
pub fn verdict_words(v: Verdict) -> String {
    match v {
        Verdict::Balanced => "balanced: no rank's or stage's work is more than 2% of the step away from the mean".into(),
        Verdict::Worker { rank } => format!("one slow worker: fixing rank {rank} alone gives back most of the imbalance"),
        Verdict::Stages => "unbalanced pipeline stages: rebalancing the stages gives back more than fixing any one worker".into(),
        Verdict::Spread => "spread: no single worker or stage split explains most of the imbalance".into(),
    }
}

/// The replay per step: measured, replayed, error and ideal.
pub fn steps_table(v: &WhatIfView) -> Table {
    let mut t = Table {
        title: "What-if replay (per step: measured, replayed with the measured durations, ideal)"
            .into(),
        header: vec![
            "step",
            "measured",
            "replayed",
            "error",
            "ideal",
            "ideal saves",
        ],
        ..Table::default()
    };
    if let Some(why) = &v.not_replayed {
        t.notes.push(why.clone());
        return t;
    }
    for s in &v.steps {
        t.rows.push(vec![
            s.step.to_string(),
            human(s.measured_ns),
            human(s.replayed_ns),
            format!("{:.2}%", s.replay_error * 100.0),
            human(s.ideal_ns),
            human(s.ideal_saves()),
        ]);
    }
    let bad: Vec<String> = v
        .steps
        .iter()
        .filter(|s| s.replay_error > MAX_REPLAY_ERROR)
        .map(|s| s.step.to_string())
        .collect();
    t.notes.push(if bad.is_empty() {
        format!("the graph explains every step (replay error ≤ {:.0}%)", MAX_REPLAY_ERROR * 100.0)
    } else {
        format!(
            "the graph does not explain step(s) {} (replay error > {:.0}%): no saving is claimed from them",
            bad.join(", "),
            MAX_REPLAY_ERROR * 100.0
        )
    });
    t
}

/// The slowdown decomposition: S, then S_t per op type and S_w per worker.
pub fn slowdown_table(s: &Slowdown) -> Table {
    let mut t = Table {
        title: format!(
            "Slowdown S = actual / ideal = {} / {} = {:.3}",
            human(s.actual_ns),
            human(s.ideal_ns),
            s.s
        ),
        header: vec!["<part", "<of", "S", "saves"],
        ..Table::default()
    };
    for p in &s.by_type {
        t.rows.push(vec![
            "op type".into(),
            p.of.to_string(),
            format!("{:.3}", p.s),
            human(p.saves_ns),
        ]);
    }
    for p in &s.by_worker {
        t.rows.push(vec![
            "worker".into(),
            format!("rank {}", p.of),
            format!("{:.3}", p.s),
            human(p.saves_ns),
        ]);
    }
    if let Some(st) = s.stages_saves_ns {
        let ratio = crate::analysis::whatif::slowdown::ratio(
            s.actual_ns,
            s.actual_ns.saturating_sub(st).max(1),
        );
        t.rows.push(vec![
            "stages".into(),
            "balanced".into(),
            format!("{ratio:.3}"),
            human(st),
        ]);
    }
    t.notes.push(verdict_words(s.verdict));
    t
}
