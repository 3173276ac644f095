//! String interning: each distinct name is stored once and referred to by a 4-byte [`Sym`].

use rustc_hash::FxHashMap;

/// An interned string id.
pub type Sym = u32;

/// Owns every distinct string once; lookups both ways.
#[derive(Debug, Default, Clone)]
pub struct Interner {
    strings: Vec<Box<str>>,
    index: FxHashMap<Box<str>, Sym>,
}

impl Interner {
    /// Returns the id of `s`, adding it when new.
    pub fn intern(&mut self, s: &str) -> Sym {
        if let Some(&id) = self.index.get(s) {
            return id;
        }
        let id = Sym::try_from(self.strings.len()).expect("fewer than 2^32 distinct names");
        self.strings.push(s.into());
        self.index.insert(s.into(), id);
        id
    }

    /// The id of `s` if it was interned.
    pub fn get(&self, s: &str) -> Option<Sym> {
        self.index.get(s).copied()
    }

    /// The string of `id`.
    pub fn resolve(&self, id: Sym) -> &str {
        &self.strings[id as usize]
    }

    /// Number of distinct strings.
    pub fn len(&self) -> usize {
        self.strings.len()
    }

    /// True when nothing was interned.
    pub fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }

    /// All strings with their ids, in id order.
    pub fn iter(&self) -> impl Iterator<Item = (Sym, &str)> {
        self.strings
            .iter()
            .enumerate()
            .map(|(i, s)| (i as Sym, &**s))
    }
}
