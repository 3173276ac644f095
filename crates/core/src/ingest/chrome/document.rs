//! Walks the top-level object of a Chrome trace and parses its `traceEvents` array in parallel
//! chunks; every other top-level value is handed to the dialect's reader as it comes. Chunks are split at likely event boundaries (`}, {`); a chunk is trusted only if
//! the chunk before it, parsed from a trusted start, ended exactly where it begins — so a split
//! that fell inside an event is detected, and the rest is re-parsed sequentially.

use super::Dialect;
use super::chunk::{Chunk, EventError};
use super::fast::{self, Reading};
use super::raw::RawEvent;
use crate::error::Error;
use rayon::prelude::*;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::sync::atomic::{AtomicU64, Ordering};

/// Target bytes per parallel chunk: large enough that per-chunk tables stay cheap to merge,
/// small enough that a 30 MB rank still spreads over both cores.
const CHUNK_BYTES: usize = 4 << 20;

/// How to parse: the dialect, where to count progress, and what to keep.
pub(crate) struct ParseOptions<'a> {
    /// What the events mean.
    pub dialect: &'a dyn Dialect,
    /// Advanced as chunks finish (load progress).
    pub bytes_done: &'a AtomicU64,
    /// Keep stack frames (as events of kind other) instead of only counting them.
    pub stack_frames: bool,
    /// Which event parser runs.
    pub events: JsonEvents,
    /// The text's pages, when they can be brought in and given back chunk by chunk (a
    /// mapped file's); `None`: the text is held whole and chunks borrow from it.
    pub pages: Option<&'a dyn TextPages>,
}

/// What the parser may do with the pages of a text it reads (a mapped file's, `Source::pages`),
/// so that a big trace's text is never all held beside what was parsed from it.
pub(crate) trait TextPages: Sync {
    /// Brings in the pages of `[start, end)` at once, before the chunk over them is parsed
    /// (one call, not a fault per page taken by two threads).
    fn fetch(&self, start: usize, end: usize);
    /// Whether parsed ranges are given back ([`Self::release`]); each chunk then borrows
    /// nothing from the text (`Chunk::detach`).
    fn releases(&self) -> bool;
    /// Gives back the pages wholly inside `[start, end)`, a range already parsed; a later
    /// read of them brings them in again.
    fn release(&self, start: usize, end: usize);
}

/// Which parser reads each event of `traceEvents`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JsonEvents {
    /// The fast scanner, falling back to serde_json on what it does not handle.
    #[default]
    Fast,
    /// serde_json for every event: the reference the fast scanner must agree with (fuzzing
    /// runs both).
    SerdeOnly,
}

impl ParseOptions<'_> {
    fn reading<'a>(&self) -> Reading<'_, 'a> {
        Reading::new(self.dialect, self.stack_frames)
    }
}

/// A top-level value other than `traceEvents`: its key, the byte offset of the value, the
/// value. The dialect's reader interprets the ones it knows as they come (so their errors
/// come in file order).
pub(crate) type HeaderSink<'s, 'a> = dyn FnMut(&str, usize, &'a RawValue) -> Result<(), Error> + 's;

/// Parses one Chrome-JSON document: the chunks of `traceEvents` in file order, or `None` when
/// the document has no `traceEvents` (the dialect words that error: it knows what the file
/// is instead).
pub(crate) fn parse<'a>(
    label: &str,
    buf: &'a [u8],
    opts: &ParseOptions<'_>,
    header: &mut HeaderSink<'_, 'a>,
) -> Result<Option<Vec<Chunk<'a>>>, Error> {
    let mut pos = skip_ws(buf, 0);
    if pos == buf.len() {
        return Err(Error::input_at(label, 0, "empty input (only whitespace)"));
    }
    if buf[pos] == b'[' {
        // The Chrome format also allows a bare array of events.
        let (chunks, end) = parse_events(label, buf, pos, opts)?;
        expect_end(label, buf, end)?;
        check_not_empty(label, pos, &chunks)?;
        return Ok(Some(chunks));
    }
    if buf[pos] != b'{' {
        return Err(Error::input_at(
            label,
            pos as u64,
            "not a JSON trace: expected `{` or `[`",
        ));
    }
    pos = skip_ws(buf, pos + 1);
    let mut chunks = None;
    let mut more = buf.get(pos) != Some(&b'}');
    if !more {
        pos += 1;
    }
    while more {
        pos = skip_ws(buf, pos);
        match buf.get(pos) {
            Some(b'"') => {}
            Some(_) => return Err(Error::input_at(label, pos as u64, "expected a key string")),
            None => return Err(truncated(label, buf)),
        }
        let key: &str = value(label, buf, &mut pos)?;
        pos = skip_ws(buf, pos);
        if buf.get(pos) != Some(&b':') {
            return Err(Error::input_at(label, pos as u64, "expected `:` after key"));
        }
        pos = skip_ws(buf, pos + 1);
        match key {
            "traceEvents" => {
                if buf.get(pos) != Some(&b'[') {
                    return Err(Error::input_at(
                        label,
                        pos as u64,
                        "`traceEvents` is not an array",
                    ));
                }
                let (c, end) = parse_events(label, buf, pos, opts)?;
                check_not_empty(label, pos, &c)?;
                chunks = Some(c);
                pos = end;
            }
            _ => {
                let at = pos;
                let raw: &'a RawValue = value(label, buf, &mut pos)?;
                header(key, at, raw)?;
            }
        }
        pos = skip_ws(buf, pos);
        match buf.get(pos) {
            Some(b',') => pos += 1,
            Some(b'}') => {
                pos += 1;
                more = false;
            }
            Some(_) => return Err(Error::input_at(label, pos as u64, "expected `,` or `}`")),
            None => return Err(truncated(label, buf)),
        }
    }
    expect_end(label, buf, pos)?;
    Ok(chunks)
}

fn expect_end(label: &str, buf: &[u8], pos: usize) -> Result<(), Error> {
    let end = skip_ws(buf, pos);
    if end != buf.len() {
        return Err(Error::input_at(
            label,
            end as u64,
            "unexpected data after the end of the trace",
        ));
    }
    Ok(())
}

fn truncated(label: &str, buf: &[u8]) -> Error {
    Error::input_at(
        label,
        buf.len() as u64,
        "truncated JSON: input ends inside the trace",
    )
}

#[inline]
fn skip_ws(buf: &[u8], mut pos: usize) -> usize {
    while pos < buf.len() && matches!(buf[pos], b' ' | b'\n' | b'\r' | b'\t') {
        pos += 1;
    }
    pos
}

/// Deserializes one JSON value at `*pos` and advances past it.
fn value<'a, T: Deserialize<'a>>(label: &str, buf: &'a [u8], pos: &mut usize) -> Result<T, Error> {
    let mut it = serde_json::Deserializer::from_slice(&buf[*pos..]).into_iter::<T>();
    match it.next() {
        Some(Ok(v)) => {
            *pos += it.byte_offset();
            Ok(v)
        }
        Some(Err(e)) => Err(json_error(label, buf, *pos, &e)),
        None => Err(truncated(label, buf)),
    }
}

/// Converts a serde_json error (line/column relative to `base`) into an absolute byte offset.
fn json_error(label: &str, buf: &[u8], base: usize, e: &serde_json::Error) -> Error {
    let at = base + offset_of(&buf[base..], e.line(), e.column());
    let msg = strip_position(&e.to_string());
    if e.is_eof() {
        return Error::input_at(label, at as u64, format!("truncated JSON: {msg}"));
    }
    Error::input_at(label, at as u64, msg)
}

/// serde_json appends " at line L column C"; the byte offset replaces it.
fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

/// Byte offset of 1-based `line`, `column` in `text` (columns count bytes, as serde_json does).
fn offset_of(text: &[u8], line: usize, column: usize) -> usize {
    let mut start = 0;
    for _ in 1..line {
        match text[start..].iter().position(|&b| b == b'\n') {
            Some(i) => start += i + 1,
            None => return text.len(),
        }
    }
    (start + column.saturating_sub(1)).min(text.len())
}

/// How a chunk stopped.
enum End {
    /// Reached its stop offset at the start of an event (the next chunk should begin here).
    Boundary(usize),
    /// Consumed the closing `]`; the value is the offset after it.
    ArrayEnd(usize),
}

struct ChunkResult<'a> {
    chunk: Chunk<'a>,
    end: Result<End, Error>,
}

/// Parses the array starting at `open` (`[`); returns the chunks and the offset after `]`.
fn parse_events<'a>(
    label: &str,
    buf: &'a [u8],
    open: usize,
    opts: &ParseOptions<'_>,
) -> Result<(Vec<Chunk<'a>>, usize), Error> {
    let body = open + 1;
    let starts = split_points(buf, body);
    let mut results: Vec<ChunkResult<'a>> = starts
        .par_iter()
        .enumerate()
        .map(|(k, &s)| {
            let stop = starts.get(k + 1).copied().unwrap_or(usize::MAX);
            let r = parse_chunk(label, buf, s, stop, opts);
            let end = stop.min(buf.len());
            opts.bytes_done
                .fetch_add(end.saturating_sub(s) as u64, Ordering::Relaxed);
            r
        })
        .collect();

    let mut chunks = Vec::with_capacity(results.len());
    let n = results.len();
    for (k, r) in results.drain(..).enumerate() {
        // Chunk k's start is trusted: it is the array start or chunk k-1 ended exactly here.
        match r.end? {
            End::ArrayEnd(after) => {
                chunks.push(r.chunk);
                return Ok((chunks, after));
            }
            End::Boundary(at) => {
                chunks.push(r.chunk);
                if k + 1 < n && starts[k + 1] == at {
                    continue;
                }
                // The split after chunk k fell inside an event (or the array ended earlier
                // than a later split guessed): parse the rest sequentially from `at`.
                let rest = parse_chunk(label, buf, at, usize::MAX, opts);
                chunks.push(rest.chunk);
                match rest.end? {
                    End::ArrayEnd(after) => return Ok((chunks, after)),
                    End::Boundary(_) => {
                        unreachable!("an unbounded chunk ends only at `]` or an error")
                    }
                }
            }
        }
    }
    Err(truncated(label, buf))
}

/// Rejects an empty `traceEvents`: there is nothing to analyse, and saying so beats a report
/// of zeros.
fn check_not_empty(label: &str, open: usize, chunks: &[Chunk<'_>]) -> Result<(), Error> {
    if chunks.iter().all(Chunk::is_empty) {
        return Err(Error::input_at(
            label,
            open as u64,
            "`traceEvents` is empty",
        ));
    }
    Ok(())
}

/// Candidate chunk starts: the array body, then the first `{` of a `}` `,` `{` sequence after
/// each multiple of the chunk size.
fn split_points(buf: &[u8], body: usize) -> Vec<usize> {
    split_points_with(buf, body, &next_boundary)
}

/// [`split_points`] with the boundary search given (a test counts the searches).
fn split_points_with(
    buf: &[u8],
    body: usize,
    next_boundary: &dyn Fn(&[u8], usize) -> Option<usize>,
) -> Vec<usize> {
    let mut starts = vec![body];
    let len = buf.len() - body;
    let n = len / CHUNK_BYTES;
    for k in 1..=n {
        let target = body + k * len / (n + 1);
        if target <= *starts.last().unwrap() {
            continue;
        }
        match next_boundary(buf, target) {
            Some(s) if s > *starts.last().unwrap() => starts.push(s),
            Some(_) => {}
            // No boundary after this target means none after any later one: searching again
            // from each would scan the rest once per chunk (quadratic on one huge token).
            None => break,
        }
    }
    starts
}

/// The offset of the `{` in the first `}` ws* `,` ws* `{` at or after `from`.
fn next_boundary(buf: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i < buf.len() {
        let close = i + memchr::memchr(b'}', &buf[i..])?;
        let comma = skip_ws(buf, close + 1);
        if buf.get(comma) == Some(&b',') {
            let open = skip_ws(buf, comma + 1);
            if buf.get(open) == Some(&b'{') {
                return Some(open);
            }
        }
        i = close + 1;
    }
    None
}

/// Parses events from `start` until the array ends or the next event would start at or after
/// `stop`.
fn parse_chunk<'a>(
    label: &str,
    buf: &'a [u8],
    start: usize,
    stop: usize,
    opts: &ParseOptions<'_>,
) -> ChunkResult<'a> {
    let pages = opts.pages;
    if let Some(p) = pages {
        p.fetch(start, stop.min(buf.len()));
    }
    let mut chunk = Chunk::with_capacity(stop.saturating_sub(start).min(buf.len() - start));
    chunk.stack_frames = opts.stack_frames;
    let end = parse_into(label, buf, start, stop, &mut chunk, opts);
    let Some(p) = pages.filter(|p| p.releases()) else {
        return ChunkResult { chunk, end };
    };
    let chunk = chunk.detach();
    if let Ok(End::Boundary(to) | End::ArrayEnd(to)) = end {
        p.release(start, to);
    }
    ChunkResult { chunk, end }
}

fn parse_into<'a>(
    label: &str,
    buf: &'a [u8],
    start: usize,
    stop: usize,
    chunk: &mut Chunk<'a>,
    opts: &ParseOptions<'_>,
) -> Result<End, Error> {
    let reading = opts.reading();
    let mut pos = skip_ws(buf, start);
    if buf.get(pos) == Some(&b']') {
        return Ok(End::ArrayEnd(pos + 1));
    }
    loop {
        pos = skip_ws(buf, pos);
        if pos >= stop {
            return Ok(End::Boundary(pos));
        }
        if pos >= buf.len() {
            return Err(truncated(label, buf));
        }
        if buf[pos] != b'{' {
            return Err(Error::input_at(
                label,
                pos as u64,
                "expected an event object in `traceEvents`",
            ));
        }
        let fast = match opts.events {
            JsonEvents::Fast => fast::event(buf, pos, &reading),
            JsonEvents::SerdeOnly => None,
        };
        let (ev, len) = match fast {
            Some(found) => found,
            None => {
                let mut it =
                    serde_json::Deserializer::from_slice(&buf[pos..]).into_iter::<RawEvent<'a>>();
                match it.next() {
                    Some(Ok(ev)) => (ev, it.byte_offset()),
                    Some(Err(e)) => return Err(json_error(label, buf, pos, &e)),
                    None => return Err(truncated(label, buf)),
                }
            }
        };
        chunk
            .push(ev, pos as u64, len, opts.dialect)
            .map_err(|(at, msg): EventError| Error::input_at(label, at, format!("event: {msg}")))?;
        pos = skip_ws(buf, pos + len);
        match buf.get(pos) {
            Some(b',') => pos += 1,
            Some(b']') => return Ok(End::ArrayEnd(pos + 1)),
            Some(_) => {
                return Err(Error::input_at(
                    label,
                    pos as u64,
                    "expected `,` or `]` after an event",
                ));
            }
            None => return Err(truncated(label, buf)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events_of(text: &str) -> usize {
        let done = AtomicU64::new(0);
        let roles = crate::ingest::roles::RoleTable::embedded();
        let kineto = crate::ingest::kineto::Kineto::new(&roles);
        let opts = ParseOptions {
            dialect: &kineto,
            bytes_done: &done,
            stack_frames: false,
            events: JsonEvents::Fast,
            pages: None,
        };
        let chunks = parse("t", text.as_bytes(), &opts, &mut |_, _, _| Ok(()))
            .unwrap()
            .unwrap();
        chunks.iter().map(|c| c.cols.start.len()).sum()
    }

    /// Pages that record what the parser asked of them.
    #[derive(Default)]
    struct Recorded {
        fetched: std::sync::Mutex<Vec<(usize, usize)>>,
        released: std::sync::Mutex<Vec<(usize, usize)>>,
    }

    impl TextPages for Recorded {
        fn fetch(&self, start: usize, end: usize) {
            self.fetched.lock().unwrap().push((start, end));
        }
        fn releases(&self) -> bool {
            true
        }
        fn release(&self, start: usize, end: usize) {
            self.released.lock().unwrap().push((start, end));
        }
    }

    #[test]
    fn each_chunk_is_fetched_before_and_released_after_its_parse_borrowing_nothing() {
        // Names holding `}, {` put some split points inside an event: the chunks after one
        // are parsed again from where the trusted chunk ended, and given back too.
        let ev = |i: usize| {
            let name = if i % 3 == 0 { "a}, {b" } else { "k" };
            format!(
                r#"{{"ph":"X","cat":"cpu_op","name":"{name}{}","pid":1,"tid":1,"ts":{i},"dur":1}}"#,
                i % 7
            )
        };
        let n = 3 * CHUNK_BYTES / ev(0).len();
        let body: Vec<String> = (0..n).map(ev).collect();
        let text = format!(r#"{{"traceEvents":[{}]}}"#, body.join(","));
        let done = AtomicU64::new(0);
        let roles = crate::ingest::roles::RoleTable::embedded();
        let kineto = crate::ingest::kineto::Kineto::new(&roles);
        let pages = Recorded::default();
        let mut opts = ParseOptions {
            dialect: &kineto,
            bytes_done: &done,
            stack_frames: false,
            events: JsonEvents::Fast,
            pages: Some(&pages),
        };
        let names = |chunks: &[Chunk<'_>]| -> Vec<Vec<u8>> {
            let mut v: Vec<Vec<u8>> = chunks
                .iter()
                .flat_map(|c| c.cols.name.iter().map(|&k| c.names[k as usize].to_vec()))
                .collect();
            v.sort();
            v
        };
        let given_back = parse("t", text.as_bytes(), &opts, &mut |_, _, _| Ok(()));
        let given_back = names(&given_back.unwrap().unwrap());
        opts.pages = None;
        let kept = parse("t", text.as_bytes(), &opts, &mut |_, _, _| Ok(()));
        assert_eq!(given_back, names(&kept.unwrap().unwrap()));
        assert_eq!(given_back.len(), n);
        // Every parse of a chunk fetched its range first and gave back what it read.
        let fetched = pages.fetched.into_inner().unwrap();
        let mut released = pages.released.into_inner().unwrap();
        assert!(fetched.len() >= 3, "{fetched:?}");
        assert_eq!(fetched.len(), released.len());
        released.sort();
        assert_eq!(released.first().map(|r| r.0), Some(16));
        assert_eq!(released.last().map(|r| r.1), Some(text.len() - 1));
        for r in &released {
            assert!(
                fetched.iter().any(|f| f.0 == r.0),
                "{r:?} released unfetched"
            );
        }
    }

    #[test]
    fn parses_object_and_bare_array() {
        let ev = r#"{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1.5,"dur":2}"#;
        assert_eq!(events_of(&format!(r#"{{"traceEvents":[{ev},{ev}]}}"#)), 2);
        assert_eq!(events_of(&format!("[{ev}]")), 1);
    }

    #[test]
    fn boundary_inside_a_string_is_detected() {
        // A name containing `}, {` must not be taken as an event boundary.
        let tricky = r#"{"ph":"X","cat":"cpu_op","name":"a}, {b","pid":1,"tid":1,"ts":1,"dur":1}"#;
        let mut text = String::from(r#"{"traceEvents":["#);
        let n = 2 * CHUNK_BYTES / tricky.len() + 10;
        for i in 0..n {
            if i > 0 {
                text.push(',');
            }
            text.push_str(tricky);
        }
        text.push_str("]}");
        assert_eq!(events_of(&text), n);
    }

    #[test]
    fn one_huge_token_is_split_once_not_searched_per_chunk() {
        // 64 MiB of NULs after the array start: no event boundary anywhere. Every split
        // target would search to the end; the search stops at the first that finds none.
        let mut text = b"{\"traceEvents\": [".to_vec();
        text.resize(text.len() + (64 << 20), 0);
        let searched = std::cell::Cell::new(0);
        let starts = split_points_with(&text, 17, &|buf, from| {
            searched.set(searched.get() + 1);
            next_boundary(buf, from)
        });
        assert_eq!(starts, [17]);
        assert_eq!(searched.get(), 1);
    }

    #[test]
    fn offsets_from_line_and_column() {
        assert_eq!(offset_of(b"ab\ncd\nef", 3, 2), 7);
        assert_eq!(offset_of(b"abc", 1, 1), 0);
    }
}
