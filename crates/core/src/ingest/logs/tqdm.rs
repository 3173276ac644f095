//! tqdm progress bars (HF Trainer, Lightning, plain loops): `Training:  70%|███████   |
//! 700/1000 [00:10<00:04, 70.00it/s]`, redrawn with `\r` (each redraw a line; the same step
//! again counts once). The rate is tqdm's smoothed one, so its step time is a running
//! average — read only when nothing better exists.

use super::fields::number;
use super::{Provenance, Said, Step};

/// One bar.
pub(super) fn bar(text: &str) -> Option<Said> {
    let open = text.rfind(" [")?;
    let head = &text[..open];
    let (n, of) = head.rsplit(['|', ' ']).next()?.split_once('/')?;
    let (n, of): (u64, u64) = (n.trim().parse().ok()?, of.trim().parse().ok()?);
    if !head.contains('|') || n > of {
        return None;
    }
    let tail = text[open + 2..].strip_suffix(']')?;
    let rate = tail.rsplit(", ").next()?;
    let per_step_s = if let Some(r) = rate.strip_suffix("it/s") {
        number(r).filter(|&x| x > 0.0).map(|x| 1.0 / x)
    } else {
        rate.strip_suffix("s/it").and_then(number)
    };
    let time = per_step_s
        .filter(|s| s.is_finite() && *s < 1e6)
        .map(|s| (s * 1e9).round() as i64);
    let mut s = Step::at(Some(n), time, Provenance::RunningAverage, "");
    s.of = Some(of);
    Some(Said::Step(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(line: &str) -> Option<Step> {
        match bar(line) {
            Some(Said::Step(s)) => Some(s),
            _ => None,
        }
    }

    #[test]
    fn bars_with_it_per_s_and_s_per_it() {
        let s = step("Training:  70%|███████   | 700/1000 [00:10<00:04, 70.00it/s]").unwrap();
        assert_eq!(
            (s.step, s.of, s.time_ns),
            (Some(700), Some(1000), Some(14_285_714))
        );
        assert_eq!(s.provenance, Provenance::RunningAverage);
        let s = step(" 12%|█▏        | 12/100 [01:30<11:00,  7.50s/it]").unwrap();
        assert_eq!(s.time_ns, Some(7_500_000_000));
        // The first redraw has no rate yet.
        let s = step("  0%|          | 0/100 [00:00<?, ?it/s]").unwrap();
        assert_eq!((s.step, s.time_ns), (Some(0), None));
        assert!(step("see [1] for 3/4 of it").is_none());
    }
}
