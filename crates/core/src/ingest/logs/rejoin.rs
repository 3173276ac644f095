//! Lines cut in two (`reference/logs.md` §2.2): a launcher that labels each write (`srun -l
//! -u`, a rank flushing a partial line) prints one record as two lines of the same rank, with
//! other ranks' lines between. Per rank, the last line is held until the rank's next line:
//! - a line no recogniser takes waits as a possible first half; if the next line is not
//!   recognised alone either, the two are tried together;
//! - a record from a format whose lines carry no closing mark (torchtitan, DeepSpeed, the
//!   wall-clock breakdown, …) waits too — its line may be a first half that happens to read
//!   as a record with a cut last value; if the next line completes it, the whole line's
//!   record replaces it. It waits at most [`HOLD`] (then it is taken as it stands).
//!
//! Formats with a closing mark (Megatron's final `|`, a JSON object, HF Trainer's dict) refuse
//! a cut line themselves and are never held.

use super::line::Line;
use super::{Recogniser, Record, SourceState, recognise_as};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Longest fragment held: step lines are short; longer text is no step line's first half.
pub(crate) const MAX_FRAGMENT: usize = 4096;
/// Ranks holding a line at once (beyond, fragments are dropped and records released).
pub(crate) const MAX_HELD: usize = 4096;
/// Longest a record waits for a second half.
pub(crate) const HOLD: Duration = Duration::from_millis(200);
/// Formats whose lines end with a mark a cut line lacks: their records are never held.
pub(crate) const CLOSED: &[&str] = &["megatron", "jsonl", "hf-trainer"];

/// A rank's last line: its text, and its record when it made one alone.
#[derive(Debug)]
struct Held {
    text: String,
    record: Option<Record>,
    since: Instant,
}

/// The held lines of one source, one per rank (or per host of the rankless stream).
#[derive(Debug, Default)]
pub(crate) struct Fragments {
    held: BTreeMap<Writer, Held>,
}

/// Who wrote a line: its rank, or its host when it has none (pdsh hosts interleave).
type Writer = (Option<u32>, Option<String>);

/// The writer of `l`.
fn writer(l: &Line) -> Writer {
    match l.rank {
        Some(r) => (Some(r), None),
        None => (None, l.host.clone()),
    }
}

/// What a line gave, in stream order.
#[derive(Debug, Default)]
pub(crate) struct Given {
    /// Records to take now.
    pub records: Vec<Record>,
    /// The line completed a held first half.
    pub rejoined: bool,
    /// That first half had made no record alone (it was counted unrecognised).
    pub first_unrecognised: bool,
}

impl Fragments {
    /// Takes line `l` of a rank, with the record it makes `alone` (if any): the records to
    /// take now go to `out.records`, and its flags say what this line did.
    pub(crate) fn offer(
        &mut self,
        l: &Line,
        alone: Option<Record>,
        only: Option<&Recogniser>,
        table: &mut SourceState,
        out: &mut Given,
    ) {
        out.rejoined = false;
        out.first_unrecognised = false;
        let before = self.held.remove(&writer(l));
        if alone.is_none() && !fresh(&l.text) {
            if let Some(first) = before
                .as_ref()
                .filter(|f| f.record.is_none() || mid_token(f, l))
            {
                let whole = joined(first, l, only, table);
                // A join that reads as the first half alone did adds nothing: no second half.
                if let Some(whole) = whole.filter(|w| first.record.as_ref() != Some(w)) {
                    // The first half's own reading (a cut value) is dropped.
                    out.rejoined = true;
                    out.first_unrecognised = first.record.is_none();
                    self.hold_or_give(l, whole, out);
                    return;
                }
            }
        }
        if let Some(b) = before {
            out.records.extend(b.record);
        }
        match alone {
            Some(rec) => self.hold_or_give(l, rec, out),
            None => {
                self.hold(l, None);
            }
        }
    }

    /// Records held longer than [`HOLD`] (all of them with `all`), in rank order.
    pub(crate) fn release(&mut self, all: bool, out: &mut Vec<Record>) {
        if self.held.values().all(|h| h.record.is_none()) && !all {
            return;
        }
        let due: Vec<Writer> = self
            .held
            .iter()
            .filter(|(_, h)| h.record.is_some() && (all || h.since.elapsed() >= HOLD))
            .map(|(r, _)| r.clone())
            .collect();
        for r in due {
            if let Some(rec) = self.held.get_mut(&r).and_then(|h| h.record.take()) {
                out.push(rec);
            }
        }
        if all {
            self.held.clear();
        }
    }

    fn hold_or_give(&mut self, l: &Line, rec: Record, out: &mut Given) {
        if CLOSED.contains(&rec.format) {
            out.records.push(rec);
        } else {
            out.records.extend(self.hold(l, Some(rec)));
        }
    }

    /// Holds `l` (with its record); gives the record back when it cannot be held.
    fn hold(&mut self, l: &Line, record: Option<Record>) -> Option<Record> {
        if l.text.len() > MAX_FRAGMENT {
            return record;
        }
        if self.held.len() >= MAX_HELD {
            // Bounded memory: fragments go; records are kept (released at their time).
            self.held.retain(|_, h| h.record.is_some());
            if self.held.len() >= MAX_HELD {
                return record;
            }
        }
        // A cut at a space: the space normalisation trimmed belongs between the halves.
        let space = if l.trailing_space { " " } else { "" };
        self.held.insert(
            writer(l),
            Held {
                text: format!("{}{space}", l.text),
                record,
                since: Instant::now(),
            },
        );
        None
    }
}

/// A line that starts like a logger's line (`[…]`, a level word, a timestamp): a line of
/// its own, never a second half.
fn fresh(text: &str) -> bool {
    const LEVELS: &[&str] = &["INFO", "WARNING", "WARN", "ERROR", "DEBUG", "CRITICAL"];
    let t = text.trim_start();
    let head = super::fields::head(t, 32);
    t.starts_with('[')
        || LEVELS.iter().any(|w| t.starts_with(w))
        || head.bytes().take(2).any(|c| c.is_ascii_digit())
            && (0..2).any(|i| head.get(i..).and_then(super::fields::timestamp).is_some())
}

/// A record read alone is only a first half when it was cut inside a token (a value such as
/// `715.4` + `5`): a cut between tokens left every value it read whole.
fn mid_token(first: &Held, l: &Line) -> bool {
    let word = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'.' | b',' | b'%' | b'_');
    let (a, b) = (first.text.as_bytes().last(), l.text.as_bytes().first());
    a.is_some_and(|&c| word(c)) && b.is_some_and(|&c| word(c))
}

/// The record `first` and `l` make together, if any.
fn joined(
    first: &Held,
    l: &Line,
    only: Option<&Recogniser>,
    table: &mut SourceState,
) -> Option<Record> {
    let whole = Line {
        rank: l.rank,
        host: l.host.clone(),
        text: format!("{}{}", first.text, l.text),
        trailing_space: l.trailing_space,
    };
    recognise_as(&whole, only, table, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::logs::Said;
    use crate::ingest::logs::recognise;

    fn line(rank: Option<u32>, text: &str) -> Line {
        Line {
            rank,
            host: None,
            text: text.trim_end().into(),
            trailing_space: text.ends_with(' '),
        }
    }

    /// Offers `text` of `rank` as the engine does; the records to take now.
    fn offer(f: &mut Fragments, rank: Option<u32>, text: &str) -> (Vec<Record>, bool) {
        let (l, mut t, mut g) = (line(rank, text), SourceState::default(), Given::default());
        let alone = recognise(&l, None, &mut t);
        f.offer(&l, alone, None, &mut t, &mut g);
        (g.records, g.rejoined)
    }

    fn times(recs: &[Record]) -> Vec<Option<i64>> {
        recs.iter()
            .map(|r| match &r.said {
                Said::Step(s) => s.time_ns,
                _ => None,
            })
            .collect()
    }

    #[test]
    fn lines_cut_inside_a_character_at_byte_32_are_read() {
        // Byte 32 falls inside `据` and inside a block of the tqdm bar.
        assert!(!fresh("训练开始，正在加载数据集，请稍候片刻"));
        assert!(!fresh("Training:  70%|███████   | 700/1000 [00:10<00:04]"));
        assert!(fresh(
            "2024-05-01 12:00:00 训练开始，正在加载数据集，请稍候"
        ));
        let mut f = Fragments::default();
        assert_eq!(
            offer(&mut f, None, "训练开始，正在加载数据集，请稍候片刻")
                .0
                .len(),
            0
        );
    }

    #[test]
    fn two_halves_of_one_rank_make_the_record_and_other_ranks_do_not_mix() {
        let mut f = Fragments::default();
        assert_eq!(
            offer(
                &mut f,
                Some(3),
                " iteration 43/100 | elapsed time per iteration (ms): 54"
            )
            .0
            .len(),
            0
        );
        // Rank 5's line in between is neither half.
        assert!(offer(&mut f, Some(5), "44.9 | lm loss: 1.0 |").0.is_empty());
        let (recs, rejoined) = offer(&mut f, Some(3), "44.9 | lm loss: 1.0 |");
        assert!(rejoined);
        assert_eq!(times(&recs), [Some(5_444_900_000)]);
        assert_eq!(recs[0].rank, Some(3));
        // A line that starts with a timestamp is no second half; nor is a line that adds
        // nothing to a record read alone.
        assert!(fresh("[2025-11-10 09:43:39,573] [INFO] step=136005"));
        assert!(!fresh("44.9 | lm loss: 1.0 |"));
        offer(
            &mut f,
            Some(1),
            " iteration 43/100 | elapsed time per iteration (ms): 54",
        );
        let (_, rejoined) = offer(&mut f, Some(1), "[2025-11-10 09:43:39,573] 44.9 | x |");
        assert!(!rejoined);
        // A cut at a space keeps the space.
        offer(&mut f, None, " validation loss at ");
        let (recs, _) = offer(&mut f, None, "iteration 50 | x |");
        assert!(matches!(recs[0].said, Said::Event { step: Some(50), .. }));
    }

    #[test]
    fn a_record_without_a_closing_mark_waits_for_its_rank_s_next_line() {
        let mut f = Fragments::default();
        // torchtitan's line cut after `tps: 5,8`: read alone it is a record (tps 5.8k?) —
        // held; the second half completes it, and only the whole line's record is given.
        let first = "step: 200  loss:  6.1384  memory: 49.66GiB(52.28%)  tps: 5,8";
        assert!(offer(&mut f, Some(0), first).0.is_empty());
        let (recs, rejoined) = offer(&mut f, Some(0), "56  tflops: 339.16  mfu: 34.29%");
        assert!(rejoined && recs.is_empty(), "the whole line waits in turn");
        let mut out = Vec::new();
        f.release(true, &mut out);
        let Said::Step(s) = &out[0].said else {
            panic!()
        };
        assert!(s.metrics.contains(&("tokens_per_s_per_device", 5856.0)));
        // A held record is given when its rank's next line is a record of its own …
        offer(&mut f, Some(0), first);
        let (recs, rejoined) = offer(&mut f, Some(0), "step: 201  loss:  6.1  tps: 5,856");
        assert_eq!((recs.len(), rejoined), (1, false));
        // … or once it has waited HOLD.
        let mut out = Vec::new();
        f.release(false, &mut out);
        assert!(out.is_empty());
        std::thread::sleep(HOLD);
        f.release(false, &mut out);
        assert_eq!(out.len(), 1);
    }
}
