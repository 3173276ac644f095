//! The diff's tables for text and markdown: step pairs, the parts, the ranks, operators that
//! got slower and faster, kernels, collectives, the critical path and the findings.

use super::DiffReport;
use crate::analysis::diff::{Delta, OpRow, Status};
use crate::format::{human, signed};
use crate::report::table::Table;
use crate::time::Ns;

/// Every table, in reading order.
pub fn all(r: &DiffReport) -> Vec<Table> {
    let mut out = vec![steps(r), parts(r), ranks(r)];
    out.extend(ops(r));
    out.extend(host(r));
    out.extend([collectives(r), findings(r)]);
    out.extend(path(r));
    out.retain(|t| !t.rows.is_empty() || !t.notes.is_empty());
    out
}

/// `before`, `after`, `Δ`, `Δ%` cells of a delta.
fn cells(d: &Delta) -> [String; 4] {
    let pct = match d.ratio() {
        Some(x) => format!("{:+.1}%", x * 100.0),
        None if d.after_ns == 0 => "-".to_string(),
        None => "new".to_string(),
    };
    [
        human(d.before_ns),
        human(d.after_ns),
        signed(d.delta_ns()),
        pct,
    ]
}

fn steps(r: &DiffReport) -> Table {
    let mut t = Table {
        title: "Step time (cluster: max over ranks)".into(),
        header: vec!["before", "after", "before", "after", "Δ", "Δ%"],
        ..Table::default()
    };
    for p in &r.pairs {
        let d = Delta {
            before_ns: p.before_ns,
            after_ns: p.after_ns,
        };
        let mut row = vec![p.before.to_string(), p.after.to_string()];
        row.extend(cells(&d));
        t.rows.push(row);
    }
    t
}

fn parts(r: &DiffReport) -> Table {
    let b = &r.breakdown;
    let n = b.rows.max(1) as Ns;
    let mut t = Table {
        title: format!(
            "Where the time went (mean per rank and step, over {} rank(s) in both runs)",
            b.ranks.len()
        ),
        header: vec!["<part", "before", "after", "Δ", "Δ%", "share of Δ"],
        ..Table::default()
    };
    let total = b.span.delta_ns();
    for p in &b.parts {
        let mean = Delta {
            before_ns: p.time.before_ns / n,
            after_ns: p.time.after_ns / n,
        };
        let [x, y, _, pct] = cells(&mean);
        let share = if total != 0 && p.time.delta_ns() != 0 {
            format!("{:.0}%", 100.0 * p.time.delta_ns() as f64 / total as f64)
        } else {
            "-".into()
        };
        t.rows.push(vec![
            p.part.as_str().into(),
            x,
            y,
            signed(p.time.delta_ns() / n),
            pct,
            share,
        ]);
    }
    t.notes.push(format!(
        "span {} → {} per rank and step; the parts' changes add up to the span's ({} in sum over {} rank-step(s))",
        human(b.span.before_ns / n),
        human(b.span.after_ns / n),
        signed(total),
        b.rows
    ));
    if r.ranks_by == "order" {
        t.notes
            .push("no rank id is in both runs: ranks are paired by position".into());
    }
    for (which, ids) in [("first", &b.only_before), ("second", &b.only_after)] {
        if !ids.is_empty() {
            t.notes.push(format!(
                "ranks only in the {which} run: {}",
                crate::format::ranges(ids)
            ));
        }
    }
    t
}

fn ranks(r: &DiffReport) -> Table {
    let mut t = Table {
        title: "Ranks (Σ over the aligned steps), the largest change first".into(),
        header: vec![
            "rank",
            "before",
            "after",
            "Δ",
            "Δ own work",
            "<most changed part",
        ],
        ..Table::default()
    };
    for k in &r.breakdown.ranks {
        t.rows.push(vec![
            k.paired_with
                .map_or_else(|| k.rank.to_string(), |a| format!("{}→{a}", k.rank)),
            human(k.span.before_ns),
            human(k.span.after_ns),
            signed(k.span.delta_ns()),
            signed(k.own_work.delta_ns()),
            format!("{} {}", k.top_part.as_str(), signed(k.top_part_delta_ns)),
        ]);
    }
    t
}

/// A row's name cell: `name`, or `old → new` when renamed.
fn name(o: &OpRow) -> String {
    match &o.renamed_to {
        Some(n) => format!("{} → {n}", o.name),
        None => o.name.clone(),
    }
}

fn op_table(title: String, rows: &[&OpRow]) -> Table {
    let mut t = Table {
        title,
        header: vec![
            "<name",
            "<matched",
            "count",
            "before",
            "after",
            "Δ",
            "mean before",
            "mean after",
        ],
        ..Table::default()
    };
    let mean = |total: Ns, n: u64| {
        if n == 0 {
            "-".to_string()
        } else {
            human(total / n as Ns)
        }
    };
    for o in rows {
        t.rows.push(vec![
            name(o),
            format!("{:?}", o.matched).to_lowercase(),
            format!("{}→{}", o.count_before, o.count_after),
            human(o.total.before_ns),
            human(o.total.after_ns),
            signed(o.total.delta_ns()),
            mean(o.total.before_ns, o.count_before),
            mean(o.total.after_ns, o.count_after),
        ]);
    }
    t
}

fn ops(r: &DiffReport) -> Vec<Table> {
    let what = if r.ops_basis == "device" {
        "device time"
    } else {
        "host time"
    };
    // Same time but more (fewer) calls counts as slower (faster): host-only operators.
    let key = |o: &OpRow| {
        (
            o.total.delta_ns(),
            o.count_after as i128 - o.count_before as i128,
        )
    };
    let slower: Vec<&OpRow> = r.ops.operators.iter().filter(|o| key(o) > (0, 0)).collect();
    let faster: Vec<&OpRow> = r.ops.operators.iter().filter(|o| key(o) < (0, 0)).collect();
    let mut a = op_table(
        format!("Operators that got slower (top-level, {what}, Σ over ranks and steps)"),
        &slower,
    );
    let m = &r.ops.matched;
    a.notes.push(format!(
        "lined up per rank and step: {} by name and shapes, {} by name; {} only before, {} only after",
        m.by_shapes, m.by_name, m.only_before, m.only_after
    ));
    let b = op_table(format!("Operators that got faster ({what})"), &faster);
    let kernels: Vec<&OpRow> = r.ops.kernels.iter().filter(|o| o.changed()).collect();
    let mut k = op_table(
        "Kernels that changed (Σ device time over ranks and steps)".into(),
        &kernels,
    );
    let same = r.ops.kernels.len() - kernels.len();
    if same > 0 {
        k.notes
            .push(format!("{same} kernel name(s) unchanged in count and time"));
    }
    vec![a, b, k]
}

fn collectives(r: &DiffReport) -> Table {
    let mut t = Table {
        title: "Collectives (per aligned step: Σ over the members of the matched instances)".into(),
        header: vec![
            "<op",
            "<group",
            "calls",
            "time Δ",
            "wait Δ",
            "transit Δ",
            "busbw",
        ],
        ..Table::default()
    };
    let bw = |x: Option<f64>| x.map_or("-".to_string(), |g| format!("{g:.1}"));
    for c in &r.collectives {
        t.rows.push(vec![
            c.op.to_string(),
            c.group.clone(),
            format!("{}→{}", c.calls[0], c.calls[1]),
            signed(c.time.delta_ns()),
            signed(c.wait.delta_ns()),
            signed(c.transit.delta_ns()),
            format!("{}→{} GB/s", bw(c.busbw_gbps[0]), bw(c.busbw_gbps[1])),
        ]);
    }
    t
}

/// Host-side work by role: matched by what it is, measured on the host.
fn host(r: &DiffReport) -> Option<Table> {
    let mut t = Table {
        title: "Host-side work by role (mean per rank and step: host time, device idle)".into(),
        header: vec![
            "<role",
            "calls",
            "host before",
            "host after",
            "Δ",
            "idle before",
            "idle after",
        ],
        ..Table::default()
    };
    for h in &r.host {
        t.rows.push(vec![
            h.role.to_string(),
            format!("{}→{}", h.calls[0], h.calls[1]),
            human(h.host.before_ns),
            human(h.host.after_ns),
            signed(h.host.delta_ns()),
            human(h.device_idle.before_ns),
            human(h.device_idle.after_ns),
        ]);
    }
    (!t.rows.is_empty()).then_some(t)
}

fn findings(r: &DiffReport) -> Table {
    let mut t = Table {
        title: "Findings (impact per step)".into(),
        header: vec!["<status", "<rule", "before", "after", "<finding"],
        ..Table::default()
    };
    for f in &r.findings {
        let d = &f.delta;
        let status = match d.status {
            Status::Improved => format!(
                "improved {}",
                crate::format::pct0(
                    -(1.0 - d.impact.after_ns as f64 / d.impact.before_ns.max(1) as f64)
                )
            ),
            s => format!("{s:?}").to_lowercase(),
        };
        t.rows.push(vec![
            status,
            d.rule.to_string(),
            human(d.impact.before_ns),
            human(d.impact.after_ns),
            f.title.clone(),
        ]);
        if let (Status::Resolved, Some(p), Some(m)) = (d.status, d.predicted_ns, f.measured_ns) {
            t.notes.push(format!(
                "{} resolved: the first run's replay predicted fixing it saves {} per step; the step time changed by {} per step",
                d.rule,
                human(p),
                signed(-m)
            ));
        }
    }
    t
}

fn path(r: &DiffReport) -> Option<Table> {
    let p = r.critical_path.as_ref()?;
    let mut t = Table {
        title: format!("Critical path ({} vs {})", p.windows[0], p.windows[1]),
        header: vec!["<category", "before", "after", "Δ", "Δ%"],
        ..Table::default()
    };
    let mut row = vec!["total".to_string()];
    row.extend(cells(&p.total));
    t.rows.push(row);
    for (c, d) in &p.categories {
        if d.before_ns != 0 || d.after_ns != 0 {
            let mut row = vec![c.as_str().to_string()];
            row.extend(cells(d));
            t.rows.push(row);
        }
    }
    Some(t)
}
