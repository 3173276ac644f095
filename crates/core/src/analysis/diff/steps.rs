//! Which step of one run is compared with which step of the other (docs/metrics.md, "Diff"):
//! by number when the runs share step numbers, else by order (a rerun profiled steps 40–45
//! against steps 10–15), or the pairs the user names (`--steps 12:40`).

use crate::analysis::step_times::StepTime;
use crate::model::StepNo;
use crate::time::Ns;
use serde::Serialize;

/// How steps are lined up.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum StepAlign {
    /// By number when any number is in both runs, else by order.
    #[default]
    Auto,
    /// The same step number in both runs.
    Number,
    /// The k-th profiled step of one run with the k-th of the other.
    Order,
    /// These (before, after) pairs.
    Pairs(Vec<(StepNo, StepNo)>),
}

impl StepAlign {
    /// Parses `--steps`: `number`, `order`, or pairs `B:A[,B:A...]`.
    pub fn parse(s: &str) -> Result<StepAlign, String> {
        match s {
            "auto" => return Ok(StepAlign::Auto),
            "number" => return Ok(StepAlign::Number),
            "order" => return Ok(StepAlign::Order),
            _ => {}
        }
        let pair = |p: &str| -> Option<(StepNo, StepNo)> {
            let (b, a) = p.trim().split_once(':')?;
            Some((
                StepNo(b.trim().parse().ok()?),
                StepNo(a.trim().parse().ok()?),
            ))
        };
        s.split(',')
            .map(|p| pair(p).ok_or_else(|| format!("`{p}` is not BEFORE:AFTER (e.g. 12:40)")))
            .collect::<Result<Vec<_>, _>>()
            .map(StepAlign::Pairs)
    }
}

/// One aligned pair of steps and their cluster step times (max over ranks, DESIGN §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StepPair {
    /// The step of the first run.
    pub before: StepNo,
    /// The step of the second run.
    pub after: StepNo,
    /// Its cluster step time in the first run.
    pub before_ns: Ns,
    /// Its cluster step time in the second run.
    pub after_ns: Ns,
}

impl StepPair {
    /// After − before.
    pub fn delta_ns(&self) -> Ns {
        self.after_ns - self.before_ns
    }
}

/// The aligned pairs, and how: `Err` names a step the user paired that a run lacks, or says
/// that nothing lines up.
pub fn align(
    how: &StepAlign,
    before: &[StepTime],
    after: &[StepTime],
) -> Result<(&'static str, Vec<StepPair>), String> {
    let find = |ts: &[StepTime], n: StepNo| ts.iter().find(|t| t.step == n).map(|t| t.max_ns);
    let by_number = || -> Vec<(StepNo, StepNo)> {
        before
            .iter()
            .filter(|b| after.iter().any(|a| a.step == b.step))
            .map(|b| (b.step, b.step))
            .collect()
    };
    let by_order = || -> Vec<(StepNo, StepNo)> {
        before
            .iter()
            .zip(after)
            .map(|(b, a)| (b.step, a.step))
            .collect()
    };
    let (how, pairs) = match how {
        StepAlign::Number => ("number", by_number()),
        StepAlign::Order => ("order", by_order()),
        StepAlign::Auto => match by_number() {
            p if p.is_empty() => ("order", by_order()),
            p => ("number", p),
        },
        StepAlign::Pairs(p) => ("pairs", p.clone()),
    };
    let mut out = Vec::with_capacity(pairs.len());
    for (b, a) in pairs {
        let before_ns = find(before, b).ok_or_else(|| missing("first", b, before))?;
        let after_ns = find(after, a).ok_or_else(|| missing("second", a, after))?;
        out.push(StepPair {
            before: b,
            after: a,
            before_ns,
            after_ns,
        });
    }
    if out.is_empty() {
        return Err("no step lines up (pair them with --steps BEFORE:AFTER)".to_string());
    }
    Ok((how, out))
}

fn missing(which: &str, n: StepNo, have: &[StepTime]) -> String {
    let ids: Vec<String> = have.iter().map(|t| t.step.to_string()).collect();
    format!(
        "the {which} run has no step {n} (steps: {})",
        ids.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(step: u32, max: Ns) -> StepTime {
        StepTime {
            step: StepNo(step),
            max_ns: max,
            ..Default::default()
        }
    }

    #[test]
    fn shared_numbers_pair_by_number_and_disjoint_ones_by_order() {
        let b = [t(1, 10), t(2, 20), t(3, 30)];
        let (how, p) = align(&StepAlign::Auto, &b, &[t(2, 25), t(3, 27)]).unwrap();
        assert_eq!(how, "number");
        assert_eq!(
            p.iter().map(StepPair::delta_ns).collect::<Vec<_>>(),
            [5, -3]
        );
        let (how, p) = align(&StepAlign::Auto, &b, &[t(40, 11), t(41, 19)]).unwrap();
        assert_eq!(how, "order");
        assert_eq!((p[1].before, p[1].after), (StepNo(2), StepNo(41)));
    }

    #[test]
    fn named_pairs_must_exist_and_parse() {
        let b = [t(12, 10)];
        let a = [t(40, 12)];
        let p = StepAlign::parse("12:40").unwrap();
        assert_eq!(align(&p, &b, &a).unwrap().1[0].delta_ns(), 2);
        let e = align(&StepAlign::parse("12:41").unwrap(), &b, &a).unwrap_err();
        assert!(e.contains("no step 41 (steps: 40)"), "{e}");
        assert!(StepAlign::parse("12-40").is_err());
        assert!(align(&StepAlign::Number, &b, &a).is_err());
    }
}
