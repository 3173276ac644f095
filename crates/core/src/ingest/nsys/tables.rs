//! The rows stepscope reads from an Nsight Systems SQLite export. Tables exist only when they
//! hold data and columns change between versions, so each table and column is looked up
//! before it is read: a missing table is no rows, a missing optional column is `None`.

pub(super) use super::row::{Name, Row};
use crate::error::Error;
use crate::ingest::sqlite::Db;
use crate::time::Ns;
use rustc_hash::FxHashMap;
use std::path::Path;

/// The rows of one export.
#[derive(Debug, Default)]
pub(super) struct Tables {
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
    /// NVTX ranges (push/pop and start/end), NCCL's apart.
    pub nvtx: Vec<Row>,
    /// NCCL's NVTX ranges with a payload: its API calls and communicator inits.
    pub nccl: Vec<super::nccl::Call>,
    /// Thread names from `ThreadNames`, by `globalTid` (the table is optional).
    pub thread_names: FxHashMap<i64, String>,
    /// GPU names from `TARGET_INFO_GPU`, by device id (the table is optional).
    pub gpus: Vec<(i64, String)>,
    /// `TARGET_INFO_SESSION_START_TIME.utcEpochNs`: the session's clock zero.
    pub epoch_ns: Option<Ns>,
    /// Tables and columns that were missing, said in a note.
    pub missing: Vec<String>,
}

/// The process of a `globalTid` or `globalPid`: nsys packs the pid in bits 24–47.
pub(super) fn pid_of(global: i64) -> i64 {
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
fn device_row(c: &[i64], name: Name) -> Row {
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
/// The NVTX event type of a domain's creation (the domain's name in `text`).
const NVTX_DOMAIN_CREATE: i64 = 75;

/// Whether the database is an Nsight Systems export: it has nsys's string table and one of
/// the activity, NVTX or target tables.
pub(super) fn is_nsys(db: &Db) -> Result<bool, Error> {
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

/// Reads every table stepscope uses: the device activity and the host tables on two
/// connections at once (`path` is the database `db` opened).
pub(super) fn read(db: &Db, path: &Path) -> Result<Tables, Error> {
    let strings = string_ids(db)?;
    let (device, host) = rayon::join(
        || Db::open(path).and_then(|db| device_tables(&db, &strings)),
        || Db::open(path).and_then(|db| host_tables(&db, &strings)),
    );
    let (mut t, host) = (device?, host?);
    t.runtime = host.runtime;
    t.nvtx = host.nvtx;
    t.nccl = host.nccl;
    t.thread_names = host.thread_names;
    t.missing.extend(host.missing);
    t.gpus = id_texts(db, "TARGET_INFO_GPU", "name")?;
    t.epoch_ns = one_value(db, "TARGET_INFO_SESSION_START_TIME", "utcEpochNs")?;
    Ok(t)
}

/// The name of string id `id` (empty when it has none).
fn name_of(strings: &FxHashMap<i64, Name>, id: Option<i64>) -> Name {
    id.and_then(|i| strings.get(&i).cloned())
        .unwrap_or_else(|| Name::from(""))
}

/// Kernels, copies, sets and device synchronizations.
fn device_tables(db: &Db, strings: &FxHashMap<i64, Name>) -> Result<Tables, Error> {
    let mut t = Tables::default();
    let device = |table: &'static str, label: &str, t: &mut Tables| {
        let name_col = ["demangledName", "shortName"]
            .into_iter()
            .find(|c| db.has_column(table, c).unwrap_or(false));
        query(db, table, &DEVICE_COLS, name_col, t).map(|rows| {
            rows.into_iter()
                .map(|(c, n)| {
                    let named = name_of(strings, n);
                    let name = if named.is_empty() {
                        label.into()
                    } else {
                        named
                    };
                    device_row(&c, name)
                })
                .collect::<Vec<_>>()
        })
    };
    t.kernels = device("CUPTI_ACTIVITY_KIND_KERNEL", "kernel", &mut t)?;
    t.copies = copies(db, &mut t)?;
    t.sets = device("CUPTI_ACTIVITY_KIND_MEMSET", "Memset", &mut t)?;
    let sync = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
    t.syncs = device(sync, "cudaSynchronize", &mut t)?;
    Ok(t)
}

/// Runtime calls, NVTX ranges (NCCL's apart) and thread names.
fn host_tables(db: &Db, strings: &FxHashMap<i64, Name>) -> Result<Tables, Error> {
    let mut t = Tables::default();
    let cols = ["start", "end", "globalTid", "correlationId"];
    let calls = query(
        db,
        "CUPTI_ACTIVITY_KIND_RUNTIME",
        &cols,
        Some("nameId"),
        &mut t,
    )?;
    t.runtime = calls
        .into_iter()
        .map(|(c, n)| Row {
            start: c[0],
            end: c[1],
            process: pid_of(c[2]),
            lane: (-1, c[2]),
            corr: Some(c[3]),
            name: name_of(strings, n),
        })
        .collect();
    nvtx(db, strings, &mut t)?;
    let names = query(db, "ThreadNames", &["globalTid"], Some("nameId"), &mut t)?;
    t.thread_names = names
        .into_iter()
        .filter_map(|(c, n)| Some((c[0], strings.get(&n?)?.to_string())))
        .collect();
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
    let rows = query_optional(db, table, cols, name.as_slice(), t)?;
    Ok(rows
        .into_iter()
        .map(|(c, o)| (c, o.first().copied().flatten()))
        .collect())
}

/// A row's integer columns and its optional integer columns.
type OptionalCells = (Vec<i64>, Vec<Option<i64>>);

/// Rows of `table`: the integer columns `cols` (a row with any of them NULL is skipped) and
/// the `optional` integer columns (`None` where NULL or missing from this schema).
fn query_optional(
    db: &Db,
    table: &'static str,
    cols: &[&str],
    optional: &[&str],
    t: &mut Tables,
) -> Result<Vec<OptionalCells>, Error> {
    if !db.has_table(table)? {
        return Ok(Vec::new());
    }
    for c in cols {
        if !db.has_column(table, c)? {
            t.missing.push(format!("{table}.{c}"));
            return Ok(Vec::new());
        }
    }
    let mut select = cols.to_vec();
    for c in optional {
        select.push(if db.has_column(table, c)? { c } else { "NULL" });
    }
    let sql = format!("SELECT {} FROM {table} ORDER BY rowid", select.join(", "));
    let mut out = Vec::new();
    each_row(db, table, &sql, |r| {
        let cell = |k| r.get::<_, Option<i64>>(k).ok().flatten();
        let vals: Option<Vec<i64>> = (0..cols.len()).map(cell).collect();
        if let Some(vals) = vals {
            let opt = (cols.len()..select.len()).map(cell).collect();
            out.push((vals, opt));
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
fn string_ids(db: &Db) -> Result<FxHashMap<i64, Name>, Error> {
    let ids = id_texts(db, "StringIds", "value")?;
    Ok(ids.into_iter().map(|(i, v)| (i, Name::from(v))).collect())
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

/// Memory copies, named by their kind as `nsys stats` names them (`[CUDA memcpy
/// Host-to-Device]`), and where the export records them, by their memory kinds as Kineto
/// names them (`(Pageable -> Device)`): a copy through pageable memory is a finding.
fn copies(db: &Db, t: &mut Tables) -> Result<Vec<Row>, Error> {
    let labels = |enum_table| -> Result<FxHashMap<i64, String>, Error> {
        Ok(id_texts(db, enum_table, "label")?.into_iter().collect())
    };
    let (ops, kinds) = (
        labels("ENUM_CUDA_MEMCPY_OPER")?,
        labels("ENUM_CUDA_MEM_KIND")?,
    );
    let cols = [DEVICE_COLS.as_slice(), &["copyKind"]].concat();
    let rows = query_optional(
        db,
        "CUPTI_ACTIVITY_KIND_MEMCPY",
        &cols,
        &["srcKind", "dstKind"],
        t,
    )?;
    let mut names: FxHashMap<(i64, Option<i64>, Option<i64>), Name> = FxHashMap::default();
    let mut name_of = |op: i64, src: Option<i64>, dst: Option<i64>| {
        let made = || {
            let mut name = match ops.get(&op) {
                Some(l) => format!("[CUDA memcpy {l}]"),
                None => "[CUDA memcpy]".to_string(),
            };
            let kind = |k: Option<i64>| k.and_then(|k| kinds.get(&k));
            if let (Some(s), Some(d)) = (kind(src), kind(dst)) {
                name.push_str(&format!(" ({s} -> {d})"));
            }
            Name::from(name)
        };
        names.entry((op, src, dst)).or_insert_with(made).clone()
    };
    Ok(rows
        .into_iter()
        .map(|(c, mem)| device_row(&c, name_of(c[6], mem[0], mem[1])))
        .collect())
}

/// NVTX ranges with an end, named by their text (inline, or by `textId`); NCCL's own ranges
/// (its domain, or an `nccl…` name with a payload) apart, with their JSON payloads.
fn nvtx(db: &Db, strings: &FxHashMap<i64, Name>, t: &mut Tables) -> Result<(), Error> {
    let table = "NVTX_EVENTS";
    if !db.has_table(table)? {
        return Ok(());
    }
    for c in ["start", "end", "eventType", "globalTid"] {
        if !db.has_column(table, c)? {
            t.missing.push(format!("{table}.{c}"));
            return Ok(());
        }
    }
    let optional = |c: &'static str| -> Result<&'static str, Error> {
        Ok(if db.has_column(table, c)? { c } else { "NULL" })
    };
    let sql = format!(
        "SELECT start, end, eventType, globalTid, {}, {}, {}, {}, {} FROM {table} ORDER BY rowid",
        optional("text")?,
        optional("textId")?,
        optional("domainId")?,
        optional("jsonText")?,
        optional("jsonTextId")?
    );
    let mut domains: FxHashMap<i64, Name> = FxHashMap::default();
    let mut ranges = Vec::new();
    each_row(db, table, &sql, |r| {
        let int = |k| r.get::<_, Option<i64>>(k).ok().flatten();
        let text = |k, id| {
            r.get::<_, Option<String>>(k)
                .ok()
                .flatten()
                .map(Name::from)
                .or_else(|| int(id).and_then(|i| strings.get(&i).cloned()))
        };
        let (Some(start), Some(kind), Some(tid)) = (int(0), int(2), int(3)) else {
            return;
        };
        if kind == NVTX_DOMAIN_CREATE {
            if let (Some(d), Some(name)) = (int(6), text(4, 5)) {
                domains.insert(d, name);
            }
            return;
        }
        let Some(end) = int(1).filter(|_| NVTX_RANGES.contains(&kind)) else {
            return;
        };
        let row = Row {
            start,
            end,
            process: pid_of(tid),
            lane: (-1, tid),
            corr: None,
            name: text(4, 5).unwrap_or_else(|| Name::from("")),
        };
        ranges.push((row, int(6), text(7, 8)));
    })?;
    for (row, domain, payload) in ranges {
        let in_nccl = match domain.and_then(|d| domains.get(&d)) {
            Some(name) => &**name == "NCCL",
            None => payload.is_some() && row.name.starts_with("nccl"),
        };
        match payload.filter(|_| in_nccl) {
            Some(p) => t.nccl.push(super::nccl::Call::of(row, &p)),
            None if in_nccl => {}
            None => t.nvtx.push(row),
        }
    }
    Ok(())
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
