//! Steps from a repeating kernel sequence, for traces without step markers (an Nsight export
//! of a loop with no NVTX `ProfilerStep#N`). The step is the longest regular period of the
//! rank's device work: a kernel name that runs a few times at a regular spacing (in kernels)
//! proposes the period, and the period holds when the sequence repeats with it almost
//! everywhere. A period that repeats inside a step (a transformer layer) breaks at every
//! step's boundary, and the rarest regular kernel proposes the step's. A step starts at the kernel that the longest device idle precedes, on
//! average over the periods: what separates one iteration from the next (the host's loading
//! and launching). Said in a note; the bounds are host times (the boundary kernel's launch).

use crate::model::{HostStep, Kind, Rank, StepNo, Sym};
use crate::time::Ns;
use rustc_hash::FxHashMap;

/// The share of positions at which the sequence must equal itself one period later.
const HOLDS: f64 = 0.9;
/// Fewest repetitions that make a period (with fewer, nothing tells a step from chance).
const MIN_REPEATS: usize = 3;

/// A period found: where its first repetition starts, its length (kernels), how many whole
/// repetitions follow, and the kernel name that proposed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Period {
    /// Index (in the kernel sequence) of the first step's first kernel.
    pub first: usize,
    /// Kernels per step.
    pub len: usize,
    /// Whole steps.
    pub repeats: usize,
    /// The name whose regular runs proposed it.
    pub anchor: Sym,
}

/// The share of `i` in `from..to` with `s[i] == s[i + p]`.
fn holds(s: &[Sym], p: usize, from: usize) -> f64 {
    let to = s.len().saturating_sub(p);
    if to <= from {
        return 0.0;
    }
    let same = (from..to).filter(|&i| s[i] == s[i + p]).count();
    same as f64 / (to - from) as f64
}

/// The step period of a kernel-name sequence, when one holds.
pub(super) fn period(s: &[Sym]) -> Option<Period> {
    let mut at: FxHashMap<Sym, Vec<usize>> = FxHashMap::default();
    for (i, &n) in s.iter().enumerate() {
        at.entry(n).or_default().push(i);
    }
    // Anchors by rarity (fewest runs first: the longest period), then by first position.
    let mut anchors: Vec<(&Sym, &Vec<usize>)> =
        at.iter().filter(|(_, v)| v.len() >= MIN_REPEATS).collect();
    anchors.sort_by_key(|(n, v)| (v.len(), v[0], **n));
    for (&name, occ) in anchors {
        let gaps: Vec<usize> = occ.windows(2).map(|w| w[1] - w[0]).collect();
        let (lo, hi) = (*gaps.iter().min()?, *gaps.iter().max()?);
        // Regular: every spacing within 10% of the others.
        if lo == 0 || hi * 10 > lo * 11 {
            continue;
        }
        let p = gaps[gaps.len() / 2];
        if holds(s, p, occ[0]) < HOLDS {
            continue;
        }
        let repeats = (s.len() - occ[0]) / p;
        if repeats < MIN_REPEATS {
            continue;
        }
        return Some(Period {
            first: occ[0],
            len: p,
            repeats,
            anchor: name,
        });
    }
    None
}

/// Host steps of `rank` from its device work's period (none when no period holds): steps
/// numbered from 0, each from its boundary kernel's launch (or start) to the next one's,
/// the last to its last kernel's end. Returns the period too, for the note.
pub(super) fn steps(rank: &Rank) -> Option<(Vec<HostStep>, Period)> {
    let ev = &rank.events;
    let mut kernels: Vec<usize> = (0..ev.len())
        .filter(|&i| matches!(ev.kind[i], Kind::Compute | Kind::Comm))
        .collect();
    kernels.sort_by_key(|&i| (ev.start[i], i));
    let names: Vec<Sym> = kernels.iter().map(|&i| ev.name[i]).collect();
    let p = period(&names)?;
    // The boundary: the offset in the period with the longest idle before it, on average.
    let idle = |k: usize| -> Ns {
        let (a, b) = (kernels[k - 1], kernels[k]);
        (ev.start[b] - ev.end(a)).max(0)
    };
    let offset = (0..p.len)
        .max_by_key(|&o| {
            let total: Ns = (0..p.repeats)
                .map(|r| p.first + r * p.len + o)
                .filter(|&k| k > 0 && k < kernels.len())
                .map(idle)
                .fold(0, Ns::saturating_add);
            (total, std::cmp::Reverse(o))
        })
        .unwrap_or(0);
    let first = p.first + offset;
    let whole = (kernels.len() - first) / p.len;
    let at = |k: usize| {
        let i = kernels[k];
        match ev.link[i].get() {
            Some(l) => ev.start[l],
            None => ev.start[i],
        }
    };
    let mut out = Vec::with_capacity(whole);
    for r in 0..whole {
        let k = first + r * p.len;
        let end = if r + 1 < whole {
            at(k + p.len)
        } else {
            let last = kernels[k + p.len - 1];
            ev.end(last)
        };
        out.push(HostStep {
            number: StepNo(r as u32),
            start: at(k),
            end: end.max(at(k)),
            synthetic: false,
        });
    }
    (out.len() >= MIN_REPEATS).then_some((out, p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seq(text: &str) -> Vec<Sym> {
        text.bytes().map(|b| b as Sym).collect()
    }

    #[test]
    fn the_step_is_the_longest_regular_period_not_a_layer() {
        // Warm-up "x", then 4 steps of: embed "e", three layers "abc", loss "l", optimizer "o".
        let s = seq("xeabcabcabcloeabcabcabcloeabcabcabcloeabcabcabclo");
        let p = period(&s).unwrap();
        assert_eq!((p.first, p.len, p.repeats), (1, 12, 4));
        // A layer repeats too, but breaks at every step: not the period.
        assert!(holds(&s, 3, 1) < HOLDS);
    }

    #[test]
    fn no_period_without_three_regular_repeats() {
        assert_eq!(period(&seq("abcdefg")), None);
        assert_eq!(period(&seq("abab")), None);
        // Irregular: "o" after 3, then 9 kernels.
        assert_eq!(period(&seq("abcoabcdefghoabo")), None);
    }

    #[test]
    fn a_kernel_every_second_step_makes_the_period_two_steps() {
        // "z" replaces "d" every second step: the sequence repeats every 8 kernels, not 4.
        let s = seq("abczabcdabczabcdabczabcdabczabcd");
        let p = period(&s).unwrap();
        assert_eq!((p.first, p.len, p.repeats), (3, 8, 3));
    }
}
