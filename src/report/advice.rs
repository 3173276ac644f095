//! The findings (what to fix first), host and roofline tables of the text and markdown
//! reports.

use super::json::{FindingRow, RooflineView};
use super::table::Table;
use super::whatif::WhatIfView;
use crate::analysis::host::Host;
use crate::format::{fit, gbps, human, join, pct};

/// Findings shown in text and markdown (JSON lists all).
pub const FINDINGS: usize = 12;

/// What the first replayed findings' fixes save together, and every fix (the ideal).
pub fn joint(whatif: Option<&WhatIfView>) -> Option<Table> {
    let line = whatif.and_then(WhatIfView::joint_line)?;
    Some(Table {
        title: "Fixed together".into(),
        notes: vec![line],
        ..Default::default()
    })
}

/// The findings as numbered notes: title and impact (or the rule's estimate, not replayed),
/// evidence, what each explains, cause, suggestions.
pub fn findings(list: &[FindingRow]) -> Table {
    let mut t = Table {
        title: if list.is_empty() {
            "What to fix first: nothing found above the thresholds (docs/advisor.md)".to_string()
        } else {
            format!(
                "What to fix first ({} finding(s); impact = step time it costs, over the steps shown)",
                list.len()
            )
        },
        ..Default::default()
    };
    for (k, f) in list.iter().take(FINDINGS).enumerate() {
        t.notes.push(format!(
            "{}. [{}] {} — {} {} ({} of step time{}) [{}, {}, {}]",
            k + 1,
            f.severity.as_str().to_uppercase(),
            f.title,
            if f.saves_ns.is_some() {
                "saves"
            } else {
                "impact"
            },
            human(f.impact_ns),
            pct(f.impact_pct),
            if f.saves_ns.is_some() {
                ""
            } else {
                "; not replayed: the rule's estimate"
            },
            f.rule,
            f.kind.as_str(),
            f.category.as_str()
        ));
        let e = &f.evidence;
        let mut ev = Vec::new();
        if !e.ranks.is_empty() {
            ev.push(format!("ranks {}", join(&e.ranks)));
        }
        if !e.steps.is_empty() {
            ev.push(format!("steps {}", join(&e.steps)));
        }
        if !e.ops.is_empty() {
            let ops: Vec<String> = e.ops.iter().take(4).map(|o| fit(o, 40)).collect();
            ev.push(ops.join(", "));
        }
        if !ev.is_empty() {
            t.notes.push(format!("   evidence: {}", ev.join("; ")));
        }
        for x in &f.folded {
            let after = x
                .remains_ns
                .map(|r| format!(" (with this fixed, its own fix saves {})", human(r)))
                .unwrap_or_default();
            t.notes
                .push(format!("   also explains: {} [{}]{after}", x.title, x.rule));
        }
        t.notes.push(format!("   cause: {}", f.cause));
        t.notes
            .push(format!("   try: {}", f.suggestions.join(" | ")));
    }
    if list.len() > FINDINGS {
        t.notes.push(format!(
            "... {} more: --format json lists all",
            list.len() - FINDINGS
        ));
    }
    t
}

/// Host-side causes: launches, syncs, data loading, GC, allocator, pageable copies.
pub fn host(h: &Host) -> Option<Table> {
    let mut rows = Vec::new();
    rows.extend(launch_row(h));
    for s in h.syncs.iter().take(5) {
        rows.push(vec![
            "sync".into(),
            format!(
                "{} × {}{} (blocked {})",
                s.count,
                s.call,
                match s.caused_by.as_str() {
                    "-" => String::new(),
                    op => format!(" in {op}"),
                },
                human(s.blocked_ns)
            ),
            human(s.device_idle_after_ns),
            "-".into(),
        ]);
    }
    rows.extend(data_loading_row(h));
    rows.extend(gc_row(h));
    for (what, c) in [
        ("allocator", &h.allocator),
        ("pageable h2d", &h.pageable_h2d),
        ("pageable d2h", &h.pageable_d2h),
    ] {
        if c.count > 0 {
            rows.push(vec![
                what.into(),
                format!("{} calls on rank(s) {}", c.count, join(&c.ranks)),
                human(c.total_ns),
                "-".into(),
            ]);
        }
    }
    (!rows.is_empty()).then(|| Table {
        title: "Host (device idle = the cost; share of the step)".into(),
        header: vec!["<cause", "<what", "device idle", "share"],
        rows,
        notes: Vec::new(),
    })
}

fn launch_row(h: &Host) -> Option<Vec<String>> {
    let l = &h.launch;
    (l.launched > 0).then(|| {
        vec![
            "launch".into(),
            format!(
                "{} kernels, {} shorter than their launch",
                l.launched,
                pct(l.shorter_share)
            ),
            human(l.host_bound_ns),
            pct(if l.span_ns > 0 {
                l.host_bound_ns as f64 / l.span_ns as f64
            } else {
                0.0
            }),
        ]
    })
}

fn data_loading_row(h: &Host) -> Option<Vec<String>> {
    let d = &h.data_loading;
    (d.count > 0).then(|| {
        vec![
            "data loading".into(),
            format!(
                "{} loads, {} in all, longest {}",
                d.count,
                human(d.total_ns),
                human(d.max_ns)
            ),
            human(d.device_idle_ns),
            pct(d.share_of_step),
        ]
    })
}

fn gc_row(h: &Host) -> Option<Vec<String>> {
    let g = h.gc.first()?;
    Some(vec![
        "gc".into(),
        format!(
            "{} {} pause(s), longest {} (rank {}, step {})",
            h.gc.len(),
            if g.recorded {
                "recorded"
            } else {
                "conjectured"
            },
            human(g.dur_ns),
            g.rank,
            g.step
        ),
        human(h.gc.iter().map(|x| x.dur_ns).sum()),
        "-".into(),
    ])
}

/// Roofline classes and the top operators.
pub fn roofline(view: &RooflineView) -> Option<Table> {
    let r = &view.roofline;
    if r.kernel_time() == 0 {
        return None;
    }
    let classes: Vec<String> = r
        .classes
        .iter()
        .filter(|(_, c)| c.kernels > 0)
        .map(|(k, c)| format!("{} {} ({})", k.as_str(), pct(c.share), human(c.time_ns)))
        .collect();
    let mut notes = vec![format!("kernel time: {}", classes.join(", "))];
    notes.extend(view.note.clone());
    Some(Table {
        title: format!(
            "Roofline ({}; U = {})",
            r.device
                .as_ref()
                .map_or("no device peaks".to_string(), |d| format!(
                    "{} peaks",
                    d.name
                )),
            r.u
        ),
        header: vec![
            "<operator",
            "<dtype",
            "<class",
            "time",
            "AI",
            "TFLOP/s",
            "GB/s",
            "of peak",
        ],
        rows: r
            .ops
            .iter()
            .map(|o| {
                vec![
                    o.op.clone(),
                    o.dtype
                        .clone()
                        .unwrap_or_else(|| "-".into())
                        .replace("c10::", ""),
                    o.class.as_str().to_string(),
                    human(o.time_ns),
                    o.ai.map_or("-".into(), |a| format!("{a:.0}")),
                    o.tflops.map_or("-".into(), |t| format!("{t:.1}")),
                    gbps(o.gbps).replace(" GB/s", ""),
                    o.flops_of_peak.or(o.bw_of_peak).map_or("-".into(), pct),
                ]
            })
            .collect(),
        notes,
    })
}
