//! Name patterns of the role tables: exact names, or globs where `*` stands for any text.
//! A set of patterns answers "does this name match any of them" with one hash lookup for the
//! exact names and a short scan of the globs (names are matched once each, not per event).

use rustc_hash::{FxHashMap, FxHashSet};

/// One glob: literal parts that must occur in order, anchored at the ends unless the glob
/// starts or ends with `*`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Glob {
    parts: Vec<Vec<u8>>,
    open_start: bool,
    open_end: bool,
}

impl Glob {
    /// Parses `text`, a pattern with at least one `*`.
    pub(super) fn new(text: &str) -> Glob {
        Glob {
            parts: text
                .split('*')
                .filter(|p| !p.is_empty())
                .map(|p| p.as_bytes().to_vec())
                .collect(),
            open_start: text.starts_with('*'),
            open_end: text.ends_with('*'),
        }
    }

    /// True when `name` matches.
    pub(super) fn matches(&self, name: &[u8]) -> bool {
        let mut rest = name;
        for (k, part) in self.parts.iter().enumerate() {
            let first = k == 0;
            let last = k + 1 == self.parts.len();
            if first && !self.open_start {
                let Some(r) = rest.strip_prefix(part.as_slice()) else {
                    return false;
                };
                rest = r;
                if last && !self.open_end {
                    return rest.is_empty();
                }
                continue;
            }
            if last && !self.open_end {
                return rest.len() >= part.len() && rest.ends_with(part);
            }
            match memchr::memmem::find(rest, part) {
                Some(at) => rest = &rest[at + part.len()..],
                None => return false,
            }
        }
        true
    }

    /// The literal text before the first `*`, when the glob is `PREFIX*` (step markers).
    pub(super) fn prefix_only(&self) -> Option<&[u8]> {
        match self.parts.as_slice() {
            [p] if !self.open_start && self.open_end => Some(p),
            _ => None,
        }
    }
}

/// A set of patterns.
#[derive(Debug, Clone, Default)]
pub(super) struct Patterns {
    exact: FxHashSet<Vec<u8>>,
    globs: Vec<Glob>,
    ignore_case: bool,
}

impl Patterns {
    /// Patterns from their texts (`*` makes a glob).
    pub(super) fn new(texts: &[String], ignore_case: bool) -> Patterns {
        let mut p = Patterns {
            ignore_case,
            ..Patterns::default()
        };
        p.extend(texts);
        p
    }

    /// Adds patterns.
    pub(super) fn extend(&mut self, texts: &[String]) {
        for t in texts {
            let t = if self.ignore_case {
                t.to_ascii_lowercase()
            } else {
                t.clone()
            };
            if t.contains('*') {
                self.globs.push(Glob::new(&t));
            } else {
                self.exact.insert(t.into_bytes());
            }
        }
    }

    /// True when `name` matches one of the patterns.
    pub(super) fn matches(&self, name: &[u8]) -> bool {
        if self.ignore_case {
            let lower = name.to_ascii_lowercase();
            return self.matches_exact_case(&lower);
        }
        self.matches_exact_case(name)
    }

    fn matches_exact_case(&self, name: &[u8]) -> bool {
        (!self.exact.is_empty() && self.exact.contains(name))
            || self.globs.iter().any(|g| g.matches(name))
    }

    /// True when there are no patterns.
    pub(super) fn is_empty(&self) -> bool {
        self.exact.is_empty() && self.globs.is_empty()
    }

    /// True when `name` matches a pattern other than a case-sensitive exact name (those a
    /// [`Keyed`] looks up in its shared map).
    fn matches_beyond_exact(&self, name: &[u8]) -> bool {
        if self.ignore_case {
            return self.matches(name);
        }
        self.globs.iter().any(|g| g.matches(name))
    }
}

/// Pattern sets that each name a key: a name takes the key of the first set it matches. The
/// case-sensitive exact names of every set share one hash map, so a lookup costs one hash
/// however many sets there are (names are looked up per event while parsing).
#[derive(Debug, Clone)]
pub(super) struct Keyed<K> {
    sets: Vec<(K, Patterns)>,
    /// Exact name → the first set holding it.
    exact: FxHashMap<Vec<u8>, usize>,
}

impl<K> Default for Keyed<K> {
    fn default() -> Self {
        Keyed {
            sets: Vec::new(),
            exact: FxHashMap::default(),
        }
    }
}

impl<K: Copy + PartialEq> Keyed<K> {
    /// Adds patterns to `key`'s set (a new set, last, when `key` has none yet); the first
    /// patterns a set gets decide its case rule.
    pub(super) fn add(&mut self, key: K, texts: &[String], ignore_case: bool) {
        let i = match self.sets.iter().position(|x| x.0 == key) {
            Some(i) => i,
            None => {
                self.sets.push((key, Patterns::default()));
                self.sets.len() - 1
            }
        };
        if texts.is_empty() {
            return;
        }
        let p = &mut self.sets[i].1;
        if p.is_empty() {
            *p = Patterns::new(texts, ignore_case);
        } else {
            p.extend(texts);
        }
        if !p.ignore_case {
            for name in &p.exact {
                self.exact
                    .entry(name.clone())
                    .and_modify(|at| *at = (*at).min(i))
                    .or_insert(i);
            }
        }
    }

    /// The key of the first set `name` matches.
    pub(super) fn first(&self, name: &[u8]) -> Option<K> {
        let hit = self.exact.get(name).copied();
        let before = &self.sets[..hit.unwrap_or(self.sets.len())];
        before
            .iter()
            .find(|(_, p)| p.matches_beyond_exact(name))
            .or_else(|| hit.map(|i| &self.sets[i]))
            .map(|x| x.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_anchor_unless_starred() {
        let g = |p: &str, s: &str| Glob::new(p).matches(s.as_bytes());
        assert!(g("nccl*", "ncclDevKernel_AllReduce"));
        assert!(!g("nccl*", "xnccl"));
        assert!(g("*ncclKernel*", "void ncclKernel_x"));
        assert!(g(
            "Memcpy DtoH*-> Pageable*",
            "Memcpy DtoH (Device -> Pageable)"
        ));
        assert!(!g(
            "Memcpy DtoH*-> Pageable*",
            "Memcpy DtoH (Device -> Pinned)"
        ));
        assert!(g("*foo", "barfoo") && !g("*foo", "foobar"));
        assert!(g("a*b", "ab") && g("a*b", "axxb") && !g("a*b", "abx"));
        assert!(g("ab*ba", "abba") && !g("ab*ba", "aba"));
        assert_eq!(
            Glob::new("ProfilerStep#*").prefix_only(),
            Some(&b"ProfilerStep#"[..])
        );
        assert_eq!(Glob::new("*x*").prefix_only(), None);
    }

    #[test]
    fn sets_mix_exact_names_globs_and_case() {
        let p = Patterns::new(
            &["gc".into(), "gc:*".into(), "*garbage collect*".into()],
            true,
        );
        assert!(p.matches(b"GC"));
        assert!(p.matches(b"gc:gen2"));
        assert!(p.matches(b"Python Garbage Collection"));
        assert!(!p.matches(b"gcc"));
        let q = Patterns::new(&["cudaMalloc".into()], false);
        assert!(q.matches(b"cudaMalloc") && !q.matches(b"cudamalloc"));
    }

    #[test]
    fn keyed_sets_answer_in_set_order() {
        let t = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let mut k = Keyed::default();
        k.add(1, &t(&["aten::*"]), false);
        k.add(2, &t(&["aten::mm", "aten::bmm"]), false);
        k.add(3, &t(&["gc"]), true);
        // An earlier set's glob wins over a later set's exact name.
        assert_eq!(k.first(b"aten::mm"), Some(1));
        assert_eq!(k.first(b"GC"), Some(3));
        assert_eq!(k.first(b"other"), None);
        // A later layer extending an earlier key keeps that key's place.
        let mut k = Keyed::default();
        k.add(1, &t(&["x"]), false);
        k.add(2, &t(&["y"]), false);
        k.add(1, &t(&["y"]), false);
        assert_eq!(k.first(b"y"), Some(1));
    }
}
