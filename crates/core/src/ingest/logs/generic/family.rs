//! A template family (docs/metrics.md "Unknown formats", "Template families"): a run that
//! changes its own step line — a field appended for the rest of the run (an ETA), one
//! dropped, a number written wider — keeps its steps. A line of a template not yet learned
//! joins the primary's family at once when it is similar to it (the share of its tokens in
//! common, Drain's test) and holds a slot of the same name for each of the slots the primary
//! reads (step, total, epoch, time, rate): it is read through them, by name. A template
//! learned on its own joins when it succeeds the family (its lines begin after the family's
//! last, its step continues the family's) and is as similar: the format changed in a way the
//! names did not show.

use super::{Learned, Slot, Template, Templates};

/// Tokens in common, over the longer template's, for a template to join a family.
pub(super) const SIMILARITY: f64 = 0.5;

/// What `--explain` says of one template of a family.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// What it reads.
    pub learned: Learned,
    /// Its step records.
    pub records: u64,
    /// The source lines it was seen on, first and last.
    pub lines: (u64, u64),
    /// How it joined: `None` for the primary, else adopted at once or learned and succeeding.
    pub joined: Option<Joined>,
}

/// How a template joined its family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Joined {
    /// Read through the primary's slots by name from its first line.
    Adopted,
    /// Learned on its own, its lines after the family's, its step continuing theirs.
    Succeeded,
}

/// What a slot is called: its name, else `#` and its unit (`# ms`).
pub(super) fn slot_id(s: &Slot) -> String {
    match (s.name.to_ascii_lowercase(), s.unit) {
        (n, u) if n.is_empty() => format!("# {u}"),
        (n, _) => n,
    }
}

/// The share of tokens `a` and `b` have in common, in order (their longest common
/// subsequence over the longer one's length).
pub(super) fn similarity(a: &str, b: &str) -> f64 {
    let (x, y): (Vec<&str>, Vec<&str>) = (a.split(' ').collect(), b.split(' ').collect());
    let longer = x.len().max(y.len());
    if longer == 0 {
        return 1.0;
    }
    // One row of the LCS table at a time: templates are a few dozen tokens.
    let mut prev = vec![0usize; y.len() + 1];
    for tx in &x {
        let mut row = vec![0usize; y.len() + 1];
        for (j, ty) in y.iter().enumerate() {
            row[j + 1] = if tx == ty {
                prev[j] + 1
            } else {
                row[j].max(prev[j + 1])
            };
        }
        prev = row;
    }
    prev[y.len()] as f64 / longer as f64
}

/// Words that make a line another phase's, not the training step's.
const OTHER_PHASES: &[&str] = &["eval", "evaluation", "valid", "validation", "val", "test"];

/// Whether template `b` may be of template `a`'s family: similar ([`SIMILARITY`]), the same
/// first word (Drain's tree never joins templates whose first tokens differ: `TRAIN [#]…`,
/// `VALIDATION [#]…`), and no word of another phase that `a` lacks.
pub(super) fn kin(a: &str, b: &str) -> bool {
    let words = |t: &str| -> Vec<String> {
        t.split(|c: char| !c.is_alphabetic())
            .filter(|w| !w.is_empty())
            .map(str::to_ascii_lowercase)
            .collect()
    };
    let (wa, wb) = (words(a), words(b));
    let other = wb
        .iter()
        .any(|w| OTHER_PHASES.contains(&w.as_str()) && !wa.contains(w));
    wa.first() == wb.first() && !other && similarity(a, b) >= SIMILARITY
}

/// `learned`'s reading moved onto a template of slots `ids` (by name, and among slots of one
/// name by their order); `None` when one of the slots it reads has no namesake there.
fn moved(learned: &Learned, key: &str, ids: &[String]) -> Option<Learned> {
    let at = |i: usize| -> Option<usize> {
        let id = learned.ids.get(i)?;
        let nth = learned.ids[..i].iter().filter(|x| *x == id).count();
        ids.iter()
            .enumerate()
            .filter(|(_, x)| *x == id)
            .nth(nth)
            .map(|(k, _)| k)
    };
    let mut l = learned.clone();
    l.template = key.chars().take(120).collect();
    l.ids = ids.to_vec();
    l.step.0 = at(learned.step.0)?;
    l.of = match learned.of {
        Some(i) => Some(at(i)?),
        None => None,
    };
    if let Some(e) = &mut l.epoch {
        e.0 = at(e.0)?;
    }
    if let Some(t) = &mut l.time {
        t.0 = at(t.0)?;
    }
    if let Some(r) = &mut l.rate {
        r.0 = at(r.0)?;
    }
    Some(l)
}

impl Templates {
    /// The primary's reading moved onto template `key` of slots `slots`, when `key` may
    /// join its family at once (similar, every slot it reads present by name).
    pub(super) fn adopt(&self, key: &str, slots: &[Slot]) -> Option<Learned> {
        let root = self.primary()?;
        // The whole templates: `Learned::template` is cut for `--explain`.
        if !kin(self.primary.as_deref()?, key) {
            return None;
        }
        let ids: Vec<String> = slots.iter().map(slot_id).collect();
        moved(root, key, &ids)
    }

    /// Whether template `key` (reading `t`), just learned on its own from lines starting at
    /// `first_line` whose first step was `first_step`, succeeds the primary's family.
    pub(super) fn succeeds(
        &self,
        key: &str,
        t: &Learned,
        first_line: u64,
        first_step: u64,
    ) -> bool {
        let (Some(root), Some(root_key)) = (self.primary(), self.primary.as_deref()) else {
            return false;
        };
        let last_line = self.members().map(|(_, m)| m.lines.1).max().unwrap_or(0);
        root.step.1 == t.step.1
            && root.time.is_some() == t.time.is_some()
            && last_line < first_line
            && self.last_step.is_some_and(|s| first_step > s)
            && kin(root_key, key)
    }

    /// The primary and the templates of its family.
    fn members(&self) -> impl Iterator<Item = (&String, &Template)> {
        self.by
            .iter()
            .filter(|(k, t)| t.family || self.primary.as_ref() == Some(*k))
    }

    /// The primary's family, in the order its templates were first seen.
    pub fn family(&self) -> Vec<Member> {
        let mut out: Vec<Member> = self
            .members()
            .filter_map(|(_, t)| {
                Some(Member {
                    learned: t.learned.clone()?,
                    records: t.records,
                    lines: t.lines,
                    joined: t.joined,
                })
            })
            .collect();
        out.sort_by_key(|m| m.lines.0);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::similarity;

    #[test]
    fn similarity_is_the_share_of_tokens_in_order() {
        let a = "step # | loss # | dt #ms";
        // Three tokens appended to eight: 8 of 11 in common.
        let b = "step # | loss # | dt #ms | eta #m";
        assert!((similarity(a, b) - 8.0 / 11.0).abs() < 1e-9);
        assert!((similarity(a, a) - 1.0).abs() < 1e-9);
        // An evaluation line shares `step #` and one `|` with it: 3 of 8.
        assert!(similarity(a, "eval step # | acc #%").abs() < super::SIMILARITY);
    }

    #[test]
    fn kin_needs_the_first_word_and_no_other_phase() {
        use super::kin;
        let train = "TRAIN [#][#/#] Time # (#) Tok/s # (#)";
        assert!(kin(train, "TRAIN [#][#/#] Time # (#) Tok/s # (#) eta #m"));
        assert!(!kin(train, "VALIDATION [#][#/#] Time # (#) Tok/s # (#)"));
        let step = "step # | loss # | dt #ms";
        assert!(!kin(step, "step # | loss # | dt #ms | val loss #"));
        assert!(kin(step, "step # | loss # | dt #ms | eta #m"));
    }
}
