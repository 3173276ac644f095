//! The order of a series' steps from its counters (docs/metrics.md "Live (watch)", "Step
//! order"). A step counter that goes back while the counter it restarts within advances — an
//! epoch printed beside it (`epoch 3 batch 40`, `[3][40/500]`), or, with no epoch printed,
//! the same total printed again as the counter returns to its start (`iteration I/N` per
//! epoch, a tqdm bar per epoch) — is a nested counter: its steps continue the series in
//! (epoch, step) order, the first step of an epoch one stride after the last of the epoch
//! before, so that records are never merged across epochs. A counter that goes back
//! otherwise is a restart (the series starts again, `Live::number`). One that jumps forward
//! by more than [`GAP_STRIDES`] strides is the same run with a gap (a run resumed from a
//! later checkpoint, lines lost), and said so.

/// A forward jump of more than this many strides is a gap in the run.
pub const GAP_STRIDES: u64 = 100;

/// One series' counter.
#[derive(Debug, Default, Clone)]
pub struct Counter {
    last: Option<Seen>,
    /// Added to the printed counter: where the current epoch's steps start in the series.
    offset: u64,
    /// The smallest step between two records of one epoch (the print interval).
    stride: u64,
    /// The first counter value of the series: where a nested counter restarts.
    start: u64,
}

/// The last record of a counter.
#[derive(Debug, Clone, Copy)]
struct Seen {
    printed: u64,
    epoch: Option<u64>,
    of: Option<u64>,
    step: u64,
}

/// A record's place in its series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ordered {
    /// Its step number in the series.
    pub step: u64,
    /// It jumped past a gap (more than [`GAP_STRIDES`] strides after the step before).
    pub gap: bool,
    /// It is the first of a later epoch, its counter restarted.
    pub epoch: bool,
}

impl Counter {
    /// The place of a record printing counter value `printed`, within `epoch`, of `of`.
    pub fn order(&mut self, printed: u64, epoch: Option<u64>, of: Option<u64>) -> Ordered {
        let Some(last) = self.last else {
            return self.restart(printed, epoch, of);
        };
        let stride = self.stride.max(1);
        if printed < last.printed {
            let epoch_on = matches!((epoch, last.epoch), (Some(e), Some(l)) if e > l);
            // The same total again, the last record within a stride of it, this one within a
            // stride of the start: an epoch ended and the next began (a run restarted part
            // way, `iteration 3/2000` then `1/2000`, is a restart).
            let same_total = epoch.is_none()
                && last.epoch.is_none()
                && of.is_some_and(|n| last.printed.saturating_add(stride) >= n)
                && of == last.of
                && printed <= self.start.saturating_add(stride);
            if !(epoch_on || same_total) {
                return self.restart(printed, epoch, of);
            }
            let step = last.step.saturating_add(stride);
            self.offset = step - printed;
            self.see(printed, epoch, of, step);
            return Ordered {
                step,
                gap: false,
                epoch: true,
            };
        }
        let delta = printed - last.printed;
        let step = self.offset.saturating_add(printed);
        let gap = self.stride > 0 && delta > self.stride.saturating_mul(GAP_STRIDES);
        if delta > 0 && !gap && epoch == last.epoch {
            self.stride = if self.stride == 0 {
                delta
            } else {
                self.stride.min(delta)
            };
        }
        self.see(printed, epoch, of, step);
        Ordered {
            step,
            gap,
            epoch: false,
        }
    }

    /// A series (again) from this record.
    fn restart(&mut self, printed: u64, epoch: Option<u64>, of: Option<u64>) -> Ordered {
        *self = Counter {
            start: printed,
            ..Counter::default()
        };
        self.see(printed, epoch, of, printed);
        Ordered {
            step: printed,
            gap: false,
            epoch: false,
        }
    }

    fn see(&mut self, printed: u64, epoch: Option<u64>, of: Option<u64>, step: u64) {
        self.last = Some(Seen {
            printed,
            epoch,
            of,
            step,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(records: &[(u64, Option<u64>, Option<u64>)]) -> Vec<(u64, bool)> {
        let mut c = Counter::default();
        records
            .iter()
            .map(|&(p, e, of)| {
                let o = c.order(p, e, of);
                (o.step, o.gap)
            })
            .collect()
    }

    #[test]
    fn a_batch_counter_restarting_each_epoch_continues_the_series() {
        // Batches 0, 10, 20 in epochs 0, 1, 2: the first of epoch 1 is one stride (10) after
        // the last of epoch 0 (20), so 30, 40, 50, then 60, 70, 80.
        let mut r = Vec::new();
        for e in 0..3 {
            for b in [0, 10, 20] {
                r.push((b, Some(e), None));
            }
        }
        let got: Vec<u64> = steps(&r).iter().map(|x| x.0).collect();
        assert_eq!(got, [0, 10, 20, 30, 40, 50, 60, 70, 80]);
    }

    #[test]
    fn the_same_total_again_from_the_start_is_the_next_epoch_and_anything_else_a_restart() {
        // `iteration 1/3 … 3/3`, then `1/3` again: epoch two, steps 4, 5, 6.
        let of = Some(3);
        let r = [
            (1, None, of),
            (2, None, of),
            (3, None, of),
            (1, None, of),
            (2, None, of),
        ];
        let got: Vec<u64> = steps(&r).iter().map(|x| x.0).collect();
        assert_eq!(got, [1, 2, 3, 4, 5]);
        // Printed every 10 of 3416: 3410 is within a stride of the end, so `0/3416` starts
        // epoch two at 3420. Back to 1 from 3 of 2000: a run restarted, not an epoch.
        let r = [
            (3400, None, Some(3416)),
            (3410, None, Some(3416)),
            (0, None, Some(3416)),
        ];
        assert_eq!(steps(&r)[2], (3420, false));
        let r = [
            (1, None, Some(2000)),
            (3, None, Some(2000)),
            (1, None, Some(2000)),
        ];
        assert_eq!(steps(&r)[2], (1, false));
        // Back to 2 of a total never printed, or to a start far from the first: a restart
        // (the printed number, which goes back).
        assert_eq!(
            steps(&[(5, None, None), (6, None, None), (2, None, None)])[2],
            (2, false)
        );
        let r: Vec<_> = [1, 2, 3, 4, 5, 3].iter().map(|&p| (p, None, of)).collect();
        assert_eq!(steps(&r)[5], (3, false));
        // An epoch that goes back with its counter is a restart too.
        let r = [(4, Some(2), None), (8, Some(2), None), (0, Some(1), None)];
        assert_eq!(steps(&r)[2], (0, false));
    }

    #[test]
    fn a_jump_past_a_hundred_strides_is_a_gap_in_the_same_run() {
        // Every 10 steps to 30, then 5000 (497 strides on): a gap, numbered as printed.
        let r = [
            (10, None, None),
            (20, None, None),
            (30, None, None),
            (5000, None, None),
        ];
        assert_eq!(steps(&r)[3], (5000, true));
        // 1000 is 98 strides on: no gap.
        let r = [(10, None, None), (20, None, None), (1000, None, None)];
        assert_eq!(steps(&r)[2], (1000, false));
        // A repeat keeps its step.
        assert_eq!(steps(&[(7, None, None), (7, None, None)])[1], (7, false));
    }
}
