//! The rows stepscope reads from an Nsight Systems SQLite export. Tables exist only when they
//! hold data and columns change between versions, so each table and column is looked up
//! before it is read: a missing table is no rows, a missing optional column is `None`.

use crate::error::Error;
use crate::ingest::sqlite::Db;
use crate::time::Ns;
use rustc_hash::FxHashMap;

/// One timed row: a kernel, copy, set, device sync, runtime call or NVTX range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// Start, ns on the session's clock.
    pub start: Ns,
    /// End, ns (an NVTX mark has none: its start).
    pub end: Ns,
    /// Process (`globalPid`, or the process part of `globalTid`).
    pub process: i64,
    /// Device work: (device id, stream id); host rows: the thread (`globalTid`).
    pub lane: (i64, i64),
    /// CUDA correlation id (runtime call ↔ device work), when the row has one.
    pub corr: Option<i64>,
    /// Its name.
    pub name: String,
}

/// The rows of one export.
#[derive(Debug, Default)]
pub struct Tables {
    /// Kernels.
    pub kernels: Vec<Row>,
    /// Memory copies (named by their kind: `Memcpy HtoD`).
    pub copies: Vec<Row>,
    /// Memory sets.
    pub sets: Vec<Row>,
    /// Device synchronizations.
    pub syncs: Vec<Row>,
    /// CUDA runtime calls.
    pub runtime: Vec<Row>,
    /// NVTX ranges (push/pop and start/end).
    pub nvtx: Vec<Row>,
    /// GPU names from `TARGET_INFO_GPU`, by device id (the table is optional).
    pub gpus: Vec<(i64, String)>,
    /// `TARGET_INFO_SESSION_START_TIME.utcEpochNs`: the session's clock zero.
    pub epoch_ns: Option<Ns>,
    /// Tables and columns that were missing, said in a note.
    pub missing: Vec<String>,
}

/// The process of a `globalTid` or `globalPid`: nsys packs the pid in bits 24–47.
pub fn pid_of(global: i64) -> i64 {
    (global >> 24) & 0x00ff_ffff
}

/// The columns every device activity table has, in the order [`Row`] reads them.
const DEVICE_COLS: [&str; 6] = [
    "start",
    "end",
    "globalPid",
    "deviceId",
    "streamId",
    "correlationId",
];

/// A device activity row from its [`DEVICE_COLS`] cells.
fn device_row(c: &[i64], name: String) -> Row {
    Row {
        start: c[0],
        end: c[1],
        process: pid_of(c[2]),
        lane: (c[3], c[4]),
        corr: Some(c[5]),
        name,
    }
}

/// NVTX event types of ranges: push/pop (59) and start/end (60).
const NVTX_RANGES: [i64; 2] = [59, 60];

/// Whether the database is an Nsight Systems export: it has nsys's string table and one of
/// the activity, NVTX or target tables.
pub fn is_nsys(db: &Db) -> Result<bool, Error> {
    if !db.has_table("StringIds")? {
        return Ok(false);
    }
    for t in [
        "CUPTI_ACTIVITY_KIND_KERNEL",
        "CUPTI_ACTIVITY_KIND_RUNTIME",
        "NVTX_EVENTS",
        "TARGET_INFO_GPU",
        "TARGET_INFO_SESSION_START_TIME",
    ] {
        if db.has_table(t)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Reads every table stepscope uses.
pub fn read(db: &Db) -> Result<Tables, Error> {
    let strings = string_ids(db)?;
    let name = |id: Option<i64>| {
        id.and_then(|i| strings.get(&i).cloned())
            .unwrap_or_default()
    };
    let mut t = Tables::default();
    let device = |db: &Db, table: &'static str, label: &str, t: &mut Tables| {
        let name_col = ["demangledName", "shortName"]
            .into_iter()
            .find(|c| db.has_column(table, c).unwrap_or(false));
        query(db, table, &DEVICE_COLS, name_col, t).map(|rows| {
            rows.into_iter()
                .map(|(c, n)| {
                    let named = name(n);
                    device_row(
                        &c,
                        if named.is_empty() {
                            label.into()
                        } else {
                            named
                        },
                    )
                })
                .collect::<Vec<_>>()
        })
    };
    t.kernels = device(db, "CUPTI_ACTIVITY_KIND_KERNEL", "kernel", &mut t)?;
    t.copies = copies(db, &mut t)?;
    t.sets = device(db, "CUPTI_ACTIVITY_KIND_MEMSET", "Memset", &mut t)?;
    t.syncs = device(
        db,
        "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
        "cudaSynchronize",
        &mut t,
    )?;
    t.runtime = query(
        db,
        "CUPTI_ACTIVITY_KIND_RUNTIME",
        &["start", "end", "globalTid", "correlationId"],
        Some("nameId"),
        &mut t,
    )?
    .into_iter()
    .map(|(c, n)| Row {
        start: c[0],
        end: c[1],
        process: pid_of(c[2]),
        lane: (-1, c[2]),
        corr: Some(c[3]),
        name: name(n),
    })
    .collect();
    t.nvtx = nvtx(db, &strings, &mut t)?;
    t.gpus = id_texts(db, "TARGET_INFO_GPU", "name")?;
    t.epoch_ns = one_value(db, "TARGET_INFO_SESSION_START_TIME", "utcEpochNs")?;
    Ok(t)
}

/// A row's integer columns and its optional string id.
type Cells = (Vec<i64>, Option<i64>);

/// Rows of `table`: the integer columns `cols` (a row with any of them NULL is skipped) and
/// the optional string id column `name`. A missing table is no rows and a note.
fn query(
    db: &Db,
    table: &'static str,
    cols: &[&str],
    name: Option<&str>,
    t: &mut Tables,
) -> Result<Vec<Cells>, Error> {
    if !db.has_table(table)? {
        return Ok(Vec::new());
    }
    for c in cols {
        if !db.has_column(table, c)? {
            t.missing.push(format!("{table}.{c}"));
            return Ok(Vec::new());
        }
    }
    let name = name.filter(|c| db.has_column(table, c).unwrap_or(false));
    let sql = format!(
        "SELECT {}, {} FROM {table} ORDER BY rowid",
        cols.join(", "),
        name.unwrap_or("NULL")
    );
    let mut out = Vec::new();
    each_row(db, table, &sql, |r| {
        let vals: Option<Vec<i64>> = (0..cols.len())
            .map(|k| r.get::<_, Option<i64>>(k).ok().flatten())
            .collect();
        if let Some(vals) = vals {
            out.push((vals, r.get::<_, Option<i64>>(cols.len()).ok().flatten()));
        }
    })?;
    Ok(out)
}

/// Runs `sql` over `table` and hands each row to `f`; an error names the table and the row.
fn each_row(
    db: &Db,
    table: &'static str,
    sql: &str,
    mut f: impl FnMut(&rusqlite::Row),
) -> Result<(), Error> {
    let mut stmt = db.conn.prepare(sql).map_err(|e| db.error(None, e))?;
    let mut rows = stmt.query([]).map_err(|e| db.error(None, e))?;
    let mut at: i64 = 0;
    while let Some(r) = rows.next().map_err(|e| db.error(Some((table, at)), e))? {
        at += 1;
        f(r);
    }
    Ok(())
}

/// `StringIds` (id → text).
fn string_ids(db: &Db) -> Result<FxHashMap<i64, String>, Error> {
    Ok(id_texts(db, "StringIds", "value")?.into_iter().collect())
}

/// The (`id`, `text`) pairs of `table` in id order, rows without a text left out (none when
/// the table or a column is missing: these tables are optional).
fn id_texts(db: &Db, table: &'static str, text: &str) -> Result<Vec<(i64, String)>, Error> {
    if !db.has_table(table)? || !db.has_column(table, "id")? || !db.has_column(table, text)? {
        return Ok(Vec::new());
    }
    let sql = format!("SELECT id, {text} FROM {table} ORDER BY id");
    let mut out = Vec::new();
    each_row(db, table, &sql, |r| {
        if let (Ok(id), Ok(Some(v))) = (r.get::<_, i64>(0), r.get::<_, Option<String>>(1)) {
            out.push((id, v));
        }
    })?;
    Ok(out)
}

/// Memory copies, named by their kind as `nsys stats` names them (`[CUDA memcpy Host-to-Device]`).
fn copies(db: &Db, t: &mut Tables) -> Result<Vec<Row>, Error> {
    let labels: FxHashMap<i64, String> = id_texts(db, "ENUM_CUDA_MEMCPY_OPER", "label")?
        .into_iter()
        .collect();
    let rows = query(
        db,
        "CUPTI_ACTIVITY_KIND_MEMCPY",
        &[DEVICE_COLS.as_slice(), &["copyKind"]].concat(),
        None,
        t,
    )?;
    Ok(rows
        .into_iter()
        .map(|(c, _)| {
            let name = match labels.get(&c[6]) {
                Some(l) => format!("[CUDA memcpy {l}]"),
                None => "[CUDA memcpy]".to_string(),
            };
            device_row(&c, name)
        })
        .collect())
}

/// NVTX ranges with an end, named by their text (inline, or by `textId`).
fn nvtx(db: &Db, strings: &FxHashMap<i64, String>, t: &mut Tables) -> Result<Vec<Row>, Error> {
    let table = "NVTX_EVENTS";
    if !db.has_table(table)? {
        return Ok(Vec::new());
    }
    for c in ["start", "end", "eventType", "globalTid"] {
        if !db.has_column(table, c)? {
            t.missing.push(format!("{table}.{c}"));
            return Ok(Vec::new());
        }
    }
    let text_id = if db.has_column(table, "textId")? {
        "textId"
    } else {
        "NULL"
    };
    let text = if db.has_column(table, "text")? {
        "text"
    } else {
        "NULL"
    };
    let sql = format!(
        "SELECT start, end, eventType, globalTid, {text}, {text_id} FROM {table} ORDER BY rowid"
    );
    let mut out = Vec::new();
    each_row(db, table, &sql, |r| {
        let int = |k| r.get::<_, Option<i64>>(k).ok().flatten();
        let (Some(start), Some(end), Some(kind), Some(tid)) = (int(0), int(1), int(2), int(3))
        else {
            return;
        };
        if !NVTX_RANGES.contains(&kind) {
            return;
        }
        let name = r
            .get::<_, Option<String>>(4)
            .ok()
            .flatten()
            .or_else(|| int(5).and_then(|i| strings.get(&i).cloned()))
            .unwrap_or_default();
        out.push(Row {
            start,
            end,
            process: pid_of(tid),
            lane: (-1, tid),
            corr: None,
            name,
        });
    })?;
    Ok(out)
}

/// The first row's integer `column` of `table`, when both exist.
fn one_value(db: &Db, table: &str, column: &str) -> Result<Option<i64>, Error> {
    if !db.has_table(table)? || !db.has_column(table, column)? {
        return Ok(None);
    }
    db.conn
        .query_row(&format!("SELECT {column} FROM {table} LIMIT 1"), [], |r| {
            r.get::<_, Option<i64>>(0)
        })
        .or_else(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => Ok(None),
            e => Err(db.error(None, e)),
        })
}
