//! String interning: each distinct name is stored once and referred to by a 4-byte [`Sym`].

use rustc_hash::FxHashMap;

/// An interned string id.
pub type Sym = u32;

/// Owns every distinct string once; lookups both ways.
#[derive(Debug, Default, Clone)]
pub struct Interner {
    strings: Vec<Box<str>>,
    index: FxHashMap<Box<str>, Sym>,
    /// Strings cut to [`MAX_NAME`] bytes.
    cut: u64,
}

/// The longest name kept, in bytes (16 KiB: C++ template kernel names reach a few KiB; a
/// name longer than this is a corrupt or hostile trace, and holding or printing it whole
/// would cost memory and screens out of all proportion). Longer names are cut to their first
/// 16 KiB ending in `…`, and the rank says how many were cut.
pub const MAX_NAME: usize = 16 << 10;

/// The first [`MAX_NAME`] bytes of `b` at most, before they are copied or decoded.
pub fn cut_bytes(b: &[u8]) -> &[u8] {
    &b[..b.len().min(MAX_NAME)]
}

/// `s` when at most [`MAX_NAME`] bytes long; else its start (on a character boundary) short
/// enough that with `…` after it, it is [`MAX_NAME`] bytes at most.
pub(super) fn cut(s: &str) -> &str {
    if s.len() <= MAX_NAME {
        return s;
    }
    let mut end = MAX_NAME - '…'.len_utf8();
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

impl Interner {
    /// Returns the id of `s`, adding it when new.
    pub fn intern(&mut self, s: &str) -> Sym {
        if s.len() > MAX_NAME {
            self.cut += 1;
            return self.intern(&format!("{}…", cut(s)));
        }
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

    /// How many strings were cut to [`MAX_NAME`] bytes on the way in.
    pub fn cut_count(&self) -> u64 {
        self.cut
    }

    /// Number of distinct strings.
    pub fn len(&self) -> usize {
        self.strings.len()
    }

    /// True when nothing was interned.
    pub fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }

    /// The table of `strings` (ids in their order), `cut` of them cut on the way in; `None`
    /// when a string is there twice or is longer than [`MAX_NAME`] (not a table `intern`
    /// could have made).
    pub fn from_strings(strings: Vec<&str>, cut: u64) -> Option<Interner> {
        let mut t = Interner {
            cut,
            ..Interner::default()
        };
        t.index.reserve(strings.len());
        for s in strings {
            if s.len() > MAX_NAME || t.index.contains_key(s) {
                return None;
            }
            t.intern(s);
        }
        Some(t)
    }

    /// All strings with their ids, in id order.
    pub fn iter(&self) -> impl Iterator<Item = (Sym, &str)> {
        self.strings
            .iter()
            .enumerate()
            .map(|(i, s)| (i as Sym, &**s))
    }
}
