//! How numbers are written, for every face (text and markdown reports, the TUI): durations
//! with a unit that keeps 3–4 significant digits, percentages, bandwidth, bytes, rank lists,
//! and names cut to a width. One home, so a number reads the same everywhere.

pub mod json;
mod names;

pub use names::{MAX_ECHO, echo, fit_middle, fit_name, fit_sentence};

use crate::time::Ns;
use std::fmt::{Display, Write};

/// Nanoseconds for humans with a unit that keeps 3–4 significant digits (`12.3 ms`).
pub fn human(ns: Ns) -> String {
    let a = ns.unsigned_abs();
    let sign = if ns < 0 { "-" } else { "" };
    if a < 1_000 {
        format!("{sign}{a} ns")
    } else if a < 1_000_000 {
        format!("{sign}{} µs", fixed(a, 1_000))
    } else if a < 1_000_000_000 {
        format!("{sign}{} ms", fixed(a, 1_000_000))
    } else {
        format!("{sign}{} s", fixed(a, 1_000_000_000))
    }
}

/// `a / unit` with one decimal (two below 10), rounded half up, using integers only.
fn fixed(a: u64, unit: u64) -> String {
    let decimals = if a < 10 * unit { 2 } else { 1 };
    let scale = if decimals == 2 { 100 } else { 10 };
    let scaled = (u128::from(a) * scale as u128 + u128::from(unit) / 2) / u128::from(unit);
    let whole = scaled / scale as u128;
    let frac = scaled % scale as u128;
    if decimals == 2 {
        format!("{whole}.{frac:02}")
    } else {
        format!("{whole}.{frac}")
    }
}

/// A signed duration: `+1.20 ms`, `-300 ns`.
pub fn signed(ns: Ns) -> String {
    if ns >= 0 {
        format!("+{}", human(ns))
    } else {
        format!("-{}", human(-ns))
    }
}

/// A fraction as a percentage with one decimal: `12.3%`.
pub fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

/// A fraction as a whole percentage: `12%`.
pub fn pct0(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// A share of `total`, one decimal: `12.3%` (`total` 0 counts as 1 ns).
pub fn share(part: Ns, total: Ns) -> String {
    format!("{:.1}%", part as f64 * 100.0 / total.max(1) as f64)
}

/// GB/s with one decimal: `360.0 GB/s`.
pub fn gbps(x: f64) -> String {
    format!("{x:.1} GB/s")
}

/// Bytes with a binary unit: `48.0 MiB`.
pub fn bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Ids joined by commas: `0,1,5`.
pub fn join<T: Display>(v: &[T]) -> String {
    v.iter().map(T::to_string).collect::<Vec<_>>().join(",")
}

/// Ids with consecutive runs folded (`0-199`, `3,5-7`): a 1024-rank list stays one line.
pub fn ranges<T: Copy + Into<u32>>(ids: &[T]) -> String {
    let mut sorted: Vec<u32> = ids.iter().map(|&x| x.into()).collect();
    sorted.sort_unstable();
    sorted.dedup();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[j] + 1 {
            j += 1;
        }
        out.push(if j > i {
            format!("{}-{}", sorted[i], sorted[j])
        } else {
            sorted[i].to_string()
        });
        i = j + 1;
    }
    out.join(",")
}

/// Natural order of names: runs of digits compare by value (`rank-2` before `rank-10`), the
/// rest by character.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    let (mut x, mut y) = (a, b);
    loop {
        let (Some(c), Some(d)) = (x.chars().next(), y.chars().next()) else {
            return x.len().cmp(&y.len());
        };
        if c.is_ascii_digit() && d.is_ascii_digit() {
            let i = x.find(|c: char| !c.is_ascii_digit()).unwrap_or(x.len());
            let j = y.find(|c: char| !c.is_ascii_digit()).unwrap_or(y.len());
            let (m, n) = (
                x[..i].trim_start_matches('0'),
                y[..j].trim_start_matches('0'),
            );
            let o = m
                .len()
                .cmp(&n.len())
                .then_with(|| m.cmp(n))
                .then_with(|| i.cmp(&j));
            if o.is_ne() {
                return o;
            }
            (x, y) = (&x[i..], &y[j..]);
        } else {
            if c != d {
                return c.cmp(&d);
            }
            (x, y) = (&x[c.len_utf8()..], &y[d.len_utf8()..]);
        }
    }
}

/// The columns `s` takes on a terminal (a CJK character takes two, a combining mark none).
pub fn width(s: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(s)
}

/// The columns `c` takes.
fn char_width(c: char) -> usize {
    unicode_width::UnicodeWidthChar::width(c).unwrap_or(0)
}

/// `s` cut to `w` columns, the cut marked with `…`.
pub fn fit(s: &str, w: usize) -> String {
    if width(s) <= w {
        return s.to_string();
    }
    if w == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        if used + char_width(c) > w - 1 {
            break;
        }
        used += char_width(c);
        out.push(c);
    }
    // A string's width is not always the sum of its characters' (a control character is
    // none alone and one in a string; a presentation selector widens the one before it):
    // the prefix is cut until it fits as a whole, so that the result never exceeds `w`.
    while width(&out) > w - 1 {
        out.pop();
    }
    out.push('…');
    out
}

/// `s` in lines of at most `w` columns, broken at spaces (a word longer than a line is
/// cut); continuation lines start with `indent` spaces.
pub fn wrap(s: &str, w: usize, indent: usize) -> Vec<String> {
    let w = w.max(indent + 1);
    let mut lines = vec![String::new()];
    for word in s.split(' ').filter(|x| !x.is_empty()) {
        let mut word: Vec<char> = word.chars().collect();
        loop {
            let continued = lines.len() > 1;
            let line = lines.last_mut().expect("one line at least");
            let used = width(line);
            let fresh = used == 0 || (continued && used == indent);
            let room = w.saturating_sub(used + usize::from(!fresh));
            let need: usize = word.iter().map(|&c| char_width(c)).sum();
            if need <= room {
                if !fresh {
                    line.push(' ');
                }
                line.extend(word.iter());
                break;
            }
            if fresh {
                // Longer than a whole line: cut it (at least one character, however wide).
                let (mut cut, mut taken) = (0, 0);
                while cut < word.len() && (cut == 0 || taken + char_width(word[cut]) <= room) {
                    taken += char_width(word[cut]);
                    cut += 1;
                }
                line.extend(word.drain(..cut));
                if word.is_empty() {
                    break;
                }
            }
            lines.push(" ".repeat(indent));
        }
    }
    lines
}

/// `s` cut to `w` columns from the front, keeping its end (a path's file name), the cut
/// marked with `…`.
pub fn fit_end(s: &str, w: usize) -> String {
    if width(s) <= w {
        return s.to_string();
    }
    if w == 0 {
        return String::new();
    }
    let mut tail = Vec::new();
    let mut used = 0;
    for c in s.chars().rev() {
        if used + char_width(c) > w - 1 {
            break;
        }
        used += char_width(c);
        tail.push(c);
    }
    tail.reverse();
    // As in `fit`: the kept end must fit as a whole string, not only char by char.
    let mut kept: String = tail.into_iter().collect();
    while width(&kept) > w - 1 {
        kept.remove(0);
    }
    format!("…{kept}")
}

/// `s` padded or cut to exactly `w` columns.
pub fn pad(s: &str, w: usize) -> String {
    let t = fit(s, w);
    let fill = w.saturating_sub(width(&t));
    format!("{t}{}", " ".repeat(fill))
}

/// `s` right-aligned in `w` columns (cut when longer).
pub fn rpad(s: &str, w: usize) -> String {
    let t = fit(s, w);
    let fill = w.saturating_sub(width(&t));
    format!("{}{t}", " ".repeat(fill))
}

/// A number of no particular unit: whole when it is whole, else three decimals.
pub fn plain(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

/// A character that must not reach a terminal raw inside a name (trace and log content is
/// untrusted): a control character (ESC and the C1 controls start escape sequences, BEL rings,
/// backspace overwrites, a newline or tab inside a name forges a line or a column) or an
/// [`invisible`] one.
pub fn unsafe_char(c: char) -> bool {
    c.is_control() || invisible(c)
}

/// A character that changes how text around it reads without showing itself: bidirectional
/// overrides and isolates (they reorder what follows: `gpj.exe` shows as `exe.jpg`),
/// zero-width spaces and joiners, the byte-order mark, line and paragraph separators (some
/// terminals and editors break lines at them), invisible operators, interlinear annotation
/// marks and the tag characters (invisible ASCII look-alikes).
pub fn invisible(c: char) -> bool {
    matches!(
        c,
        '\u{ad}'
            | '\u{61c}'
            | '\u{180e}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206f}'
            | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{e0001}'
            | '\u{e0020}'..='\u{e007f}'
    )
}

/// A character that JSON output writes as a `\uXXXX` escape although JSON allows it raw: the
/// C1 controls (U+009B is a CSI under `cat`), DEL (the text face escapes it too) and the
/// [`invisible`] characters. serde_json already escapes the C0 controls.
pub fn json_unsafe(c: char) -> bool {
    ('\u{7f}'..='\u{9f}').contains(&c) || invisible(c)
}

/// `s` safe to print on a terminal as one field (a name, a path, a log line): every
/// [`unsafe_char`] is written as a visible escape — `\n`, `\t`, `\x1b`, `\u{202e}` — so
/// the name stays recognisable and cannot forge a line, a column or an escape sequence. The
/// one escaping function of every face; [`printable_lines`] is its form for whole documents.
pub fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    escape_where(s, unsafe_char)
}

/// The longest error line printed, in characters: a value echoed in a message (a theme's
/// colour, a path, a command-line value) can be megabytes long, and an error is one line.
pub const MAX_ERROR_LINE: usize = 1024;

/// An error message as printed: [`printable`], and cut in its middle to [`MAX_ERROR_LINE`]
/// characters (its start names the file and position, its end what to do), saying how
/// much was cut.
pub fn error_line(s: &str) -> String {
    let p = printable(s);
    let n = p.chars().count();
    if n <= MAX_ERROR_LINE {
        return p.into_owned();
    }
    let (head, tail) = (MAX_ERROR_LINE * 2 / 3, MAX_ERROR_LINE / 4);
    let start: String = p.chars().take(head).collect();
    let end: String = p.chars().skip(n - tail).collect();
    format!("{start} …[{} characters cut]… {end}", n - head - tail)
}

/// A whole rendered document (a report, a message) safe to print: like [`printable`], but
/// its own line breaks stay. Names inside it must have been made [`printable`] where they
/// were placed; this pass is the last defence against what was not.
pub fn printable_lines(s: &str) -> std::borrow::Cow<'_, str> {
    escape_where(s, |c| c != '\n' && unsafe_char(c))
}

fn escape_where(s: &str, bad: impl Fn(char) -> bool + Copy) -> std::borrow::Cow<'_, str> {
    if !s.contains(bad) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            _ if !bad(c) => out.push(c),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            _ if (c as u32) <= 0xff => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            _ => {
                let _ = write!(out, "\\u{{{:04x}}}", c as u32);
            }
        }
    }
    out.into()
}

#[cfg(test)]
mod tests {
    proptest::proptest! {
        /// Whatever a name holds (controls, joiners, presentation selectors, wide
        /// characters), a cut name never takes more columns than it was given: a pane's
        /// arithmetic on the columns left (the inspector's line) relies on it.
        #[test]
        fn a_cut_never_exceeds_its_columns(s in "[a-z\\x00-\\x1f\\x7f-\\x9f\u{200b}-\u{200f}\u{fe0e}\u{fe0f}\u{2764}\u{1f600}\u{4e00}-\u{4e10}]{0,24}", w in 0usize..30) {
            proptest::prop_assert!(width(&fit(&s, w)) <= w, "fit {:?} {}", s, w);
            proptest::prop_assert!(width(&fit_end(&s, w)) <= w, "fit_end {:?} {}", s, w);
        }
    }

    #[test]
    fn a_sentence_cuts_its_names_before_its_facts() {
        let s =
            "rank 3 is last at ncclDevKernel_AllReduce_Sum_bf16_RING_LL in step 13, waited 1.2 s";
        let f = fit_sentence(s, 60);
        assert!(width(&f) <= 60, "{f}");
        assert!(
            f.starts_with("rank 3 is last at ncclDev") && f.ends_with("in step 13, waited 1.2 s"),
            "{f}"
        );
        assert_eq!(fit_sentence(s, 200), s);
        // No word is cut under 12 columns: the end goes instead.
        let g = fit_sentence(s, 20);
        assert_eq!(width(&g), 20, "{g}");
        assert!(g.starts_with("rank 3 is last"), "{g}");
    }

    #[test]
    fn names_fold_their_long_groups_before_they_are_cut() {
        let k = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(unsigned long, ncclWork*)";
        assert_eq!(fit_name(k, 80), k);
        assert_eq!(
            fit_name(k, 50),
            "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(…)"
        );
        let t = "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#1}, at::detail::Array<char*, 2> >(int, at::native::GeluCUDAKernelImpl, at::detail::Array<char*, 2>)";
        assert_eq!(
            fit_name(t, 60),
            "void at::native::vectorized_elementwise_kernel<…>(…)"
        );
        assert_eq!(width(&fit_name(t, 30)), 30);
        assert_eq!(
            fit_name(
                "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize_kernel__5x_cublas",
                25
            ),
            "sm90_xmma_gemm_b…x_cublas"
        );
        // Short groups stay: they are the name.
        let d = "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__";
        assert_eq!(fit_name(d, 34), "enumerate(DataLoader)#…er.__next__");
        // Unbalanced brackets: cut, never mangled.
        assert_eq!(fit_name("a(b(c", 3), fit_middle("a(b(c", 3));
        assert_eq!(
            fit_name("x>y(aaaaaaaaaaaaaaaaaaa)", 30),
            "x>y(aaaaaaaaaaaaaaaaaaa)"
        );
    }

    #[test]
    fn cjk_names_take_two_columns_a_character() {
        use super::{fit, fit_end, pad, rpad, width, wrap};
        let name = "注意力层_forward"; // 4 CJK characters (8 columns) + 8
        assert_eq!(width(name), 16);
        assert_eq!(fit(name, 8), "注意力…");
        assert_eq!(width(&fit(name, 8)), 7); // a 2-column character does not fit the last column
        assert_eq!(fit_end(name, 9), "…_forward");
        assert_eq!(width(&pad("注意", 6)), 6);
        assert_eq!(pad("注意", 6), "注意  ");
        assert_eq!(rpad("注意", 6), "  注意");
        assert!(
            wrap("注意力 层 forward", 6, 0)
                .iter()
                .all(|l| width(l) <= 6)
        );
    }

    #[test]
    fn fit_middle_keeps_both_ends() {
        use super::{fit_middle, width};
        let k = "void at::native::vectorized_elementwise_kernel<4, float>(int, float*, float*)";
        for w in 3..k.len() {
            let f = fit_middle(k, w);
            assert_eq!(width(&f), w, "{w}: {f}");
            assert!(
                f.starts_with('v') && f.ends_with(')') && f.contains('…'),
                "{f}"
            );
        }
        assert_eq!(fit_middle("short", 10), "short");
    }

    #[test]
    fn natural_order_compares_digit_runs_by_value() {
        let mut v = [
            "rank-10.json",
            "rank-1.json",
            "rank-100.json",
            "rank-0.json",
            "rank-2.json",
        ];
        v.sort_by(|a, b| super::natural_cmp(a, b));
        assert_eq!(
            v,
            [
                "rank-0.json",
                "rank-1.json",
                "rank-2.json",
                "rank-10.json",
                "rank-100.json"
            ]
        );
        assert!(super::natural_cmp("a01", "a1").is_gt());
        assert!(super::natural_cmp("a", "a1").is_lt());
        assert!(super::natural_cmp("rank-2/x", "rank-2/x").is_eq());
    }

    #[test]
    fn wrap_breaks_at_spaces_indents_and_cuts_long_words() {
        use super::wrap;
        assert_eq!(
            wrap("slow steps 30, up to 1.75 s", 12, 2),
            ["slow steps", "  30, up to", "  1.75 s"]
        );
        assert_eq!(wrap("abcdefghij kl", 4, 1), ["abcd", " efg", " hij", " kl"]);
        assert_eq!(wrap("", 10, 2), [""]);
        // Every line within the width, nothing lost.
        let s = "a bb ccc dddd eeeee ffffff ggggggg";
        for w in 3..40 {
            let lines = wrap(s, w, 2);
            assert!(lines.iter().all(|l| super::width(l) <= w), "{w}: {lines:?}");
            let back: String = lines.concat().split_whitespace().collect();
            assert_eq!(back, s.replace(' ', ""), "{w}");
        }
    }

    use super::*;

    #[test]
    fn human_units() {
        assert_eq!(human(999), "999 ns");
        assert_eq!(human(1_500), "1.50 µs");
        assert_eq!(human(12_345_678), "12.3 ms");
        assert_eq!(human(2_000_000_000), "2.00 s");
        assert_eq!(signed(-1_500), "-1.50 µs");
    }

    #[test]
    fn lists_and_fitting() {
        assert_eq!(ranges(&[5u32, 0, 1, 2, 7, 6, 9]), "0-2,5-7,9");
        assert_eq!(ranges::<u32>(&[]), "");
        assert_eq!(join(&[1, 2]), "1,2");
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("abc", 0), "");
        assert_eq!(fit_end("a/b/trace", 6), "…trace");
        assert_eq!(fit_end("trace", 5), "trace");
        assert_eq!(fit_end("trace", 0), "");
        assert_eq!(pad("ab", 4), "ab  ");
        assert_eq!(bytes(50_331_648), "48.0 MiB");
        assert_eq!((pct(0.1234), pct0(0.1234)), ("12.3%".into(), "12%".into()));
        assert_eq!((plain(3.0), plain(0.25)), ("3".into(), "0.250".into()));
    }

    #[test]
    fn printable_escapes_control_and_bidi_characters_visibly() {
        // Inside a name a newline or tab would forge a line or a column.
        assert_eq!(
            printable("aten::mm\tx\n  1. [HIGH] fake\r"),
            "aten::mm\\tx\\n  1. [HIGH] fake\\r"
        );
        assert_eq!(printable_lines("a\nb\tc\u{1b}"), "a\nb\\tc\\x1b");
        // Zero-width characters and the byte-order mark hide text or split look-alikes.
        assert_eq!(
            printable("a\u{200b}b\u{200d}c\u{feff}d\u{2028}e\u{e0041}"),
            "a\\u{200b}b\\u{200d}c\\u{feff}d\\u{2028}e\\u{e0041}"
        );
        assert!(json_unsafe('\u{9b}') && json_unsafe('\u{202e}') && json_unsafe('\u{200b}'));
        assert!(!json_unsafe('\u{a0}') && !json_unsafe('µ') && !json_unsafe('步'));
        assert_eq!(
            printable("evil\u{1b}[31mred\u{9b}2J\u{7}\u{8}"),
            "evil\\x1b[31mred\\x9b2J\\x07\\x08"
        );
        // A right-to-left override would show `gpj.exe` as `exe.jpg`.
        assert_eq!(printable("a\u{202e}b\u{2066}c"), "a\\u{202e}b\\u{2066}c");
        // Other non-ASCII text is left alone.
        assert_eq!(printable("µs — 步"), "µs — 步");
        assert!(matches!(printable("plain"), std::borrow::Cow::Borrowed(_)));
    }
}
