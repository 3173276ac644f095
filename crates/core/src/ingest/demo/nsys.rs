//! The demo job as Nsight Systems SQLite exports (`stepscope demo --as nsys`): one file per
//! rank, `report_N.sqlite` as `nsys profile -o report_%q{RANK}` names them, in the tables and
//! columns of a 2025 export (schema 3.21). The same simulation as the Kineto files, recorded as
//! nsys records it: kernels, copies and runtime calls joined by correlation id; PyTorch's
//! operators as `emit_nvtx` ranges (`aten::mm, seq = 12, sizes = [[…]]`); steps as
//! `ProfilerStep#N` ranges; NCCL's NVTX ranges with their payloads (the communicator's init:
//! rank and size; each collective: its message size). Read back, it is the Kineto job.

use super::json::steps;
use super::schedule::Schedule;
use super::sim::{Sink, Tid};
use super::{BASE_TIME_NS, DemoSpec, ORIGIN_NS};
use crate::time::Ns;
use rusqlite::{Connection, params};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

/// The tables written, with the columns a 2025 export has (those stepscope reads and some
/// around them that a reader must pass over).
const SCHEMA: &str = "
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
CREATE TABLE TARGET_INFO_GPU (id INTEGER NOT NULL, name TEXT, busLocation TEXT,
  totalMemory INTEGER, smCount INTEGER, computeMajor INTEGER, computeMinor INTEGER);
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER,
  registersPerThread INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER,
  blockY INTEGER, blockZ INTEGER, staticSharedMemory INTEGER, dynamicSharedMemory INTEGER,
  graphNodeId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL,
  copyKind INTEGER NOT NULL, srcKind INTEGER, dstKind INTEGER, graphNodeId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
  eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER,
  nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
  rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
  endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER,
  int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER,
  floatValue REAL, jsonTextId INTEGER, jsonText TEXT, binaryData TEXT);
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (0, 'CUDA_MEMCPY_KIND_UNKNOWN', 'Unknown'),
  (1, 'CUDA_MEMCPY_KIND_HTOD', 'Host-to-Device'), (2, 'CUDA_MEMCPY_KIND_DTOH', 'Device-to-Host'),
  (8, 'CUDA_MEMCPY_KIND_DTOD', 'Device-to-Device');
INSERT INTO ENUM_CUDA_MEM_KIND VALUES (0, 'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE', 'Pageable'),
  (1, 'CUDA_MEMOPR_MEMORY_KIND_PINNED', 'Pinned'), (2, 'CUDA_MEMOPR_MEMORY_KIND_DEVICE', 'Device');
INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_NAME', 'NVIDIA Nsight Systems'),
  ('EXPORT_PRODUCT_VERSION', '2025.3.1.90'), ('EXPORT_SCHEMA_VERSION', '3.21.0'),
  ('EXPORT_PARAM_INPUT_FILE', 'stepscope demo --as nsys');
";

/// NVTX event types: a push/pop range; a domain's creation (its name in `text`).
const PUSH_POP: i64 = 59;
const DOMAIN_CREATE: i64 = 75;
/// The NCCL domain's id in the demo's files.
const NCCL_DOMAIN: i64 = 1;
/// nsys's memory kinds (`ENUM_CUDA_MEM_KIND`).
const PAGEABLE: i64 = 0;
const PINNED: i64 = 1;
const DEVICE: i64 = 2;

/// A device activity: (start, end, stream, correlation, what) — a kernel's name id, or a
/// copy's (bytes, copy kind, source kind, destination kind).
struct Activity {
    start: i64,
    end: i64,
    stream: i64,
    corr: i64,
    what: Result<i64, [i64; 4]>,
}

/// An NVTX range or runtime call on a host thread.
struct HostRow {
    start: i64,
    end: i64,
    gtid: i64,
    corr: i64,
    /// A runtime call's name id; for a range its text and NCCL payload.
    name: Result<i64, (String, Option<String>)>,
}

/// Collects one rank's records as nsys would, then writes them in one transaction.
struct NsysSink {
    rank: u32,
    pid: i64,
    offset: Ns,
    strings: HashMap<String, i64>,
    device: Vec<Activity>,
    host: Vec<HostRow>,
    seq: i64,
}

/// An integer arg of a demo event (the simulation writes its args as JSON).
fn arg(args: &Value, key: &str) -> i64 {
    args.get(key).and_then(Value::as_i64).unwrap_or(0)
}

impl NsysSink {
    fn string(&mut self, s: &str) -> i64 {
        let next = self.strings.len() as i64 + 1;
        *self.strings.entry(s.to_string()).or_insert(next)
    }
    fn gtid(&self, t: Tid) -> i64 {
        let tid = if t == Tid::Autograd {
            self.pid + 17
        } else {
            self.pid
        };
        (self.pid << 24) | tid
    }
    /// A time on this host's session clock (its session started `rank` µs after the epoch).
    fn at(&self, t: Ns) -> i64 {
        t + self.offset - i64::from(self.rank) * 1_000
    }
    fn range(&mut self, text: String, tid: Tid, start: Ns, dur: Ns, payload: Option<String>) {
        self.host.push(HostRow {
            start: self.at(start),
            end: self.at(start + dur),
            gtid: self.gtid(tid),
            corr: 0,
            name: Err((text, payload)),
        });
    }

    /// An operator as `emit_nvtx` names it (with its shapes when recorded), a user range by
    /// its name; a collective call also gets the NCCL range its launch runs in.
    fn annotation(&mut self, cat: &str, name: &str, tid: Tid, start: Ns, dur: Ns, a: &Value) {
        if cat != "cpu_op" {
            self.range(name.to_string(), tid, start, dur, None);
            return;
        }
        self.seq += 1;
        let mut text = format!("{name}, seq = {}", self.seq);
        if let Some(dims) = a.get("Input Dims") {
            text.push_str(", sizes = ");
            text.push_str(&shapes(dims));
        }
        self.range(text, tid, start, dur, None);
        let Some(call) = a.get("Collective name").and_then(Value::as_str) else {
            return;
        };
        let group = a.get("Process Group Name").and_then(Value::as_str);
        let mut payload = format!(
            r#"{{"NCCL communicator ID": {}, "Message size [bytes]": {}"#,
            comm_id(group.unwrap_or("0")),
            arg(a, "In msg nelems") * 2
        );
        match a.get("Src Rank").or_else(|| a.get("Dst Rank")) {
            Some(peer) => payload.push_str(&format!(r#", "Peer rank": {peer}}}"#)),
            None => payload.push_str(r#", "Reduction operation": "Sum"}"#),
        }
        // NCCL's call encloses the launch (10 µs into the framework's call, 5 µs before its end).
        let nccl = format!("nccl{}", nccl_api(call));
        self.range(nccl, tid, start + 10_000, dur - 15_000, Some(payload));
    }

    /// `ncclCommInitRank` of each communicator the rank is in: its rank and size there.
    fn comm_inits(&mut self, groups: &[(String, &'static str, Vec<u32>)]) {
        for (name, _, members) in groups {
            let Some(local) = members.iter().position(|&r| r == self.rank) else {
                continue;
            };
            let payload = format!(
                r#"{{"NCCL communicator ID": {}, "No. of ranks": {}, "Rank": {local}, "CUDA device": {}}}"#,
                comm_id(name),
                members.len(),
                self.rank % 8
            );
            // Before the first step: communicators are made when the job starts.
            self.range(
                "ncclCommInitRank".into(),
                Tid::Main,
                -4_000_000,
                2_000_000,
                Some(payload),
            );
        }
    }
}

/// A communicator's id as NCCL's payloads give it (a hash; here one per process group name).
fn comm_id(group: &str) -> u64 {
    group.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    }) >> 1
}

/// NCCL's API name of a PyTorch collective name (`allreduce` → `AllReduce`).
fn nccl_api(call: &str) -> &'static str {
    match call {
        "allreduce" => "AllReduce",
        "send" => "Send",
        "recv" => "Recv",
        "broadcast" => "Broadcast",
        "allgather" | "_allgather_base" => "AllGather",
        "reduce_scatter" | "_reduce_scatter_base" => "ReduceScatter",
        _ => "Reduce",
    }
}

/// `emit_nvtx`'s shapes (`[[4096, 8192], [8192]]`) of an `Input Dims` value.
fn shapes(dims: &Value) -> String {
    match dims {
        Value::Array(v) => format!("[{}]", v.iter().map(shapes).collect::<Vec<_>>().join(", ")),
        other => other.to_string(),
    }
}

impl Sink for NsysSink {
    fn x(&mut self, cat: &str, name: &str, tid: Tid, start: Ns, dur: Ns, args: &str) {
        let a: Value = serde_json::from_str(args).unwrap_or_default();
        let (s, e) = (self.at(start), self.at(start + dur));
        let corr = arg(&a, "correlation");
        let stream = i64::from(tid.stream());
        let what = match cat {
            "kernel" => Ok(self.string(name)),
            "gpu_memcpy" => Err(if name.contains("HtoD") {
                let src = if name.contains("Pageable") {
                    PAGEABLE
                } else {
                    PINNED
                };
                [arg(&a, "bytes"), 1, src, DEVICE]
            } else {
                let dst = if name.contains("Pageable") {
                    PAGEABLE
                } else {
                    PINNED
                };
                [arg(&a, "bytes"), 2, DEVICE, dst]
            }),
            "cuda_runtime" => {
                let name = Ok(self.string(name));
                let gtid = self.gtid(tid);
                self.host.push(HostRow {
                    start: s,
                    end: e,
                    gtid,
                    corr,
                    name,
                });
                return;
            }
            _ => return self.annotation(cat, name, tid, start, dur, &a),
        };
        self.device.push(Activity {
            start: s,
            end: e,
            stream,
            corr,
            what,
        });
    }
    fn flow(&mut self, _: u64, _: Tid, _: Ns, _: Tid, _: Ns) {}
}

/// Writes rank `rank` of the simulated job as an nsys export at `path` (a new, empty file).
pub(super) fn write_rank(
    spec: DemoSpec,
    rank: u32,
    sched: &Schedule,
    path: &Path,
) -> rusqlite::Result<()> {
    let mut sink = NsysSink {
        rank,
        pid: i64::from(31_000 + rank * 13),
        offset: spec.clock_offset(rank),
        strings: HashMap::new(),
        device: Vec::new(),
        host: Vec::new(),
        seq: 0,
    };
    sink.string("pt_main_thread");
    sink.string("pt_autograd_0");
    sink.comm_inits(&super::json::process_groups(spec));
    steps(spec, rank, sched, &mut sink);
    let mut db = Connection::open(path)?;
    db.execute_batch("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;")?;
    db.execute_batch(SCHEMA)?;
    let tx = db.transaction()?;
    insert(&tx, &sink, rank)?;
    tx.commit()
}

/// The rows of one rank.
fn insert(tx: &rusqlite::Transaction, sink: &NsysSink, rank: u32) -> rusqlite::Result<()> {
    // Kineto's clock: its trace's base time plus the demo's origin.
    let epoch = BASE_TIME_NS + ORIGIN_NS + i64::from(rank) * 1_000;
    tx.execute(
        "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (?1, '', '')",
        [epoch],
    )?;
    for d in 0..super::schedule::GPUS_PER_NODE {
        tx.execute(
            "INSERT INTO TARGET_INFO_GPU VALUES (?1, 'NVIDIA H100 80GB HBM3', ?2, 84929347584, 132, 9, 0)",
            params![d, format!("0000:{:02x}:00.0", 0x18 + d)],
        )?;
    }
    let mut names = tx.prepare("INSERT INTO ThreadNames VALUES (?1, 0, ?2)")?;
    for (tid, name) in [
        (Tid::Main, "pt_main_thread"),
        (Tid::Autograd, "pt_autograd_0"),
    ] {
        names.execute(params![sink.strings[name], sink.gtid(tid)])?;
    }
    let mut s = tx.prepare("INSERT INTO StringIds VALUES (?1, ?2)")?;
    for (v, id) in &sink.strings {
        s.execute(params![id, v])?;
    }
    let gpid = sink.pid << 24;
    let device = i64::from(rank % 8);
    let mut k = tx.prepare(
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?1, ?2, ?3, 1, NULL, ?4, ?5, ?6, ?7, ?7, NULL, 128, 132, 1, 1, 256, 1, 1, 49152, 0, NULL)",
    )?;
    let mut c = tx.prepare(
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?1, ?2, ?3, 1, NULL, ?4, ?5, ?6, ?7, ?8, ?9, ?10, NULL)",
    )?;
    for a in &sink.device {
        match a.what {
            Ok(name) => k.execute(params![
                a.start, a.end, device, a.stream, a.corr, gpid, name
            ])?,
            Err([bytes, kind, src, dst]) => c.execute(params![
                a.start, a.end, device, a.stream, a.corr, gpid, bytes, kind, src, dst
            ])?,
        };
    }
    let mut r = tx.prepare(
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?1, ?2, 1, ?3, ?4, ?5, 0, NULL)",
    )?;
    let mut n = tx.prepare(
        "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId, jsonText) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    n.execute(params![
        0,
        None::<i64>,
        DOMAIN_CREATE,
        "NCCL",
        sink.pid << 24 | sink.pid,
        NCCL_DOMAIN,
        None::<String>
    ])?;
    for h in &sink.host {
        match &h.name {
            Ok(name) => r.execute(params![h.start, h.end, h.gtid, h.corr, name])?,
            Err((text, payload)) => {
                let domain = payload.as_ref().map(|_| NCCL_DOMAIN);
                n.execute(params![
                    h.start, h.end, PUSH_POP, text, h.gtid, domain, payload
                ])?
            }
        };
    }
    Ok(())
}
