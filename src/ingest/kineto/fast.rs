//! The fast path for the common shape of a Kineto event: a flat object of known keys whose
//! strings have no escapes. It produces exactly what the serde path ([`RawEvent`]'s
//! `Deserialize`) produces, or gives up (`None`) on anything else — escapes, duplicate keys,
//! unexpected types, malformed input — and the caller re-parses that event with serde_json,
//! which then either accepts it or reports the precise error. Values of keys the model does
//! not read are skipped structurally (strings, nesting, literals), not validated in detail.

use super::raw::{Args, Id, NumText, RawEvent, Str};
use memchr::memchr2;
use std::borrow::Cow;

#[inline]
fn ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\n' | b'\r' | b'\t') {
        i += 1;
    }
    i
}

/// A string without escapes starting at the `"` at `i`: (contents, index after the closing `"`).
#[inline]
fn plain_string(b: &[u8], i: usize) -> Option<(&[u8], usize)> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let s = i + 1;
    // Most strings are short keys: a byte loop beats memchr's setup there.
    let mut j = s;
    let short_end = (s + 24).min(b.len());
    while j < short_end {
        match b[j] {
            b'"' => return Some((&b[s..j], j + 1)),
            b'\\' => return None,
            // Control characters are invalid in JSON strings: let serde_json report them.
            0..=0x1f => return None,
            _ => j += 1,
        }
    }
    // Long strings (kernel names) are most of the bytes: one memchr pass. Raw control
    // characters past the first 24 bytes are not rejected here (serde_json would); they
    // cannot change the structure, and names are decoded lossily anyway.
    let at = j + memchr2(b'"', b'\\', &b[j..])?;
    if b[at] != b'"' {
        return None;
    }
    Some((&b[s..at], at + 1))
}

/// Skips any string (escapes allowed) starting at the `"` at `i`.
#[inline]
fn skip_string(b: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    loop {
        let at = memchr2(b'"', b'\\', &b[i..])?;
        i += at;
        if b[i] == b'\\' {
            i += 2;
        } else {
            return Some(i + 1);
        }
    }
}

/// End of a number or literal token starting at `i`.
#[inline]
fn token_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E' | b'a'..=b'z') {
        i += 1;
    }
    i
}

fn is_number(t: &[u8]) -> bool {
    !t.is_empty() && t.iter().all(|c| matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')) && t.iter().any(u8::is_ascii_digit)
}

/// Skips one value of any type; `None` on anything malformed.
fn skip_value(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => skip_string(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match *b.get(j)? {
                    b'"' => {
                        j = skip_string(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            let e = token_end(b, i);
            let t = &b[i..e];
            (t == b"true" || t == b"false" || t == b"null" || is_number(t)).then_some(e)
        }
    }
}

/// A non-negative integer id, or `None` for a negative one; gives up on anything else.
fn link_id(b: &[u8], i: usize) -> Option<(Option<u64>, usize)> {
    let e = token_end(b, i);
    let t = &b[i..e];
    if t.first() == Some(&b'-') && t.len() > 1 && t[1..].iter().all(u8::is_ascii_digit) {
        return Some((None, e));
    }
    if t.is_empty() || !t.iter().all(u8::is_ascii_digit) {
        return None;
    }
    // Overflow (beyond u64) is an error the serde path words precisely.
    let mut v: u64 = 0;
    for &c in t {
        v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    Some((Some(v), e))
}

fn id(b: &[u8], i: usize) -> Option<(Id<'_>, usize)> {
    if b.get(i) == Some(&b'"') {
        let (s, e) = plain_string(b, i)?;
        return Some((Id::Text(Cow::Borrowed(s)), e));
    }
    let e = token_end(b, i);
    let t = &b[i..e];
    let digits = if t.first() == Some(&b'-') { &t[1..] } else { t };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut v: i64 = 0;
    for &c in digits {
        v = v.checked_mul(10)?.checked_add(i64::from(c - b'0'))?;
    }
    Some((Id::Int(if digits.len() < t.len() { -v } else { v }), e))
}

fn num(b: &[u8], i: usize) -> Option<(NumText<'_>, usize)> {
    if b.get(i) == Some(&b'"') {
        let (_, e) = plain_string(b, i)?;
        return Some((NumText(&b[i..e]), e));
    }
    let e = token_end(b, i);
    is_number(&b[i..e]).then(|| (NumText(&b[i..e]), e))
}

fn args(b: &[u8], mut i: usize) -> Option<(Args<'_>, usize)> {
    if b.get(i) == Some(&b'n') {
        return (b.get(i..i + 4) == Some(b"null")).then(|| (Args::default(), i + 4));
    }
    if b.get(i) != Some(&b'{') {
        return None;
    }
    let mut a = Args::default();
    i = ws(b, i + 1);
    if b.get(i) == Some(&b'}') {
        return Some((a, i + 1));
    }
    loop {
        let (key, k) = key(b, i, &[b"correlation", b"External id"])?;
        i = ws(b, k);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = ws(b, i + 1);
        i = match key {
            b"correlation" => {
                let (v, e) = link_id(b, i)?;
                a.correlation = v;
                e
            }
            b"External id" | b"external id" => {
                let (v, e) = link_id(b, i)?;
                a.external_id = v;
                e
            }
            b"Collective name" => {
                a.collective = true;
                skip_value(b, i)?
            }
            b"name" | b"labels" => {
                let v = if b.get(i) == Some(&b'"') {
                    let (s, e) = plain_string(b, i)?;
                    (Some(Str(Cow::Borrowed(s))), e)
                } else {
                    (None, skip_value(b, i)?)
                };
                if key == b"name" { a.name = v.0 } else { a.labels = v.0 }
                v.1
            }
            _ => skip_value(b, i)?,
        };
        i = ws(b, i);
        match b.get(i)? {
            b',' => i = ws(b, i + 1),
            b'}' => return Some((a, i + 1)),
            _ => return None,
        }
    }
}

/// The event keys, tried before the general string scan (they are most of the keys).
const EVENT_KEYS: [&[u8]; 8] = [b"ph", b"cat", b"name", b"pid", b"tid", b"ts", b"dur", b"args"];

/// A key string at `i`: one of `known` matched by a direct comparison, or any escape-free key.
#[inline]
fn key<'b>(b: &'b [u8], i: usize, known: &[&'static [u8]]) -> Option<(&'b [u8], usize)> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    for k in known {
        let end = i + 1 + k.len();
        if b.get(i + 1..end) == Some(k) && b.get(end) == Some(&b'"') {
            return Some((&b[i + 1..end], end + 1));
        }
    }
    plain_string(b, i)
}

/// Parses the event object starting at `b[i] == '{'`; returns it and its length in bytes.
pub fn event(b: &[u8], start: usize) -> Option<(RawEvent<'_>, usize)> {
    let mut ev = RawEvent::default();
    let mut seen = 0u16;
    let mut i = ws(b, start + 1);
    if b.get(i) == Some(&b'}') {
        return Some((ev, i + 1 - start));
    }
    loop {
        let (key, k) = key(b, i, &EVENT_KEYS)?;
        i = ws(b, k);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = ws(b, i + 1);
        let bit = match key {
            b"ph" => 1,
            b"cat" => 2,
            b"name" => 4,
            b"pid" => 8,
            b"tid" => 16,
            b"ts" => 32,
            b"dur" => 64,
            b"args" => 128,
            _ => 0,
        };
        if bit != 0 {
            if seen & bit != 0 {
                return None; // duplicate key: serde_json reports it
            }
            seen |= bit;
        }
        let null = b.get(i..i + 4) == Some(b"null");
        i = match key {
            b"ph" | b"cat" | b"name" if null => i + 4,
            b"ph" | b"cat" | b"name" => {
                let (s, e) = plain_string(b, i)?;
                let v = Some(Str(Cow::Borrowed(s)));
                match key {
                    b"ph" => ev.ph = v,
                    b"cat" => ev.cat = v,
                    _ => ev.name = v,
                }
                e
            }
            b"pid" | b"tid" if null => i + 4,
            b"pid" | b"tid" => {
                let (v, e) = id(b, i)?;
                if key == b"pid" { ev.pid = Some(v) } else { ev.tid = Some(v) }
                e
            }
            b"ts" | b"dur" if null => i + 4,
            b"ts" | b"dur" => {
                let (v, e) = num(b, i)?;
                if key == b"ts" { ev.ts = Some(v) } else { ev.dur = Some(v) }
                e
            }
            b"args" => {
                let (a, e) = args(b, i)?;
                ev.args = if null { None } else { Some(a) };
                e
            }
            _ => skip_value(b, i)?,
        };
        i = ws(b, i);
        match b.get(i)? {
            b',' => i = ws(b, i + 1),
            b'}' => return Some((ev, i + 1 - start)),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    fn serde_event(text: &str) -> Option<RawEvent<'_>> {
        let mut de = serde_json::Deserializer::from_str(text);
        RawEvent::deserialize(&mut de).ok()
    }

    #[test]
    fn agrees_with_serde_on_common_shapes() {
        let cases = [
            r#"{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 4458676416788.066, "dur": 2.5, "args": {"External id": 12, "correlation": 60047, "stream": 7, "grid": [1, 2, 3], "Collective name": "allreduce", "x": {"y": [{"z": "a\"b"}]}}}"#,
            r#"{"name": "thread_name", "ph": "M", "ts": 0, "pid": 2910249, "tid": 2919752, "args": {"name": "thread 1 (pt_main_thread)"}}"#,
            r#"{"name": "process_labels", "ph": "M", "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}}"#,
            r#"{"ph": "i", "s": "g", "pid": "Traces", "tid": "", "ts": "12.5", "name": "Iteration Start: PyTorch Profiler"}"#,
            r#"{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1e3, "dur": 3, "args": {"correlation": -1, "External id": 0, "flag": true, "n": null}}"#,
            r#"{}"#,
            r#"{"ph":"X","args":null,"ts":null}"#,
        ];
        for c in cases {
            let fast = event(c.as_bytes(), 0).map(|(e, len)| {
                assert_eq!(len, c.len());
                e
            });
            assert_eq!(fast, serde_event(c), "{c}");
        }
    }

    #[test]
    fn gives_up_where_serde_must_decide() {
        for c in [
            r#"{"ph": "X", "name": "a\"b"}"#,
            r#"{"ph": "X", "ph": "M"}"#,
            r#"{"ph": "X", "ts": tru}"#,
            r#"{"ph": "X", "ts": 1,}"#,
            r#"{"ph": "X", "args": {"correlation": 99999999999999999999999}}"#,
            r#"{"ph": "X", "pid": 1.5}"#,
            r#"{"ph": "X""#,
        ] {
            assert!(event(c.as_bytes(), 0).is_none(), "{c}");
        }
    }
}
