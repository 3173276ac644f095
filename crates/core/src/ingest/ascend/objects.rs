//! The few untimed events of a large trace text that the Ascend reader reads again beside
//! the Chrome reader (its counters and operator flows, which that reader only counts): the
//! reader keeps their byte spans as it parses ([`crate::ingest::chrome::Dialect::reread`]),
//! and each is read here from its span alone, with no search of the text.

use crate::ingest::chrome::chunk::Chunk;
use crate::model::RawSpan;

/// The text of every event the chunks kept that holds the string `value` (a counter's name,
/// a flow's category: found in each small object before it is parsed), in chunk order.
pub(super) fn kept<'a>(
    text: &'a [u8],
    chunks: &'a [Chunk<'_>],
    value: &[u8],
) -> impl Iterator<Item = &'a [u8]> + 'a {
    let quoted = [&b"\""[..], value, b"\""].concat();
    let finder = memchr::memmem::Finder::new(&quoted).into_owned();
    chunks
        .iter()
        .flat_map(|c| &c.reread)
        .filter_map(move |s: &RawSpan| {
            let start = usize::try_from(s.offset).ok()?;
            let object = text.get(start..start.checked_add(s.len as usize)?)?;
            finder.find(object).map(|_| object)
        })
}

/// Test texts written one event per line (`[{…},` / `{…},` / `{…}]`): each line's object.
#[cfg(test)]
pub fn each(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    text.split(|&b| b == b'\n').map(|line| {
        let t = line.trim_ascii();
        let t = t.strip_prefix(b"[").unwrap_or(t);
        let t = t.strip_suffix(b",").unwrap_or(t);
        t.strip_suffix(b"]").unwrap_or(t)
    })
}
