//! The generic recogniser: a step-line template learned from the stream itself, for
//! frameworks no dedicated recogniser knows (log-template mining in the spirit of Drain).
//! A line's template is its text with every number replaced by a slot; lines of one template
//! whose one integer slot grows by a fixed stride are step lines, and among their other slots
//! one that reads as a time (a unit or a name that says so) is the step time — per step when
//! it moves both ways, cumulative when it only grows — and one that reads as a rate
//! (`samples/sec`, `it/s`, `tokens/s`) a throughput. The [`LEARN`] lines a template is
//! learned from are read once it is (in [`Templates::backlog`]), so a run loses no step.

use super::fields::numeric_prefix;
use super::{Provenance, Said, Step};
use crate::time::unit_text_to_ns;
use rustc_hash::FxHashMap as HashMap;
use std::collections::VecDeque;

/// Lines of one template needed to learn it.
pub(crate) const LEARN: usize = 3;
/// Lines needed when they hold no time and no rate: a counter named `step` alone is weaker
/// evidence (three numbered lines of a code listing are no step lines).
pub(crate) const LEARN_UNTIMED: usize = 8;
/// Templates a source keeps (the least recently seen goes first).
pub(crate) const MAX_TEMPLATES: usize = 256;
/// Numbers a line may hold to be considered (a dump of numbers is no step line).
pub(crate) const MAX_SLOTS: usize = 64;
/// Bytes of a line considered.
pub(crate) const MAX_LINE: usize = 2048;

/// What a learned template reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Learned {
    /// The template (numbers as `#`), cut to 120 characters, for `--explain`.
    pub template: String,
    /// The slot of the step number, and its name.
    pub step: (usize, String),
    /// The slot of the total it is printed against (`iter 65/272`), when printed.
    pub of: Option<usize>,
    /// The slot of an epoch number the step may restart within (`epoch 3 | iter 65/272`,
    /// `[3][65/272]`): read as the record's epoch, which orders the steps of a counter that
    /// restarts (`analysis::live::order`).
    pub epoch: Option<(usize, String)>,
    /// The slot of the step time, its name, and what it is.
    pub time: Option<(usize, String, Provenance, i32)>,
    /// The slot of a rate, its name, and the metric it is (`samples_per_s`, `tokens_per_s`).
    pub rate: Option<(usize, String, &'static str)>,
    /// What each slot is called (its name, else `#` and its unit): how a template of the
    /// same family finds the slots this one reads ([`family`]).
    pub ids: Vec<String>,
}

#[derive(Debug, Default)]
struct Template {
    /// The writer (rank, host) whose lines teach it: ranks interleaved in one stream print
    /// the same step at once, and only one writer's lines show the stride.
    teacher: Option<(Option<u32>, Option<String>)>,
    seen: Vec<Vec<f64>>,
    /// The texts of the lines learned from, read once the template is learned.
    taught: Vec<String>,
    learned: Option<Learned>,
    /// Learning failed on [`LEARN`] lines: not a step template.
    rejected: bool,
    /// A template of the primary's family, and how it joined ([`family`]).
    family: bool,
    joined: Option<family::Joined>,
    /// Step records it gave.
    records: u64,
    /// The source lines it was seen on, first and last ([`Templates::line`]).
    lines: (u64, u64),
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
    /// Steps (and ranks) of the lines the primary template was learned from, older than the
    /// line that taught it last: the caller takes them (before that line's own step).
    pub backlog: Vec<(Option<u32>, Step)>,
    /// The source line being read (set by the caller): where each template was seen.
    pub line: u64,
    /// The last step the primary's family read (as printed).
    last_step: Option<u64>,
}

impl Templates {
    /// The template whose lines gave records, when one did.
    pub fn primary(&self) -> Option<&Learned> {
        self.by.get(self.primary.as_ref()?)?.learned.as_ref()
    }
}

/// A step line of a template learned from the stream, with the rank a slot of it names
/// (`[worker 3] it 12 …`) when no launcher prefix did.
pub(crate) fn learn(l: &super::line::Line, t: &mut Templates) -> Option<super::Ranked> {
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
fn take(
    l: &super::line::Line,
    t: &mut Templates,
    key: &str,
    slots: &[Slot],
) -> Option<super::Ranked> {
    let text = l.text.as_str();
    let rank = l.rank.or_else(|| named_rank(slots));
    if !t.by.contains_key(key) {
        t.make_room();
        t.order.push_back(key.to_string());
        let adopted = t.adopt(key, slots);
        let tpl = Template {
            family: adopted.is_some(),
            joined: adopted.as_ref().map(|_| family::Joined::Adopted),
            learned: adopted,
            lines: (t.line, t.line),
            ..Template::default()
        };
        t.by.insert(key.to_string(), tpl);
    }
    let line = t.line;
    let tpl = t.by.get_mut(key)?;
    tpl.lines.1 = line;
    if tpl.rejected {
        return None;
    }
    let mut taught = Vec::new();
    let mut succeeded = false;
    if tpl.learned.is_none() {
        let learned = teach(tpl, l, rank, key, slots)?;
        taught = std::mem::take(&mut tpl.taught);
        // This line is read below, with the others' steps before it.
        taught.pop();
        let first_line = tpl.lines.0;
        let first_step = taught
            .first()
            .and_then(|old| {
                let mut k = String::new();
                read(old, &learned, &template(old, &mut k)?)
            })
            .and_then(|s| s.step);
        succeeded = first_step.is_some_and(|st| t.succeeds(key, &learned, first_line, st));
        let tpl = t.by.get_mut(key)?;
        tpl.learned = Some(learned);
        if succeeded {
            tpl.family = true;
            tpl.joined = Some(family::Joined::Succeeded);
        }
    }
    let first = t.primary.is_none();
    if !t.make_primary(key) {
        return None;
    }
    // Borrowed, not cloned: this is every step line's path.
    let tpl = t.by.get_mut(key)?;
    let learned = tpl.learned.as_ref()?;
    // A template that takes over from an untimed primary would give its steps twice.
    let mut given = 0;
    if first || succeeded {
        let mut k = String::new();
        for old in &taught {
            let step = template(old, &mut k).and_then(|sl| read(old, learned, &sl));
            given += u64::from(step.is_some());
            t.backlog.extend(step.map(|s| (rank, s)));
        }
    }
    let step = read(text, learned, slots);
    tpl.records += given + u64::from(step.is_some());
    let step = step?;
    t.last_step = step.step.or(t.last_step);
    Some((rank, Said::Step(step)))
}

/// One more learning line of template `tpl`; what it reads once [`LEARN`] lines (of one
/// writer) taught it, `None` before, or when they show no step template (it is rejected).
fn teach(
    tpl: &mut Template,
    l: &super::line::Line,
    rank: Option<u32>,
    key: &str,
    slots: &[Slot],
) -> Option<Learned> {
    let writer = (rank, l.host.clone());
    if tpl.teacher.get_or_insert_with(|| writer.clone()) != &writer {
        return None;
    }
    tpl.seen.push(slots.iter().map(|s| s.value).collect());
    tpl.taught.push(l.text.clone());
    if tpl.seen.len() < LEARN {
        return None;
    }
    let learned = infer(key, &tpl.seen, slots);
    let untimed = learned
        .as_ref()
        .is_some_and(|l| l.time.is_none() && l.rate.is_none());
    if untimed && tpl.seen.len() < LEARN_UNTIMED {
        return None;
    }
    tpl.rejected = learned.is_none();
    tpl.seen = Vec::new();
    if tpl.rejected {
        tpl.taught = Vec::new();
    }
    learned
}

/// The rank a slot names (`worker 3`, `rank=5`, `GPU 2`): lines of several ranks
/// interleaved in one stream without launcher prefixes are told apart by it.
fn named_rank(slots: &[Slot]) -> Option<u32> {
    const NAMES: [&str; 6] = ["rank", "local_rank", "global_rank", "worker", "gpu", "proc"];
    let s = slots
        .iter()
        .find(|s| NAMES.iter().any(|n| s.name.eq_ignore_ascii_case(n)))?;
    s.text.parse().ok()
}

impl Templates {
    /// Room for one more template: the oldest that is not of the primary's family goes.
    fn make_room(&mut self) {
        while self.by.len() >= MAX_TEMPLATES {
            let Some(old) = self.order.pop_front() else {
                return;
            };
            let kept =
                self.primary.as_ref() == Some(&old) || self.by.get(&old).is_some_and(|t| t.family);
            if kept {
                self.order.push_back(old);
            } else {
                self.by.remove(&old);
            }
        }
    }

    /// Whether `key`'s lines are the source's step lines now: it is the primary or of its
    /// family, or becomes the primary (the first learned, or the first with a step time
    /// after an untimed one).
    fn make_primary(&mut self, key: &str) -> bool {
        if self.by.get(key).is_some_and(|t| t.family) {
            return true;
        }
        let timed = |k: &str| {
            self.by
                .get(k)
                .and_then(|p| p.learned.as_ref())
                .is_some_and(|l| l.time.is_some())
        };
        match &self.primary {
            Some(p) if p == key => true,
            Some(p) if timed(p) || !timed(key) => false,
            _ => {
                self.primary = Some(key.to_string());
                true
            }
        }
    }
}

/// The step of a line of a learned template.
fn read(text: &str, l: &Learned, slots: &[Slot]) -> Option<Step> {
    let n = slots.get(l.step.0)?.value as u64;
    let of = l.of.and_then(|i| Some(slots.get(i)?.value as u64));
    let epoch = l
        .epoch
        .as_ref()
        .and_then(|e| Some(slots.get(e.0)?.value as u64));
    // With the epoch's total printed the step is epoch × total + step (`epoch 1 | iter
    // 1/272` is 273); without it, the live analysis orders a counter that restarts.
    let n = match (epoch, of) {
        (Some(e), Some(of)) => e.checked_mul(of)?.checked_add(n)?,
        _ => n,
    };
    let mut s = Step::at(Some(n), None, Provenance::FromTimestamps, text);
    s.of = of.filter(|_| epoch.is_none());
    s.epoch = epoch;
    if let Some((i, _, prov, scale)) = &l.time {
        let t = unit_text_to_ns(
            numeric_prefix(&plain(slots.get(*i)?.text)).as_bytes(),
            *scale,
        )
        .ok()?;
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

/// What the template's slots are, from the values of [`LEARN`] lines.
fn infer(key: &str, seen: &[Vec<f64>], slots: &[Slot]) -> Option<Learned> {
    let names: Vec<String> = slots.iter().map(|s| s.name.to_ascii_lowercase()).collect();
    let column = |i: usize| seen.iter().map(move |v| v[i]);
    // What `--explain` calls a slot: its name, else `#` and its unit (`# ms`).
    let label = |i: usize| match (names[i].as_str(), slots[i].unit) {
        ("", "") => "#".to_string(),
        ("", unit) => format!("# {unit}"),
        (name, _) => name.to_string(),
    };
    let counters: Vec<usize> = (0..slots.len())
        .filter(|&i| {
            let v: Vec<f64> = column(i).collect();
            let stride = v[1] - v[0];
            v.iter().all(|x| x.fract() == 0.0 && *x >= 0.0)
                && stride >= 1.0
                && v.windows(2).all(|w| w[1] - w[0] == stride)
                && !is_time(&slots[i], &names[i])
        })
        .collect();
    // `epoch=0/micro_step=20/global_step=10`: the optimizer's step, then one named a step,
    // then the first counter.
    let step = counters
        .iter()
        .find(|&&i| names[i] == "global_step")
        .or_else(|| counters.iter().find(|&&i| step_named(&names[i])))
        .or(counters.first())
        .copied()?;
    let time = (0..slots.len())
        .filter(|&i| i != step && is_time(&slots[i], &names[i]))
        .find_map(|i| {
            let v: Vec<f64> = column(i).collect();
            let (prov, scale) = time_kind(&v, &slots[i], &names[i])?;
            Some((i, label(i), prov, scale))
        });
    // Samples or tokens per second, not TFLOP/s.
    let rates: Vec<usize> = (0..slots.len())
        .filter(|&i| is_rate(&slots[i], &names[i]) && !names[i].contains("flop"))
        .collect();
    // `RunningAvgSamplesPerSec=… CurrSamplesPerSec=…`: the current one.
    let averaged = |i: &usize| names[*i].contains("avg") || names[*i].contains("running");
    let rate = rates
        .iter()
        .find(|i| !averaged(i))
        .or(rates.first())
        .map(|&i| {
            let metric = if names[i].contains("tok") || names[i].ends_with("tps") {
                "tokens_per_s"
            } else {
                "samples_per_s"
            };
            (i, label(i), metric)
        });
    // A counter alone (`Downloading 5/100`) is no step line: it needs a time, a rate or a
    // name that says step.
    if time.is_none() && rate.is_none() && !step_named(&names[step]) {
        return None;
    }
    let of =
        (key_after_slot(key, step).starts_with('/') && step + 1 < slots.len()).then_some(step + 1);
    let epoch = outer(&names, seen, slots, step).map(|i| (i, label(i)));
    Some(Learned {
        ids: slots.iter().map(family::slot_id).collect(),
        template: key.chars().take(120).collect(),
        step: (step, label(step)),
        of,
        epoch,
        time,
        rate,
    })
}

/// The counter the step slot may restart within: a slot before it named an epoch, else the
/// nearest slot before it holding one non-negative integer over the learning lines that no
/// rank, time or rate name claims (`TRAIN [3][40/500]`: the `3`). Only a step that goes back
/// while it advances is taken as nested (`analysis::live::order`): a constant that never
/// advances (`bs 32`) changes nothing.
fn outer(names: &[String], seen: &[Vec<f64>], slots: &[Slot], step: usize) -> Option<usize> {
    let named = (0..step).find(|&i| matches!(names[i].as_str(), "epoch" | "ep" | "epoch_num"));
    // A source location (`training_log:662`, `train.py:88`) is no counter either.
    let claimed = |i: usize| {
        names[i].contains('/')
            || names[i].ends_with("log")
            || names[i].ends_with("py")
            || named_rank(&slots[i..=i]).is_some()
            || is_time(&slots[i], &names[i])
            || is_rate(&slots[i], &names[i])
    };
    named.or_else(|| {
        (0..step).rev().find(|&i| {
            let v = seen[0][i];
            !claimed(i) && v >= 0.0 && v.fract() == 0.0 && seen.iter().all(|row| row[i] == v)
        })
    })
}

/// What a time slot with `values` over the learning lines is, and its unit; `None` for a
/// clock reading (`time_ms: 1684256520045`: past 13 days, no duration).
fn time_kind(v: &[f64], slot: &Slot, name: &str) -> Option<(Provenance, i32)> {
    let scale = scale(slot, name);
    let limit = crate::time::MAX_RANK_EXTENT_NS as f64 / 10f64.powi(scale);
    if v.iter().any(|x| *x < 0.0 || *x > limit) {
        return None;
    }
    let grows = v.windows(2).all(|w| w[1] > w[0]);
    // `elapsed_time_per_iteration_ms` says what it is, however its first values move.
    let per_step = name.contains("per_") || name.contains("step_time");
    // A timer that only grew is cumulative when its name says so (`train_time`, `elapsed`),
    // or when it more than doubled over the learning lines.
    let cumulative_name = ["train_time", "elapsed", "total", "wall", "cumul"]
        .iter()
        .any(|w| name.contains(w));
    let doubled = v[0] > 0.0 && v[v.len() - 1] > 2.0 * v[0];
    let prov = if grows && !per_step && (cumulative_name || doubled) {
        Provenance::Cumulative
    } else if slot.smoothed {
        Provenance::RunningAverage
    } else {
        Provenance::PerStep
    };
    Some((prov, scale))
}

/// A slot name that says it counts steps.
fn step_named(name: &str) -> bool {
    matches!(
        name,
        "step" | "iter" | "iteration" | "batch" | "global_step" | "it" | "steps" | "update"
    )
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
            "time", "timing", "latency", "elapsed", "duration", "seconds", "sec", "took",
        ]
        .iter()
        .any(|w| name.contains(w))
            && !is_rate(s, name)
}

/// A slot whose unit or name says it is a rate.
fn is_rate(s: &Slot, name: &str) -> bool {
    let per_second = |t: &str| {
        t.ends_with("/s")
            || t.contains("/s/")
            || t.contains("/sec")
            || t.contains("persec")
            || t.contains("per_sec")
    };
    // torchtitan's `tps` (tokens per second), `wps`, `ips`.
    let short = matches!(name, "tps" | "wps" | "ips") || name.ends_with("_tps");
    per_second(s.unit)
        || per_second(name)
        || short
        || name.contains("speed")
        || name.contains("throughput")
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

mod family;
mod template;
pub use family::{Joined, Member};
pub use template::key_of;
use template::{Slot, plain, template};

#[cfg(test)]
mod tests;
