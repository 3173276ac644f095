//! The db's kernel table: `COMPUTE_TASK_INFO` (unit, operator type, block dim, input
//! shapes and types, as `STRING_IDS`) with each task's start from `TASK`, and the PMU's pipe
//! ratios from `TASK_PMU_INFO` (long form: one row per task and counter). The same
//! [`TaskRow`]s `kernel_details.csv` gives; the db records no `OP State`.

use super::rows::{col, each, int, opt_int};
use crate::ingest::ascend::tasks::TaskRow;
use crate::ingest::sqlite::Db;
use crate::model::{Core, Pipe, Pipes};
use rusqlite::types::ValueRef;
use rustc_hash::FxHashMap;

/// Every compute task's details; empty when the db has no `COMPUTE_TASK_INFO`.
pub(crate) fn details(
    db: &Db,
    strings: &FxHashMap<i64, String>,
) -> Result<Vec<TaskRow>, crate::error::Error> {
    if !db.has_table("COMPUTE_TASK_INFO")? {
        return Ok(Vec::new());
    }
    let pmu = if db.has_table("TASK_PMU_INFO")? {
        pmu(db, strings)?
    } else {
        FxHashMap::default()
    };
    let text = |id: Option<i64>| {
        id.and_then(|i| strings.get(&i))
            .filter(|s| !s.is_empty() && *s != "N/A")
            .cloned()
    };
    // Versions and trimmed exports leave columns out: those read as NULL.
    let mut cols = Vec::new();
    for c in [
        "opType",
        "taskType",
        "blockDim",
        "inputShapes",
        "inputDataTypes",
    ] {
        cols.push(if db.has_column("COMPUTE_TASK_INFO", c)? {
            format!("c.{c}")
        } else {
            "NULL".to_string()
        });
    }
    let sql = format!(
        "SELECT c.rowid, t.startNs, c.name, {}, c.globalTaskId \
         FROM COMPUTE_TASK_INFO c JOIN TASK t ON t.globalTaskId = c.globalTaskId",
        cols.join(", ")
    );
    let mut out = Vec::new();
    each(db, "COMPUTE_TASK_INFO", &sql, |r| {
        let id = int(col(r, 8)?)?;
        let (cube, vector) = pmu.get(&id).copied().unwrap_or_default();
        out.push(TaskRow {
            start: int(col(r, 1)?)?,
            name: text(opt_int(col(r, 2)?)?).unwrap_or_default(),
            op_type: text(opt_int(col(r, 3)?)?),
            core: text(opt_int(col(r, 4)?)?).map(|c| Core::parse(&c)),
            dynamic: None,
            block_dim: opt_int(col(r, 5)?)?.and_then(|b| u32::try_from(b).ok()),
            input_shapes: text(opt_int(col(r, 6)?)?).map(|s| s.trim_matches('"').to_string()),
            input_types: text(opt_int(col(r, 7)?)?),
            cube,
            vector,
            placement: None,
        });
        Ok(())
    })?;
    Ok(out)
}

/// The cube's and the vector unit's pipe ratios of one task.
type UnitPipes = (Option<Pipes>, Option<Pipes>);

/// Per `globalTaskId`: the cube's and the vector unit's pipe ratios, each when that unit's
/// total time is above 0.
fn pmu(
    db: &Db,
    strings: &FxHashMap<i64, String>,
) -> Result<FxHashMap<i64, UnitPipes>, crate::error::Error> {
    // Per unit: total time, ratios, and whether any ratio was recorded (other aic_metrics
    // record counters but no pipe ratios: nothing to classify by).
    let mut units: FxHashMap<i64, [(f64, Pipes, bool); 2]> = FxHashMap::default();
    let sql = "SELECT rowid, globalTaskId, name, value FROM TASK_PMU_INFO";
    each(db, "TASK_PMU_INFO", sql, |r| {
        let Some(name) = strings.get(&int(col(r, 2)?)?) else {
            return Ok(());
        };
        let Some((unit, what)) = counter(name) else {
            return Ok(());
        };
        let value = match col(r, 3)? {
            ValueRef::Integer(i) => i as f64,
            ValueRef::Real(f) => f,
            ValueRef::Null => 0.0,
            v => return Err(format!("{:?} is not a number", v.data_type())),
        };
        let u = &mut units.entry(int(col(r, 1)?)?).or_default()[unit];
        match what {
            None => u.0 = value,
            Some(p) => {
                u.1.set(p, value as f32);
                u.2 = true;
            }
        }
        Ok(())
    })?;
    Ok(units
        .into_iter()
        .map(|(id, [c, v])| {
            let ran = |(t, p, ratios): (f64, Pipes, bool)| (t > 0.0 && ratios).then_some(p);
            (id, (ran(c), ran(v)))
        })
        .collect())
}

/// A counter's unit (0 cube, 1 vector) and pipe (`None`: the unit's total time).
fn counter(name: &str) -> Option<(usize, Option<Pipe>)> {
    let (unit, rest) = match name.split_once('_')? {
        ("aic", r) => (0, r),
        ("aiv", r) => (1, r),
        _ => return None,
    };
    if rest == "total_time" {
        return Some((unit, None));
    }
    let stem = rest.strip_suffix("_ratio")?;
    Pipe::ALL
        .into_iter()
        .find(|p| p.as_str() == stem)
        .map(|p| (unit, Some(p)))
}
