//! Steps on the log's wall clock (docs/metrics.md "Live (watch)"): step lines that carry a
//! timestamp mark when each step ended, so a monitor sample with a timestamp can be placed
//! on the step axis — the device that went idle is idle *during step N*.

use crate::time::Ns;
use std::collections::VecDeque;

/// Marks kept (the newest).
pub const MARKS: usize = 4096;

/// When steps ended, from one line format (two formats number steps differently).
#[derive(Debug, Default)]
pub struct Clock {
    format: Option<&'static str>,
    marks: VecDeque<(Ns, u64)>,
}

impl Clock {
    /// Step `step` of `format` ended at `at` (a line's timestamp); times that go back are
    /// skipped (several ranks print each step at about the same time).
    pub fn mark(&mut self, format: &'static str, at: Ns, step: u64) {
        if *self.format.get_or_insert(format) != format {
            return;
        }
        if self.marks.back().is_some_and(|&(t, s)| at < t || s == step) {
            return;
        }
        self.marks.push_back((at, step));
        if self.marks.len() > MARKS {
            self.marks.pop_front();
        }
    }

    /// The step running at `at`: the first step that ended at or after it; after the last
    /// mark, the step after the last printed one. `None` before the first mark, or with no
    /// marks.
    pub fn step_at(&self, at: Ns) -> Option<u64> {
        let first = self.marks.front()?;
        if at < first.0 {
            return None;
        }
        let i = self.marks.partition_point(|&(t, _)| t < at);
        match self.marks.get(i) {
            Some(&(_, step)) => Some(step),
            None => self.marks.back().map(|&(_, s)| s.saturating_add(1)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_falls_in_the_step_that_ended_next() {
        let mut c = Clock::default();
        assert_eq!(c.step_at(5), None);
        for (at, s) in [(100, 1), (200, 2), (200, 2), (150, 9), (300, 3)] {
            c.mark("megatron", at, s);
        }
        c.mark("deepspeed", 400, 77);
        assert_eq!(c.step_at(99), None);
        assert_eq!(c.step_at(100), Some(1));
        assert_eq!(c.step_at(101), Some(2));
        assert_eq!(c.step_at(250), Some(3));
        assert_eq!(c.step_at(301), Some(4), "after the last printed step");
    }
}
