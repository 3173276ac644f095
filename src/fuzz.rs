//! The bodies of the fuzz targets (`fuzz/fuzz_targets/*.rs` call these; docs/testing.md):
//! each takes arbitrary bytes and runs one reader or face the way a user's input reaches it,
//! then checks what must hold on any input — no panic (the targets build with overflow
//! checks, so arithmetic that overflows panics too), no hang, and nothing unsafe reaching a
//! terminal. They live in the library so that `src/fuzz/tests.rs` replays every
//! crash the fuzzers found, and a sample of their corpora, through the same code.

use crate::analysis::Options;
use crate::format::{json_unsafe, unsafe_char};
use crate::ingest::chrome::document::JsonEvents;
use crate::ingest::{Input, LoadOptions, Origin, progress::Counters};
use crate::session::Session;
use crate::ui::browser::Pane;
use crate::ui::shell::keymap::{Keymap, parse_script};
use crate::ui::shell::snapshot;
use crate::ui::shell::theme::Theme;
use std::sync::Arc;

/// The byte that separates ranks (or log sources) in a multi-input fuzz case: it never
/// occurs in UTF-8 text, so seeds made of whole traces keep their structure.
pub const SEPARATOR: u8 = 0xff;

/// At most this many ranks or sources per case (more only slows the fuzzer).
const MAX_PARTS: usize = 8;

/// One Chrome/Kineto JSON trace through the fast event scanner, then the whole analysis and
/// every report format; `true` when it loaded (the regression test checks fixtures do).
pub fn trace(data: &[u8]) -> bool {
    let s = session(vec![data.to_vec()], JsonEvents::Fast);
    s.as_ref().map(reports).is_some()
}

/// One trace through serde_json alone and through the fast scanner: both must load the same
/// events or both refuse (the fast path only ever gives up to serde). The one leniency the
/// fast path is allowed (it skips what it does not read structurally, unvalidated: a
/// malformed value or invalid UTF-8 under a key it ignores, a key repeated in an event it
/// only counts) shows only on text that is not JSON as serde reads a struct ([`is_json`]).
pub fn trace_serde(data: &[u8]) -> bool {
    let serde = session(vec![data.to_vec()], JsonEvents::SerdeOnly);
    let fast = session(vec![data.to_vec()], JsonEvents::Fast);
    match (&serde, &fast) {
        (Some(a), Some(b)) => {
            let (a, b) = (&a.loaded.job.ranks[0].events, &b.loaded.job.ranks[0].events);
            assert_eq!(a.start, b.start, "fast and serde starts differ");
            assert_eq!(a.dur, b.dur, "fast and serde durations differ");
            assert_eq!(a.kind, b.kind, "fast and serde kinds differ");
            assert_eq!(a.link, b.link, "fast and serde links differ");
        }
        (None, None) => {}
        (None, Some(_)) if !is_json(data) => {}
        (None, Some(_)) => panic!("the fast path loaded valid JSON that serde refused"),
        (Some(_), None) => panic!("the fast path refused what serde loaded"),
    }
    serde.as_ref().map(reports).is_some()
}

/// A trace given gzip-compressed (or not: the magic decides), as a `.json.gz` file is.
pub fn gzip(data: &[u8]) -> bool {
    session(vec![data.to_vec()], JsonEvents::Fast).is_some()
}

/// The same bytes as a stream (stdin, a FIFO: read in pieces of the size the first byte
/// picks) and from memory (a file): the stream reader's cap, control-byte check and
/// streaming inflate may refuse what memory takes (a control byte JSON forbids anyway), but
/// what both read is the same text, and nothing panics.
pub fn stream(data: &[u8]) {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let piece = usize::from(pick).max(1);
    let pieces = Pieces { rest: bytes, piece };
    let streamed = crate::ingest::source::from_reader("fuzz", pieces);
    let memory = crate::ingest::source::from_memory("fuzz", bytes.to_vec());
    if let (Ok(s), Ok(m)) = (&streamed, &memory) {
        assert_eq!(&*s.text, &*m.text, "stream and memory read different text");
        assert_eq!(s.gzipped, m.gzipped);
    }
}

/// A reader that gives at most `piece` bytes per read (a pipe's short reads).
struct Pieces<'a> {
    rest: &'a [u8],
    piece: usize,
}

impl std::io::Read for Pieces<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.piece).min(self.rest.len());
        buf[..n].copy_from_slice(&self.rest[..n]);
        self.rest = &self.rest[n..];
        Ok(n)
    }
}

/// The Ascend CSV readers: the first byte picks `kernel_details.csv`, `step_trace_time.csv`
/// or `op_statistic.csv`; the rest is the file.
pub fn ascend_csv(data: &[u8]) {
    let Some((&pick, text)) = data.split_first() else {
        return;
    };
    let label = "fuzz.csv";
    match pick % 3 {
        0 => {
            if let Ok(t) = crate::ingest::ascend::kernel_details::parse(label, text) {
                let mut strings = crate::model::Interner::default();
                let roles = crate::ingest::roles::RoleTable::embedded();
                let _ = crate::ingest::ascend::device_only::rank(t.rows, &mut strings, &roles);
            }
        }
        1 => {
            let _ = crate::ingest::ascend::step_trace::parse(label, text);
        }
        _ => {
            let _ = crate::ingest::ascend::op_statistic::parse(label, text);
        }
    }
}

/// The Ascend JSON side files: the first byte picks `communication.json` (its traffic and
/// its groups), `communication_matrix.json`, `profiler_info_*.json` or
/// `profiler_metadata.json`, or a summary-only rank (`step_trace_time.csv`, a NUL, then
/// `communication.json`); the rest is the file.
pub fn ascend_json(data: &[u8]) {
    let Some((&pick, text)) = data.split_first() else {
        return;
    };
    let label = "fuzz.json";
    use crate::ingest::ascend::{communication, info, matrix};
    match pick % 5 {
        4 => summary_rank(text),
        0 => {
            let _ = communication::parse(label, text);
        }
        1 => {
            let _ = communication::op_groups_of(label, text);
        }
        2 => {
            let _ = matrix::parse(label, text);
        }
        _ => {
            let _ = info::parse_files(Some((label, text)), Some((label, text)));
        }
    }
}

/// A summary-only rank from a step summary and a `communication.json` (split at the first
/// NUL), checked as every rank is, then analysed.
fn summary_rank(text: &[u8]) {
    use crate::ingest::ascend::{communication, step_trace, summary};
    let (csv, json) = match text.iter().position(|&b| b == 0) {
        Some(k) => (&text[..k], &text[k + 1..]),
        None => (text, &b""[..]),
    };
    let Ok(steps) = step_trace::parse("fuzz.csv", csv) else {
        return;
    };
    let ops = communication::parse("fuzz.json", json).map_or_else(|_| Vec::new(), |c| c.timings);
    let ops = ops.into_iter().map(|o| (None, o)).collect();
    let Ok(mut d) = summary::draft("fuzz", steps, ops) else {
        return;
    };
    if crate::ingest::check_bounds(&mut d).is_err() {
        return;
    }
    let roles = crate::ingest::roles::RoleTable::embedded();
    if let Ok(loaded) = crate::session::Loaded::of_drafts(vec![d], &roles) {
        let _ = crate::analysis::analyze(&loaded.job, &Options::default());
    }
}

/// A stepscope model file (a cache entry or a summary, `ingest::modelfile`): the bytes read
/// as a whole file (magic, header, checksum) and as a payload alone — past the checksum, so
/// that mutations reach the payload's own checks — and every draft that reads checked,
/// assembled and analysed as a load's, then reported. `true` when a payload read.
pub fn model_file(data: &[u8]) -> bool {
    use crate::ingest::modelfile;
    let _ = modelfile::decode(data);
    let Ok(mut drafts) = modelfile::decode_payload(data) else {
        return false;
    };
    if drafts
        .iter_mut()
        .any(|d| crate::ingest::check_bounds(d).is_err())
    {
        return false;
    }
    let roles = crate::ingest::roles::RoleTable::embedded();
    let Ok(loaded) = crate::session::Loaded::of_drafts(drafts, &roles) else {
        return false;
    };
    let inputs = vec![Input {
        origin: Origin::Memory("fuzz.stepscope".into(), Arc::from(data)),
    }];
    if let Ok(s) = Session::analyse(loaded, Options::default(), "fuzz".into(), inputs) {
        reports(&s);
    }
    true
}

/// An Ascend profiler database: the bytes are the file (a real export's pages, mutated),
/// read as a rank directory's `ascend_pytorch_profiler.db` is, then analysed.
pub fn ascend_db(data: &[u8]) {
    let Ok(dir) = tempfile_dir() else {
        return;
    };
    let path = dir.join("ascend_pytorch_profiler_0.db");
    if std::fs::write(&path, data).is_err() {
        return;
    }
    if let Ok(r) = crate::ingest::ascend::db::read(&path) {
        let mut draft = crate::ingest::RankDraft::undeclared(r.rank, r.strings, r.warnings);
        let _ = crate::ingest::check_bounds(&mut draft);
    }
    let _ = crate::ingest::ascend::db::step_trace(&path);
    // The same bytes as a summary-only rank's analysis.db (one rank per device it names).
    let summary = dir.join("analysis.db");
    if std::fs::rename(&path, &summary).is_ok() {
        let rank = crate::ingest::ascend::RankDir {
            root: dir.clone(),
            output: dir.clone(),
        };
        let info = crate::ingest::ascend::info::Info::default();
        if let Ok(drafts) = crate::ingest::ascend::summary::read(&rank, info) {
            for mut d in drafts {
                let _ = crate::ingest::check_bounds(&mut d);
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// An Nsight Systems SQLite export: the bytes are the file (a real export's pages, mutated),
/// read through the reader table as a file given by name is, each rank it makes checked,
/// assembled and analysed.
pub fn nsys(data: &[u8]) {
    let Ok(dir) = tempfile_dir() else {
        return;
    };
    let path = dir.join("report.sqlite");
    if std::fs::write(&path, data).is_ok() {
        let input = Input {
            origin: Origin::File(path),
        };
        let opts = LoadOptions::default();
        if let Ok(loaded) = crate::session::load_counted(&[input], &opts, &Counters::new(1)) {
            let _ = crate::analysis::analyze(&loaded.job, &Options::default());
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Flight Recorder dumps of up to eight ranks (split at [`SEPARATOR`]; part k is rank k's
/// dump, a pickle or JSON): each read, the readable ones triaged, and the hang report
/// written as text, markdown and JSON; `true` when some dump was read.
pub fn flight(data: &[u8]) -> bool {
    use crate::report::Format;
    let mut dumps = Vec::new();
    let mut skipped = Vec::new();
    for (k, part) in split(data).iter().enumerate() {
        match crate::ingest::flight::read_bytes(part, k as u32, &format!("rank-{k}")) {
            Ok(d) => dumps.push(d),
            Err(e) => skipped.push(e.to_string()),
        }
    }
    if dumps.is_empty() {
        return false;
    }
    let f = crate::session::flight::Flight {
        hang: crate::analysis::hang::hang(&dumps),
        dumps,
        skipped,
    };
    let r = crate::report::hang::build(&f);
    for format in [Format::Text, Format::Md] {
        terminal_text(&crate::report::hang::render(&r, format, 100));
    }
    let json = crate::report::hang::render(&r, Format::Json, 100);
    assert!(!json.contains(json_unsafe), "raw unsafe character in JSON");
    serde_json::from_str::<serde_json::Value>(&json).expect("the hang report's JSON parses");
    true
}

/// A fresh private directory for one case (the database reader needs a path).
fn tempfile_dir() -> std::io::Result<std::path::PathBuf> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let base = std::env::temp_dir().join(format!(
        "stepscope-fuzz-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&base)?;
    Ok(base)
}

/// Training logs through `watch`: up to eight sources split at [`SEPARATOR`], fed in chunks
/// whose size the first byte sets (lines cut anywhere), through the normaliser, the rejoin
/// of cut lines, every recogniser (or the one the second byte picks) and the live analysis;
/// then the JSON lines, the summary and the live screen at two sizes.
pub fn logs(data: &[u8]) {
    use crate::ingest::logs::RECOGNISERS;
    let [a, b, rest @ ..] = data else {
        return;
    };
    let chunk = 1 + usize::from(*a % 64);
    let only = RECOGNISERS.get(usize::from(*b)).filter(|_| b % 2 == 1);
    let parts = split(rest);
    let labels: Vec<String> = (0..parts.len()).map(|i| format!("log{i}")).collect();
    let paths: Vec<std::path::PathBuf> = labels.iter().map(Into::into).collect();
    let mut engine = crate::session::watch::engine::Engine::new(labels, &paths, only);
    if b % 4 == 2 {
        // A `--step-pattern` with every group, over untrusted text.
        let p = r"(?:r(?P<rank>\d+) )?(?P<step>\d+)(?:/(?P<of>\d+))?\D+(?P<time>[\d.]+\w*)(?:\D+(?P<elapsed_ms>[\d.]+))?";
        let p = crate::ingest::logs::pattern::StepPattern::new(p).expect("a valid pattern");
        engine.set_step_pattern(std::sync::Arc::new(p));
    }
    let mut out = Vec::new();
    let mut sink = |source: &str, rec: &crate::ingest::logs::Record, alerts: &[_]| {
        let _ = crate::report::watch::emit(&mut out, source, rec, alerts);
    };
    let longest = parts.iter().map(Vec::len).max().unwrap_or(0);
    for at in (0..longest).step_by(chunk) {
        for (i, p) in parts.iter().enumerate() {
            if let Some(bytes) = p.get(at..(at + chunk).min(p.len())) {
                engine.feed(i, bytes, at + chunk >= p.len(), &mut sink);
            }
        }
    }
    engine.release(&mut sink);
    let closing = engine.finish();
    let _ = crate::report::watch::write_alerts(&mut out, &closing);
    json_lines(&String::from_utf8_lossy(&out));
    let summary =
        crate::report::watch::summary(&engine.live, &crate::report::watch::notes(&engine));
    terminal_text(&summary);
    terminal_text(&crate::report::watch::explain::explain(&engine));
    let view = crate::ui::watch::view::WatchView::of(&engine, 0.0);
    for size in [(80, 24), (120, 40)] {
        let screen = crate::ui::watch::WatchScreen {
            view: Box::new(view.clone()),
            ..Default::default()
        };
        let shell = crate::ui::shell::Shell::new(
            screen,
            Keymap::default_map(),
            Theme::builtin("dark"),
            false,
            size,
        );
        terminal_text(&snapshot::render(&shell));
    }
}

/// A job of up to eight ranks (traces split at [`SEPARATOR`]): loaded together (so the
/// cross-rank checks, clock alignment and collective matching run), analysed, and written
/// as the text, markdown and JSON reports.
pub fn report(data: &[u8]) -> bool {
    let s = session(split(data), JsonEvents::Fast);
    s.as_ref().map(reports).is_some()
}

/// A job as in [`report`], drawn pane by pane at 80×24 and 120×40, each pane also after the
/// keys a user presses first (move, zoom, pan, open, back).
pub fn snapshot(data: &[u8]) -> bool {
    let Some(s) = session(split(data), JsonEvents::Fast) else {
        return false;
    };
    let mut shell = crate::ui::headless(
        s,
        Keymap::default_map(),
        Theme::builtin("dark"),
        false,
        (120, 40),
    );
    let keys = parse_script("j+>l<enter>j-<esc>").unwrap_or_default();
    for size in [(80, 24), (120, 40)] {
        for pane in Pane::ALL {
            shell.screen.nav.stack.truncate(1);
            shell.screen.nav.pane = pane;
            shell.ctx.size = size;
            shell.refresh();
            terminal_text(&snapshot::render(&shell));
            for k in &keys {
                shell.key(*k);
            }
            terminal_text(&snapshot::render(&shell));
        }
    }
    true
}

/// Whether `data` is JSON text as serde reads a struct: UTF-8 (serde_json skips the strings
/// of ignored values without checking it), well formed, and no object repeating a key
/// (a struct refuses a duplicate field; the fast path skips the rest of an event it only
/// counts, a flow or a counter, and never sees it).
fn is_json(data: &[u8]) -> bool {
    use serde::Deserializer;
    std::str::from_utf8(data).is_ok()
        && serde_json::Deserializer::from_slice(data)
            .deserialize_any(UniqueKeys)
            .is_ok()
}

/// A JSON value whose objects never repeat a key.
struct UniqueKeys;

impl<'de> serde::de::Visitor<'de> for UniqueKeys {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("JSON without repeated keys")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        while a.next_element_seed(UniqueKeysSeed)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let mut keys = std::collections::HashSet::new();
        while let Some(k) = a.next_key::<String>()? {
            if !keys.insert(k) {
                return Err(serde::de::Error::custom("a repeated key"));
            }
            a.next_value_seed(UniqueKeysSeed)?;
        }
        Ok(())
    }
}

/// [`UniqueKeys`] for nested values.
struct UniqueKeysSeed;

impl<'de> serde::de::DeserializeSeed<'de> for UniqueKeysSeed {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(UniqueKeys)
    }
}

/// `data` cut at [`SEPARATOR`] into at most [`MAX_PARTS`] parts.
fn split(data: &[u8]) -> Vec<Vec<u8>> {
    data.split(|&b| b == SEPARATOR)
        .take(MAX_PARTS)
        .map(<[u8]>::to_vec)
        .collect()
}

/// The inputs loaded as one job and analysed, as the command line does; `None` when the job
/// is refused (every refusal must be an error value, never a panic).
fn session(ranks: Vec<Vec<u8>>, events: JsonEvents) -> Option<Session> {
    let inputs: Vec<Input> = ranks
        .into_iter()
        .enumerate()
        .map(|(i, bytes)| Input {
            origin: Origin::Memory(format!("rank-{i}.json"), Arc::from(bytes)),
        })
        .collect();
    let opts = LoadOptions {
        events,
        ..LoadOptions::default()
    };
    let counters = Counters::new(inputs.len());
    let loaded = crate::session::load_counted(&inputs, &opts, &counters).ok()?;
    Session::analyse(loaded, Options::default(), "fuzz".into(), inputs).ok()
}

/// Every report format: text and markdown fit a terminal, JSON parses.
fn reports(s: &Session) {
    use crate::report::{Format, build, render};
    let r = build(&s.loaded, &s.analysis, s.opts.scope);
    terminal_text(&render(&r, Format::Text));
    terminal_text(&render(&r, Format::Md));
    let json = render(&r, Format::Json);
    assert!(!json.contains(json_unsafe), "raw unsafe character in JSON");
    serde_json::from_str::<serde_json::Value>(&json).expect("the JSON report parses");
    self_diff(s);
    export(s);
}

/// The job against itself: every face renders, and nothing changed.
fn self_diff(s: &Session) {
    use crate::analysis::diff::{DiffOptions, Run, diff};
    use crate::report::Format;
    let run = Run {
        job: &s.loaded.job,
        analysis: &s.analysis,
    };
    let Ok(d) = diff(run, run, &DiffOptions::default()) else {
        return; // no step to line up
    };
    assert!(
        d.parts.parts.iter().all(|p| p.time.delta_ns() == 0),
        "a job differs from itself"
    );
    assert_eq!(
        (d.ops.matched.only_before, d.ops.matched.only_after),
        (0, 0)
    );
    let info = || crate::report::diff::RunInfo {
        title: "fuzz".into(),
        ranks: Vec::new(),
        steps: 0,
        devices: Vec::new(),
    };
    let r = crate::report::diff::build(&d, [info(), info()], [&s.analysis, &s.analysis]);
    for f in [Format::Text, Format::Md] {
        terminal_text(&crate::report::diff::render(&r, f, 100));
    }
    let json = crate::report::diff::render(&r, Format::Json, 100);
    assert!(
        !json.contains(json_unsafe),
        "raw unsafe character in the diff's JSON"
    );
    serde_json::from_str::<serde_json::Value>(&json).expect("the diff's JSON parses");
}

/// The Perfetto export: JSON without raw unsafe characters, every slice with a duration ≥ 0.
fn export(s: &Session) {
    let mut out = Vec::new();
    crate::report::perfetto::write(&s.loaded.job, &s.analysis, &mut out).expect("writes to memory");
    let text = std::str::from_utf8(&out).expect("the export is UTF-8");
    assert!(
        !text.contains(json_unsafe),
        "raw unsafe character in the export"
    );
    let v: serde_json::Value = serde_json::from_str(text).expect("the export parses");
    for e in v["traceEvents"].as_array().expect("traceEvents") {
        if e["ph"] == "X" {
            assert!(
                e["dur"].as_f64().is_some_and(|d| d >= 0.0),
                "a slice with no duration: {e}"
            );
        }
    }
}

/// Text for a terminal: no line holds a control, bidi or invisible character.
pub fn terminal_text(text: &str) {
    for line in text.lines() {
        assert!(
            !line.contains(unsafe_char),
            "unsafe character reached the terminal: {line:?}"
        );
    }
}

/// JSON lines: each parses, and none carries a raw C1, bidi or invisible character.
fn json_lines(text: &str) {
    for line in text.lines() {
        assert!(
            !line.contains(json_unsafe),
            "raw unsafe character in JSON: {line:?}"
        );
        serde_json::from_str::<serde_json::Value>(line).expect("each JSON line parses");
    }
}

#[cfg(test)]
mod tests;
