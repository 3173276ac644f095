//! `/` fuzzy search over the job's interned operator names (skim's algorithm, smart case):
//! live results while typing, then `n`/`N` walk the accepted result list.

use crate::model::{Interner, Sym};
use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;

/// Results kept per query (the overlay shows the best of them).
pub const MAX_RESULTS: usize = 200;

/// The search state.
#[derive(Debug, Default, Clone)]
pub struct Search {
    /// The prompt is open and takes the keys.
    pub typing: bool,
    /// What was typed.
    pub query: String,
    /// Matches of the query, best first.
    pub results: Vec<Sym>,
    /// The highlighted result (prompt open) or the current one (`n`/`N`).
    pub cursor: usize,
}

/// Names matching `query`, best score first (ties: shorter, then alphabetical); all names
/// (in order) for an empty query.
pub fn matches(names: &[Sym], strings: &Interner, query: &str) -> Vec<Sym> {
    if query.is_empty() {
        return names.iter().take(MAX_RESULTS).copied().collect();
    }
    let m = SkimMatcherV2::default().smart_case();
    let mut scored: Vec<(i64, &str, Sym)> = names
        .iter()
        .filter_map(|&s| {
            let text = strings.resolve(s);
            m.fuzzy_match(text, query).map(|score| (score, text, s))
        })
        .collect();
    scored.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then(a.1.len().cmp(&b.1.len()))
            .then(a.1.cmp(b.1))
    });
    scored.truncate(MAX_RESULTS);
    scored.into_iter().map(|x| x.2).collect()
}

impl Search {
    /// Opens the prompt with an empty query.
    pub fn open(&mut self, names: &[Sym], strings: &Interner) {
        self.typing = true;
        self.query.clear();
        self.refresh(names, strings);
    }

    /// Recomputes the results after the query changed.
    pub fn refresh(&mut self, names: &[Sym], strings: &Interner) {
        self.results = matches(names, strings, &self.query);
        self.cursor = 0;
    }

    /// The highlighted result.
    pub fn current(&self) -> Option<Sym> {
        self.results.get(self.cursor).copied()
    }

    /// Moves to the next (`+1`) or previous (`-1`) result, wrapping.
    pub fn step(&mut self, by: isize) -> Option<Sym> {
        let n = self.results.len() as isize;
        if n == 0 {
            return None;
        }
        self.cursor = (self.cursor as isize + by).rem_euclid(n) as usize;
        self.current()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_match_first_and_wrapping_steps() {
        let mut strings = Interner::default();
        let names: Vec<Sym> = ["aten::mm", "aten::addmm", "ncclAllReduce", "aten::matmul"]
            .iter()
            .map(|s| strings.intern(s))
            .collect();
        let got = matches(&names, &strings, "mm");
        assert_eq!(strings.resolve(got[0]), "aten::mm");
        assert!(!got.contains(&names[2]));
        assert!(matches(&names, &strings, "zzz").is_empty());
        let mut s = Search {
            results: got.clone(),
            ..Search::default()
        };
        assert_eq!(s.step(-1), got.last().copied());
        assert_eq!(s.step(1), Some(got[0]));
    }
}
