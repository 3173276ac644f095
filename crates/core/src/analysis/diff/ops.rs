//! Operators and kernels of two runs lined up (docs/metrics.md, "Diff"). Per rank both runs
//! have and per aligned step, the top-level operator sequences are matched by a longest
//! common subsequence over (name, input shapes); what is left, by name; what is still left
//! appeared or went away. Kernels are totalled by name; a kernel name only one run has is
//! paired, through the matched operators it ran under, with the other run's kernel in its
//! place (a renamed kernel: `Cijk_*` vs `sm90_xmma_gemm`), unless `--op-map` already did.

use super::names::Names;
use super::parts::Delta;
use super::sequence::{Kernel, Sequence, Top};
use super::steps::StepPair;
use crate::model::{Rank, StepNo};
use crate::time::Ns;
use rustc_hash::FxHashMap;
use serde::Serialize;
use similar::{Algorithm, DiffOp, capture_diff_slices_deadline};
use std::time::{Duration, Instant};

/// A sequence pair that takes longer than this to match exactly is matched approximately
/// (similar's deadline, per pair: the match stays valid, maybe not the longest). Only
/// adversarial sequences — hundreds of thousands of distinct operators per step — get near
/// it, so on real jobs the result never depends on the machine's speed.
const MATCH_DEADLINE: Duration = Duration::from_secs(2);

/// How a row's instances were lined up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Matched {
    /// By name and input shapes (or by name where neither run recorded shapes).
    Shapes,
    /// By name alone (the shapes changed, or the shape match left them over).
    Name,
    /// A kernel paired through the operators it ran under (renamed between the runs).
    Parent,
    /// Renamed by `--op-map`.
    Map,
    /// Only in the first run.
    OnlyBefore,
    /// Only in the second run.
    OnlyAfter,
    /// Some instances matched, some appeared or went away.
    Partly,
}

/// One operator or kernel name over the compared ranks and steps.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpRow {
    /// Its name in the first run (the second's when only it has the name).
    pub name: String,
    /// Its name in the second run, when that differs.
    pub renamed_to: Option<String>,
    /// How its instances were lined up.
    pub matched: Matched,
    /// Instances in the first run.
    pub count_before: u64,
    /// Instances in the second run.
    pub count_after: u64,
    /// Σ time (device time; host time on CPU-only runs).
    pub total: Delta,
}

impl OpRow {
    /// True when its time or its number of calls changed between the runs.
    pub fn changed(&self) -> bool {
        self.total.delta_ns() != 0 || self.count_before != self.count_after
    }

    /// The mean time of one instance in the first and the second run (`None`: no instance).
    pub fn means(&self) -> [Option<Ns>; 2] {
        let mean = |t: Ns, n: u64| (n > 0).then(|| t / n as Ns);
        [
            mean(self.total.before_ns, self.count_before),
            mean(self.total.after_ns, self.count_after),
        ]
    }
}

/// Matched operator sequences' counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct MatchCounts {
    /// Pairs matched by name and shapes.
    pub by_shapes: u64,
    /// Pairs matched by name alone.
    pub by_name: u64,
    /// First-run operators left unmatched.
    pub only_before: u64,
    /// Second-run operators left unmatched.
    pub only_after: u64,
}

/// The operator and kernel rows, the largest |change| first.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct OpDiff {
    /// Top-level operators.
    pub operators: Vec<OpRow>,
    /// Kernels, copies and sets (empty on CPU-only runs).
    pub kernels: Vec<OpRow>,
    /// How the operator sequences lined up.
    pub matched: MatchCounts,
}

/// A row's accumulator: (first-run name, second-run name) → counts and times.
#[derive(Debug, Clone, Copy, Default)]
struct Acc {
    count: [u64; 2],
    time: [i64; 2],
    shapes: u64,
    name: u64,
    parent: bool,
}

type Rows = FxHashMap<(u32, u32), Acc>;

/// Kernel name → (calls, Σ time).
type Totals = FxHashMap<u32, (u64, i64)>;

/// What one rank contributes.
#[derive(Default)]
struct RankOps {
    rows: Rows,
    counts: MatchCounts,
    /// Matched (first, second) top positions.
    matched: Vec<(u32, u32)>,
    kernels: [Totals; 2],
}

/// One rank's pairs, already sequenced: (first run, second run).
pub struct RankPair<'a> {
    /// The rank in each run.
    pub ranks: (&'a Rank, &'a Rank),
    /// Their sequences.
    pub seqs: (&'a Sequence, &'a Sequence),
}

/// The operator diff over `ranks` and `pairs`.
pub fn op_diff(
    names: &Names,
    ranks: &[RankPair],
    pairs: &[StepPair],
    mapped: &[(String, String)],
) -> OpDiff {
    use rayon::prelude::*;
    let per_rank: Vec<RankOps> = ranks.par_iter().map(|rp| rank_ops(rp, pairs)).collect();
    let mut rows = Rows::default();
    let mut counts = MatchCounts::default();
    let mut kernels: [Totals; 2] = Default::default();
    for RankOps {
        rows: r,
        counts: c,
        kernels: k,
        ..
    } in &per_rank
    {
        for (key, a) in r {
            merge(rows.entry(*key).or_default(), a);
        }
        counts.by_shapes += c.by_shapes;
        counts.by_name += c.by_name;
        counts.only_before += c.only_before;
        counts.only_after += c.only_after;
        for side in 0..2 {
            for (n, (c, t)) in &k[side] {
                let e = kernels[side].entry(*n).or_default();
                e.0 += c;
                e.1 += t;
            }
        }
    }
    let renames = renames(ranks, &per_rank, &kernels);
    OpDiff {
        operators: finish(names, rows, mapped),
        kernels: kernel_rows(names, &kernels, &renames, mapped),
        matched: counts,
    }
}

fn merge(into: &mut Acc, a: &Acc) {
    for s in 0..2 {
        into.count[s] += a.count[s];
        into.time[s] += a.time[s];
    }
    into.shapes += a.shapes;
    into.name += a.name;
    into.parent |= a.parent;
}

/// One rank: its operator rows, match counts, matched top pairs and kernel totals.
fn rank_ops(rp: &RankPair, pairs: &[StepPair]) -> RankOps {
    let mut out = RankOps::default();
    let (b, a) = (&rp.seqs.0.tops, &rp.seqs.1.tops);
    for p in pairs {
        let (Some(kb), Some(ka)) = (step_ix(rp.ranks.0, p.before), step_ix(rp.ranks.1, p.after))
        else {
            continue;
        };
        out.match_step(b, a, &in_step(b, kb), &in_step(a, ka));
        for (side, (seq, k)) in [(rp.seqs.0, kb), (rp.seqs.1, ka)].into_iter().enumerate() {
            for kern in seq.kernels.iter().filter(|x| x.step == k) {
                let e = out.kernels[side].entry(kern.name).or_default();
                e.0 += 1;
                e.1 += kern.dur;
            }
        }
    }
    out
}

impl RankOps {
    /// Lines up one step's top-level operators (positions `tb` of `b`, `ta` of `a`): by
    /// (name, shapes), what is left by name, the rest appeared or went away.
    fn match_step(&mut self, b: &[Top], a: &[Top], tb: &[u32], ta: &[u32]) {
        let full = |t: &Top| (t.name, t.dims);
        let by_shape = lcs(tb, ta, |k| full(&b[k as usize]), |k| full(&a[k as usize]));
        let (rest_b, rest_a) = leftovers(tb, ta, &by_shape);
        let name = |t: &[Top], k: u32| t[k as usize].name;
        let by_name = lcs(&rest_b, &rest_a, |k| name(b, k), |k| name(a, k));
        let (left_b, left_a) = leftovers(&rest_b, &rest_a, &by_name);
        for (matches, shapes) in [(&by_shape, true), (&by_name, false)] {
            for &(x, y) in matches {
                let (x, y) = (&b[x as usize], &a[y as usize]);
                let acc = self.rows.entry((x.name, y.name)).or_default();
                add(acc, 0, x.time);
                add(acc, 1, y.time);
                if shapes {
                    acc.shapes += 1;
                } else {
                    acc.name += 1;
                }
            }
        }
        self.matched.extend(by_shape.iter().chain(&by_name));
        for (side, tops, left) in [(0, b, &left_b), (1, a, &left_a)] {
            for &k in left {
                let t = &tops[k as usize];
                add(self.rows.entry((t.name, t.name)).or_default(), side, t.time);
            }
        }
        self.counts.by_shapes += by_shape.len() as u64;
        self.counts.by_name += by_name.len() as u64;
        self.counts.only_before += left_b.len() as u64;
        self.counts.only_after += left_a.len() as u64;
    }
}

fn add(acc: &mut Acc, side: usize, t: i64) {
    acc.count[side] += 1;
    acc.time[side] += t;
}

/// The index of step number `n` in the rank's steps.
fn step_ix(rank: &Rank, n: StepNo) -> Option<u32> {
    rank.steps
        .iter()
        .position(|s| s.number == n)
        .map(|k| k as u32)
}

/// Positions of the tops in step `k`.
fn in_step(tops: &[Top], k: u32) -> Vec<u32> {
    (0..tops.len() as u32)
        .filter(|&i| tops[i as usize].step == k)
        .collect()
}

/// The matched (first, second) positions of a longest common subsequence of the keys.
fn lcs<K: Eq + std::hash::Hash + Ord>(
    b: &[u32],
    a: &[u32],
    kb: impl Fn(u32) -> K,
    ka: impl Fn(u32) -> K,
) -> Vec<(u32, u32)> {
    let deadline = Instant::now() + MATCH_DEADLINE;
    let (xs, ys): (Vec<K>, Vec<K>) = (
        b.iter().map(|&i| kb(i)).collect(),
        a.iter().map(|&i| ka(i)).collect(),
    );
    let mut out = Vec::new();
    for op in capture_diff_slices_deadline(Algorithm::Myers, &xs, &ys, Some(deadline)) {
        if let DiffOp::Equal {
            old_index,
            new_index,
            len,
        } = op
        {
            out.extend((0..len).map(|d| (b[old_index + d], a[new_index + d])));
        }
    }
    out
}

/// The positions the matches leave, in each sequence.
fn leftovers(b: &[u32], a: &[u32], m: &[(u32, u32)]) -> (Vec<u32>, Vec<u32>) {
    let mut used_b: Vec<u32> = m.iter().map(|p| p.0).collect();
    let mut used_a: Vec<u32> = m.iter().map(|p| p.1).collect();
    used_b.sort_unstable();
    used_a.sort_unstable();
    (
        b.iter()
            .copied()
            .filter(|x| used_b.binary_search(x).is_err())
            .collect(),
        a.iter()
            .copied()
            .filter(|x| used_a.binary_search(x).is_err())
            .collect(),
    )
}

/// Kernel names only one run has, paired through the operator pairs they ran under: under
/// each matched pair, each side's such kernels of one kind (GEMMs; the rest) ranked by their
/// longest call and paired in that order — a GEMM with a GEMM, not with the cast autocast
/// adds beside it —, one vote per pair; each first-run name goes with the second-run name it
/// most often stands in for.
fn renames(ranks: &[RankPair], per_rank: &[RankOps], kernels: &[Totals; 2]) -> FxHashMap<u32, u32> {
    let only = |s: usize| -> Vec<u32> {
        let mut v: Vec<u32> = kernels[s]
            .keys()
            .copied()
            .filter(|n| !kernels[1 - s].contains_key(n))
            .collect();
        v.sort_unstable();
        v
    };
    let (only_b, only_a) = (only(0), only(1));
    let mut votes: FxHashMap<(u32, u32), u64> = FxHashMap::default();
    if only_b.is_empty() || only_a.is_empty() {
        return FxHashMap::default();
    }
    for (rp, RankOps { matched, .. }) in ranks.iter().zip(per_rank) {
        let (ub, ua) = (under(rp.seqs.0, &only_b), under(rp.seqs.1, &only_a));
        for (x, y) in matched {
            if let (Some(kb), Some(ka)) = (ub.get(x), ua.get(y)) {
                for gemm in [true, false] {
                    for (n, m) in ranked_names(kb, gemm).zip(ranked_names(ka, gemm)) {
                        *votes.entry((n, m)).or_default() += 1;
                    }
                }
            }
        }
    }
    let mut ranked: Vec<((u32, u32), u64)> = votes.into_iter().collect();
    ranked.sort_by_key(|&((n, m), v)| (std::cmp::Reverse(v), n, m));
    let mut out: FxHashMap<u32, u32> = FxHashMap::default();
    let mut taken: Vec<u32> = Vec::new();
    for ((n, m), _) in ranked {
        if !out.contains_key(&n) && !taken.contains(&m) {
            out.insert(n, m);
            taken.push(m);
        }
    }
    out
}

/// Per top-level operator (its position), its kernels of the `only` names.
fn under<'a>(seq: &'a Sequence, only: &[u32]) -> FxHashMap<u32, Vec<&'a Kernel>> {
    let mut m: FxHashMap<u32, Vec<&Kernel>> = FxHashMap::default();
    for k in &seq.kernels {
        if let (Some(t), true) = (k.top, only.binary_search(&k.name).is_ok()) {
            m.entry(t).or_default().push(k);
        }
    }
    m
}

/// The distinct names of the `calls` of one kind, by their longest call, longest first (ties
/// by name).
fn ranked_names(calls: &[&Kernel], gemm: bool) -> impl Iterator<Item = u32> {
    let mut longest: Vec<(u32, i64)> = Vec::new();
    for (n, d) in calls
        .iter()
        .filter(|k| k.gemm == gemm)
        .map(|k| (k.name, k.dur))
    {
        match longest.iter_mut().find(|(x, _)| *x == n) {
            Some(e) => e.1 = e.1.max(d),
            None => longest.push((n, d)),
        }
    }
    longest.sort_by_key(|&(n, d)| (std::cmp::Reverse(d), n));
    longest.into_iter().map(|(n, _)| n)
}

/// Kernel rows from each run's totals by name and the renames.
fn kernel_rows(
    names: &Names,
    k: &[Totals; 2],
    renames: &FxHashMap<u32, u32>,
    mapped: &[(String, String)],
) -> Vec<OpRow> {
    let mut rows = Rows::default();
    for (&n, &(c, t)) in &k[0] {
        let m = renames.get(&n).copied().unwrap_or(n);
        let acc = rows.entry((n, m)).or_default();
        acc.count[0] = c;
        acc.time[0] = t;
        if let Some(&(c2, t2)) = k[1].get(&m) {
            acc.count[1] = c2;
            acc.time[1] = t2;
            // Kernels are totalled by name, not lined up one by one.
            acc.name = c.max(c2);
            acc.parent = m != n;
        }
    }
    let renamed: Vec<u32> = renames.values().copied().collect();
    for (&m, &(c, t)) in &k[1] {
        if !k[0].contains_key(&m) && !renamed.contains(&m) {
            let acc = rows.entry((m, m)).or_default();
            acc.count[1] = c;
            acc.time[1] = t;
        }
    }
    finish(names, rows, mapped)
}

/// Rows from accumulators, the largest |change| first (ties by name).
fn finish(names: &Names, rows: Rows, mapped: &[(String, String)]) -> Vec<OpRow> {
    let mut out: Vec<OpRow> = rows
        .into_iter()
        .map(|((n, m), a)| {
            let name = original(names.text(n), mapped);
            let matched = match a.count {
                [0, _] => Matched::OnlyAfter,
                [_, 0] => Matched::OnlyBefore,
                _ if name != names.text(n) => Matched::Map,
                _ if a.parent => Matched::Parent,
                [b, c] if a.shapes + a.name < b.max(c) => Matched::Partly,
                _ if a.name > 0 => Matched::Name,
                _ => Matched::Shapes,
            };
            OpRow {
                renamed_to: (name != names.text(m)).then(|| names.text(m).to_string()),
                name,
                matched,
                count_before: a.count[0],
                count_after: a.count[1],
                total: Delta {
                    before_ns: a.time[0],
                    after_ns: a.time[1],
                },
            }
        })
        .collect();
    out.sort_by(|x, y| {
        y.total
            .delta_ns()
            .unsigned_abs()
            .cmp(&x.total.delta_ns().unsigned_abs())
            .then_with(|| x.name.cmp(&y.name))
    });
    out
}

/// The first run's name of `text`: the `--op-map` source when `text` is a map's target.
fn original(text: &str, mapped: &[(String, String)]) -> String {
    mapped
        .iter()
        .find(|(_, to)| to == text)
        .map_or(text, |(from, _)| from.as_str())
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any two sequences: the matches are strictly increasing in both (a common
        /// subsequence), only equal keys match, and matched plus left over is each length.
        #[test]
        fn matches_are_a_common_subsequence(
            b in proptest::collection::vec(0u8..6, 0..60),
            a in proptest::collection::vec(0u8..6, 0..60),
        ) {
            let ib: Vec<u32> = (0..b.len() as u32).collect();
            let ia: Vec<u32> = (0..a.len() as u32).collect();
            let m = lcs(&ib, &ia, |k| b[k as usize], |k| a[k as usize]);
            for w in m.windows(2) {
                prop_assert!(w[0].0 < w[1].0 && w[0].1 < w[1].1);
            }
            for &(x, y) in &m {
                prop_assert_eq!(b[x as usize], a[y as usize]);
            }
            let (lb, la) = leftovers(&ib, &ia, &m);
            prop_assert_eq!(lb.len() + m.len(), b.len());
            prop_assert_eq!(la.len() + m.len(), a.len());
            // No key left over on both sides between two neighbouring matches could extend
            // it: an LCS is maximal (checked against the quadratic table on short input).
            let mut t = vec![vec![0usize; a.len() + 1]; b.len() + 1];
            for i in (0..b.len()).rev() {
                for j in (0..a.len()).rev() {
                    t[i][j] = if b[i] == a[j] { t[i + 1][j + 1] + 1 } else { t[i + 1][j].max(t[i][j + 1]) };
                }
            }
            prop_assert_eq!(m.len(), t[0][0]);
        }
    }

    #[test]
    fn rows_say_how_their_calls_lined_up() {
        use crate::model::Interner;
        let (mut b, mut a) = (Interner::default(), Interner::default());
        let (bx, ba) = (b.intern("x"), b.intern("old"));
        let (ax, an) = (a.intern("x"), a.intern("new"));
        let map = vec![("old".to_string(), "new".to_string())];
        let names = Names::new(&b, &a, &map);
        let id = |v: &[u32], s: u32| v[s as usize];
        let acc = |count: [u64; 2], shapes, name| Acc {
            count,
            time: [10, 7],
            shapes,
            name,
            parent: false,
        };
        let mut rows = Rows::default();
        rows.insert(
            (id(&names.before, ba), id(&names.after, an)),
            acc([2, 2], 2, 0),
        );
        rows.insert(
            (id(&names.before, bx), id(&names.after, ax)),
            acc([2, 3], 2, 0),
        );
        let out = finish(&names, rows, &map);
        let row = |n: &str| out.iter().find(|r| r.name == n).unwrap();
        assert_eq!(
            (row("old").matched, row("old").renamed_to.as_deref()),
            (Matched::Map, Some("new"))
        );
        assert_eq!(
            (row("x").matched, row("x").total.delta_ns()),
            (Matched::Partly, -3)
        );
    }
}
