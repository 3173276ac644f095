//! The fast path for the common shape of a Kineto event: a flat object of known keys whose
//! strings have no escapes. It produces exactly what the serde path ([`RawEvent`]'s
//! `Deserialize`) produces, or gives up (`None`) on anything else — escapes, duplicate keys,
//! unexpected types, malformed input — and the caller re-parses that event with serde_json,
//! which then either accepts it or reports the precise error. Values of keys the model does
//! not read are skipped structurally (strings, nesting, literals), not validated in detail.

use super::raw::{Args, CollKey, Id, Loose, NumText, RawEvent, Str};
use memchr::memchr2;
use std::borrow::Cow;

/// Byte classes, looked up instead of compared: the scanner's inner loops are these tests.
const WS: u8 = 1;
const TOKEN: u8 = 2;
/// Ends a plain string scan: `"`, `\`, control characters.
const STR_STOP: u8 = 4;
/// Matters when skipping a container: `"`, `{`, `}`, `[`, `]`.
const NEST: u8 = 8;
/// May appear in a JSON number: digits, `.`, `e`, `E`, `+`, `-`.
const NUM: u8 = 16;
/// `0`–`9`.
const DIGIT: u8 = 32;
const CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut c = 0;
    while c < 0x20 {
        t[c] = STR_STOP;
        c += 1;
    }
    t[b'"' as usize] = STR_STOP | NEST;
    t[b'\\' as usize] = STR_STOP;
    t[b'{' as usize] = NEST;
    t[b'}' as usize] = NEST;
    t[b'[' as usize] = NEST;
    t[b']' as usize] = NEST;
    t[b' ' as usize] = WS;
    t[b'\n' as usize] |= WS;
    t[b'\r' as usize] |= WS;
    t[b'\t' as usize] |= WS;
    let token = b"0123456789-+.eEabcdfghijklmnopqrstuvwxyz";
    let mut k = 0;
    while k < token.len() {
        t[token[k] as usize] |= TOKEN;
        k += 1;
    }
    let num = b"0123456789-+.eE";
    k = 0;
    while k < num.len() {
        t[num[k] as usize] |= NUM;
        k += 1;
    }
    k = b'0' as usize;
    while k <= b'9' as usize {
        t[k] |= DIGIT;
        k += 1;
    }
    t
};

/// Skips whitespace. Between tokens there is usually none or one space: those two cases
/// are tested before the loop, since this runs several times per key.
#[inline(always)]
fn ws(b: &[u8], i: usize) -> usize {
    match b.get(i) {
        Some(&c) if CLASS[c as usize] & WS == 0 => i,
        Some(b' ') if b.get(i + 1).is_some_and(|&c| CLASS[c as usize] & WS == 0) => i + 1,
        _ => ws_loop(b, i),
    }
}

fn ws_loop(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && CLASS[b[i] as usize] & WS != 0 {
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
    // Short strings (keys, categories, ids) are most of the strings: scan them 8 bytes at a
    // time in a register; past 32 bytes (kernel names) memchr's vector loop wins.
    let mut j = s;
    let swar_end = (s + 32).min(b.len().saturating_sub(7));
    while j < swar_end {
        let w = u64::from_le_bytes(b[j..j + 8].try_into().expect("8 bytes"));
        let stop = string_stops(w);
        if stop != 0 {
            j += (stop.trailing_zeros() / 8) as usize;
            // Escapes and control characters (invalid in JSON strings): serde_json decides.
            return (b[j] == b'"').then(|| (&b[s..j], j + 1));
        }
        j += 8;
    }
    while j < b.len() && j < s + 40 && CLASS[b[j] as usize] & STR_STOP == 0 {
        j += 1;
    }
    if j < b.len() && CLASS[b[j] as usize] & STR_STOP != 0 {
        return (b[j] == b'"').then(|| (&b[s..j], j + 1));
    }
    // Long strings: one memchr pass. Raw control characters here are not rejected (serde_json
    // would); they cannot change the structure, and names are decoded lossily anyway.
    let at = j + memchr2(b'"', b'\\', &b[j..])?;
    if b[at] != b'"' {
        return None;
    }
    Some((&b[s..at], at + 1))
}

/// High bit set in each byte of `w` that is `"`, `\` or below 0x20 — exact for the lowest
/// such byte, which is all the caller reads (SWAR: "determine if a word has a zero byte").
#[inline(always)]
fn string_stops(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    zero(w ^ (ONES * b'"' as u64))
        | zero(w ^ (ONES * b'\\' as u64))
        | (w.wrapping_sub(ONES * 0x20) & !w & HIGH)
}

/// Skips any string (escapes allowed) starting at the `"` at `i`.
#[inline]
fn skip_string(b: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    loop {
        i = next_of(
            b,
            i,
            |w| zero_bytes(w, b'"') | zero_bytes(w, b'\\'),
            |c| c == b'"' || c == b'\\',
        )?;
        if b[i] == b'\\' {
            i += 2;
        } else {
            return Some(i + 1);
        }
    }
}

/// High bit set in each byte of `w` equal to `c` (exact for the lowest one).
#[inline(always)]
fn zero_bytes(w: u64, c: u8) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let x = w ^ (ONES * c as u64);
    x.wrapping_sub(ONES) & !x & HIGH
}

/// Index of the first byte at or after `i` that `hit` accepts; `mask` is the same test on
/// 8 bytes at a time (high bit per matching byte).
#[inline(always)]
fn next_of(
    b: &[u8],
    mut i: usize,
    mask: impl Fn(u64) -> u64,
    hit: impl Fn(u8) -> bool,
) -> Option<usize> {
    while i + 8 <= b.len() {
        let m = mask(u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes")));
        if m != 0 {
            return Some(i + (m.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    while i < b.len() {
        if hit(b[i]) {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// Skips the object starting at the `{` at `i`.
fn skip_object(b: &[u8], i: usize) -> Option<usize> {
    close_object(b, i, 0)
}

/// The index after the `}` that closes an object, scanning from `j` at nesting `depth`
/// (0 when `j` is at the object's `{`, 1 when inside it). Only quotes and braces matter for
/// finding it: brackets cannot hold an unmatched brace in JSON.
fn close_object(b: &[u8], mut j: usize, mut depth: usize) -> Option<usize> {
    loop {
        j = next_of(
            b,
            j,
            |w| zero_bytes(w, b'"') | zero_bytes(w, b'{') | zero_bytes(w, b'}'),
            |c| c == b'"' || c == b'{' || c == b'}',
        )?;
        match b[j] {
            b'"' => j = skip_string(b, j)?,
            b'{' => {
                depth += 1;
                j += 1;
            }
            _ => {
                depth -= 1;
                j += 1;
                if depth == 0 {
                    return Some(j);
                }
            }
        }
    }
}

/// End of a number or literal token starting at `i`.
#[inline]
fn token_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && CLASS[b[i] as usize] & TOKEN != 0 {
        i += 1;
    }
    i
}

fn is_number(t: &[u8]) -> bool {
    !t.is_empty()
        && t.iter()
            .all(|c| matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
        && t.iter().any(u8::is_ascii_digit)
}

/// Skips one value of any type; `None` on anything malformed.
fn skip_value(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => skip_string(b, i),
        b'{' => skip_object(b, i),
        b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                while j < b.len() && CLASS[b[j] as usize] & NEST == 0 {
                    j += 1;
                }
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
    if b.get(i) == Some(&b'-') {
        let (_, e) = digits(b, i + 1)?;
        return Some((None, e));
    }
    // Overflow (beyond u64) gives up: the serde path words that error precisely.
    let (v, e) = digits(b, i)?;
    Some((Some(v?), e))
}

/// An unsigned integer at `i` in one pass: (value, or `None` when it overflows u64; end).
/// Gives up unless there is at least one digit and the token ends there (no `.`, `e`, ...).
#[inline]
fn digits(b: &[u8], i: usize) -> Option<(Option<u64>, usize)> {
    let mut j = i;
    let mut v: Option<u64> = Some(0);
    while j < b.len() && CLASS[b[j] as usize] & DIGIT != 0 {
        v = v.and_then(|v| v.checked_mul(10)?.checked_add(u64::from(b[j] - b'0')));
        j += 1;
    }
    let ends = j == b.len() || CLASS[b[j] as usize] & TOKEN == 0;
    (j > i && ends).then_some((v, j))
}

fn id(b: &[u8], i: usize) -> Option<(Id<'_>, usize)> {
    match b.get(i)? {
        b'"' => {
            let (s, e) = plain_string(b, i)?;
            Some((Id::Text(Cow::Borrowed(s)), e))
        }
        b'-' => {
            let (v, e) = digits(b, i + 1)?;
            Some((Id::Int(-i64::try_from(v?).ok()?), e))
        }
        _ => {
            let (v, e) = digits(b, i)?;
            Some((Id::Int(i64::try_from(v?).ok()?), e))
        }
    }
}

fn num(b: &[u8], i: usize) -> Option<(NumText<'_>, usize)> {
    if b.get(i) == Some(&b'"') {
        let (_, e) = plain_string(b, i)?;
        return Some((NumText(&b[i..e]), e));
    }
    // One pass: number characters, at least one digit, and the token ends there.
    let mut j = i;
    let mut digit = 0u8;
    while j < b.len() && CLASS[b[j] as usize] & NUM != 0 {
        digit |= CLASS[b[j] as usize] & DIGIT;
        j += 1;
    }
    let ends = j == b.len() || CLASS[b[j] as usize] & TOKEN == 0;
    (digit != 0 && ends).then(|| (NumText(&b[i..j]), j))
}

/// A collective metadata value at `i` (see [`Loose`]).
fn loose_value(b: &[u8], i: usize) -> Option<(Loose<'_>, usize)> {
    match b.get(i)? {
        b'"' => {
            let (s, e) = plain_string(b, i)?;
            Some((Loose::Text(Str(Cow::Borrowed(s))), e))
        }
        b'-' | b'0'..=b'9' => {
            let (n, e) = num(b, i)?;
            Some((Loose::Number(n.0), e))
        }
        _ => {
            let e = skip_value(b, i)?;
            Some((Loose::Other(&b[i..e]), e))
        }
    }
}

/// The `args` object at `i`. With `external_id_only` (cpu ops and annotations, whose other
/// args the model does not read at load time) the rest is skipped once `External id` is read.
fn args(b: &[u8], mut i: usize, external_id_only: bool) -> Option<(Args<'_>, usize)> {
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
        let (key, k) = plain_string(b, i)?;
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
                if external_id_only {
                    return Some((a, close_object(b, e, 1)?));
                }
                e
            }
            b"name" | b"labels" => {
                let v = if b.get(i) == Some(&b'"') {
                    let (s, e) = plain_string(b, i)?;
                    (Some(Str(Cow::Borrowed(s))), e)
                } else {
                    (None, skip_value(b, i)?)
                };
                if key == b"name" {
                    a.name = v.0
                } else {
                    a.labels = v.0
                }
                v.1
            }
            k => match CollKey::of(k) {
                Some(ck) => {
                    let (v, e) = loose_value(b, i)?;
                    a.set_coll(ck, v);
                    e
                }
                None => skip_value(b, i)?,
            },
        };
        i = ws(b, i);
        match b.get(i)? {
            b',' => i = ws(b, i + 1),
            b'}' => return Some((a, i + 1)),
            _ => return None,
        }
    }
}

/// Host ops whose args describe a collective: `record_param_comms`, `gloo:*`, `c10d::*`.
pub fn is_collective_op(name: &[u8]) -> bool {
    name == b"record_param_comms" || name.starts_with(b"gloo:") || name.starts_with(b"c10d::")
}

/// True for an operator whose shapes (`Input Dims`, `Input type`) and `flops` give the FLOPs
/// and bytes of the kernels it launches (roofline). A `match` on the bytes: it runs once per
/// `cpu_op`, so it must cost next to nothing (the compiler dispatches on length first).
pub fn wants_shapes(name: &[u8]) -> bool {
    if !name.starts_with(b"aten::") {
        return false;
    }
    matches!(
        name,
        b"aten::_convolution"
            | b"aten::_efficient_attention_forward"
            | b"aten::_flash_attention_forward"
            | b"aten::_fused_rms_norm"
            | b"aten::_scaled_dot_product_cudnn_attention"
            | b"aten::_scaled_dot_product_efficient_attention"
            | b"aten::_scaled_dot_product_flash_attention"
            | b"aten::_softmax"
            | b"aten::add"
            | b"aten::add_"
            | b"aten::addmm"
            | b"aten::baddbmm"
            | b"aten::bmm"
            | b"aten::conv1d"
            | b"aten::conv2d"
            | b"aten::conv3d"
            | b"aten::convolution"
            | b"aten::cudnn_convolution"
            | b"aten::div"
            | b"aten::div_"
            | b"aten::gelu"
            | b"aten::layer_norm"
            | b"aten::linear"
            | b"aten::matmul"
            | b"aten::mean"
            | b"aten::mm"
            | b"aten::mul"
            | b"aten::mul_"
            | b"aten::native_layer_norm"
            | b"aten::relu"
            | b"aten::relu_"
            | b"aten::rms_norm"
            | b"aten::scaled_dot_product_attention"
            | b"aten::sigmoid"
            | b"aten::silu"
            | b"aten::silu_"
            | b"aten::softmax"
            | b"aten::sub"
            | b"aten::sum"
            | b"aten::tanh"
    )
}

/// The event keys the model reads, as codes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum EventKey {
    Ph = 0,
    Cat,
    Name,
    Pid,
    Tid,
    Ts,
    Dur,
    Args,
    Other,
}

/// A key and its closing quote as a little-endian word with the mask of its length, so that
/// a key is recognized by one load and one compare instead of a string comparison.
const fn key_word(k: &[u8]) -> (u64, u64) {
    let mut v = 0u64;
    let mut i = 0;
    while i < k.len() {
        v |= (k[i] as u64) << (8 * i);
        i += 1;
    }
    v |= (b'"' as u64) << (8 * k.len());
    let mask = if k.len() + 1 == 8 {
        u64::MAX
    } else {
        (1u64 << (8 * (k.len() + 1))) - 1
    };
    (v, mask)
}

const EVENT_KEYS: [(u64, u64, EventKey, usize); 8] = {
    const fn entry(k: &[u8], code: EventKey) -> (u64, u64, EventKey, usize) {
        let (v, m) = key_word(k);
        (v, m, code, k.len())
    }
    [
        entry(b"ph", EventKey::Ph),
        entry(b"cat", EventKey::Cat),
        entry(b"name", EventKey::Name),
        entry(b"pid", EventKey::Pid),
        entry(b"tid", EventKey::Tid),
        entry(b"ts", EventKey::Ts),
        entry(b"dur", EventKey::Dur),
        entry(b"args", EventKey::Args),
    ]
};

/// The key string at `i` (its `"`): which event key it is, and the index after it.
#[inline(always)]
fn event_key(b: &[u8], i: usize) -> Option<(EventKey, usize)> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    if let Some(w) = b.get(i + 1..i + 9) {
        let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
        for &(v, m, code, len) in &EVENT_KEYS {
            if w & m == v {
                return Some((code, i + len + 2));
            }
        }
    }
    let (key, end) = plain_string(b, i)?;
    let code = EVENT_KEYS
        .iter()
        .find(|e| key.len() == e.3 && key_word(key).0 == e.0)
        .map_or(EventKey::Other, |e| e.2);
    Some((code, end))
}

/// An event that is only counted keeps the fields that say why (`ph`, `cat`).
fn counted_only(ev: RawEvent<'_>) -> RawEvent<'_> {
    RawEvent {
        ph: ev.ph,
        cat: ev.cat,
        ..RawEvent::default()
    }
}

/// Parses the event object starting at `b[i] == '{'`; returns it and its length in bytes.
/// `python_stacks`: keep reading `python_function` frames instead of skipping them.
pub fn event(b: &[u8], start: usize, python_stacks: bool) -> Option<(RawEvent<'_>, usize)> {
    let mut ev = RawEvent::default();
    let mut seen = 0u16;
    let mut i = ws(b, start + 1);
    if b.get(i) == Some(&b'}') {
        return Some((ev, i + 1 - start));
    }
    loop {
        let (key, k) = event_key(b, i)?;
        i = ws(b, k);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = ws(b, i + 1);
        if key != EventKey::Other {
            let bit = 1u16 << key as u16;
            if seen & bit != 0 {
                return None; // duplicate key: serde_json reports it
            }
            seen |= bit;
        }
        let null = b.get(i..i + 4) == Some(b"null");
        i = match key {
            EventKey::Ph | EventKey::Cat | EventKey::Name if null => i + 4,
            EventKey::Ph | EventKey::Cat | EventKey::Name => {
                let (s, e) = plain_string(b, i)?;
                // Flows, instants and counters, and python stack frames, are only counted:
                // skip the rest of the object without reading it.
                let dropped = match key {
                    EventKey::Ph => matches!(s, b"s" | b"f" | b"t" | b"i" | b"I" | b"n" | b"C"),
                    EventKey::Cat => {
                        !python_stacks
                            && s == b"python_function"
                            && ev.ph.as_ref().is_some_and(|p| &*p.0 == b"X")
                    }
                    _ => false,
                };
                let v = Some(Str(Cow::Borrowed(s)));
                match key {
                    EventKey::Ph => ev.ph = v,
                    EventKey::Cat => ev.cat = v,
                    _ => ev.name = v,
                }
                if dropped {
                    let end = skip_object(b, start)?;
                    return Some((counted_only(ev), end - start));
                }
                e
            }
            EventKey::Pid | EventKey::Tid if null => i + 4,
            EventKey::Pid | EventKey::Tid => {
                let (v, e) = id(b, i)?;
                if key == EventKey::Pid {
                    ev.pid = Some(v)
                } else {
                    ev.tid = Some(v)
                }
                e
            }
            EventKey::Ts | EventKey::Dur if null => i + 4,
            EventKey::Ts | EventKey::Dur => {
                let (v, e) = num(b, i)?;
                if key == EventKey::Ts {
                    ev.ts = Some(v)
                } else {
                    ev.dur = Some(v)
                }
                e
            }
            EventKey::Args => {
                // Collective host ops carry their metadata (record_param_comms) or sizes
                // (gloo annotations, c10d ops) in args: read all of theirs.
                let host = ev
                    .cat
                    .as_ref()
                    .is_some_and(|c| matches!(&*c.0, b"cpu_op" | b"user_annotation"))
                    && ev
                        .name
                        .as_ref()
                        .is_some_and(|n| !is_collective_op(&n.0) && !wants_shapes(&n.0));
                let (a, e) = args(b, i, host)?;
                ev.args = if null { None } else { Some(a) };
                e
            }
            EventKey::Other => skip_value(b, i)?,
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
            r#"{"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", "pid": 0, "tid": 40, "ts": 4458677009853.422, "dur": 2636.669, "args": {"External id": 12945, "queued": 0, "device": 0, "context": 1, "stream": 40, "correlation": 60047, "registers per thread": 96, "shared memory": 87568, "blocks per SM": 0.074074, "warps per SM": 1.259259, "grid": [8, 1, 1], "block": [544, 1, 1], "est. achieved occupancy %": 0, "Collective name": "allreduce", "In msg nelems": 6637568, "Out msg nelems": 6637568, "Group size": 2, "dtype": "Float", "In split size": "[]", "Out split size": "[]", "Process Group Name": "0", "Process Group Description": "default_pg", "Process Group Ranks": "[0, 1]", "Seq": 18446744073709551615}}"#,
            r#"{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 2910249, "tid": 2919752, "ts": 4458676524648.797, "dur": 189.626, "args": {"External id": 2099, "Record function id": 1959, "Process Group Name": 0, "Global rank stride": 1, "Out msg nelems": 2049000, "Process Group Ranks": "[0, 1]", "Group size": 2.5, "Global rank start": 0, "Ev Idx": 50, "In msg nelems": -1, "In split size": "[]", "Out split size": "[]", "dtype": null, "Process Group Description": "default_pg", "Collective name": "allreduce"}}"#,
        ];
        for c in cases {
            let fast = event(c.as_bytes(), 0, false).map(|(e, len)| {
                assert_eq!(len, c.len());
                e
            });
            let slow = serde_event(c).map(|e| match e.ph.as_ref().map(|p| &*p.0) {
                Some(b"i") => counted_only(e),
                _ => e,
            });
            assert_eq!(fast, slow, "{c}");
        }
    }

    #[test]
    fn string_scan_finds_the_first_stop_at_every_offset() {
        for len in 0..80 {
            let body = "a".repeat(len);
            let text = format!("\"{body}\" tail");
            assert_eq!(
                plain_string(text.as_bytes(), 0),
                Some((body.as_bytes(), len + 2)),
                "{len}"
            );
            let esc = format!("\"{body}\\\"x\"");
            assert_eq!(plain_string(esc.as_bytes(), 0), None, "escape after {len}");
            let ctl = format!("\"{body}\u{1}\"");
            if len < 32 {
                assert_eq!(plain_string(ctl.as_bytes(), 0), None, "control after {len}");
            }
        }
        // Bytes ≥ 0x80 (UTF-8) are ordinary string bytes.
        let utf8 = "\"héllo wörld, ünïcode names are fine\"";
        assert!(plain_string(utf8.as_bytes(), 0).is_some());
    }

    #[test]
    fn shape_ops_are_recognized() {
        for n in [
            "aten::mm",
            "aten::linear",
            "aten::scaled_dot_product_attention",
            "aten::add_",
        ] {
            assert!(wants_shapes(n.as_bytes()), "{n}");
            assert!(
                crate::analysis::roofline::shapes::family(n).is_some(),
                "{n}"
            );
        }
        for n in ["aten::mmx", "mm", "aten::copy_", "record_param_comms", ""] {
            assert!(!wants_shapes(n.as_bytes()), "{n}");
        }
    }

    #[test]
    fn collective_metadata_is_read() {
        let c = r#"{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": 1, "dur": 2, "args": {"External id": 9, "Collective name": "broadcast", "In msg nelems": 10, "dtype": "Long", "Process Group Name": "0", "Process Group Ranks": "[0, 1]", "Seq": 4}}"#;
        let (ev, _) = event(c.as_bytes(), 0, false).unwrap();
        let a = ev.args.unwrap();
        assert!(a.collective);
        let m = a.coll.unwrap();
        assert_eq!(
            m.name.map(|s| s.0.into_owned()),
            Some(b"broadcast".to_vec())
        );
        assert_eq!(
            (m.in_nelems, m.seq, m.group_size),
            (Some(10), Some(4), None)
        );
        assert_eq!(
            m.group_ranks.map(|s| s.0.into_owned()),
            Some(b"[0, 1]".to_vec())
        );
    }

    #[test]
    fn host_op_args_stop_after_the_external_id() {
        let c = r#"{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 2, "args": {"External id": 7, "Input Dims": [[8, 16], [16, 32]], "Input type": ["float", "float"], "x": {"y": "}"}}, "id": 3}"#;
        let (ev, len) = event(c.as_bytes(), 0, false).unwrap();
        assert_eq!(len, c.len());
        assert_eq!(ev.args.unwrap().external_id, Some(7));
        assert_eq!(ev.dur, Some(NumText(b"2")));
    }

    #[test]
    fn skipping_matches_serde() {
        for v in [
            r#"{"a": [1, {"b": "}"}], "c": "\\\"{", "d": {}}"#,
            r#"[[], [{"x": "]"}], "[", 1e5]"#,
            r#""plain""#,
            r#""esc \\\" \\\\ q""#,
            r#"{"k": "a long string value that is longer than thirty two bytes, with a } in it"}"#,
        ] {
            let end = skip_value(v.as_bytes(), 0).unwrap();
            assert_eq!(end, v.len(), "{v}");
            serde_json::from_str::<serde_json::Value>(v).unwrap();
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
            assert!(event(c.as_bytes(), 0, false).is_none(), "{c}");
        }
    }
}
