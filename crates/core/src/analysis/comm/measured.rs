//! Arrivals measured by the collective library (docs/metrics.md, "Measured peer waits"):
//! HCCL records, inside each op, how long every plane waited for its peer's signal
//! (`Notify_Wait`). The first wait for a peer in a call is the wait for that peer to arrive,
//! so a call's waits date the arrival of every other rank of the communicator — also of the
//! ranks that were not loaded, whom the arrival skew of the loaded ranks cannot see.

use crate::model::{Rank, RankId};
use crate::time::Ns;

/// The latest arrival a call measured of a rank outside the loaded members.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outside {
    /// The late rank (global id).
    pub rank: RankId,
    /// When it arrived: the waiting member's aligned start plus its wait.
    pub at: Ns,
}

/// Per communicator peer, from the call's start to the end of the first wait for it inside
/// `[start, end)` (the rank's clock): how long the call waited for that peer to arrive. In
/// peer order.
pub fn first_waits(rank: &Rank, start: Ns, end: Ns) -> Vec<(u32, Ns)> {
    let ev = &rank.events;
    let at = |w: &crate::model::PeerWait| ev.start[w.event.0 as usize];
    let from = rank.peer_waits.partition_point(|w| at(w) < start);
    let mut first: Vec<(u32, Ns)> = Vec::new();
    for w in rank.peer_waits[from..].iter().take_while(|w| at(w) < end) {
        if !first.iter().any(|f| f.0 == w.peer) {
            first.push((w.peer, ev.end(w.event.0 as usize) - start));
        }
    }
    first.sort_unstable();
    first
}

/// The latest outside arrival one member's call measured. `group` is the communicator's
/// global ranks in rank order (communicator rank p is `group[p]`); the waits are used only
/// when they name every other rank of it, so that a wait inside a smaller communicator is
/// never read as one of the group's. `loaded` tells the ranks whose own start is known.
pub fn outside_arrival(
    waits: &[(u32, Ns)],
    aligned_start: Ns,
    group: &[RankId],
    loaded: impl Fn(RankId) -> bool,
) -> Option<Outside> {
    if waits.len() + 1 != group.len() {
        return None;
    }
    waits
        .iter()
        .filter_map(|&(p, w)| {
            let rank = *group.get(p as usize)?;
            (!loaded(rank)).then_some(Outside {
                rank,
                at: aligned_start + w,
            })
        })
        // Latest; among equal arrivals the lowest rank.
        .max_by_key(|o| (o.at, std::cmp::Reverse(o.rank)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranks(n: u32) -> Vec<RankId> {
        (0..n).map(RankId).collect()
    }

    #[test]
    fn the_latest_unloaded_peer_is_the_outside_arrival() {
        // Rank 0 of 4 (ranks 0 and 1 loaded) waited 5 for rank 1, 80 for rank 2, 20 for 3.
        let waits = [(1, 5), (2, 80), (3, 20)];
        let loaded = |r: RankId| r.0 < 2;
        let o = outside_arrival(&waits, 1000, &ranks(4), loaded).expect("rank 2 was late");
        assert_eq!((o.rank, o.at), (RankId(2), 1080));
        // Ties: the lowest rank.
        let o = outside_arrival(&[(1, 5), (2, 80), (3, 80)], 0, &ranks(4), loaded).unwrap();
        assert_eq!(o.rank, RankId(2));
        // A loaded peer is timed by its own start, not by the wait.
        assert_eq!(outside_arrival(&[(1, 90)], 0, &ranks(2), loaded), None);
    }

    #[test]
    fn waits_that_do_not_name_the_whole_communicator_are_not_used() {
        // Two peers of a four-rank group: a ring's neighbours, or a smaller communicator.
        assert_eq!(
            outside_arrival(&[(1, 5), (3, 9)], 0, &ranks(4), |_| false),
            None
        );
        // Communicator ranks map to the group's global ranks: group {4, 6}, peer 1 = rank 6.
        let g = [RankId(4), RankId(6)];
        let o = outside_arrival(&[(1, 7)], 10, &g, |r| r == RankId(4)).unwrap();
        assert_eq!((o.rank, o.at), (RankId(6), 17));
    }
}
