//! Health of each communication group, by the dimension of the layout it runs along
//! (docs/metrics.md, "Group health"): its members' waiting, the communication they could
//! not hide, the arrival skew of its instances and the member that arrived last most often.
//! What tells a sick tensor-parallel group from a sick data-parallel one at a glance.

use super::{Dim, Layout};
use crate::analysis::comm::Comm;
use crate::model::{RankId, StepNo};
use crate::time::Ns;
use serde::Serialize;
use std::collections::BTreeMap;

/// One group's health over the steps in scope.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupHealth {
    /// Group name.
    pub group: String,
    /// The layout dimension its members run along (`None`: the world, or no axis matches).
    pub dim: Option<Dim>,
    /// Its members (loaded or not).
    pub ranks: Vec<RankId>,
    /// Its matched instances (point-to-point included).
    pub instances: u64,
    /// Σ over its collectives and members of the wait for the last arrival.
    pub wait_ns: Ns,
    /// Σ over its collectives and members of communication not hidden behind compute.
    pub exposed_ns: Ns,
    /// Mean arrival skew per instance (last arrival − first).
    pub skew_ns: Ns,
    /// The member that arrived last most often, with how often (ties: the lowest rank).
    pub slowest: Option<(RankId, u64)>,
}

/// Each group of `comm` with at least two members that communicated, the busiest (most
/// wait + exposed) first.
pub fn group_health(
    comm: &Comm,
    layout: Option<&Layout>,
    step: Option<StepNo>,
) -> Vec<GroupHealth> {
    let mut sums: BTreeMap<&str, (Ns, Ns)> = BTreeMap::new();
    for t in &comm.types {
        let e = sums.entry(t.group.as_str()).or_default();
        *e = (e.0 + t.wait_ns, e.1 + t.exposed_ns);
    }
    let n = comm.calls.groups.len();
    let (mut instances, mut skew) = (vec![0u64; n], vec![0 as Ns; n]);
    let mut last: Vec<BTreeMap<RankId, u64>> = vec![BTreeMap::new(); n];
    for (inst, t) in comm.instances() {
        let g = inst.group as usize;
        if g >= n || step.is_some_and(|s| inst.step != Some(s)) {
            continue;
        }
        instances[g] += 1;
        skew[g] = skew[g].saturating_add(t.timing.skew_ns);
        if t.timing.skew_ns > 0 {
            *last[g].entry(t.timing.last_arriver).or_default() += 1;
        }
    }
    let mut out: Vec<GroupHealth> = comm
        .calls
        .groups
        .iter()
        .enumerate()
        .filter(|(_, g)| g.members.len() >= 2)
        .map(|(k, g)| {
            let (wait_ns, exposed_ns) = sums.get(g.name.as_str()).copied().unwrap_or_default();
            GroupHealth {
                group: g.name.clone(),
                dim: layout.and_then(|l| dim_of(l, &g.members)),
                ranks: g.members.clone(),
                instances: instances[k],
                wait_ns,
                exposed_ns,
                skew_ns: skew[k] / (instances[k].max(1) as Ns),
                slowest: last[k]
                    .iter()
                    .max_by_key(|(r, c)| (**c, std::cmp::Reverse(**r)))
                    .map(|(r, c)| (*r, *c)),
            }
        })
        .filter(|h| h.instances > 0 || h.wait_ns > 0 || h.exposed_ns > 0)
        .collect();
    out.sort_by_key(|h| (std::cmp::Reverse(h.wait_ns + h.exposed_ns), h.group.clone()));
    out
}

/// The axis whose lines the members make up: evenly spaced by its stride, as many as its
/// size, differing in its coordinate alone.
pub fn dim_of(l: &Layout, members: &[RankId]) -> Option<Dim> {
    let (size, stride) = super::run(members)?;
    let axis = l
        .axes
        .iter()
        .find(|a| a.size == size && a.stride == stride)?;
    let first = members.iter().min()?;
    let same_elsewhere = members.iter().all(|&r| {
        l.axes
            .iter()
            .filter(|a| a.dim != axis.dim)
            .all(|a| l.coord(r, a.dim) == l.coord(*first, a.dim))
    });
    same_elsewhere.then_some(axis.dim)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::layout::{Axis, Source};

    fn layout() -> Layout {
        // TP 2 × DP 2 × PP 2 on 8 ranks: tp stride 1, dp stride 2, pp stride 4.
        let axis = |dim, size, stride| Axis {
            dim,
            size,
            stride,
            source: Source::DeclaredSize,
        };
        Layout {
            world: 8,
            axes: vec![
                axis(Dim::Pp, 2, 4),
                axis(Dim::Dp, 2, 2),
                axis(Dim::Tp, 2, 1),
            ],
            tiles: true,
        }
    }

    fn ranks(v: &[u32]) -> Vec<RankId> {
        v.iter().copied().map(RankId).collect()
    }

    #[test]
    fn a_group_runs_along_the_axis_its_members_differ_in() {
        let l = layout();
        assert_eq!(dim_of(&l, &ranks(&[0, 1])), Some(Dim::Tp));
        assert_eq!(dim_of(&l, &ranks(&[5, 7])), Some(Dim::Dp));
        assert_eq!(dim_of(&l, &ranks(&[3, 7])), Some(Dim::Pp));
        // {1, 2}: stride 1 like tp, but 1 and 2 are in different dp replicas.
        assert_eq!(dim_of(&l, &ranks(&[1, 2])), None);
        // The world, and a model-parallel group (tp × pp), are no one axis.
        assert_eq!(dim_of(&l, &ranks(&[0, 1, 2, 3, 4, 5, 6, 7])), None);
        assert_eq!(dim_of(&l, &ranks(&[0, 1, 4, 5])), None);
    }
}
