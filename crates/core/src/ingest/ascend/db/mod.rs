//! The db export (`export_type=db`): `ascend_pytorch_profiler_{rank}.db` (MindSpore:
//! `ascend_mindspore_profiler_{rank}.db`) for the events, `analysis.db` `StepTraceTime` for
//! the profiler's step summary. Opened read-only and immutable ([`open`]); the rows
//! ([`rows`]) become the same model the text export gives ([`build`]), with the kernel
//! table's details ([`details`]).

pub(crate) mod build;
pub(crate) mod details;
pub(crate) mod rows;

use crate::error::Error;
use crate::format::echo;
use crate::ingest::sqlite::Db;
use crate::model::{ProfilerStep, StepNo, TransportUse};
use crate::time::micros_text_to_ns;
use std::path::Path;

/// The rank read from a profiler database.
pub struct DbRank {
    /// The rank (id unset) with names in `strings`.
    pub rank: crate::model::Rank,
    /// Its string table.
    pub strings: crate::model::Interner,
    /// `RANK_DEVICE_MAP.rankId`, when written.
    pub rank_id: Option<u32>,
    /// `NPU_INFO.name` (`Ascend910B`), when written.
    pub device: Option<String>,
    /// `META_DATA` `ENV_VARIABLES`: the variables that were set, when recorded.
    pub env: Option<Vec<(String, String)>>,
    /// `META_DATA` `parallel_group_info`, as the text export's metadata file has it.
    pub groups: Vec<crate::model::ProcessGroup>,
    /// `META_DATA` `distributed_args`' parallel sizes.
    pub parallel: Option<crate::model::ParallelSizes>,
    /// `COMPUTE_TASK_INFO` rows that match no device event.
    pub unmatched_tasks: usize,
    /// What a user must know about the rows (an empty `TASK`, names missing from
    /// `STRING_IDS`, duplicated tasks read once).
    pub warnings: Vec<String>,
}

/// The environment variables that were set, by name (`None`: none recorded).
type Env = Option<Vec<(String, String)>>;

/// `META_DATA`'s environment, parallel groups and parallel sizes.
type Meta = (
    Env,
    Vec<crate::model::ProcessGroup>,
    Option<crate::model::ParallelSizes>,
);

/// `META_DATA`'s environment, parallel groups and sizes (as `profiler_metadata.json` has
/// them).
fn meta_data(db: &Db) -> Result<Meta, Error> {
    let json = |name: &str| -> Result<Option<serde_json::Value>, Error> {
        let sql = format!("SELECT value FROM META_DATA WHERE name = '{name}' LIMIT 1");
        Ok(rows::first_text(db, "META_DATA", &sql)?
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok()))
    };
    let env = json("ENV_VARIABLES")?.and_then(|v| super::info::env(&v));
    let groups = json("parallel_group_info")?
        .map(|v| super::info::parallel_groups(&v))
        .unwrap_or_default();
    let parallel = json("distributed_args")?.and_then(|v| super::info::parallel_sizes(&v));
    Ok((env, groups, parallel))
}

/// Reads the events of one rank's database.
pub fn read(path: &Path) -> Result<DbRank, Error> {
    let db = Db::open(path)?;
    for table in ["STRING_IDS", "TASK"] {
        if !db.has_table(table)? {
            return Err(Error::input(
                &db.label,
                format!("no {table} table: not an Ascend profiler database"),
            ));
        }
    }
    let optional = |t: &str| db.has_table(t);
    let tables = build::Tables {
        strings: rows::strings(&db)?,
        host: if optional("PYTORCH_API")? {
            rows::host(&db)?
        } else {
            Vec::new()
        },
        cann: if optional("CANN_API")? {
            rows::cann(&db)?
        } else {
            Vec::new()
        },
        tasks: rows::tasks(&db)?,
        connections: if optional("CONNECTION_IDS")? {
            rows::connections(&db)?
        } else {
            Vec::new()
        },
        ops: if optional("COMMUNICATION_OP")? {
            rows::ops(&db)?
        } else {
            Vec::new()
        },
        derived: match rows::first_text(
            &db,
            "OVERLAP_ANALYSIS",
            "SELECT CAST(count(*) AS TEXT) FROM OVERLAP_ANALYSIS",
        )? {
            Some(n) => n.parse().unwrap_or(0),
            None => 0,
        },
    };
    let mut tables = tables;
    let warnings = row_warnings(&db.label, &mut tables);
    let (mut rank, mut strings) = build::rank(&tables);
    if db.has_table("AICORE_FREQ")? {
        rank.clocks = rows::clocks(&db)?;
    }
    let rows = details::details(&db, &tables.strings)?;
    let unmatched_tasks = crate::ingest::ascend::tasks::attach(&mut rank, &mut strings, rows);
    let rank_id = rows::first_text(
        &db,
        "RANK_DEVICE_MAP",
        "SELECT CAST(rankId AS TEXT) FROM RANK_DEVICE_MAP LIMIT 1",
    )?
    .and_then(|r| r.parse().ok());
    let device = rows::first_text(&db, "NPU_INFO", "SELECT name FROM NPU_INFO LIMIT 1")?
        .filter(|n| !n.trim().is_empty());
    let (env, groups, parallel) = meta_data(&db)?;
    Ok(DbRank {
        rank,
        strings,
        rank_id,
        device,
        env,
        groups,
        parallel,
        unmatched_tasks,
        warnings,
    })
}

/// What the rows hold that would otherwise pass unsaid: an empty `TASK` table (no device
/// timeline), name ids `STRING_IDS` lacks (their names read as empty), duplicated `TASK` rows
/// (removed: one stream cannot run the same task twice at one time).
fn row_warnings(label: &str, t: &mut build::Tables) -> Vec<String> {
    let mut out = Vec::new();
    if t.tasks.is_empty() {
        out.push(format!(
            "{label}: the TASK table is empty: no device timeline"
        ));
    }
    let before = t.tasks.len();
    let mut seen = rustc_hash::FxHashSet::default();
    t.tasks
        .retain(|r| seen.insert((r.start, r.end, r.stream, r.corr, r.task_type, r.kernel)));
    if t.tasks.len() < before {
        out.push(format!(
            "{label}: {} duplicated TASK row(s) (same start, end, stream, connection and type) \
             read once",
            before - t.tasks.len()
        ));
    }
    let missing = build::missing_names(t);
    if missing > 0 {
        out.push(format!(
            "{label}: {missing} name id(s) are not in STRING_IDS ({} entries): those names are empty",
            t.strings.len()
        ));
    }
    out
}

/// `analysis.db` `StepTraceTime`: the step summary, µs values converted to ns exactly from
/// SQLite's own decimal text of them; each row's device when the table has a device column
/// (one process that profiled several devices).
pub fn step_trace(path: &Path) -> Result<Vec<ProfilerStep>, Error> {
    let db = Db::open(path)?;
    if !db.has_table("StepTraceTime")? {
        return Ok(Vec::new());
    }
    let cols = [
        "computing",
        "communication_not_overlapped",
        "overlapped",
        "communication",
        "free",
        "stage",
        "bubble",
        "communication_not_overlapped_and_exclude_receive",
        "preparing",
    ];
    let device = device_column(&db, "StepTraceTime")?;
    let sql = format!(
        "SELECT rowid, CAST(step AS TEXT), {}, {} FROM StepTraceTime",
        cols.map(|c| format!("CAST({c} AS TEXT)")).join(", "),
        device.map_or("NULL".to_string(), |d| format!("CAST({d} AS TEXT)"))
    );
    let mut out = Vec::new();
    rows::each(&db, "StepTraceTime", &sql, |r| {
        let text = |i: usize| r.get::<_, Option<String>>(i).ok().flatten();
        let us = |i: usize| -> Result<Option<i64>, String> {
            match text(i) {
                None => Ok(None),
                Some(t) => micros_text_to_ns(t.trim().as_bytes())
                    .map(Some)
                    .map_err(|e| format!("`{}` {}: {e}", cols[i - 2], echo(&t))),
            }
        };
        let need =
            |i: usize| -> Result<i64, String> { us(i)?.ok_or(format!("no `{}`", cols[i - 2])) };
        let step = match text(1)
            .as_deref()
            .map(|s| s.trim().trim_start_matches("step"))
        {
            None | Some("") => None,
            Some(s) => Some(StepNo(
                s.parse()
                    .map_err(|_| format!("step {s:?} is not a step number"))?,
            )),
        };
        out.push(ProfilerStep {
            step,
            computing: need(2)?,
            comm_not_overlapped: need(3)?,
            overlapped: need(4)?,
            communication: need(5)?,
            free: need(6)?,
            stage: need(7)?,
            bubble: need(8)?,
            comm_not_overlapped_excl_receive: us(9)?,
            preparing: us(10)?,
            device: device_id(text(11))?,
        });
        Ok(())
    })?;
    Ok(out)
}

/// The name of `table`'s device column, when it has one (`deviceId`, `device_id`,
/// `Device_id`: the tools spell it differently).
fn device_column(db: &Db, table: &str) -> Result<Option<&'static str>, Error> {
    for c in ["deviceId", "device_id", "Device_id"] {
        if db.has_column(table, c)? {
            return Ok(Some(c));
        }
    }
    Ok(None)
}

/// A device column's text as a device id (NULL: none).
fn device_id(text: Option<String>) -> Result<Option<u32>, String> {
    match text.as_deref().map(str::trim) {
        None | Some("") => Ok(None),
        Some(d) => d
            .parse()
            .map(Some)
            .map_err(|_| format!("device {d:?} is not a device id")),
    }
}

/// `analysis.db` `CommAnalyzerTime`'s ops placed in time (`start_timestamp`, µs since the
/// epoch), each with its device when the table has a device column; empty without the table
/// or its start column.
pub(crate) fn op_timings(
    path: &Path,
) -> Result<Vec<(Option<u32>, super::communication::OpTiming)>, Error> {
    let db = Db::open(path)?;
    if !db.has_table("CommAnalyzerTime")?
        || !db.has_column("CommAnalyzerTime", "start_timestamp")?
    {
        return Ok(Vec::new());
    }
    let device = device_column(&db, "CommAnalyzerTime")?;
    let sql = format!(
        "SELECT rowid, CAST(step AS TEXT), hccl_op_name, CAST(group_name AS TEXT), \
         CAST(start_timestamp AS TEXT), CAST(elapse_time AS TEXT), {} FROM CommAnalyzerTime \
         WHERE hccl_op_name <> 'Total Op Info' ORDER BY rowid",
        device.map_or("NULL".to_string(), |d| format!("CAST({d} AS TEXT)"))
    );
    let mut out = Vec::new();
    rows::each(&db, "CommAnalyzerTime", &sql, |r| {
        let text = |i: usize| text_at(r, i);
        let start = text(4);
        let start_ns = micros_text_to_ns(start.trim().as_bytes())
            .map_err(|e| format!("`start_timestamp` {start:?}: {e}"))?;
        let op = super::communication::OpTiming {
            step: text(1).trim_start_matches("step").parse().ok().map(StepNo),
            op: text(2),
            group: text(3),
            start_ns,
            elapse_ns: size_or_time(&text(5))?,
        };
        let dev = r.get::<_, Option<String>>(6).ok().flatten();
        out.push((device_id(dev)?, op));
        Ok(())
    })?;
    Ok(out)
}

/// `analysis.db` `CommAnalyzerBandwidth`: the same traffic per op and transport as
/// `communication.json` (one row per packet size, each repeating the op's totals: one is
/// kept per op and transport). MB and ms are read from SQLite's decimal text, exactly.
pub(crate) fn transports(path: &Path) -> Result<Vec<TransportUse>, Error> {
    let db = Db::open(path)?;
    if !db.has_table("CommAnalyzerBandwidth")? {
        return Ok(Vec::new());
    }
    let sql = "SELECT min(rowid), CAST(step AS TEXT), hccl_op_name, transport_type, \
               CAST(transit_size AS TEXT), CAST(transit_time AS TEXT) FROM CommAnalyzerBandwidth \
               WHERE hccl_op_name <> 'Total Op Info' \
               GROUP BY step, hccl_op_name, group_name, type, transport_type ORDER BY 1";
    let mut out = Vec::new();
    rows::each(&db, "CommAnalyzerBandwidth", sql, |r| {
        let text = |i: usize| text_at(r, i);
        let Some(transport) = crate::model::Transport::of(&text(3)) else {
            return Ok(());
        };
        let num = |i: usize| size_or_time(&text(i));
        let (bytes, time_ns) = (num(4)?, num(5)?);
        if bytes > 0 || time_ns > 0 {
            out.push(TransportUse {
                step: text(1).trim_start_matches("step").parse().ok().map(StepNo),
                op: text(2),
                transport,
                bytes: bytes as u64,
                time_ns,
            });
        }
        Ok(())
    })?;
    Ok(out)
}

/// `analysis.db` `CommAnalyzerTime`: each HCCL op's elapse and transit, as
/// `communication.json`'s `Communication Time Info`; empty without the table.
pub(crate) fn op_times(path: &Path) -> Result<Vec<crate::model::HcclOpTime>, Error> {
    let db = Db::open(path)?;
    if !db.has_table("CommAnalyzerTime")? {
        return Ok(Vec::new());
    }
    let sql = "SELECT rowid, CAST(step AS TEXT), hccl_op_name, CAST(elapse_time AS TEXT), \
               CAST(transit_time AS TEXT) FROM CommAnalyzerTime \
               WHERE hccl_op_name <> 'Total Op Info' ORDER BY rowid";
    let mut out = Vec::new();
    rows::each(&db, "CommAnalyzerTime", sql, |r| {
        let text = |i: usize| text_at(r, i);
        out.push(crate::model::HcclOpTime {
            step: text(1).trim_start_matches("step").parse().ok().map(StepNo),
            op: text(2),
            elapse_ns: size_or_time(&text(3))?,
            transit_ns: size_or_time(&text(4))?,
        });
        Ok(())
    })?;
    Ok(out)
}

/// `analysis.db` `CommAnalyzerMatrix`: the db's `communication_matrix.json` (the same
/// entries read, `LOCAL` and self links left out); empty without the table.
pub(crate) fn links(path: &Path) -> Result<Vec<crate::model::LinkUse>, Error> {
    let db = Db::open(path)?;
    if !db.has_table("CommAnalyzerMatrix")? {
        return Ok(Vec::new());
    }
    let sql = "SELECT rowid, CAST(step AS TEXT), hccl_op_name, CAST(group_name AS TEXT), \
               CAST(src_rank AS TEXT), CAST(dst_rank AS TEXT), transport_type, \
               CAST(transit_size AS TEXT), CAST(transit_time AS TEXT) FROM CommAnalyzerMatrix \
               ORDER BY rowid";
    let mut out = Vec::new();
    rows::each(&db, "CommAnalyzerMatrix", sql, |r| {
        let text = |i: usize| text_at(r, i);
        let (op, group) = (text(2), text(3));
        let Some(transport) = crate::model::Transport::of(&text(6)) else {
            return Ok(());
        };
        if !super::matrix::wanted(&format!("{op}@{group}")) {
            return Ok(());
        }
        let rank = |i: usize| {
            text(i)
                .trim()
                .parse::<u32>()
                .map_err(|_| format!("{:?} is not a rank", text(i)))
        };
        let num = |i: usize| size_or_time(&text(i));
        let (src, dst, bytes, time_ns) = (rank(4)?, rank(5)?, num(7)?, num(8)?);
        if src != dst && (bytes > 0 || time_ns > 0) {
            out.push(crate::model::LinkUse {
                step: text(1).trim_start_matches("step").parse().ok().map(StepNo),
                group,
                src,
                dst,
                transport,
                bytes: bytes as u64,
                time_ns,
            });
        }
        Ok(())
    })?;
    Ok(out)
}

/// Column `i` of a row as text (NULL: empty).
fn text_at(r: &rusqlite::Row<'_>, i: usize) -> String {
    r.get::<_, Option<String>>(i)
        .ok()
        .flatten()
        .unwrap_or_default()
}

/// MB or ms text (SQLite's decimal text of a NUMERIC) as bytes or ns, rounded once.
fn size_or_time(text: &str) -> Result<i64, String> {
    crate::time::unit_text_to_ns(text.trim().as_bytes(), 6)
        .ok()
        .filter(|v| *v >= 0)
        .ok_or_else(|| format!("{text:?} is not a size or time"))
}
