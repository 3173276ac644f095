//! A line's template: its text with every number a slot (`#`), a leading timestamp dropped
//! and blanks as one space, and the numbers with the words around them that name them.

use super::MAX_SLOTS;
use crate::ingest::logs::fields::timestamp;

/// One number of a line: its value, its text, the word before it and the unit after it.
#[derive(Debug, Clone)]
pub(super) struct Slot<'a> {
    pub(super) text: &'a str,
    pub(super) value: f64,
    /// The word before it, as written (compared without case).
    pub(super) name: &'a str,
    pub(super) unit: &'a str,
    /// A parenthesised number follows (`time: 0.0621 (0.0676)`): the classic "smoothed
    /// (average)" pair, so this one is a smoothed value, not the step's own.
    pub(super) smoothed: bool,
}

/// The template of a line's text (numbers as `#`, a leading timestamp dropped, blanks as one
/// space), as `--explain` prints it: which lines a learned template reads.
pub fn key_of(text: &str) -> Option<String> {
    let mut key = String::new();
    template(text, &mut key).map(|_| key)
}

/// The template of `text` into `key` (numbers as `#`, a leading timestamp dropped, blanks
/// as one space) and its numbers.
pub(super) fn template<'a>(text: &'a str, key: &mut String) -> Option<Vec<Slot<'a>>> {
    let body = match timestamp(text) {
        Some(_) => skip_stamp(text),
        None => text,
    };
    let b = body.as_bytes();
    key.clear();
    let mut slots = Vec::new();
    let mut i = 0;
    let (mut prev_word, mut last_word) = ("", "");
    while i < b.len() {
        let after_word = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        // `mfu -100.00%` and `mfu 13.70%` are one template: a sign belongs to its number.
        let signed = b[i] == b'-' && b.get(i + 1).is_some_and(u8::is_ascii_digit);
        if (b[i].is_ascii_digit() || signed) && !after_word {
            let end = number_end(b, i + usize::from(signed));
            let text = &body[i..end];
            // `iter time (s): 0.51`: the unit is the last word, the name the one before.
            let (name, unit) = match last_word {
                "s" | "ms" | "sec" | "us" => (prev_word, unit_word(last_word)),
                _ => (last_word, unit_after(&body[end..])),
            };
            slots.push(Slot {
                text,
                value: plain(text).parse().ok()?,
                name,
                unit,
                smoothed: parenthesised_number(&body[end..]),
            });
            if slots.len() > MAX_SLOTS {
                return None;
            }
            key.push('#');
            // `it 12 | 350.2 ms`: a number's name is a word since the number before it.
            (prev_word, last_word) = ("", "");
            i = end;
            continue;
        }
        let c = body[i..].chars().next()?;
        if c.is_alphabetic() || c == '_' {
            let end = body[i..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '/'))
                .map_or(body.len(), |k| i + k);
            prev_word = std::mem::replace(&mut last_word, &body[i..end]);
            key.push_str(&body[i..end]);
            i = end;
            continue;
        }
        // Padding that moves with a number's width (`iter   65/272`, `iter  100/272`) is
        // one template: runs of blanks are one space.
        if c.is_whitespace() {
            if !key.ends_with(' ') {
                key.push(' ');
            }
        } else {
            key.push(c);
        }
        i += c.len_utf8();
    }
    (!slots.is_empty()).then_some(slots)
}

/// A unit word as a static string.
fn unit_word(w: &str) -> &'static str {
    match w {
        "ms" => "ms",
        "us" => "us",
        _ => "s",
    }
}

/// The unit right after a number: letters, `/` and `%` (`ms`, `samples/sec`), after at most
/// one space when short (`took 0.18 s |`).
fn unit_after(rest: &str) -> &str {
    fn word(t: &str) -> &str {
        let end = t
            .find(|c: char| !(c.is_ascii_alphabetic() || c == '/' || c == '%'))
            .unwrap_or(t.len());
        &t[..end]
    }
    match rest.strip_prefix(' ') {
        Some(t) if !rest.starts_with(char::is_alphabetic) => {
            let w = word(t);
            // `loss 80.1 samples/sec 1500`: a word a number follows names that number.
            let names_next = t[w.len()..]
                .trim_start_matches([' ', ':', '='])
                .starts_with(|c: char| c.is_ascii_digit());
            let unit = matches!(w, "s" | "ms" | "sec" | "secs" | "us") || w.contains("/s");
            if unit && !names_next { w } else { "" }
        }
        _ => word(rest),
    }
}

/// `rest` starts with ` (` and a number.
fn parenthesised_number(rest: &str) -> bool {
    let r = rest.trim_start_matches(' ');
    r.strip_prefix('(')
        .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
}

/// The text after a leading timestamp (and the separators after it).
fn skip_stamp(text: &str) -> &str {
    let t = text.trim_start_matches(|c: char| !c.is_ascii_digit());
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || "-/:.,T ".contains(c)))
        .unwrap_or(t.len());
    &t[end..]
}

/// `rest` starts with three digits and no fourth.
fn thousands(rest: &[u8]) -> bool {
    rest.len() >= 3
        && rest[..3].iter().all(u8::is_ascii_digit)
        && !rest.get(3).is_some_and(u8::is_ascii_digit)
}

/// A number's text as written, its thousands separators dropped (`6,697` is 6697).
pub(super) fn plain(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains(',') {
        text.replace(',', "").into()
    } else {
        text.into()
    }
}

/// The end of the number starting at `i` (digits, one `.`, thousands `,` between digits).
fn number_end(b: &[u8], mut i: usize) -> usize {
    let mut dot = false;
    while i < b.len() {
        let next_digit = b.get(i + 1).is_some_and(u8::is_ascii_digit);
        match b[i] {
            b'0'..=b'9' => {}
            b'.' if !dot && next_digit => dot = true,
            // `tps: 6,697`: a thousands separator before exactly three digits.
            b',' if !dot && thousands(&b[i + 1..]) => {}
            b'e' | b'E' if next_digit || b.get(i + 1) == Some(&b'-') => {
                i += 2;
                while b.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
                return i;
            }
            _ => break,
        }
        i += 1;
    }
    i
}
