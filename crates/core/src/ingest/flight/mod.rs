//! PyTorch Flight Recorder dumps (docs/flight-recorder.md): one file per rank, written when a
//! job times out in a collective (`TORCH_NCCL_TRACE_BUFFER_SIZE` > 0, the default in recent
//! releases) or on demand — a pickle (`nccl_trace_rank_<rank>`, any prefix the user set with
//! `TORCH_NCCL_DEBUG_INFO_TEMP_FILE`) or the JSON of `_dump_nccl_trace_json`. Versions 2.x
//! are read by key, tolerating keys a version lacks; the rank comes from the file name (the
//! dump does not hold it).

pub(crate) mod pickle;

use crate::error::Error;
use crate::model::flight::{DumpGroup, FlightDump, FlightEntry, FlightState};
use crate::time::Ns;
use serde_json::Value;
use std::path::Path;

/// The largest dump read (the recorder keeps 2 000 entries by default: a few MB).
const MAX_DUMP_BYTES: u64 = 1 << 30;

/// How far into a file the sniff looks.
const SNIFF_BYTES: usize = 64 << 10;

/// Whether a file whose first bytes are `head` is a Flight Recorder dump: a pickle or a JSON
/// object with the recorder's keys — an entry's (`collective_seq_id`, `profiling_name`), or
/// `pg_config` with `pg_status` — and, for JSON, no `traceEvents` (a Kineto trace's
/// `distributedInfo` has a `pg_config` too).
pub(crate) fn sniff(head: &[u8]) -> bool {
    let head = &head[..head.len().min(SNIFF_BYTES)];
    let has = |n: &[u8]| memchr::memmem::find(head, n).is_some();
    let entry = has(b"collective_seq_id") && has(b"profiling_name");
    let pickle = head.first() == Some(&0x80) && head.get(1).is_some_and(|p| (2..=5).contains(p));
    if pickle {
        return entry || has(b"pg_config");
    }
    let json = crate::ingest::reader::first_byte(head) == Some(b'{');
    json && (entry || (has(b"\"pg_config\"") && has(b"\"pg_status\""))) && !has(b"\"traceEvents\"")
}

/// Whether the file at `path` is a dump (its first bytes sniffed; unreadable: no).
pub(crate) fn is_dump(path: &Path) -> bool {
    use std::io::Read;
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    f.take(SNIFF_BYTES as u64).read_to_end(&mut head).is_ok() && sniff(&head)
}

/// Reads one rank's dump.
pub(crate) fn read(path: &Path) -> Result<FlightDump, Error> {
    let label = path.display().to_string();
    let meta =
        std::fs::metadata(path).map_err(|e| Error::input(&label, format!("cannot read: {e}")))?;
    if meta.len() > MAX_DUMP_BYTES {
        return Err(Error::input(
            &label,
            "larger than 1 GiB: not a Flight Recorder dump",
        ));
    }
    let bytes =
        std::fs::read(path).map_err(|e| Error::input(&label, format!("cannot read: {e}")))?;
    let rank = rank_of(path).ok_or_else(|| {
        Error::input(
            &label,
            "a Flight Recorder dump whose name ends in no rank number (nccl_trace_rank_<rank>)",
        )
    })?;
    read_bytes(&bytes, rank, &label)
}

/// Reads the dump of `rank` from its bytes (`label` names it in errors).
pub fn read_bytes(bytes: &[u8], rank: u32, label: &str) -> Result<FlightDump, Error> {
    let value = parse(bytes).map_err(|(at, msg)| Error::input_at(label, at, msg))?;
    from_value(&value, rank, label.to_string()).map_err(|m| Error::input(label, m))
}

/// The dump's value: a pickle or JSON.
fn parse(bytes: &[u8]) -> Result<Value, (u64, String)> {
    if bytes.first() == Some(&0x80) {
        return pickle::decode(bytes).map_err(|e| (e.at as u64, format!("pickle: {}", e.what)));
    }
    serde_json::from_slice(bytes).map_err(|e| {
        let at = line_col_offset(bytes, e.line(), e.column());
        (at, format!("JSON: {e}"))
    })
}

/// The byte offset of a 1-based line and column.
fn line_col_offset(bytes: &[u8], line: usize, col: usize) -> u64 {
    let mut l = 1;
    for (k, &b) in bytes.iter().enumerate() {
        if l == line {
            return (k + col.saturating_sub(1)) as u64;
        }
        if b == b'\n' {
            l += 1;
        }
    }
    bytes.len() as u64
}

/// The rank in a dump's file name: its last run of digits (`nccl_trace_rank_12` → 12,
/// `fr_3.json` → 3).
pub(crate) fn rank_of(path: &Path) -> Option<u32> {
    let name = path.file_name()?.to_string_lossy();
    let stem = name.strip_suffix(".json").unwrap_or(&name);
    let end = stem.rfind(|c: char| c.is_ascii_digit())? + 1;
    let start = stem[..end]
        .rfind(|c: char| !c.is_ascii_digit())
        .map_or(0, |k| k + 1);
    stem[start..end].parse().ok()
}

/// The model of one dump's value.
fn from_value(v: &Value, rank: u32, source: String) -> Result<FlightDump, String> {
    let Some(top) = v.as_object() else {
        return Err("a Flight Recorder dump is a dictionary at its top".into());
    };
    let groups = top
        .get("pg_config")
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, g)| group(k, g)).collect())
        .unwrap_or_default();
    let entries = match top.get("entries") {
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(k, e)| entry(e).ok_or_else(|| format!("entry {k}: not a dictionary")))
            .collect::<Result<Vec<_>, _>>()?,
        // A dump of a rank that recorded nothing has no `entries`.
        None | Some(Value::Null) => Vec::new(),
        Some(_) => return Err("`entries` is not a list".into()),
    };
    Ok(FlightDump {
        rank,
        source,
        version: top.get("version").map(text),
        groups,
        entries,
    })
}

/// A value as text (strings as they are, numbers as written).
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn int(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        Value::String(s) => s.trim().parse().ok(),
        Value::Bool(b) => Some(i64::from(*b)),
        _ => None,
    }
}

/// One `pg_config` item: `{name, desc, ranks}`, ranks as the text `[0, 1, 2]` (or a list).
fn group(key: &str, g: &Value) -> DumpGroup {
    let ranks = match g.get("ranks") {
        Some(Value::Array(a)) => a.iter().filter_map(|x| int(Some(x))).collect(),
        Some(Value::String(s)) => s
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|t| t.parse::<i64>().ok())
            .collect(),
        _ => Vec::new(),
    };
    let mut ranks: Vec<u32> = ranks
        .into_iter()
        .filter_map(|r: i64| u32::try_from(r).ok())
        .collect();
    ranks.sort_unstable();
    ranks.dedup();
    DumpGroup {
        name: g.get("name").map_or_else(|| key.to_string(), text),
        desc: g.get("desc").map(text).unwrap_or_default(),
        ranks,
    }
}

/// Shapes: a list of lists of ints.
fn sizes(v: Option<&Value>) -> Vec<Vec<i64>> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|d| {
                    d.as_array()
                        .map(|x| x.iter().filter_map(|n| int(Some(n))).collect())
                        .unwrap_or_default()
                })
                .collect()
        })
        .unwrap_or_default()
}

fn texts(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().map(text).collect())
        .unwrap_or_default()
}

/// One entry; `None` when it is not a dictionary.
fn entry(e: &Value) -> Option<FlightEntry> {
    let o = e.as_object()?;
    let get = |k: &str| o.get(k);
    let u = |k: &str| int(get(k)).and_then(|x| u64::try_from(x).ok());
    // `process_group` is (name, desc); older dumps hold the name alone.
    let group = match get("process_group") {
        Some(Value::Array(a)) => a.first().map(text).unwrap_or_default(),
        Some(v) => text(v),
        None => int(get("pg_id")).map(|x| x.to_string()).unwrap_or_default(),
    };
    let state = match get("state").and_then(Value::as_str) {
        Some("completed") => FlightState::Completed,
        Some("started") => FlightState::Started,
        _ => FlightState::Scheduled,
    };
    let duration_ns = get("duration_ms")
        .and_then(Value::as_f64)
        .filter(|d| d.is_finite() && *d >= 0.0)
        .map(|d| (d * 1e6).round() as Ns);
    Some(FlightEntry {
        record_id: u("record_id").unwrap_or(0),
        group,
        seq: u("collective_seq_id").unwrap_or(0),
        p2p_seq: u("p2p_seq_id").unwrap_or(0),
        is_p2p: get("is_p2p").and_then(Value::as_bool).unwrap_or(false),
        op: get("profiling_name").map(text).unwrap_or_default(),
        input_sizes: sizes(get("input_sizes")),
        input_dtypes: texts(get("input_dtypes")),
        output_sizes: sizes(get("output_sizes")),
        state,
        created_ns: int(get("time_created_ns")).unwrap_or(0),
        duration_ns,
        timeout_ms: u("timeout_ms"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_come_from_the_last_digits_of_the_name() {
        let r = |s: &str| rank_of(Path::new(s));
        assert_eq!(r("/tmp/nccl_trace_rank_12"), Some(12));
        assert_eq!(r("dumps/fr_3.json"), Some(3));
        assert_eq!(r("trace"), None);
    }

    #[test]
    fn a_json_dump_reads_by_key() {
        let v: Value = serde_json::from_str(
            r#"{"version": "2.10", "pg_config": {"0": {"name": "0", "desc": "default_pg",
            "ranks": "[0, 1]"}}, "entries": [{"record_id": 4, "process_group": ["0",
            "default_pg"], "collective_seq_id": 7, "p2p_seq_id": 0, "is_p2p": false,
            "profiling_name": "nccl:all_reduce", "input_sizes": [[1024]], "input_dtypes":
            ["Float"], "output_sizes": [[1024]], "state": "started", "time_created_ns":
            100, "duration_ms": 0.5, "timeout_ms": 600000}]}"#,
        )
        .unwrap();
        let d = from_value(&v, 1, "x".into()).unwrap();
        assert_eq!(d.version.as_deref(), Some("2.10"));
        assert_eq!(d.groups[0].ranks, vec![0, 1]);
        let e = &d.entries[0];
        assert_eq!(
            (e.seq, e.state, e.op.as_str()),
            (7, FlightState::Started, "nccl:all_reduce")
        );
        assert_eq!(
            (e.duration_ns, e.timeout_ms),
            (Some(500_000), Some(600_000))
        );
        assert_eq!(e.input_sizes, vec![vec![1024]]);
        // Missing keys are tolerated; a non-dictionary entry is not.
        let v: Value = serde_json::from_str(r#"{"entries": [{}]}"#).unwrap();
        assert_eq!(from_value(&v, 0, "x".into()).unwrap().entries[0].seq, 0);
        let v: Value = serde_json::from_str(r#"{"entries": [3]}"#).unwrap();
        assert!(from_value(&v, 0, "x".into()).is_err());
    }

    #[test]
    fn sniffing_needs_the_recorder_keys() {
        assert!(sniff(b"\x80\x02}q\x00(X\t\x00\x00\x00pg_config"));
        assert!(sniff(
            b" {\"entries\": [{\"collective_seq_id\": 1, \"profiling_name\": \"x\"}"
        ));
        assert!(!sniff(b"{\"traceEvents\": []}"));
        // A Kineto trace's distributedInfo has a pg_config.
        assert!(!sniff(
            b"{\"distributedInfo\": {\"pg_config\": [], \"pg_status\": 1}, \"traceEvents\": []}"
        ));
        assert!(sniff(b"{\"pg_config\": {}, \"pg_status\": {}}"));
        assert!(!sniff(b"\x80\x02}q\x00(X\x08\x00\x00\x00segments"));
    }
}
