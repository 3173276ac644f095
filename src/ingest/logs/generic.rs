//! The generic recogniser: a step-line template learned from the stream itself, for
//! frameworks no dedicated recogniser knows (log-template mining in the spirit of Drain).
//! A line's template is its text with every number replaced by a slot; lines of one template
//! whose one integer slot grows by a fixed stride are step lines, and among their other slots
//! one that reads as a time (a unit or a name that says so) is the step time — per step when
//! it moves both ways, cumulative when it only grows — and one that reads as a rate
//! (`samples/sec`, `it/s`, `tokens/s`) a throughput. Lines before a template is learned
//! ([`LEARN`] of them) give no record.

use super::fields::{numeric_prefix, timestamp};
use super::{Provenance, Said, Step};
use crate::time::unit_text_to_ns;
use std::collections::{HashMap, VecDeque};

/// Lines of one template needed to learn it.
pub const LEARN: usize = 4;
/// Templates a source keeps (the least recently seen goes first).
pub const MAX_TEMPLATES: usize = 256;
/// Numbers a line may hold to be considered (a dump of numbers is no step line).
pub const MAX_SLOTS: usize = 64;
/// Bytes of a line considered.
pub const MAX_LINE: usize = 2048;

/// One number of a line: its value, its text, the word before it and the unit after it.
#[derive(Debug, Clone)]
struct Slot<'a> {
    text: &'a str,
    value: f64,
    /// The word before it, as written (compared without case).
    name: &'a str,
    unit: &'a str,
}

/// What a learned template reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Learned {
    /// The template (numbers as `#`), cut to 120 characters, for `--explain`.
    pub template: String,
    /// The slot of the step number, and its name.
    pub step: (usize, String),
    /// The slot of the total it is printed against (`iter 65/272`), when printed.
    pub of: Option<usize>,
    /// The slot of an epoch number the step restarts within (`epoch 3 | iter 65/272`): the
    /// step is then epoch × total + iter.
    pub epoch: Option<usize>,
    /// The slot of the step time, its name, and what it is.
    pub time: Option<(usize, String, Provenance, i32)>,
    /// The slot of a rate, its name, and the metric it is (`samples_per_s`, `tokens_per_s`).
    pub rate: Option<(usize, String, &'static str)>,
}

#[derive(Debug, Default)]
struct Template {
    /// The writer (rank, host) whose lines teach it: ranks interleaved in one stream print
    /// the same step at once, and only one writer's lines show the stride.
    teacher: Option<(Option<u32>, Option<String>)>,
    seen: Vec<Vec<f64>>,
    learned: Option<Learned>,
    /// Learning failed on [`LEARN`] lines: not a step template.
    rejected: bool,
}

/// The templates of one source.
#[derive(Debug, Default)]
pub struct Templates {
    by: HashMap<String, Template>,
    order: VecDeque<String>,
    /// A dedicated recogniser has read a step of this source: the generic one gives none
    /// (two readings of one run would be two series).
    pub dedicated: bool,
    /// The template whose lines are the source's step lines: the first learned with a step
    /// time (or, until one is, the first learned). Other templates give no record — their
    /// numbers (an epoch summary, an eval) are not steps of the same series.
    primary: Option<String>,
    /// The template being built, its buffer reused line after line.
    scratch: String,
}

impl Templates {
    /// The template whose lines gave records, when one did.
    pub fn primary(&self) -> Option<&Learned> {
        self.by.get(self.primary.as_ref()?)?.learned.as_ref()
    }
}

/// A step line of a template learned from the stream.
pub fn learn(l: &super::line::Line, t: &mut Templates) -> Option<Said> {
    let text = l.text.as_str();
    // A source a dedicated recogniser reads, a line too long or without a digit: no work.
    if t.dedicated || text.len() > MAX_LINE || !text.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut key = std::mem::take(&mut t.scratch);
    let slots = template(text, &mut key);
    let said = slots.and_then(|slots| take(l, t, &key, &slots));
    t.scratch = key;
    said
}

/// A line of template `key` with numbers `slots`: learnt from, or read when learned.
fn take(l: &super::line::Line, t: &mut Templates, key: &str, slots: &[Slot]) -> Option<Said> {
    let text = l.text.as_str();
    if !t.by.contains_key(key) {
        if t.by.len() >= MAX_TEMPLATES {
            let old = t.order.pop_front()?;
            t.by.remove(&old);
        }
        t.order.push_back(key.to_string());
        t.by.insert(key.to_string(), Template::default());
    }
    let tpl = t.by.get_mut(key)?;
    if tpl.rejected {
        return None;
    }
    let Some(learned) = &tpl.learned else {
        let writer = (l.rank, l.host.clone());
        if tpl.teacher.get_or_insert_with(|| writer.clone()) != &writer {
            return None;
        }
        tpl.seen.push(slots.iter().map(|s| s.value).collect());
        if tpl.seen.len() >= LEARN {
            tpl.learned = infer(key, &tpl.seen, slots);
            tpl.rejected = tpl.learned.is_none();
            tpl.seen = Vec::new();
        }
        return None;
    };
    let timed = learned.time.is_some();
    let primary_timed = t
        .primary
        .as_ref()
        .and_then(|p| t.by.get(p))
        .and_then(|p| p.learned.as_ref())
        .is_some_and(|l| l.time.is_some());
    match &t.primary {
        Some(p) if p == key => {}
        Some(_) if primary_timed || !timed => return None,
        _ => t.primary = Some(key.to_string()),
    }
    let learned = t.by.get(key)?.learned.as_ref()?;
    Some(Said::Step(read(text, learned, slots)?))
}

/// The step of a line of a learned template.
fn read(text: &str, l: &Learned, slots: &[Slot]) -> Option<Step> {
    let n = slots.get(l.step.0)?.value as u64;
    let of = l.of.and_then(|i| Some(slots.get(i)?.value as u64));
    let epoch = l.epoch.and_then(|i| Some(slots.get(i)?.value as u64));
    let n = match (epoch, of) {
        (Some(e), Some(of)) => e.checked_mul(of)?.checked_add(n)?,
        _ => n,
    };
    let mut s = Step::at(Some(n), None, Provenance::FromTimestamps, text);
    s.of = of.filter(|_| epoch.is_none());
    if let Some((i, _, prov, scale)) = &l.time {
        let t = unit_text_to_ns(numeric_prefix(slots.get(*i)?.text).as_bytes(), *scale).ok()?;
        if *prov == Provenance::Cumulative {
            s.cumulative_ns = Some(t);
        } else {
            s.time_ns = Some(t);
            s.provenance = *prov;
        }
    }
    if let Some((i, _, metric)) = &l.rate {
        s.metrics.push((metric, slots.get(*i)?.value));
    }
    Some(s)
}

/// The template of `text` into `key` (numbers as `#`, a leading timestamp dropped, blanks
/// as one space) and its numbers.
fn template<'a>(text: &'a str, key: &mut String) -> Option<Vec<Slot<'a>>> {
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
        let starts_number = b[i].is_ascii_digit()
            && (i == 0 || !(b[i - 1].is_ascii_alphabetic() || b[i - 1] == b'_'));
        if starts_number {
            let end = number_end(b, i);
            let text = &body[i..end];
            // `iter time (s): 0.51`: the unit is the last word, the name the one before.
            let (name, unit) = match last_word {
                "s" | "ms" | "sec" | "us" => (prev_word, unit_word(last_word)),
                _ => (last_word, unit_after(&body[end..])),
            };
            slots.push(Slot {
                text,
                value: text.parse().ok()?,
                name,
                unit,
            });
            if slots.len() > MAX_SLOTS {
                return None;
            }
            key.push('#');
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
            if matches!(w, "s" | "ms" | "sec" | "secs" | "us") || w.contains("/s") {
                w
            } else {
                ""
            }
        }
        _ => word(rest),
    }
}

/// The text after a leading timestamp (and the separators after it).
fn skip_stamp(text: &str) -> &str {
    let t = text.trim_start_matches(|c: char| !c.is_ascii_digit());
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || "-/:.,T ".contains(c)))
        .unwrap_or(t.len());
    &t[end..]
}

/// The end of the number starting at `i` (digits, one `.`, thousands `,` between digits).
fn number_end(b: &[u8], mut i: usize) -> usize {
    let mut dot = false;
    while i < b.len() {
        let next_digit = b.get(i + 1).is_some_and(u8::is_ascii_digit);
        match b[i] {
            b'0'..=b'9' => {}
            b'.' if !dot && next_digit => dot = true,
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

/// What the template's slots are, from the values of [`LEARN`] lines.
fn infer(key: &str, seen: &[Vec<f64>], slots: &[Slot]) -> Option<Learned> {
    let names: Vec<String> = slots.iter().map(|s| s.name.to_ascii_lowercase()).collect();
    let column = |i: usize| seen.iter().map(move |v| v[i]);
    let step = (0..slots.len()).find(|&i| {
        let v: Vec<f64> = column(i).collect();
        let stride = v[1] - v[0];
        v.iter().all(|x| x.fract() == 0.0 && *x >= 0.0)
            && stride >= 1.0
            && v.windows(2).all(|w| w[1] - w[0] == stride)
            && !is_time(&slots[i], &names[i])
    })?;
    let time = (0..slots.len())
        .filter(|&i| i != step && is_time(&slots[i], &names[i]))
        .find_map(|i| {
            let v: Vec<f64> = column(i).collect();
            // A clock reading (`time_ms: 1684256520045`) is no duration: past 13 days.
            let limit =
                crate::time::MAX_RANK_EXTENT_NS as f64 / 10f64.powi(scale(&slots[i], &names[i]));
            if v.iter().any(|x| *x < 0.0 || *x > limit) {
                return None;
            }
            let grows = v.windows(2).all(|w| w[1] > w[0]);
            let prov = if grows && v[0] > 0.0 && v[v.len() - 1] > 2.0 * v[0] {
                Provenance::Cumulative
            } else {
                Provenance::PerStep
            };
            Some((i, names[i].clone(), prov, scale(&slots[i], &names[i])))
        });
    // Samples or tokens per second, not TFLOP/s.
    let rate = (0..slots.len())
        .filter(|&i| is_rate(&slots[i], &names[i]) && !names[i].contains("flop"))
        .map(|i| {
            let metric = if names[i].contains("tok") {
                "tokens_per_s"
            } else {
                "samples_per_s"
            };
            (i, names[i].clone(), metric)
        })
        .next();
    // A counter alone (`Downloading 5/100`) is no step line: it needs a time, a rate or a
    // name that says step.
    let named = matches!(
        names[step].as_str(),
        "step" | "iter" | "iteration" | "batch" | "global_step" | "it" | "steps" | "update"
    );
    if time.is_none() && rate.is_none() && !named {
        return None;
    }
    let of =
        (key_after_slot(key, step).starts_with('/') && step + 1 < slots.len()).then_some(step + 1);
    let epoch = (0..step).find(|&i| names[i] == "epoch");
    Some(Learned {
        template: key.chars().take(120).collect(),
        step: (step, names[step].clone()),
        of,
        epoch,
        time,
        rate,
    })
}

/// The template's text right after slot `i`'s `#`.
fn key_after_slot(key: &str, i: usize) -> &str {
    key.match_indices('#')
        .nth(i)
        .map_or("", |(k, _)| &key[k + 1..])
}

/// A slot whose unit or name says it is a time.
fn is_time(s: &Slot, name: &str) -> bool {
    matches!(s.unit, "s" | "ms" | "sec" | "secs" | "us" | "µs")
        || name == "dt"
        || [
            "time", "latency", "elapsed", "duration", "seconds", "sec", "took",
        ]
        .iter()
        .any(|w| name.contains(w))
            && !is_rate(s, name)
}

/// A slot whose unit or name says it is a rate.
fn is_rate(s: &Slot, name: &str) -> bool {
    let per_second = |t: &str| {
        t.ends_with("/s") || t.contains("/s/") || t.contains("/sec") || t.contains("per_sec")
    };
    per_second(s.unit) || per_second(name) || name.contains("speed") || name.contains("throughput")
}

/// Powers of ten of a nanosecond in the slot's unit (seconds unless it says otherwise).
fn scale(s: &Slot, name: &str) -> i32 {
    match s.unit {
        "ms" => 6,
        "us" | "µs" => 3,
        _ if name.ends_with("ms") => 6,
        _ => 9,
    }
}

#[cfg(test)]
mod tests;
