//! `watch --step-pattern REGEX`: the user's own description of a step line, for a format no
//! recogniser reads (or reads wrongly). Named groups say what the captures are: `step` (the
//! step number), `of` (the total), `time` (this step's duration, seconds unless its text
//! carries a unit), `time_ms`, `elapsed` / `elapsed_ms` (a cumulative timer: the step time is
//! its delta) and `rank`. When a pattern is given it alone makes step records.

use super::fields::duration;
use super::{Provenance, Said, Step};
use regex::Regex;

/// A compiled `--step-pattern`.
#[derive(Debug, Clone)]
pub struct StepPattern {
    re: Regex,
    /// The pattern as given (for `--explain`).
    pub text: String,
}

/// Group names the pattern may use, and what each means (for errors and `--explain`).
pub(crate) const GROUPS: &[(&str, &str)] = &[
    ("step", "the step number"),
    ("of", "the total number of steps"),
    (
        "time",
        "this step's time (s, or with a unit: 350ms, 2.1s, 900us)",
    ),
    ("time_ms", "this step's time in ms"),
    ("elapsed", "a cumulative timer in s (or with a unit)"),
    ("elapsed_ms", "a cumulative timer in ms"),
    ("rank", "the rank that printed the line"),
];

impl StepPattern {
    /// Compiles `text`; an error says what is wrong (bad syntax, an unknown group, or no
    /// `step`/`time`/`elapsed` group, which would make steps without number or time).
    pub fn new(text: &str) -> Result<StepPattern, String> {
        let re = Regex::new(text).map_err(|e| {
            // regex's message spans lines (the pattern, a caret, the cause): its last line.
            let msg = e.to_string();
            let last = msg.lines().last().unwrap_or_default().trim();
            last.trim_start_matches("error: ").to_string()
        })?;
        let names: Vec<&str> = re.capture_names().flatten().collect();
        if let Some(bad) = names.iter().find(|n| !GROUPS.iter().any(|g| g.0 == **n)) {
            let known: Vec<&str> = GROUPS.iter().map(|g| g.0).collect();
            return Err(format!(
                "unknown group `{bad}` (groups: {})",
                known.join(", ")
            ));
        }
        let reads = ["step", "time", "time_ms", "elapsed", "elapsed_ms"];
        if !names.iter().any(|n| reads.contains(n)) {
            return Err(
                "needs a named group `step`, `time` or `elapsed`, e.g. (?P<step>\\d+)".into(),
            );
        }
        Ok(StepPattern {
            re,
            text: text.to_string(),
        })
    }

    /// The step `text` describes, with the rank its `rank` group names; `None` when the
    /// pattern does not match or a group holds no number.
    pub fn read(&self, text: &str) -> Option<super::Ranked> {
        let c = self.re.captures(text)?;
        let group = |n: &str| c.name(n).map(|m| m.as_str());
        let step = match group("step") {
            Some(v) => Some(v.trim().parse().ok()?),
            None => None,
        };
        let time = timed(group("time"), group("time_ms"))?;
        let elapsed = timed(group("elapsed"), group("elapsed_ms"))?;
        if step.is_none() && time.is_none() && elapsed.is_none() {
            return None;
        }
        let provenance = if time.is_some() {
            Provenance::PerStep
        } else {
            Provenance::Cumulative
        };
        let mut s = Step::at(step, time, provenance, text);
        s.cumulative_ns = elapsed;
        s.of = group("of").and_then(|v| v.trim().parse().ok());
        let rank = match group("rank") {
            Some(v) => Some(v.trim().parse().ok()?),
            None => None,
        };
        Some((rank, Said::Step(s)))
    }
}

/// A duration from a group in seconds-or-unit (`s`) or milliseconds (`ms`): `Some(None)`
/// when neither group took part, `None` when one did and holds no duration.
fn timed(s: Option<&str>, ms: Option<&str>) -> Option<Option<crate::time::Ns>> {
    match (s, ms) {
        (Some(v), _) => with_unit(v).map(Some),
        (None, Some(v)) => duration(v, 6).map(Some),
        (None, None) => Some(None),
    }
}

/// `2.5`, `2.5s`, `350ms`, `900us`, `900µs`, `12ns`: a bare number is seconds.
fn with_unit(v: &str) -> Option<crate::time::Ns> {
    let v = v.trim();
    let digits = v.trim_end_matches(|c: char| c.is_alphabetic() || c == 'µ' || c == ' ');
    let scale = match v[digits.len()..].trim() {
        "" | "s" | "sec" | "secs" => 9,
        "ms" => 6,
        "us" | "µs" => 3,
        "ns" => 0,
        _ => return None,
    };
    duration(digits, scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(p: &StepPattern, text: &str) -> Option<(Option<u32>, Step)> {
        match p.read(text)? {
            (r, Said::Step(s)) => Some((r, s)),
            _ => None,
        }
    }

    #[test]
    fn groups_read_step_time_and_rank() {
        let p =
            StepPattern::new(r"^r(?P<rank>\d+) it (?P<step>\d+)/(?P<of>\d+) took (?P<time>\S+)")
                .unwrap();
        let (rank, s) = step(&p, "r3 it 41/900 took 350ms loss 2.1").unwrap();
        assert_eq!(rank, Some(3));
        assert_eq!(
            (s.step, s.of, s.time_ns),
            (Some(41), Some(900), Some(350_000_000))
        );
        assert_eq!(s.provenance, Provenance::PerStep);
        // A bare number is seconds, exactly.
        let (_, s) = step(&p, "r0 it 42/900 took 0.3505").unwrap();
        assert_eq!(s.time_ns, Some(350_500_000));
        // A capture that is not a duration is no step (not a step of time zero).
        assert!(step(&p, "r0 it 43/900 took fast").is_none());
        assert!(step(&p, "unrelated line").is_none());
    }

    #[test]
    fn elapsed_is_a_cumulative_timer() {
        let p = StepPattern::new(r"step (?P<step>\d+) elapsed_ms=(?P<elapsed_ms>[\d.]+)").unwrap();
        let (_, s) = step(&p, "step 7 elapsed_ms=1234.5").unwrap();
        assert_eq!((s.time_ns, s.cumulative_ns), (None, Some(1_234_500_000)));
        assert_eq!(s.provenance, Provenance::Cumulative);
    }

    #[test]
    fn bad_patterns_say_why() {
        assert!(StepPattern::new("(").unwrap_err().contains("unclosed"));
        assert!(
            StepPattern::new(r"(?P<steps>\d+)")
                .unwrap_err()
                .contains("unknown group `steps`")
        );
        assert!(
            StepPattern::new(r"(?P<rank>\d+)")
                .unwrap_err()
                .contains("needs a named group")
        );
    }
}
