//! One-line timer breakdowns (`reference/logs.md` §3.2, §5): DeepSpeed's wall-clock
//! breakdown (`time (ms) | fwd: 714.77 | bwd: 2347.57 | bwd_allreduce: 1181.73 | step: 164.55`)
//! and Megatron's pre-2022 timers line (`time (ms) | forward-compute: 58.16 | …`). Each
//! named time is a phase of the step; negative or unreadable values (DeepSpeed prints some)
//! are left out, never read as a time.

use super::fields::{duration, pairs};
use super::{Phase, Said};

/// `… time (ms) | name: ms | …` → the phases it names, exactly (ms text to ns).
pub(super) fn breakdown(text: &str) -> Option<Said> {
    let i = text.find("time (ms) |")?;
    let phases: Vec<Phase> = pairs(&text[i + "time (ms)".len()..], '|')
        .filter_map(|(k, v)| {
            Some(Phase {
                name: k.to_string(),
                ns: duration(v, 6)?,
            })
        })
        .collect();
    (!phases.is_empty()).then_some(Said::Phases { phases })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deepspeed_and_legacy_megatron_breakdowns() {
        let Some(Said::Phases { phases }) = breakdown(
            "[2025-11-10 09:43:46,438] [INFO] [logging.py:107:log_dist] [Rank 0] time (ms) | fwd: 714.77 | bwd: 2347.57 | bwd_inner: 1165.11 | bwd_allreduce: 1181.73 | step: 164.55",
        ) else {
            panic!()
        };
        let got: Vec<(&str, i64)> = phases.iter().map(|p| (p.name.as_str(), p.ns)).collect();
        assert_eq!(
            got,
            [
                ("fwd", 714_770_000),
                ("bwd", 2_347_570_000),
                ("bwd_inner", 1_165_110_000),
                ("bwd_allreduce", 1_181_730_000),
                ("step", 164_550_000)
            ]
        );
        let Some(Said::Phases { phases }) = breakdown(
            "time (ms) | forward-compute: 58.16 | backward-compute: -3.0 | optimizer: 57.50",
        ) else {
            panic!()
        };
        assert_eq!(phases.len(), 2, "the negative time is left out");
        assert!(breakdown("time (ms) | nothing here").is_none());
    }
}
