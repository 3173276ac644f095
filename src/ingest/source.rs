//! Bytes of one input: plain files are memory-mapped (zero copy, paged in on demand), gzip is
//! inflated once into a buffer sized from the gzip trailer, stdin is read to a buffer.

use crate::error::{Error, Position};
use flate2::bufread::MultiGzDecoder;
use memmap2::Mmap;
use std::fs::File;
use std::io::{Cursor, Read};
use std::ops::Deref;
use std::path::Path;

/// The JSON text of one input, mapped or owned.
pub enum Text {
    /// A memory-mapped plain file.
    Mapped(Mmap),
    /// Inflated gzip, stdin, or generated text.
    Owned(Vec<u8>),
}

impl Deref for Text {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Text::Mapped(m) => m,
            Text::Owned(v) => v,
        }
    }
}

/// One input ready to parse.
pub struct Source {
    /// The path as the user gave it (or `-`).
    pub label: String,
    /// The JSON text.
    pub text: Text,
    /// Size on disk (compressed size for gzip).
    pub file_bytes: u64,
    /// Whether the input was gzip.
    pub gzipped: bool,
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// A small side file (a CSV, a JSON summary) read whole, with its label for messages.
pub fn read_small(path: &Path) -> Result<(String, Vec<u8>), Error> {
    let label = path.display().to_string();
    let bytes =
        std::fs::read(path).map_err(|e| Error::input(&label, format!("cannot read: {e}")))?;
    Ok((label, bytes))
}

/// Opens a trace file: mmap when plain, inflate when gzip (detected by magic bytes, not name).
pub fn open(path: &Path) -> Result<Source, Error> {
    let label = path.display().to_string();
    let file = File::open(path).map_err(|e| Error::input(&label, format!("cannot read: {e}")))?;
    let meta = file
        .metadata()
        .map_err(|e| Error::input(&label, format!("cannot read: {e}")))?;
    if meta.is_dir() {
        return Err(Error::input(&label, "is a directory, not a trace file"));
    }
    if meta.len() == 0 {
        return Err(Error::input_at(&label, 0, "empty file"));
    }
    // SAFETY: the map is read-only; a trace file truncated by another process while mapped
    // would fault, the same hazard every mmap-based reader (ripgrep, etc.) accepts.
    // Pre-faulting the whole map in one call is much cheaper than one page fault per 4 KiB
    // taken by two parser threads contending for the address-space lock (measured: 0.38 s
    // vs 0.50 s for 186 MB); every byte is read anyway.
    let map = unsafe { memmap2::MmapOptions::new().populate().map(&file) }
        .map_err(|e| Error::input(&label, format!("cannot map: {e}")))?;
    from_bytes(label, Text::Mapped(map), meta.len())
}

/// Reads all of stdin (plain or gzip).
pub fn stdin() -> Result<Source, Error> {
    let mut buf = Vec::new();
    std::io::stdin()
        .lock()
        .read_to_end(&mut buf)
        .map_err(|e| Error::input("-", format!("cannot read stdin: {e}")))?;
    if buf.is_empty() {
        return Err(Error::input_at("-", 0, "empty input on stdin"));
    }
    let len = buf.len() as u64;
    from_bytes("-".to_string(), Text::Owned(buf), len)
}

/// Wraps bytes already in memory (generated demo traces, tests).
pub fn from_memory(label: impl Into<String>, bytes: Vec<u8>) -> Result<Source, Error> {
    let len = bytes.len() as u64;
    from_bytes(label.into(), Text::Owned(bytes), len)
}

fn from_bytes(label: String, raw: Text, file_bytes: u64) -> Result<Source, Error> {
    if raw.starts_with(&GZIP_MAGIC) {
        let text = inflate(&label, &raw)?;
        Ok(Source {
            label,
            text: Text::Owned(text),
            file_bytes,
            gzipped: true,
        })
    } else {
        Ok(Source {
            label,
            text: raw,
            file_bytes,
            gzipped: false,
        })
    }
}

/// Inflates a (possibly multi-member) gzip stream into one buffer.
fn inflate(label: &str, gz: &[u8]) -> Result<Vec<u8>, Error> {
    // ISIZE (last 4 bytes) is the uncompressed size mod 2^32: presizing avoids the 2× peak of
    // a doubling Vec on gigabyte traces. It is only a hint (multi-member, >4 GiB, corrupt).
    let hint = gz
        .len()
        .checked_sub(4)
        .map(|at| u32::from_le_bytes([gz[at], gz[at + 1], gz[at + 2], gz[at + 3]]) as usize)
        .unwrap_or(0);
    let cap = hint.min(gz.len().saturating_mul(64)).max(gz.len());
    let mut out = Vec::with_capacity(cap);
    let mut dec = MultiGzDecoder::new(Cursor::new(gz));
    if let Err(e) = dec.read_to_end(&mut out) {
        let at = dec.get_ref().position();
        let what = if e.kind() == std::io::ErrorKind::UnexpectedEof {
            "truncated gzip stream".to_string()
        } else {
            format!("corrupt gzip stream: {e}")
        };
        return Err(Error::input_pos(label, Position::CompressedByte(at), what));
    }
    Ok(out)
}

/// The text of one event of a trace file, read again on demand (a view showing its `args`):
/// a plain file is mapped and sliced; gzip is inflated only up to the event's end.
pub fn event_text(path: &Path, raw: crate::model::RawSpan) -> Result<String, Error> {
    let label = path.display().to_string();
    let fail = |e: std::io::Error| Error::input(&label, format!("cannot read: {e}"));
    let file = File::open(path).map_err(fail)?;
    let (from, to) = (raw.offset as usize, raw.offset as usize + raw.len as usize);
    // SAFETY: read-only map, as in `open`.
    let map = unsafe { Mmap::map(&file) }.map_err(fail)?;
    let bytes: Vec<u8> = if map.starts_with(&GZIP_MAGIC) {
        let mut out = Vec::with_capacity(to);
        MultiGzDecoder::new(Cursor::new(&map[..]))
            .take(to as u64)
            .read_to_end(&mut out)
            .map_err(fail)?;
        out.get(from..to).map(<[u8]>::to_vec).unwrap_or_default()
    } else {
        map.get(from..to).map(<[u8]>::to_vec).unwrap_or_default()
    };
    if bytes.is_empty() {
        return Err(Error::input_at(
            &label,
            raw.offset,
            "the file changed since it was loaded",
        ));
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
