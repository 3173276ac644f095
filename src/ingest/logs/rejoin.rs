//! Lines cut in two (`reference/logs.md` §2.2): a launcher that labels each write (`srun -l
//! -u`, a rank flushing a partial line) or a container runtime that splits long lines prints
//! one record as two lines of the same rank. A line no recogniser takes is held per rank; when
//! the next line of that rank is not recognised alone either, the two are tried together, and
//! a record they make together is the rejoined line. Recognisers refuse lines that look cut
//! (Megatron's fields end with `|`), so a cut value is never read as a whole one.

use super::line::Line;
use super::{Recogniser, Record, monitors::Table, recognise};
use std::collections::BTreeMap;

/// Longest fragment held: step lines are short; longer text is no step line's first half.
pub const MAX_FRAGMENT: usize = 4096;
/// Ranks holding a fragment at once (beyond, every fragment is dropped: memory stays bounded).
pub const MAX_HELD: usize = 4096;

/// The fragments of one source, one per rank (or the rankless stream).
#[derive(Debug, Default)]
pub struct Fragments {
    held: BTreeMap<Option<u32>, String>,
}

impl Fragments {
    /// A line of `rank` was recognised alone: what the rank held was no first half.
    pub fn recognised(&mut self, rank: Option<u32>) {
        if !self.held.is_empty() {
            self.held.remove(&rank);
        }
    }

    /// `l` was not recognised alone: the record it makes after the fragment its rank holds,
    /// or `None`, and `l` is held in its place (it may be the next record's first half).
    pub fn join(
        &mut self,
        l: &Line,
        only: Option<&Recogniser>,
        table: &mut Table,
    ) -> Option<Record> {
        if let Some(mut first) = self.held.remove(&l.rank) {
            first.push_str(&l.text);
            let whole = Line {
                rank: l.rank,
                host: l.host.clone(),
                text: first,
                trailing_space: l.trailing_space,
            };
            if let Some(rec) = recognise(&whole, only, table) {
                return Some(rec);
            }
        }
        if l.text.len() <= MAX_FRAGMENT {
            if self.held.len() >= MAX_HELD {
                self.held.clear();
            }
            // A cut at a space: the space normalisation trimmed belongs between the halves.
            let space = if l.trailing_space { " " } else { "" };
            self.held.insert(l.rank, format!("{}{space}", l.text));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::logs::Said;

    fn line(rank: Option<u32>, text: &str) -> Line {
        Line {
            rank,
            host: None,
            text: text.trim_end().into(),
            trailing_space: text.ends_with(' '),
        }
    }

    #[test]
    fn two_halves_of_one_rank_make_the_record_and_other_ranks_do_not_mix() {
        let mut f = Fragments::default();
        let mut t = Table::default();
        let first = line(
            Some(3),
            " iteration 43/100 | elapsed time per iteration (ms): 54",
        );
        assert!(recognise(&first, None, &mut t).is_none());
        assert!(f.join(&first, None, &mut t).is_none());
        // Rank 5's line in between is neither half.
        assert!(
            f.join(&line(Some(5), "44.9 | lm loss: 1.0 |"), None, &mut t)
                .is_none()
        );
        let rec = f
            .join(&line(Some(3), "44.9 | lm loss: 1.0 |"), None, &mut t)
            .expect("rejoined");
        let Said::Step(s) = rec.said else { panic!() };
        assert_eq!(
            (rec.rank, s.step, s.time_ns),
            (Some(3), Some(43), Some(5_444_900_000))
        );
        // Nothing held any more: the second half alone makes nothing.
        assert!(
            f.join(&line(Some(3), "44.9 | lm loss: 1.0 |"), None, &mut t)
                .is_none()
        );
        // A cut at a space keeps the space.
        f.join(&line(None, " validation loss at "), None, &mut t);
        let rec = f.join(&line(None, "iteration 50 | x |"), None, &mut t);
        assert_eq!(
            rec.map(|r| r.said),
            Some(Said::Event {
                event: crate::ingest::logs::EventKind::Eval,
                step: Some(50)
            })
        );
        // A line recognised alone drops its rank's fragment.
        f.join(&first, None, &mut t);
        f.recognised(Some(3));
        assert!(f.join(&line(Some(3), "44.9 |"), None, &mut t).is_none());
    }
}
