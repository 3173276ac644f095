//! What a file that no reader takes looks like, from its first bytes and its name: so that
//! "not a trace" says what it is instead (an Nsight Systems report, a SQLite database of some
//! schema, a Python pickle, a CSV) and what to give stepscope. Never a guess presented as
//! fact: each phrase names the evidence it rests on (a magic number, a table name).

/// SQLite's file header magic.
pub(crate) const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// How far into a file table names are looked for (SQLite keeps its schema on the first
/// pages).
const SCHEMA_BYTES: usize = 256 << 10;

/// What the file named `name` whose text starts with `head` is, when its bytes tell: a
/// phrase with what to do about it; `None` when nothing is recognised.
pub(crate) fn foreign(name: &str, head: &[u8]) -> Option<String> {
    let lower = name.to_ascii_lowercase();
    let has = |needle: &[u8]| {
        let end = head.len().min(SCHEMA_BYTES);
        memchr::memmem::find(&head[..end], needle).is_some()
    };
    let what = if head.starts_with(b"NVIDIA Tegra Profiler Report")
        || lower.ends_with(".nsys-rep")
        || lower.ends_with(".qdrep")
    {
        "an Nsight Systems report (.nsys-rep): export it to SQLite first (`nsys export --type \
         sqlite REPORT.nsys-rep`) and give the .sqlite file"
            .to_string()
    } else if head.starts_with(SQLITE_MAGIC) {
        sqlite(&has)
    } else if head.first() == Some(&0x80) && head.get(1).is_some_and(|p| (2..=5).contains(p)) {
        pickle(&has)
    } else if head.starts_with(b"PK\x03\x04") {
        "a zip archive: unpack it and give the trace files or the folder".to_string()
    } else if head.starts_with(b"\x7fELF") {
        "an executable (ELF), not a trace".to_string()
    } else if lower.ends_with(".csv") || looks_like_csv(head) {
        "a CSV table, not a trace (an Ascend profiler CSV is read from its rank folder: give \
         the *_ascend_pt folder)"
            .to_string()
    } else {
        return None;
    };
    Some(format!("{what}; {}", super::reads()))
}

/// A SQLite database, by the tables its schema names.
fn sqlite(has: &dyn Fn(&[u8]) -> bool) -> String {
    if has(b"CUPTI_ACTIVITY_KIND_KERNEL") || has(b"TARGET_INFO_GPU") || has(b"StringIds") {
        "an Nsight Systems SQLite export without the tables stepscope reads (kernels, memory \
         copies, runtime calls, NVTX ranges)"
            .to_string()
    } else if has(b"TASK") && (has(b"COMMUNICATION_OP") || has(b"STRING_IDS")) {
        "an Ascend profiler database: give the *_ascend_pt folder that holds it".to_string()
    } else {
        "a SQLite database of a schema stepscope does not know".to_string()
    }
}

/// A Python pickle, by the keys it holds.
fn pickle(has: &dyn Fn(&[u8]) -> bool) -> String {
    if has(b"pg_config") || (has(b"entries") && has(b"collective_seq_id")) {
        "a PyTorch Flight Recorder dump (a pickle) not read as one: give it, or its folder, \
         to `stepscope report` with the other ranks' dumps"
            .to_string()
    } else if has(b"device_traces") || has(b"segments") {
        "a PyTorch memory snapshot (torch.cuda.memory._dump_snapshot), not a trace: open it \
         at pytorch.org/memory_viz"
            .to_string()
    } else {
        "a Python pickle, not a trace".to_string()
    }
}

/// A first line of printable text with commas and no JSON punctuation, and a second line
/// with as many commas.
fn looks_like_csv(head: &[u8]) -> bool {
    let mut lines = head.split(|&b| b == b'\n').take(2);
    let (Some(a), Some(b)) = (lines.next(), lines.next()) else {
        return false;
    };
    let commas = |l: &[u8]| l.iter().filter(|&&c| c == b',').count();
    let text = |l: &[u8]| {
        l.iter()
            .all(|&c| c == b'\t' || c == b'\r' || (0x20..0x7f).contains(&c) || c >= 0x80)
    };
    commas(a) >= 2
        && commas(a) == commas(b)
        && text(a)
        && !a.iter().any(|&c| matches!(c, b'{' | b'['))
}

#[cfg(test)]
mod tests {
    use super::foreign;

    #[test]
    fn each_kind_is_named_by_its_evidence() {
        let is = |name: &str, head: &[u8], what: &str| {
            let got = foreign(name, head).unwrap_or_default();
            assert!(got.starts_with(what), "{name}: {got}");
            assert!(got.contains("stepscope reads"), "{got}");
        };
        is(
            "r.nsys-rep",
            b"NVIDIA Tegra Profiler Report 2024",
            "an Nsight Systems report",
        );
        let nsys = b"SQLite format 3\0....CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (";
        is("r.sqlite", nsys, "an Nsight Systems SQLite export");
        is(
            "x.db",
            b"SQLite format 3\0....CREATE TABLE t(a)",
            "a SQLite database of a schema",
        );
        is(
            "dump",
            b"\x80\x04\x95....pg_config....",
            "a PyTorch Flight Recorder dump",
        );
        is(
            "snap.pickle",
            b"\x80\x04\x95....segments",
            "a PyTorch memory snapshot",
        );
        is("x.pkl", b"\x80\x02}q\x00.", "a Python pickle");
        is("t.csv", b"Name,Start,Duration\nk,1,2\n", "a CSV table");
        is("t.txt", b"a,b,c\n1,2,3\n", "a CSV table");
        is("a.zip", b"PK\x03\x04rest", "a zip archive");
        // JSON, text and unknown binary are left to the readers.
        assert_eq!(foreign("t.json", b"{\"traceEvents\": []}"), None);
        assert_eq!(foreign("notes.txt", b"hello world\n"), None);
        assert_eq!(foreign("x.bin", b"\x00\x01\x02"), None);
    }
}
