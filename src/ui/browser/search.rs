//! `/` fuzzy search over the job's interned operator names (skim's algorithm, smart case):
//! live results while typing, then `n`/`N` walk the accepted result list.

use super::Browser;
use crate::model::{EventIx, Interner, Job, RankIx, StepNo, Sym};
use crate::time::Ns;
use crate::ui::UiMsg;
use crate::ui::shell::Ctx;
use crate::ui::shell::keymap::Key;
use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;
use ratatui::crossterm::event::{KeyCode, KeyModifiers};

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

/// The positions (char indices) of `name` the query matched, for highlighting.
pub fn matched(name: &str, query: &str) -> Vec<usize> {
    if query.is_empty() {
        return Vec::new();
    }
    SkimMatcherV2::default()
        .smart_case()
        .fuzzy_indices(name, query)
        .map_or_else(Vec::new, |(_, ix)| ix)
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

/// The keys of the search prompt (it takes every key while open).
pub fn key(b: &mut Browser, (code, mods): Key, ctx: &mut Ctx<UiMsg>) {
    let data = b.data.clone();
    let strings = &data.loaded.job.strings;
    let names = &b.shared.names;
    match code {
        KeyCode::Esc => b.search.typing = false,
        KeyCode::Enter => {
            b.search.typing = false;
            match b.search.current() {
                Some(s) => b.select_op(s, ctx),
                None => ctx.status = Some(format!("no operator matches `{}`", b.search.query)),
            }
        }
        KeyCode::Backspace => {
            b.search.query.pop();
            b.search.refresh(names, strings);
        }
        KeyCode::Up => {
            b.search.cursor = b.search.cursor.saturating_sub(1);
        }
        KeyCode::Down => {
            b.search.cursor = (b.search.cursor + 1).min(b.search.results.len().saturating_sub(1));
        }
        KeyCode::Char(c) if !mods.contains(KeyModifiers::CONTROL) => {
            b.search.query.push(c);
            b.search.refresh(names, strings);
        }
        KeyCode::Char('c') => b.search.typing = false,
        _ => {}
    }
}

/// Where operator `s` ran longest: in `step` when it ran there, else in the step of its
/// longest occurrence — its rank, step and event. A search lands there when the view shown
/// does not draw it (a host operator on the cluster timeline, which draws device work).
pub fn longest_run(job: &Job, s: Sym, step: Option<StepNo>) -> Option<(RankIx, StepNo, EventIx)> {
    let mut here: Option<(Ns, RankIx, StepNo, EventIx)> = None;
    let mut any: Option<(Ns, RankIx, StepNo, EventIx)> = None;
    for (r, rank) in job.ranks.iter().enumerate() {
        let ev = &rank.events;
        for i in (0..ev.len()).filter(|&i| ev.name[i] == s) {
            let Some(n) = rank.step_of(i) else { continue };
            let c = (ev.dur[i], RankIx::of(r), n, EventIx::of(i));
            let longer = |b: &Option<(Ns, RankIx, StepNo, EventIx)>| b.is_none_or(|b| c.0 > b.0);
            if longer(&any) {
                any = Some(c);
            }
            if Some(n) == step && longer(&here) {
                here = Some(c);
            }
        }
    }
    here.or(any).map(|(_, r, n, e)| (r, n, e))
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
