//! One name space for two runs: each run interned its names on its own, so a name's symbol
//! differs between them. Every name gets one id here; `--op-map A=B` makes the first run's
//! `A` the id of `B` (a kernel or operator renamed between the runs).

use crate::model::{Interner, Sym};
use rustc_hash::FxHashMap;

/// No name (an operator without recorded input shapes).
pub const NO_NAME: u32 = u32::MAX;

/// The two runs' symbols mapped to shared ids, and each id's text.
pub struct Names<'a> {
    /// The first run's symbol → id (after `--op-map`).
    pub before: Vec<u32>,
    /// The second run's symbol → id.
    pub after: Vec<u32>,
    /// Each id's text.
    pub text: Vec<&'a str>,
}

impl<'a> Names<'a> {
    /// Ids for every name of both runs; `map` renames the first run's names.
    pub fn new(before: &'a Interner, after: &'a Interner, map: &'a [(String, String)]) -> Self {
        let mut ids: FxHashMap<&'a str, u32> = FxHashMap::default();
        let mut text: Vec<&'a str> = Vec::new();
        let mut id_of = |s: &'a str| -> u32 {
            *ids.entry(s).or_insert_with(|| {
                text.push(s);
                (text.len() - 1) as u32
            })
        };
        let after_ids: Vec<u32> = after.iter().map(|(_, s)| id_of(s)).collect();
        let before_ids: Vec<u32> = before
            .iter()
            .map(|(_, s)| {
                let renamed = map
                    .iter()
                    .find(|(a, _)| a == s)
                    .map_or(s, |(_, b)| b.as_str());
                id_of(renamed)
            })
            .collect();
        Names {
            before: before_ids,
            after: after_ids,
            text,
        }
    }

    /// The text of an id.
    pub fn text(&self, id: u32) -> &'a str {
        self.text.get(id as usize).copied().unwrap_or("")
    }
}

/// The id of `sym` in `ids`, or [`NO_NAME`].
pub fn id(ids: &[u32], sym: Option<Sym>) -> u32 {
    sym.and_then(|s| ids.get(s as usize).copied())
        .unwrap_or(NO_NAME)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_text_is_one_id_and_the_map_renames_the_first_run() {
        let mut b = Interner::default();
        let mut a = Interner::default();
        let (b_mm, b_old) = (b.intern("aten::mm"), b.intern("Cijk_old"));
        let (a_new, a_mm) = (a.intern("sm90_xmma"), a.intern("aten::mm"));
        let map = vec![("Cijk_old".to_string(), "sm90_xmma".to_string())];
        let n = Names::new(&b, &a, &map);
        assert_eq!(n.before[b_mm as usize], n.after[a_mm as usize]);
        assert_eq!(n.before[b_old as usize], n.after[a_new as usize]);
        assert_eq!(n.text(n.after[a_new as usize]), "sm90_xmma");
        assert_eq!(id(&n.before, None), NO_NAME);
    }
}
