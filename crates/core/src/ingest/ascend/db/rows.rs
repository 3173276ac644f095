//! The rows stepscope reads from `ascend_pytorch_profiler_{rank}.db` and `analysis.db`
//! (reference `ascend.md` §14), as plain values. Names are `STRING_IDS` ids; times are
//! integer ns, written as INTEGER or (PYTORCH_API) TEXT and read exactly either way.

use crate::ingest::sqlite::Db;
use crate::time::Ns;
use rusqlite::types::ValueRef;
use rustc_hash::FxHashMap;

/// A framework record (`PYTORCH_API`).
pub(crate) struct HostRow {
    /// Start, ns.
    pub start: Ns,
    /// End, ns.
    pub end: Ns,
    /// `globalTid`: pid << 32 | tid.
    pub tid: i64,
    /// Name (a string id).
    pub name: i64,
    /// `ENUM_API_TYPE`: 50001 op, 50002 queue, 50003 trace (Python frames), 50004 mstx.
    pub api: i64,
    /// `connectionId`: its key in `CONNECTION_IDS`, which lists the connection ids of the
    /// device work it issued.
    pub links: Option<i64>,
    /// `inputShapes` and `inputDtypes` (string ids): torch_npu's `;`-separated texts, which
    /// some versions write into each other's column.
    pub inputs: (Option<i64>, Option<i64>),
}

/// An AscendCL/runtime call (`CANN_API`).
pub(crate) struct CannRow {
    /// Start, ns.
    pub start: Ns,
    /// End, ns.
    pub end: Ns,
    /// `globalTid`: pid << 32 | tid.
    pub tid: i64,
    /// `connectionId`: what links a launch to its device work.
    pub corr: i64,
    /// Name (a string id).
    pub name: i64,
    /// `type` (`ENUM_API_TYPE`: 20000 acl, 10000 node, 5000 runtime, …), when recorded.
    pub level: Option<i64>,
}

/// A plane task's HCCL facts (`COMMUNICATION_TASK_INFO`).
pub(crate) struct PlaneRow {
    /// The plane (a lane of the op).
    pub plane: i64,
    /// The rank itself, in the communicator.
    pub src: i64,
    /// The peer, in the communicator.
    pub dst: i64,
    /// `Notify Wait`, `SDMA`, `Write Value`… (a string id).
    pub task_type: i64,
    /// The engine's name (`SDMA`, `RDMA`, `LOCAL`), when recorded.
    pub transport: Option<String>,
    /// The link's name (`ON_CHIP`, `HCCS`, `ROCE`…), when recorded.
    pub link: Option<String>,
    /// Bytes moved (−1 or absent: none recorded).
    pub size: Option<i64>,
}

/// A device task (`TASK`), with its kernel name or its HCCL facts.
pub(crate) struct TaskRow {
    /// Start, ns.
    pub start: Ns,
    /// End, ns.
    pub end: Ns,
    /// Stream id.
    pub stream: i64,
    /// `connectionId`: what links a launch to its device work.
    pub corr: i64,
    /// Task type, a string id (`KERNEL_AIVEC`, `MEMCPY_ASYNC`, `Notify Wait`…).
    pub task_type: i64,
    /// `COMPUTE_TASK_INFO.name`, for kernels.
    pub kernel: Option<i64>,
    /// HCCL facts, for plane tasks.
    pub plane: Option<PlaneRow>,
}

/// An HCCL op (`COMMUNICATION_OP`).
pub(crate) struct OpRow {
    /// Start, ns.
    pub start: Ns,
    /// End, ns.
    pub end: Ns,
    /// Name (a string id).
    pub name: i64,
    /// `connectionId`: what links a launch to its device work.
    pub corr: i64,
    /// Group name (a string id).
    pub group: i64,
    /// `ENUM_HCCL_DATA_TYPE` name (`FP32`).
    pub data_type: Option<String>,
    /// Elements.
    pub count: Option<u64>,
}

/// An exact integer from an INTEGER or a TEXT of digits (never through a float).
pub(super) fn int(v: ValueRef<'_>) -> Result<i64, String> {
    match v {
        ValueRef::Integer(i) => Ok(i),
        ValueRef::Text(t) => std::str::from_utf8(t)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .ok_or_else(|| format!("{:?} is not an integer", String::from_utf8_lossy(t))),
        other => Err(format!("{:?} is not an integer", other.data_type())),
    }
}

/// Like [`int`], `None` for NULL.
pub(super) fn opt_int(v: ValueRef<'_>) -> Result<Option<i64>, String> {
    match v {
        ValueRef::Null => Ok(None),
        v => int(v).map(Some),
    }
}

/// Runs `sql` (its first column the rowid) and hands each row to `f`; a row `f` rejects is
/// an error at that row of `table`.
pub(super) fn each(
    db: &Db,
    table: &'static str,
    sql: &str,
    mut f: impl FnMut(&rusqlite::Row<'_>) -> Result<(), String>,
) -> Result<(), crate::error::Error> {
    let mut stmt = db.conn.prepare(sql).map_err(|e| db.error(None, e))?;
    let mut rows = stmt.query([]).map_err(|e| db.error(None, e))?;
    while let Some(row) = rows.next().map_err(|e| db.error(None, e))? {
        let id = row.get::<_, i64>(0).unwrap_or(-1);
        f(row).map_err(|m| {
            crate::error::Error::input_pos(&db.label, crate::error::Position::Row(table, id), m)
        })?;
    }
    Ok(())
}

/// Column `i` of a row as a raw value.
pub(super) fn col<'r>(row: &'r rusqlite::Row<'_>, i: usize) -> Result<ValueRef<'r>, String> {
    row.get_ref(i).map_err(|e| e.to_string())
}

/// `STRING_IDS`: id → text.
pub(crate) fn strings(db: &Db) -> Result<FxHashMap<i64, String>, crate::error::Error> {
    let mut out = FxHashMap::default();
    each(db, "STRING_IDS", "SELECT id, value FROM STRING_IDS", |r| {
        let id = int(col(r, 0)?)?;
        let text = match col(r, 1)? {
            ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
            _ => String::new(),
        };
        out.insert(id, text);
        Ok(())
    })?;
    Ok(out)
}

/// Start and end of a row, checked.
fn span(row: &rusqlite::Row<'_>, at: usize) -> Result<(Ns, Ns), String> {
    let (start, end) = (int(col(row, at)?)?, int(col(row, at + 1)?)?);
    if end < start {
        return Err(format!("ends at {end} before it starts at {start}"));
    }
    let dur = end
        .checked_sub(start)
        .ok_or(crate::time::TimeError::Overflow);
    dur.and_then(|d| crate::time::event_end(start, d))
        .map_err(|e| format!("startNs {start}, endNs {end}: {e}"))?;
    Ok((start, end))
}

/// `PYTORCH_API`.
pub(crate) fn host(db: &Db) -> Result<Vec<HostRow>, crate::error::Error> {
    let mut out = Vec::new();
    let column = |c: &'static str| -> Result<&'static str, crate::error::Error> {
        Ok(if db.has_column("PYTORCH_API", c)? {
            c
        } else {
            "NULL"
        })
    };
    let sql = format!(
        "SELECT rowid, startNs, endNs, globalTid, name, type, {}, {}, {} FROM PYTORCH_API",
        column("connectionId")?,
        column("inputShapes")?,
        column("inputDtypes")?
    );
    each(db, "PYTORCH_API", &sql, |r| {
        let (start, end) = span(r, 1)?;
        out.push(HostRow {
            start,
            end,
            tid: int(col(r, 3)?)?,
            name: int(col(r, 4)?)?,
            api: opt_int(col(r, 5)?)?.unwrap_or(50001),
            links: opt_int(col(r, 6)?)?,
            inputs: (opt_int(col(r, 7)?)?, opt_int(col(r, 8)?)?),
        });
        Ok(())
    })?;
    Ok(out)
}

/// `AICORE_FREQ`: the AI Core clock samples, in time order.
pub(crate) fn clocks(db: &Db) -> Result<Vec<crate::model::ClockSample>, crate::error::Error> {
    let mut out = Vec::new();
    let sql = "SELECT rowid, timestampNs, freq FROM AICORE_FREQ";
    each(db, "AICORE_FREQ", sql, |r| {
        let mhz = u32::try_from(int(col(r, 2)?)?).map_err(|_| "a negative clock".to_string())?;
        let at = int(col(r, 1)?)?;
        crate::time::event_end(at, 0).map_err(|e| format!("timestampNs {at}: {e}"))?;
        out.push(crate::model::ClockSample { at, mhz });
        Ok(())
    })?;
    out.sort_by_key(|s| s.at);
    Ok(out)
}

/// `CONNECTION_IDS`: (a framework record's key, a connection id of what it issued).
pub(crate) fn connections(db: &Db) -> Result<Vec<(i64, i64)>, crate::error::Error> {
    let mut out = Vec::new();
    let sql = "SELECT rowid, id, connectionId FROM CONNECTION_IDS";
    each(db, "CONNECTION_IDS", sql, |r| {
        out.push((int(col(r, 1)?)?, int(col(r, 2)?)?));
        Ok(())
    })?;
    Ok(out)
}

/// `CANN_API`.
pub(crate) fn cann(db: &Db) -> Result<Vec<CannRow>, crate::error::Error> {
    let mut out = Vec::new();
    let level = match db.has_column("CANN_API", "type")? {
        true => "type",
        false => "NULL",
    };
    let sql = format!(
        "SELECT rowid, startNs, endNs, globalTid, connectionId, name, {level} FROM CANN_API"
    );
    each(db, "CANN_API", &sql, |r| {
        let (start, end) = span(r, 1)?;
        out.push(CannRow {
            start,
            end,
            tid: int(col(r, 3)?)?,
            corr: int(col(r, 4)?)?,
            name: int(col(r, 5)?)?,
            level: opt_int(col(r, 6)?)?,
        });
        Ok(())
    })?;
    Ok(out)
}

/// `TASK`, joined with `COMPUTE_TASK_INFO` and `COMMUNICATION_TASK_INFO` where present.
pub(crate) fn tasks(db: &Db) -> Result<Vec<TaskRow>, crate::error::Error> {
    let compute = db.has_table("COMPUTE_TASK_INFO")?;
    let comm = db.has_table("COMMUNICATION_TASK_INFO")?;
    let sql = format!(
        "SELECT t.rowid, t.startNs, t.endNs, t.streamId, t.connectionId, t.taskType, {}, {}, {} \
         FROM TASK t {} {}",
        if compute { "c.name" } else { "NULL" },
        if comm {
            "m.planeId, m.srcRank, m.dstRank, m.taskType"
        } else {
            "NULL, NULL, NULL, NULL"
        },
        transfer_columns(db, comm)?,
        if compute {
            "LEFT JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId"
        } else {
            ""
        },
        if comm {
            "LEFT JOIN COMMUNICATION_TASK_INFO m ON m.globalTaskId = t.globalTaskId"
        } else {
            ""
        },
    );
    let mut out = Vec::new();
    each(db, "TASK", &sql, |r| {
        let (start, end) = span(r, 1)?;
        let plane = match opt_int(col(r, 7)?)? {
            Some(plane) => Some(PlaneRow {
                plane,
                src: opt_int(col(r, 8)?)?.unwrap_or(-1),
                dst: opt_int(col(r, 9)?)?.unwrap_or(-1),
                task_type: opt_int(col(r, 10)?)?.unwrap_or(-1),
                transport: opt_text(col(r, 11)?),
                link: opt_text(col(r, 12)?),
                size: opt_int(col(r, 13)?)?,
            }),
            None => None,
        };
        out.push(TaskRow {
            start,
            end,
            stream: int(col(r, 3)?)?,
            corr: int(col(r, 4)?)?,
            task_type: int(col(r, 5)?)?,
            kernel: opt_int(col(r, 6)?)?,
            plane,
        });
        Ok(())
    })?;
    Ok(out)
}

/// The engine's name, the link's name and the size of a plane task (`m`), or NULLs where the
/// db has not recorded them. Names come from the db's enum tables; exports without
/// `ENUM_HCCL_TRANSPORT_TYPE` (torch_npu Level1) use torch_npu's fixed values.
fn transfer_columns(db: &Db, comm: bool) -> Result<String, crate::error::Error> {
    let has = |c: &str| -> Result<bool, crate::error::Error> {
        Ok(comm && db.has_column("COMMUNICATION_TASK_INFO", c)?)
    };
    let named = |column: &str, table: &str, fixed: &str| -> Result<String, crate::error::Error> {
        if !has(column)? {
            return Ok("NULL".into());
        }
        let fixed = format!("CASE m.{column} {fixed} END");
        Ok(if db.has_table(table)? {
            format!("COALESCE((SELECT e.name FROM {table} e WHERE e.id = m.{column}), {fixed})")
        } else {
            fixed
        })
    };
    let transport = named(
        "transportType",
        "ENUM_HCCL_TRANSPORT_TYPE",
        "WHEN 0 THEN 'SDMA' WHEN 1 THEN 'RDMA' WHEN 2 THEN 'LOCAL'",
    )?;
    let link = named(
        "linkType",
        "ENUM_HCCL_LINK_TYPE",
        "WHEN 0 THEN 'ON_CHIP' WHEN 1 THEN 'HCCS' WHEN 2 THEN 'PCIE' WHEN 3 THEN 'ROCE' \
         WHEN 4 THEN 'SIO' WHEN 5 THEN 'HCCS_SW' WHEN 6 THEN 'STANDARD_ROCE'",
    )?;
    let size = if has("size")? { "m.size" } else { "NULL" };
    Ok(format!("{transport}, {link}, {size}"))
}

/// Text of a TEXT value; `None` for NULL or anything else.
fn opt_text(v: ValueRef<'_>) -> Option<String> {
    match v {
        ValueRef::Text(t) => std::str::from_utf8(t).ok().map(str::to_string),
        _ => None,
    }
}

/// `COMMUNICATION_OP`, with its element type's name.
pub(crate) fn ops(db: &Db) -> Result<Vec<OpRow>, crate::error::Error> {
    // msprof's own db has neither the count nor the element type.
    let types =
        db.has_table("ENUM_HCCL_DATA_TYPE")? && db.has_column("COMMUNICATION_OP", "dataType")?;
    let count = if db.has_column("COMMUNICATION_OP", "count")? {
        "CAST(o.count AS TEXT)"
    } else {
        "NULL"
    };
    let sql = format!(
        "SELECT o.rowid, o.startNs, o.endNs, o.opName, o.connectionId, o.groupName, {}, \
         {count} FROM COMMUNICATION_OP o {}",
        if types { "d.name" } else { "NULL" },
        if types {
            "LEFT JOIN ENUM_HCCL_DATA_TYPE d ON d.id = o.dataType"
        } else {
            ""
        }
    );
    let mut out = Vec::new();
    each(db, "COMMUNICATION_OP", &sql, |r| {
        let (start, end) = span(r, 1)?;
        let text = |i: usize| -> Result<Option<String>, String> {
            Ok(match col(r, i)? {
                ValueRef::Text(t) => Some(String::from_utf8_lossy(t).into_owned()),
                _ => None,
            })
        };
        out.push(OpRow {
            start,
            end,
            name: int(col(r, 3)?)?,
            corr: int(col(r, 4)?)?,
            group: int(col(r, 5)?)?,
            data_type: text(6)?,
            count: text(7)?.and_then(|c| c.parse().ok()),
        });
        Ok(())
    })?;
    Ok(out)
}

/// The first value of a one-column query, when the table exists and has a row.
pub(crate) fn first_text(
    db: &Db,
    table: &str,
    sql: &str,
) -> Result<Option<String>, crate::error::Error> {
    if !db.has_table(table)? {
        return Ok(None);
    }
    let v: Option<Option<String>> = db
        .conn
        .query_row(sql, [], |r| r.get::<_, Option<String>>(0))
        .map(Some)
        .or_else(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => Ok(None),
            e => Err(db.error(None, e)),
        })?;
    Ok(v.flatten())
}
