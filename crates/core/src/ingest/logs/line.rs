//! Line normalisation (`reference/logs.md` §2), before any recogniser sees a line: bytes are
//! split on `\n` and `\r` (tqdm redraws), decoded lossily (invalid UTF-8 becomes U+FFFD, never
//! an error), stripped of ANSI escapes, cut to [`MAX_LINE`] bytes, and launcher prefixes are
//! peeled off, keeping the rank they name.

/// Longest line kept, in bytes: a 1 MB line is cut, not buffered without bound.
pub const MAX_LINE: usize = 64 * 1024;

/// One normalised line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Line {
    /// The rank a launcher prefix named (`[rank3]:`, `3: `, `[1,3]<stdout>:` …).
    pub rank: Option<u32>,
    /// The host a pdsh/DeepSpeed prefix named (`worker-0: `).
    pub host: Option<String>,
    /// The text after the prefixes, without ANSI escapes or control characters.
    pub text: String,
    /// Spaces were trimmed from its end (a line cut at a space keeps it when rejoined).
    pub trailing_space: bool,
}

/// Splits a byte stream into lines across reads: bytes go in as they arrive, complete lines
/// come out; a partial last line waits for the next read (or [`Splitter::finish`]).
#[derive(Debug, Default)]
pub struct Splitter {
    partial: Vec<u8>,
    /// The partial line grew past [`MAX_LINE`]: the rest of it is dropped.
    overlong: bool,
}

impl Splitter {
    /// Feeds `bytes`; calls `out` with each complete raw line (empty lines are skipped).
    pub fn push(&mut self, bytes: &[u8], out: &mut impl FnMut(&[u8])) {
        let mut rest = bytes;
        while let Some(i) = memchr::memchr2(b'\n', b'\r', rest) {
            let (head, tail) = rest.split_at(i);
            if self.partial.is_empty() && head.len() <= MAX_LINE {
                // A whole line inside this read: handed on in place, not copied.
                if !head.is_empty() {
                    out(head);
                }
            } else {
                self.take(head);
                if !self.partial.is_empty() {
                    out(&self.partial);
                }
            }
            self.partial.clear();
            self.overlong = false;
            rest = &tail[1..];
        }
        self.take(rest);
    }

    /// The partial last line, if any (end of stream).
    pub fn finish(&mut self, out: &mut impl FnMut(&[u8])) {
        if !self.partial.is_empty() {
            out(&self.partial);
        }
        self.partial.clear();
        self.overlong = false;
    }

    fn take(&mut self, bytes: &[u8]) {
        if self.overlong {
            return;
        }
        let room = MAX_LINE.saturating_sub(self.partial.len());
        if bytes.len() > room {
            self.partial.extend_from_slice(&bytes[..room]);
            self.overlong = true;
        } else {
            self.partial.extend_from_slice(bytes);
        }
    }
}

/// Normalises one raw line: lossy UTF-8, ANSI escapes and control characters removed,
/// launcher prefixes peeled (outermost first), `None` when nothing is left.
pub fn normalise(raw: &[u8]) -> Option<Line> {
    let mut line = Line::default();
    normalise_into(raw, &mut line).then_some(line)
}

/// [`normalise`] into `line`, reusing its text buffer (the watch engine's per-line path
/// allocates nothing for a plain line); `false` when nothing is left.
pub fn normalise_into(raw: &[u8], line: &mut Line) -> bool {
    line.rank = None;
    line.host = None;
    let cleaned;
    // Most lines are printable ASCII: one branch-free check, no copy before the last.
    let mut text = if printable(raw) {
        std::str::from_utf8(raw).unwrap_or_default()
    } else {
        cleaned = clean(&String::from_utf8_lossy(raw));
        cleaned.as_str()
    };
    while let Some((rank, rest)) = peel_rank(text) {
        line.rank = line.rank.or(Some(rank));
        text = rest;
    }
    if line.rank.is_none() {
        if let Some((None, rest)) = peel_worker(text) {
            text = rest;
        }
        if let Some((host, rest)) = peel_host(text) {
            line.host = Some(host.to_string());
            text = rest;
        }
    }
    let trimmed = text.trim_end();
    line.trailing_space = trimmed.len() < text.len();
    let text = trimmed;
    line.text.clear();
    line.text.push_str(text);
    !text.trim_start().is_empty()
}

/// Every byte is printable ASCII (written to vectorise: no early exit).
fn printable(raw: &[u8]) -> bool {
    raw.iter()
        .fold(true, |ok, &b| ok & (b.wrapping_sub(0x20) < 0x5f))
}

/// Removes ANSI CSI/OSC sequences and every other control character (tabs become spaces).
fn clean(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => skip_escape(&mut chars),
            '\t' => out.push(' '),
            c if crate::format::unsafe_char(c) => {}
            c => out.push(c),
        }
    }
    out
}

/// Skips the rest of an escape sequence: CSI `ESC [ … final`, OSC `ESC ] … BEL|ESC \`, or
/// one character.
fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.next() {
        Some('[') => {
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        }
        Some(']') => {
            while let Some(c) = chars.next() {
                if c == '\x07' || (c == '\x1b' && chars.next_if_eq(&'\\').is_some()) {
                    break;
                }
            }
        }
        _ => {}
    }
}

/// One rank prefix: `[rankN]:`, `[defaultN]:`, `<exp>/<i> [defaultN]:`, `[job,N]<stdout>:`,
/// or srun's right-aligned `  N: `.
fn peel_rank(s: &str) -> Option<(u32, &str)> {
    for tag in ["[rank", "[default"] {
        if let Some(rest) = s.strip_prefix(tag) {
            let (n, rest) = digits(rest)?;
            return Some((n, rest.strip_prefix("]:")?));
        }
    }
    if let Some(rest) = s.strip_prefix('[') {
        // Open MPI --tag-output: [job,rank]<stdout>: or <stderr>:
        let (_, rest) = digits(rest)?;
        let (n, rest) = digits(rest.strip_prefix(',')?)?;
        let rest = rest.strip_prefix(']')?;
        let rest = rest
            .strip_prefix("<stdout>:")
            .or_else(|| rest.strip_prefix("<stderr>:"))?;
        return Some((n, rest));
    }
    // SkyPilot `(worker1, rank=1, pid=2929, ip=10.0.0.2) ` and Ray `(RayTrainWorker
    // pid=2929, ip=10.0.0.2) `: the rank when named (Ray names none: the rest is peeled by
    // `peel_worker`).
    if let Some((Some(r), rest)) = peel_worker(s) {
        return Some((r, rest));
    }
    // NeMo-Run: `experiment/0 [default3]:` — the tag after the first word.
    if let Some(i) = memchr::memchr(b' ', s.as_bytes()) {
        let head = &s[..i];
        if i > 0 && s[i..].starts_with(" [default") && head.contains('/') {
            return peel_rank(&s[i + 1..]);
        }
    }
    // srun -l: right-aligned `N: ` (leading spaces allowed).
    let t = s.trim_start_matches(' ');
    let (n, rest) = digits(t)?;
    let rest = rest.strip_prefix(": ")?;
    Some((n, rest))
}

/// A SkyPilot / Ray worker prefix `(… pid=N …) `: the rank it names (`rank=N`), if any, and
/// the text after it.
fn peel_worker(s: &str) -> Option<(Option<u32>, &str)> {
    let inner = s.strip_prefix('(')?;
    let close = inner.get(..inner.len().min(160))?.find(") ")?;
    let head = &inner[..close];
    if !head.contains("pid=") {
        return None;
    }
    let rank = head
        .split([',', ' '])
        .find_map(|kv| kv.strip_prefix("rank="))
        .and_then(|r| r.parse().ok());
    Some((rank, &inner[close + 2..]))
}

/// A pdsh host prefix `worker-0: ` (letters, digits, `-`, `.`, `_`; must hold a letter and
/// a digit).
fn peel_host(s: &str) -> Option<(&str, &str)> {
    // Only the host's own characters are scanned, never the whole line.
    let i = s
        .bytes()
        .take(65)
        .take_while(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_'))
        .count();
    let host = &s[..i];
    let ok = (1..=64).contains(&i)
        && s[i..].starts_with(": ")
        && host.bytes().any(|c| c.is_ascii_alphabetic())
        && host.bytes().any(|c| c.is_ascii_digit());
    ok.then(|| (host, &s[i + 2..]))
}

/// Leading decimal digits (1–9 of them) as a number, and the rest.
fn digits(s: &str) -> Option<(u32, &str)> {
    let n = s.bytes().take_while(u8::is_ascii_digit).count();
    if n == 0 || n > 9 {
        return None;
    }
    Some((s[..n].parse().ok()?, &s[n..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(s: &str) -> (Option<u32>, String) {
        let l = normalise(s.as_bytes()).unwrap();
        (l.rank, l.text)
    }

    #[test]
    fn launcher_prefixes_give_their_rank() {
        assert_eq!(
            norm("[rank3]:[titan] step: 1"),
            (Some(3), "[titan] step: 1".into())
        );
        assert_eq!(
            norm("[default0]:[rank5]: Traceback"),
            (Some(0), " Traceback".into())
        );
        assert_eq!(
            norm(" 7:  iteration 4/ 30"),
            (Some(7), " iteration 4/ 30".into())
        );
        assert_eq!(norm("12: x"), (Some(12), "x".into()));
        assert_eq!(norm("[1,3]<stdout>:Iter #0"), (Some(3), "Iter #0".into()));
        assert_eq!(
            norm("retraining/0 [default2]:[NeMo W] x"),
            (Some(2), "[NeMo W] x".into())
        );
        let l = normalise(b"worker-0: [INFO 2020] 0/50, SamplesPerSec=1.5").unwrap();
        assert_eq!(l.host.as_deref(), Some("worker-0"));
        assert_eq!(l.text, "[INFO 2020] 0/50, SamplesPerSec=1.5");
        assert_eq!(
            norm("(worker1, rank=1, pid=2929, ip=172.31.10.186) iteration 4/ 30"),
            (Some(1), "iteration 4/ 30".into())
        );
        assert_eq!(
            norm("(RayTrainWorker pid=2929, ip=172.31.10.186) step: 3 loss: 1"),
            (None, "step: 3 loss: 1".into())
        );
        // Not prefixes: a time, a key.
        assert_eq!(norm("12:30:01 hello").0, None);
        assert_eq!(normalise(b"loss: 1.0").unwrap().host, None);
    }

    #[test]
    fn escapes_controls_and_bad_bytes_never_pass() {
        let l = normalise(b"\x1b[32mstep: 1\x1b[0m \x1b]0;title\x07loss \xff\x07").unwrap();
        assert_eq!(l.text, "step: 1 loss \u{fffd}");
        assert!(normalise(b"   ").is_none());
    }

    #[test]
    fn splitting_on_newlines_and_carriage_returns_across_reads() {
        let mut s = Splitter::default();
        let mut v: Vec<String> = Vec::new();
        let mut out = |l: &[u8]| v.push(String::from_utf8_lossy(l).into());
        s.push(b"a 1\r\nb", &mut out);
        s.push(b" 2\rc 3\n\npartial", &mut out);
        s.finish(&mut out);
        assert_eq!(v, ["a 1", "b 2", "c 3", "partial"]);
        // A line longer than MAX_LINE is cut, and the next line is whole.
        let mut s = Splitter::default();
        let mut n = Vec::new();
        let long = vec![b'x'; MAX_LINE * 2];
        s.push(&long, &mut |l: &[u8]| n.push(l.len()));
        s.push(b"\nok\n", &mut |l: &[u8]| n.push(l.len()));
        assert_eq!(n, [MAX_LINE, 2]);
    }
}
