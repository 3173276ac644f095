//! Walks the top-level object of a Kineto trace and parses its `traceEvents` array in parallel
//! chunks. Chunks are split at likely event boundaries (`}, {`); a chunk is trusted only if
//! the chunk before it, parsed from a trusted start, ended exactly where it begins — so a split
//! that fell inside an event is detected, and the rest is re-parsed sequentially.

use super::chunk::{Chunk, EventError};
use super::fast;
use super::raw::RawEvent;
use crate::error::InputError;
use crate::time::{Ns, nanos_text_to_ns};
use rayon::prelude::*;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;
use std::sync::atomic::{AtomicU64, Ordering};

/// Target bytes per parallel chunk: large enough that per-chunk tables stay cheap to merge,
/// small enough that a 30 MB rank still spreads over both cores.
const CHUNK_BYTES: usize = 4 << 20;

/// How to parse: where to count progress, and what to keep.
pub struct ParseOptions<'a> {
    /// Advanced as chunks finish (load progress).
    pub bytes_done: &'a AtomicU64,
    /// Keep `python_function` frames (as events of kind other) instead of only counting them.
    pub python_stacks: bool,
}

/// The top-level fields stepscope reads besides `traceEvents`.
#[derive(Debug, Default)]
pub struct Header {
    /// `distributedInfo` as JSON, when present.
    pub distributed: Option<serde_json::Value>,
    /// `deviceProperties[].name`.
    pub device_names: Vec<String>,
    /// `baseTimeNanoseconds`.
    pub base_ns: Option<Ns>,
}

/// A parsed file: its header and the chunks of events in file order.
pub struct Parsed<'a> {
    pub header: Header,
    pub chunks: Vec<Chunk<'a>>,
}

/// Parses one Kineto JSON document.
pub fn parse<'a>(
    label: &str,
    buf: &'a [u8],
    opts: &ParseOptions<'_>,
) -> Result<Parsed<'a>, InputError> {
    let mut pos = skip_ws(buf, 0);
    if pos == buf.len() {
        return Err(InputError::at(label, 0, "empty input (only whitespace)"));
    }
    if buf[pos] == b'[' {
        // The Chrome format also allows a bare array of events.
        let (chunks, end) = parse_events(label, buf, pos, opts)?;
        expect_end(label, buf, end)?;
        check_not_empty(label, pos, &chunks)?;
        return Ok(Parsed {
            header: Header::default(),
            chunks,
        });
    }
    if buf[pos] != b'{' {
        return Err(InputError::at(
            label,
            pos as u64,
            "not a JSON trace: expected `{` or `[`",
        ));
    }
    pos = skip_ws(buf, pos + 1);
    let mut header = Header::default();
    let mut chunks = None;
    let mut execution_trace = false;
    let mut more = buf.get(pos) != Some(&b'}');
    if !more {
        pos += 1;
    }
    while more {
        pos = skip_ws(buf, pos);
        match buf.get(pos) {
            Some(b'"') => {}
            Some(_) => return Err(InputError::at(label, pos as u64, "expected a key string")),
            None => return Err(truncated(label, buf)),
        }
        let key: &str = value(label, buf, &mut pos)?;
        pos = skip_ws(buf, pos);
        if buf.get(pos) != Some(&b':') {
            return Err(InputError::at(label, pos as u64, "expected `:` after key"));
        }
        pos = skip_ws(buf, pos + 1);
        match key {
            "traceEvents" => {
                if buf.get(pos) != Some(&b'[') {
                    return Err(InputError::at(
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
            "distributedInfo" => header.distributed = Some(value(label, buf, &mut pos)?),
            "deviceProperties" => {
                let at = pos;
                let props: serde_json::Value = value(label, buf, &mut pos)?;
                header.device_names = device_names(&props).ok_or_else(|| {
                    InputError::at(label, at as u64, "`deviceProperties` is not a list")
                })?;
            }
            "baseTimeNanoseconds" => {
                let at = pos;
                let raw: &RawValue = value(label, buf, &mut pos)?;
                let ns = nanos_text_to_ns(raw.get().as_bytes()).map_err(|e| {
                    InputError::at(label, at as u64, format!("`baseTimeNanoseconds`: {e}"))
                })?;
                header.base_ns = Some(ns);
            }
            _ => {
                execution_trace |= key == "nodes";
                value::<IgnoredAny>(label, buf, &mut pos)?;
            }
        }
        pos = skip_ws(buf, pos);
        match buf.get(pos) {
            Some(b',') => pos += 1,
            Some(b'}') => {
                pos += 1;
                more = false;
            }
            Some(_) => return Err(InputError::at(label, pos as u64, "expected `,` or `}`")),
            None => return Err(truncated(label, buf)),
        }
    }
    expect_end(label, buf, pos)?;
    let chunks = chunks.ok_or_else(|| {
        let what = if execution_trace {
            "a PyTorch Execution Trace (`nodes`), not a Kineto trace: give the Kineto trace of the run"
        } else {
            "no `traceEvents` array: not a Kineto/Chrome trace"
        };
        InputError::at(label, 0, what)
    })?;
    Ok(Parsed { header, chunks })
}

fn device_names(props: &serde_json::Value) -> Option<Vec<String>> {
    let list = props.as_array()?;
    Some(
        list.iter()
            .filter_map(|d| d.get("name").and_then(|n| n.as_str()).map(str::to_string))
            .collect(),
    )
}

fn expect_end(label: &str, buf: &[u8], pos: usize) -> Result<(), InputError> {
    let end = skip_ws(buf, pos);
    if end != buf.len() {
        return Err(InputError::at(
            label,
            end as u64,
            "unexpected data after the end of the trace",
        ));
    }
    Ok(())
}

fn truncated(label: &str, buf: &[u8]) -> InputError {
    InputError::at(
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
fn value<'a, T: Deserialize<'a>>(
    label: &str,
    buf: &'a [u8],
    pos: &mut usize,
) -> Result<T, InputError> {
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
fn json_error(label: &str, buf: &[u8], base: usize, e: &serde_json::Error) -> InputError {
    let at = base + offset_of(&buf[base..], e.line(), e.column());
    let msg = strip_position(&e.to_string());
    if e.is_eof() {
        return InputError::at(label, at as u64, format!("truncated JSON: {msg}"));
    }
    InputError::at(label, at as u64, msg)
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
    end: Result<End, InputError>,
}

/// Parses the array starting at `open` (`[`); returns the chunks and the offset after `]`.
fn parse_events<'a>(
    label: &str,
    buf: &'a [u8],
    open: usize,
    opts: &ParseOptions<'_>,
) -> Result<(Vec<Chunk<'a>>, usize), InputError> {
    let body = open + 1;
    let starts = split_points(buf, body);
    let mut results: Vec<ChunkResult<'a>> = starts
        .par_iter()
        .enumerate()
        .map(|(k, &s)| {
            let stop = starts.get(k + 1).copied().unwrap_or(usize::MAX);
            let r = parse_chunk(label, buf, s, stop, opts.python_stacks);
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
                let rest = parse_chunk(label, buf, at, usize::MAX, opts.python_stacks);
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
fn check_not_empty(label: &str, open: usize, chunks: &[Chunk<'_>]) -> Result<(), InputError> {
    if chunks.iter().all(Chunk::is_empty) {
        return Err(InputError::at(label, open as u64, "`traceEvents` is empty"));
    }
    Ok(())
}

/// Candidate chunk starts: the array body, then the first `{` of a `}` `,` `{` sequence after
/// each multiple of the chunk size.
fn split_points(buf: &[u8], body: usize) -> Vec<usize> {
    let mut starts = vec![body];
    let len = buf.len() - body;
    let n = len / CHUNK_BYTES;
    for k in 1..=n {
        let target = body + k * len / (n + 1);
        if target <= *starts.last().unwrap() {
            continue;
        }
        if let Some(s) = next_boundary(buf, target) {
            if s > *starts.last().unwrap() {
                starts.push(s);
            }
        }
    }
    starts
}

/// The offset of the `{` in the first `}` ws* `,` ws* `{` at or after `from`.
fn next_boundary(buf: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i < buf.len() {
        let close = i + buf[i..].iter().position(|&b| b == b'}')?;
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
    python_stacks: bool,
) -> ChunkResult<'a> {
    let mut chunk = Chunk::with_capacity(stop.saturating_sub(start).min(buf.len() - start));
    chunk.python_stacks = python_stacks;
    let end = parse_into(label, buf, start, stop, &mut chunk);
    ChunkResult { chunk, end }
}

fn parse_into<'a>(
    label: &str,
    buf: &'a [u8],
    start: usize,
    stop: usize,
    chunk: &mut Chunk<'a>,
) -> Result<End, InputError> {
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
            return Err(InputError::at(
                label,
                pos as u64,
                "expected an event object in `traceEvents`",
            ));
        }
        let (ev, len) = match fast::event(buf, pos, chunk.python_stacks) {
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
            .push(ev, pos as u64, len)
            .map_err(|(at, msg): EventError| InputError::at(label, at, format!("event: {msg}")))?;
        pos = skip_ws(buf, pos + len);
        match buf.get(pos) {
            Some(b',') => pos += 1,
            Some(b']') => return Ok(End::ArrayEnd(pos + 1)),
            Some(_) => {
                return Err(InputError::at(
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
        let opts = ParseOptions {
            bytes_done: &done,
            python_stacks: false,
        };
        let p = parse("t", text.as_bytes(), &opts).unwrap();
        p.chunks.iter().map(|c| c.cols.start.len()).sum()
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
    fn offsets_from_line_and_column() {
        assert_eq!(offset_of(b"ab\ncd\nef", 3, 2), 7);
        assert_eq!(offset_of(b"abc", 1, 1), 0);
    }
}
