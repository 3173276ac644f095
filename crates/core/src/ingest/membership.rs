//! Process groups a job's ranks know only in part: an Nsight export's NCCL payloads tell each
//! process its place in each communicator (local rank and size), not the other members. With
//! every rank's global id resolved, each communicator's members are the ranks that joined it,
//! ordered by their place in it — a group like the ones Kineto traces declare whole.

use super::RankDraft;
use crate::model::{ProcessGroup, RankId};
use std::collections::BTreeMap;

/// A rank's place in a group whose members it does not list.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Membership {
    /// The group's name as the rank's collectives name it (`nccl:5eed0000`).
    pub group: String,
    /// The rank's place in the group, from 0.
    pub local: u32,
    /// The group's size.
    pub size: u32,
}

/// Declares on each rank the groups whose every member loaded, from the ranks' memberships;
/// returns a note for each group that stays unknown (members missing or placed twice): its
/// calls are then matched in the world group.
pub(crate) fn declare(drafts: &mut [(RankDraft, Option<RankId>)]) -> Vec<String> {
    // Per group: its size, and (place, rank) of each member.
    type Places = (u32, Vec<(u32, RankId)>);
    let mut places: BTreeMap<&str, Places> = BTreeMap::new();
    for (d, _) in drafts.iter() {
        for m in &d.memberships {
            let e = places.entry(&m.group).or_insert((m.size, Vec::new()));
            e.0 = e.0.max(m.size);
            e.1.push((m.local, d.rank.id));
        }
    }
    let mut groups = Vec::new();
    let mut notes = Vec::new();
    for (name, (size, mut members)) in places {
        members.sort_unstable();
        let whole = members.len() == size as usize
            && members
                .iter()
                .enumerate()
                .all(|(i, &(l, _))| l as usize == i);
        if whole {
            groups.push(ProcessGroup {
                name: name.to_string(),
                description: "NCCL communicator".into(),
                ranks: members.into_iter().map(|(_, r)| r).collect(),
            });
        } else {
            notes.push(format!(
                "communicator {name}: {} of its {size} members placed once each in the loaded \
                 ranks; its calls are matched in the world group",
                members.len()
            ));
        }
    }
    for (d, _) in drafts.iter_mut() {
        let mine: Vec<ProcessGroup> = groups
            .iter()
            .filter(|g| d.memberships.iter().any(|m| m.group == g.name))
            .cloned()
            .collect();
        d.groups.extend(mine);
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Interner, Rank};

    fn draft(id: u32, places: &[(&str, u32, u32)]) -> (RankDraft, Option<RankId>) {
        let mut d = RankDraft::undeclared(Rank::default(), Interner::default(), Vec::new());
        d.rank.id = RankId(id);
        d.memberships = places
            .iter()
            .map(|&(g, local, size)| Membership {
                group: g.into(),
                local,
                size,
            })
            .collect();
        (d, None)
    }

    #[test]
    fn members_in_their_place_order() {
        // Pipeline pairs (0,2) and (1,3) with rank 2 first in its pair, and the world.
        let mut v = vec![
            draft(0, &[("w", 0, 4), ("a", 1, 2)]),
            draft(1, &[("w", 1, 4), ("b", 0, 2)]),
            draft(2, &[("w", 2, 4), ("a", 0, 2)]),
            draft(3, &[("w", 3, 4)]),
        ];
        let notes = declare(&mut v);
        let ranks = |d: &RankDraft, g: &str| -> Option<Vec<u32>> {
            let g = d.groups.iter().find(|x| x.name == g)?;
            Some(g.ranks.iter().map(|r| r.0).collect())
        };
        assert_eq!(ranks(&v[0].0, "a"), Some(vec![2, 0]));
        assert_eq!(ranks(&v[3].0, "w"), Some(vec![0, 1, 2, 3]));
        // `b` lost its second member: no group, said.
        assert_eq!(ranks(&v[1].0, "b"), None);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("communicator b: 1 of its 2"), "{notes:?}");
    }
}
