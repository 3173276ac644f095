//! Byte-level JSON scanning for the fast event parser: byte-class tables, escape-free
//! string and number tokens read in one pass (8 bytes at a time where it pays), and
//! structural skipping of values the model does not read. Every function gives up (`None`)
//! on anything it does not handle, and the caller falls back to serde_json.

use super::raw::{Id, Loose, NumText, Str};
use memchr::memchr2;
use std::borrow::Cow;

/// Byte classes, looked up instead of compared: the scanner's inner loops are these tests.
pub(super) const WS: u8 = 1;
pub(super) const TOKEN: u8 = 2;
/// Ends a plain string scan: `"`, `\`, control characters.
pub(super) const STR_STOP: u8 = 4;
/// Matters when skipping a container: `"`, `{`, `}`, `[`, `]`.
pub(super) const NEST: u8 = 8;
/// `0`–`9`.
pub(super) const DIGIT: u8 = 32;
pub(super) const CLASS: [u8; 256] = {
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
pub(super) fn ws(b: &[u8], i: usize) -> usize {
    match b.get(i) {
        Some(&c) if CLASS[c as usize] & WS == 0 => i,
        Some(b' ') if b.get(i + 1).is_some_and(|&c| CLASS[c as usize] & WS == 0) => i + 1,
        _ => ws_loop(b, i),
    }
}

pub(super) fn ws_loop(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && CLASS[b[i] as usize] & WS != 0 {
        i += 1;
    }
    i
}

/// A string without escapes starting at the `"` at `i`: (contents, index after the closing `"`).
#[inline]
pub(super) fn plain_string(b: &[u8], i: usize) -> Option<(&[u8], usize)> {
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
pub(super) fn string_stops(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    zero(w ^ (ONES * b'"' as u64))
        | zero(w ^ (ONES * b'\\' as u64))
        | (w.wrapping_sub(ONES * 0x20) & !w & HIGH)
}

/// Skips any string (escapes allowed) starting at the `"` at `i`.
#[inline]
pub(super) fn skip_string(b: &[u8], mut i: usize) -> Option<usize> {
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
pub(super) fn zero_bytes(w: u64, c: u8) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let x = w ^ (ONES * c as u64);
    x.wrapping_sub(ONES) & !x & HIGH
}

/// Index of the first byte at or after `i` that `hit` accepts; `mask` is the same test on
/// 8 bytes at a time (high bit per matching byte).
#[inline(always)]
pub(super) fn next_of(
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
#[inline]
pub(super) fn skip_object(b: &[u8], i: usize) -> Option<usize> {
    close_object(b, i, 0)
}

/// The index after the `}` that closes an object, scanning from `j` at nesting `depth`
/// (0 when `j` is at the object's `{`, 1 when inside it). Only quotes and braces matter for
/// finding it: brackets cannot hold an unmatched brace in JSON.
#[inline]
pub(super) fn close_object(b: &[u8], mut j: usize, mut depth: usize) -> Option<usize> {
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
pub(super) fn token_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && CLASS[b[i] as usize] & TOKEN != 0 {
        i += 1;
    }
    i
}

/// JSON's number grammar exactly: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` — what
/// serde_json accepts, so the fast path never reads a number serde would refuse (`099`,
/// `.5`, `1.`, `+1`).
#[inline]
pub(super) fn is_number(t: &[u8]) -> bool {
    number_end(t, 0) == Some(t.len())
}

/// The end of the JSON number at `i` (the longest prefix its grammar accepts), in one pass
/// of index arithmetic: this runs for every `ts` and `dur` of a trace.
#[inline]
fn number_end(b: &[u8], i: usize) -> Option<usize> {
    let n = b.len();
    let digits = |mut i: usize| {
        while i < n && b[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let mut i = i + usize::from(i < n && b[i] == b'-');
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = digits(i + 1),
        _ => return None,
    }
    if i < n && b[i] == b'.' {
        let end = digits(i + 1);
        if end == i + 1 {
            return None;
        }
        i = end;
    }
    if i < n && (b[i] | 0x20) == b'e' {
        let mut j = i + 1;
        if j < n && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        let end = digits(j);
        if end == j {
            return None;
        }
        i = end;
    }
    Some(i)
}

/// Skips one value of any type; `None` on anything malformed.
#[inline]
pub(super) fn skip_value(b: &[u8], i: usize) -> Option<usize> {
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
#[inline]
pub(super) fn link_id(b: &[u8], i: usize) -> Option<(Option<u64>, usize)> {
    if b.get(i) == Some(&b'-') {
        let (v, e) = digits(b, i + 1)?;
        // `-0` is a float to serde_json (negative zero): it decides.
        return (v != Some(0)).then_some((None, e));
    }
    // Overflow (beyond u64) gives up: the serde path words that error precisely.
    let (v, e) = digits(b, i)?;
    Some((Some(v?), e))
}

/// An unsigned integer at `i` in one pass: (value, or `None` when it overflows u64; end).
/// Gives up unless there is at least one digit and the token ends there (no `.`, `e`, ...).
#[inline]
pub(super) fn digits(b: &[u8], i: usize) -> Option<(Option<u64>, usize)> {
    let mut j = i;
    let mut v: Option<u64> = Some(0);
    while j < b.len() && CLASS[b[j] as usize] & DIGIT != 0 {
        v = v.and_then(|v| v.checked_mul(10)?.checked_add(u64::from(b[j] - b'0')));
        j += 1;
    }
    let ends = j == b.len() || CLASS[b[j] as usize] & TOKEN == 0;
    // A leading zero (`099`) is not JSON: serde_json decides.
    let leading_zero = b[i..j].len() > 1 && b[i] == b'0';
    (j > i && ends && !leading_zero).then_some((v, j))
}

#[inline]
pub(super) fn id(b: &[u8], i: usize) -> Option<(Id<'_>, usize)> {
    match b.get(i)? {
        b'"' => {
            let (s, e) = plain_string(b, i)?;
            Some((Id::Text(Cow::Borrowed(s)), e))
        }
        b'-' => {
            let (v, e) = digits(b, i + 1)?;
            // `-0` is a float to serde_json (negative zero): it decides.
            let v = v.filter(|&v| v != 0)?;
            Some((Id::Int(-i64::try_from(v).ok()?), e))
        }
        _ => {
            let (v, e) = digits(b, i)?;
            Some((Id::Int(i64::try_from(v?).ok()?), e))
        }
    }
}

#[inline]
pub(super) fn num(b: &[u8], i: usize) -> Option<(NumText<'_>, usize)> {
    if b.get(i) == Some(&b'"') {
        let (_, e) = plain_string(b, i)?;
        return Some((NumText(&b[i..e]), e));
    }
    // One pass: a number by JSON's grammar, and the token ends there (`1.2.3` and `099` give
    // up: serde_json words the error).
    let j = number_end(b, i)?;
    let ends = j == b.len() || CLASS[b[j] as usize] & TOKEN == 0;
    ends.then(|| (NumText(&b[i..j]), j))
}

/// A collective metadata value at `i` (see [`Loose`]).
#[inline]
pub(super) fn loose_value(b: &[u8], i: usize) -> Option<(Loose<'_>, usize)> {
    match b.get(i)? {
        b'"' => match plain_string(b, i) {
            Some((s, e)) => Some((Loose::Text(Str(Cow::Borrowed(s))), e)),
            // torch_npu writes `Input Dims` with `\r\n` escapes: the string alone is decoded
            // as the serde path would, rather than the whole event; invalid text gives up.
            None => {
                let e = skip_string(b, i)?;
                let s: Str<'_> = serde_json::from_slice(&b[i..e]).ok()?;
                Some((Loose::Text(s), e))
            }
        },
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn numbers_follow_json_grammar_exactly() {
        for ok in ["0", "-0", "12", "1.5", "-1.25e-3", "1E+9", "0.0", "10e5"] {
            assert!(is_number(ok.as_bytes()), "{ok}");
            serde_json::from_str::<f64>(ok).unwrap();
        }
        for bad in [
            "", "-", "099", "00", ".5", "1.", "+1", "1e", "1e+", "1.2.3", "--1", "1-",
        ] {
            assert!(!is_number(bad.as_bytes()), "{bad}");
            assert!(serde_json::from_str::<f64>(bad).is_err(), "{bad}");
        }
        assert_eq!(digits(b"099,", 0), None);
        // Negative zero is serde_json's to read (a float): the fast path gives up.
        assert!(id(b"-0,", 0).is_none() && link_id(b"-0,", 0).is_none());
        assert_eq!(link_id(b"-1,", 0), Some((None, 2)));
        assert!(matches!(id(b"-7,", 0), Some((Id::Int(-7), 2))));
        assert_eq!(digits(b"0,", 0), Some((Some(0), 1)));
        assert!(num(b"099,", 0).is_none() && num(b".5,", 0).is_none());
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
}
