//! Periodic slow episodes (docs/metrics.md "Live (watch)"): a series can hold several
//! patterns at once — a stall every 10 steps and a data-shard blip every ~190 — and real
//! periods jitter (a blip at 1250, 2450, 3700: a shard boundary in samples, logged every 50
//! steps), so an episode joins a period when its gap matches within a tolerance — and when
//! its size matches: three unrelated episodes at near-equal gaps are no pattern.

use crate::time::Ns;
use std::collections::VecDeque;

/// Episode starts kept to look for a new period among.
pub(super) const EPISODES_KEPT: usize = 32;
/// Periods a series keeps (the oldest goes first).
pub(super) const PERIODS_KEPT: usize = 8;

/// What an episode is to the series' periods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Episode {
    /// One more episode of a period already told.
    Known,
    /// The third at one spacing: a new periodic pattern with this period.
    New(u64),
    /// Neither.
    Other,
}

/// The episode starts and periods of one series.
#[derive(Debug, Default)]
pub(super) struct Periods {
    /// (start, the episode's slowest step time).
    starts: VecDeque<(u64, Ns)>,
    /// (period, the start of its last episode).
    known: Vec<(u64, u64)>,
}

/// Whether two episodes are alike: their slowest times within a factor of two.
fn alike(a: Ns, b: Ns) -> bool {
    a.max(b) / 2 <= a.min(b)
}

/// Whether gaps `a` and `b` are the same period: within a tenth of it, or within the steps
/// one record covers (records every N steps place an episode to N steps).
fn same(a: u64, b: u64, spacing: u64) -> bool {
    a.abs_diff(b) <= (a.max(b) / 10).max(spacing.saturating_sub(1))
}

/// Missed episodes a known period bridges: an episode 2 or 3 periods after the last one
/// seen (one absorbed into another pattern's, or under the limit) still belongs to it.
const BRIDGED: u64 = 3;

impl Periods {
    /// Records an episode starting at step `start` whose slowest step took `max_ns`, its
    /// records covering `spacing` steps each.
    pub(super) fn observe(&mut self, start: u64, max_ns: Ns, spacing: u64) -> Episode {
        // The known period it lands on most exactly (an episode on both an every-10 stall and
        // an every-190 blip is the stall's; the blip's next episode bridges the gap).
        let best = self
            .known
            .iter_mut()
            .filter(|(_, last)| start > *last)
            .filter_map(|k| Some((miss(start - k.1, k.0, spacing)?, k)))
            .min_by_key(|(m, _)| *m);
        if let Some((_, k)) = best {
            k.1 = start;
            return Episode::Known;
        }
        let found = self.find(start, max_ns, spacing);
        self.starts.push_back((start, max_ns));
        if self.starts.len() > EPISODES_KEPT {
            self.starts.pop_front();
        }
        let Some(period) = found else {
            return Episode::Other;
        };
        self.known.push((period, start));
        if self.known.len() > PERIODS_KEPT {
            self.known.remove(0);
        }
        Episode::New(period)
    }

    /// A period that two earlier episodes and `start` form (`e1`, `e2`, `start` at equal
    /// gaps > 1, all alike, and no episode alike them between: among 32 scattered episodes
    /// some triple is always near-equally spaced).
    fn find(&self, start: u64, max_ns: Ns, spacing: u64) -> Option<u64> {
        let s = &self.starts;
        let alike_ones: Vec<(u64, Ns)> = s.iter().copied().filter(|e| alike(e.1, max_ns)).collect();
        let [.., (e1, _), (e2, _)] = alike_ones[..] else {
            return None;
        };
        let g2 = start.checked_sub(e2)?;
        // The period is the mean of the two gaps (jittered blips every 180–200 steps are
        // "every 190", not the last gap), rounded.
        (g2 > 1 && g2 > spacing && same(e2 - e1, g2, spacing)).then(|| (start - e1).div_ceil(2))
    }
}

/// How far `gap` is from `k` periods, for the `k` of 1 to [`BRIDGED`] it is nearest, when
/// within the tolerance of [`same`]; `None` when it is on no multiple.
fn miss(gap: u64, period: u64, spacing: u64) -> Option<u64> {
    (1..=BRIDGED)
        .map(|k| period.saturating_mul(k))
        .filter(|&kp| same(gap, kp, spacing))
        .map(|kp| gap.abs_diff(kp))
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(starts: &[u64], spacing: u64) -> Vec<Episode> {
        let mut p = Periods::default();
        starts.iter().map(|&s| p.observe(s, 100, spacing)).collect()
    }

    #[test]
    fn a_period_among_other_episodes_and_with_jitter() {
        use Episode::*;
        // Every 128 steps (2, 129, 257, 385: 14 s each) among unrelated ~1 s episodes (298,
        // 323, 352, 469); 298 − 129 ≈ 469 − 298, but those differ in size: no period 171.
        let mut p = Periods::default();
        let v: Vec<Episode> = [(2, 14), (129, 14), (257, 14), (298, 1), (323, 1), (352, 1)]
            .into_iter()
            .chain([(385, 14), (469, 1), (513, 14)])
            .map(|(s, secs)| p.observe(s, secs * 1_000_000_000, 1))
            .collect();
        assert_eq!(
            v,
            [
                Other,
                Other,
                New(128),
                Other,
                Other,
                Other,
                Known,
                Other,
                Known
            ]
        );
        // Every ~1225 steps, placed to the 50 steps a record covers.
        assert_eq!(
            run(&[1250, 2450, 3700, 4900, 6150], 50),
            [Other, Other, New(1225), Known, Known]
        );
        // Two patterns at once: every 10 and every 190.
        assert_eq!(
            run(&[10, 20, 30, 40, 1000, 1190, 1380, 1570], 1),
            [Other, Other, New(10), Known, Other, Other, New(190), Known]
        );
        // Adjacent steps are a burst, never a period of 1.
        assert_eq!(run(&[5, 6, 7], 1), [Other, Other, Other]);
    }
}
