//! The accelerator's kernel table in the text and markdown reports: operators by their PMU
//! pipe utilization, and the tasks' compile state and AI CPU fallbacks.

use super::table::Table;
use crate::analysis::roofline::Roofline;
use crate::analysis::tasks::Tasks;
use crate::format::human;
use crate::model::Pipe;

/// Operators classified by their counters; `None` when none were.
pub fn pmu(r: &Roofline) -> Option<Table> {
    if r.pmu_ops.is_empty() {
        return None;
    }
    let mut header = vec!["<operator", "<core", "<class", "tasks", "time"];
    header.extend(Pipe::ALL.iter().map(|p| p.as_str()));
    Some(Table {
        title: format!(
            "Pipe utilization (PMU counters, % busy; the busiest pipe at >= U = {} bounds the operator)",
            r.u
        ),
        header,
        rows: r
            .pmu_ops
            .iter()
            .take(crate::analysis::roofline::TOP_PER_CLASS)
            .map(|o| {
                let mut row = vec![
                    o.op.clone(),
                    o.core.map_or("-", |c| c.short()).to_string(),
                    o.class.as_str().to_string(),
                    o.kernels.to_string(),
                    human(o.time_ns),
                ];
                row.extend((0..Pipe::ALL.len()).map(|k| {
                    let busy = [o.cube, o.vector].iter().flatten().map(|u| u[k]).fold(0.0, f32::max);
                    if busy > 0.0 { percent(f64::from(busy)) } else { "-".into() }
                }));
                row
            })
            .collect(),
        notes: vec![
            "ratios: the share of each task's time a pipe was busy, weighted by duration; the larger of the cube and vector units".into(),
        ],
    })
}

/// Dynamic-shape and AI CPU tasks; `None` without a kernel table.
pub fn tasks(t: &Tasks) -> Option<Table> {
    if t.tasks == 0 {
        return None;
    }
    let mut notes = Vec::new();
    if t.with_state > 0 {
        notes.push(format!(
            "{} of {} tasks ran compiled for dynamic shapes",
            t.dynamic, t.with_state
        ));
    } else {
        notes.push("the kernel table records no compile state (OP State)".into());
    }
    if t.ai_cpu_ops.is_empty() {
        notes.push("no AI CPU tasks".into());
    }
    Some(Table {
        title: format!("Device tasks (kernel table: {} tasks)", t.tasks),
        header: if t.ai_cpu_ops.is_empty() {
            Vec::new()
        } else {
            vec!["<AI CPU operator", "tasks", "time", "longest"]
        },
        rows: t
            .ai_cpu_ops
            .iter()
            .map(|o| {
                vec![
                    o.op.clone(),
                    o.tasks.to_string(),
                    human(o.time_ns),
                    human(o.max_ns),
                ]
            })
            .collect(),
        notes,
    })
}

/// A ratio as a whole percentage without the sign (the title says %).
fn percent(x: f64) -> String {
    format!("{:.0}", x * 100.0)
}

/// The fused APIs that replace runs of the job's operators; `None` when none applies.
pub fn affinity(a: &[crate::analysis::affinity::AffinityMatch]) -> Option<Table> {
    if a.is_empty() {
        return None;
    }
    Some(Table {
        title: "Affinity APIs (torch_npu fused APIs for runs of operators on the main thread)"
            .into(),
        header: vec![
            "<api",
            "<replaces (first run)",
            "runs",
            "host time",
            "ranks",
        ],
        rows: a
            .iter()
            .map(|m| {
                vec![
                    m.api.clone(),
                    m.replaces.clone(),
                    m.count.to_string(),
                    human(m.host_ns),
                    crate::format::join(&m.ranks),
                ]
            })
            .collect(),
        notes: Vec::new(),
    })
}

/// The (rank, step)s whose device clock dropped; `None` when none did.
pub fn clocks(c: &crate::analysis::clocks::Clocks) -> Option<Table> {
    let top = c.top_mhz?;
    if c.drops.is_empty() {
        return None;
    }
    Some(Table {
        title: format!("Device clock below the job's top {top} MHz (by more than 5%)"),
        header: vec!["rank", "step", "mean MHz", "min MHz", "compute", "lost"],
        rows: c
            .drops
            .iter()
            .take(10)
            .map(|d| {
                vec![
                    d.rank.to_string(),
                    d.step.to_string(),
                    format!("{:.0}", d.mean_mhz),
                    d.min_mhz.to_string(),
                    human(d.compute_ns),
                    human(d.lost_ns),
                ]
            })
            .collect(),
        notes: vec!["lost: compute x (1 - mean / top), the time the slower clock added".into()],
    })
}

/// Per rank, how many of the profiler's per-type sums (`op_statistic.csv`) the tasks
/// reproduce; the rows that differ as notes. `None` without the file.
pub fn op_stat_checks(c: &[crate::analysis::tasks::OpStatCheck]) -> Option<Table> {
    if c.is_empty() {
        return None;
    }
    let notes = c
        .iter()
        .flat_map(|k| {
            k.differ.iter().take(5).map(move |d| {
                format!(
                    "rank {}: {} on {}: {} task(s) in {} there, {} in {} here",
                    k.rank,
                    d.op,
                    d.core,
                    d.count.0,
                    human(d.time_ns.0),
                    d.count.1,
                    human(d.time_ns.1)
                )
            })
        })
        .collect();
    Some(Table {
        title: "Kernel table against op_statistic.csv (count, and time within 1 ns per task)"
            .into(),
        header: vec!["rank", "types", "agree", "differ"],
        rows: c
            .iter()
            .map(|k| {
                vec![
                    k.rank.to_string(),
                    k.rows.to_string(),
                    k.agree.to_string(),
                    k.differ.len().to_string(),
                ]
            })
            .collect(),
        notes,
    })
}
