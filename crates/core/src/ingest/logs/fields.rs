//! Field helpers shared by the recognisers: `key: value` pairs, numbers with thousands
//! separators and unit suffixes, durations parsed exactly, wall-clock timestamps.

use crate::time::{Ns, unit_text_to_ns};

/// `key: value` or `key=value` pairs of the `sep`-separated fields of `text` (`sep` is
/// ASCII).
pub(crate) fn pairs(text: &str, sep: char) -> Pairs<'_> {
    debug_assert!(sep.is_ascii());
    Pairs {
        text,
        at: 0,
        sep: sep as u8,
    }
}

/// The iterator of [`pairs`] (the `memchr` crate's searches: fields are found without a
/// byte loop).
pub(crate) struct Pairs<'a> {
    text: &'a str,
    at: usize,
    sep: u8,
}

impl<'a> Iterator for Pairs<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<(&'a str, &'a str)> {
        let b = self.text.as_bytes();
        while self.at <= b.len() {
            let start = self.at;
            let end = memchr::memchr(self.sep, &b[start..]).map_or(b.len(), |i| start + i);
            self.at = end + 1;
            let Some(m) = memchr::memchr2(b':', b'=', &b[start..end]) else {
                continue;
            };
            // Every cut is at an ASCII byte, so each slice is valid UTF-8.
            let (k, v) = (
                self.text[start..start + m].trim_ascii(),
                self.text[start + m + 1..end].trim_ascii(),
            );
            if !k.is_empty() && !v.is_empty() {
                return Some((k, v));
            }
        }
        None
    }
}

/// The text after `key`, when `key` is in `t` (`Latency: 0.27s, …` → `0.27s, …`).
pub(super) fn after<'a>(t: &'a str, key: &str) -> Option<&'a str> {
    t.find(key).map(|i| &t[i + key.len()..])
}

/// The longest prefix of `s` of at most `n` bytes that ends on a character boundary: log
/// lines are any UTF-8 (CJK logs, tqdm's block characters), so a byte count can fall
/// inside a character.
pub(crate) fn head(s: &str, n: usize) -> &str {
    let mut end = n.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// A number at the start of `v`: thousands separators removed, a unit suffix (`ms`, `%`,
/// `GiB`, `T` …) ignored; `nan` and `inf` accepted.
pub(crate) fn number(v: &str) -> Option<f64> {
    let v = v.trim_ascii();
    // Words only when the text starts like one: no lower-casing copy per number.
    if matches!(v.as_bytes().first(), Some(b'n' | b'N' | b'i' | b'I' | b'-')) {
        let head = v.get(..4).unwrap_or(v);
        let word = |w: &str| {
            head.get(..w.len())
                .is_some_and(|h| h.eq_ignore_ascii_case(w))
        };
        if word("nan") || word("-nan") {
            return Some(f64::NAN);
        }
        if word("inf") {
            return Some(f64::INFINITY);
        }
        if word("-inf") {
            return Some(f64::NEG_INFINITY);
        }
    }
    let text = numeric_prefix(v);
    // Thousands separators are rare: a copy only for them.
    if text.len() > 3 && text.as_bytes().contains(&b',') {
        return text.replace(',', "").parse().ok();
    }
    text.parse().ok()
}

/// The leading `[-+]digits[,digits][.digits][e±digits]` of `v`.
pub(super) fn numeric_prefix(v: &str) -> &str {
    let b = v.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
        i += 1;
    }
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.' || b[i] == b',') {
        i += 1;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'-' || b[j] == b'+') {
            j += 1;
        }
        if j < b.len() && b[j].is_ascii_digit() {
            i = j;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
        }
    }
    v[..i].trim_end_matches(',')
}

/// A duration written as decimal text in a unit of `10^scale` ns (6: ms, 9: s), exactly;
/// `None` for anything that is not a plain non-negative decimal.
pub(crate) fn duration(v: &str, scale: i32) -> Option<Ns> {
    let t = numeric_prefix(v.trim_ascii());
    if t.is_empty() || t.starts_with('-') || t.contains(',') {
        return None;
    }
    // A step, phase or call longer than 13 days is no time a log means (`1e300 ms`).
    unit_text_to_ns(t.as_bytes(), scale)
        .ok()
        .filter(|&d| d <= crate::time::MAX_RANK_EXTENT_NS)
}

/// The first `YYYY-MM-DD HH:MM:SS[,.]frac` (or `YYYY/MM/DD`, or a `T` separator) in `text`,
/// as ns since the Unix epoch (the log's clock, time zone unknown).
pub(crate) fn timestamp(text: &str) -> Option<Ns> {
    let b = text.as_bytes();
    (0..b.len().saturating_sub(18)).find_map(|i| timestamp_at(&b[i..]))
}

fn timestamp_at(b: &[u8]) -> Option<Ns> {
    let n = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = b.get(r)?;
        s.iter()
            .all(u8::is_ascii_digit)
            .then(|| s.iter().fold(0i64, |a, &c| a * 10 + i64::from(c - b'0')))
    };
    let date_sep = |c: u8| c == b'-' || c == b'/';
    if !(date_sep(*b.get(4)?) && date_sep(*b.get(7)?) && matches!(b.get(10)?, b' ' | b'T')) {
        return None;
    }
    if *b.get(13)? != b':' || *b.get(16)? != b':' {
        return None;
    }
    let (y, mo, d) = (n(0..4)?, n(5..7)?, n(8..10)?);
    let (h, mi, s) = (n(11..13)?, n(14..16)?, n(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let mut frac_ns = 0;
    if matches!(b.get(19), Some(b'.' | b',')) {
        let digits: Vec<u8> = b[20..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .take(9)
            .copied()
            .collect();
        let mut v = digits
            .iter()
            .fold(0i64, |a, &c| a * 10 + i64::from(c - b'0'));
        for _ in digits.len()..9 {
            v *= 10;
        }
        frac_ns = v;
    }
    // Years up to 9999 parse; those whose ns overflow, or leave the time range, are no
    // timestamp.
    let secs = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s;
    let ns = secs.checked_mul(1_000_000_000)?.checked_add(frac_ns)?;
    crate::time::event_end(ns, 0).ok()
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_of_separated_fields() {
        let v: Vec<_> = pairs(" a: 1 | b=2|c| :x | d: |e : 3 ", '|').collect();
        assert_eq!(v, [("a", "1"), ("b", "2"), ("e", "3")]);
        assert_eq!(pairs("", '|').count(), 0);
        assert_eq!(pairs("k:v", ',').collect::<Vec<_>>(), [("k", "v")]);
    }

    #[test]
    fn numbers_with_separators_units_and_specials() {
        assert_eq!(number("6,697"), Some(6697.0));
        assert_eq!(number(" 49.66GiB(52.28%)"), Some(49.66));
        assert_eq!(number("1.825991E+00"), Some(1.825991));
        assert_eq!(number("1752ms"), Some(1752.0));
        assert!(number("nan").unwrap().is_nan());
        assert_eq!(number("-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(number("N/A"), None);
        // A word test on text whose 3rd byte is inside a character (`n€`).
        assert_eq!(number("n\u{20ac}"), None);
    }

    #[test]
    fn timestamps_beyond_the_time_range_are_none() {
        assert_eq!(timestamp("2262-04-11 23:47:16"), None);
        assert_eq!(timestamp("9999-12-31 23:59:59.999999999 step 3"), None);
        assert_eq!(
            timestamp("2100-01-01 00:00:00"),
            Some(4_102_444_800_000_000_000)
        );
    }

    #[test]
    fn heads_end_on_character_boundaries() {
        assert_eq!(head("训练开始", 4), "训");
        assert_eq!(head("训练开始", 6), "训练");
        assert_eq!(head("ab", 32), "ab");
        assert_eq!(head("Training:  70%|███", 16), "Training:  70%|");
        assert_eq!(head("", 3), "");
    }

    #[test]
    fn durations_are_exact() {
        assert_eq!(duration("5444.9", 6), Some(5_444_900_000));
        assert_eq!(duration("0.03146", 9), Some(31_460_000));
        assert_eq!(duration("1752ms", 6), Some(1_752_000_000));
        assert_eq!(duration("-3", 6), None);
    }

    #[test]
    fn timestamps_in_the_common_layouts() {
        // 2024-04-06 02:59:36 UTC = 1712372376 s.
        let t = 1_712_372_376 * 1_000_000_000;
        assert_eq!(timestamp(" [2024-04-06 02:59:36] iteration"), Some(t));
        assert_eq!(
            timestamp("[2025-11-10 09:43:46,446173][I]").map(|x| x % 1_000_000_000),
            Some(446_173_000)
        );
        assert_eq!(timestamp("2024/04/06 02:59:36.5, x"), Some(t + 500_000_000));
        assert_eq!(timestamp("iteration 5/10"), None);
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
    }
}
