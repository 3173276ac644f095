//! Bytes of one input: plain files are memory-mapped (zero copy, paged in on demand), gzip is
//! inflated once into a buffer sized from the gzip trailer (by libdeflate,
//! [`super::gunzip`]), stdin and other streams (a FIFO, `<(zcat …)`) are read to a buffer,
//! checked as they stream: a first byte that cannot start JSON or gzip fails at once, and no
//! more than [`max_text`] bytes are ever held.

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

impl Source {
    /// The pages of a mapped file's text, for a parser that brings them in and (with
    /// `release`) gives them back range by range (`document::TextPages`); `None` for text
    /// held in memory (gzip, stdin, generated), whose pages could not be read again.
    pub fn pages(&self, release: bool) -> Option<MappedPages<'_>> {
        match &self.text {
            // A small file was brought in whole when mapped ([`WHOLE_FETCH`]): its parse
            // neither fetches nor gives back (copying what chunks borrow would cost more).
            Text::Mapped(map) if map.len() as u64 >= WHOLE_FETCH => {
                Some(MappedPages { map, release })
            }
            Text::Mapped(_) | Text::Owned(_) => None,
        }
    }
}

/// A mapped file's pages, brought in and given back by range.
pub struct MappedPages<'a> {
    map: &'a Mmap,
    release: bool,
}

/// Files below this size (4 MiB) are read into memory, not mapped.
const READ_WHOLE: u64 = 4 << 20;

/// Files below this size (64 MiB) are brought in whole when mapped: one rank of a big job,
/// a model file; above it, by the parser chunk by chunk ([`Source::pages`]).
const WHOLE_FETCH: u64 = 64 << 20;

/// The unit pages are given back in (the map starts on a page; a bigger page is rounded down
/// to, which only gives back bytes that are read from the file again if touched).
const PAGE: usize = 4096;

impl crate::ingest::chrome::document::TextPages for MappedPages<'_> {
    fn fetch(&self, start: usize, end: usize) {
        let end = end.min(self.map.len());
        if end > start {
            // Unsupported (before Linux 5.14) or refused: the pages fault in as they are read.
            let _ = self
                .map
                .advise_range(memmap2::Advice::PopulateRead, start, end - start);
        }
    }

    fn releases(&self) -> bool {
        self.release
    }

    fn release(&self, start: usize, end: usize) {
        let from = start.next_multiple_of(PAGE);
        let to = end.min(self.map.len()) / PAGE * PAGE;
        if to > from {
            // SAFETY: a read-only map of a file: the pages dropped hold no writes, and a later
            // read of them faults them in from the file again (a trace changed on disk
            // meanwhile reads as changed, as a page not yet read of any map would). A refusal
            // only keeps the pages.
            let _ = unsafe {
                self.map
                    .unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, from, to - from)
            };
        }
    }
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// The cap on text held in memory when it cannot be mapped: stdin and other streams, and
/// what gzip inflates to — 8 GiB unless `STEPSCOPE_MAX_INPUT` says otherwise ([`parse_size`];
/// the CLI refuses a value it does not accept before reading anything, [`check_max_input`]).
/// Plain files are mapped, not copied, and have no cap.
pub(crate) fn max_text() -> u64 {
    std::env::var("STEPSCOPE_MAX_INPUT")
        .ok()
        .and_then(|v| parse_size(&v).ok())
        .unwrap_or(DEFAULT_MAX_TEXT)
}

/// [`max_text`] by default.
pub(crate) const DEFAULT_MAX_TEXT: u64 = 8 << 30;

/// `STEPSCOPE_MAX_INPUT`, when set, is a size [`parse_size`] accepts; else why not.
pub fn check_max_input() -> Result<(), String> {
    match std::env::var_os("STEPSCOPE_MAX_INPUT") {
        None => Ok(()),
        Some(v) => match v.to_str() {
            Some(s) => parse_size(s).map(|_| ()),
            None => Err("STEPSCOPE_MAX_INPUT is not UTF-8".into()),
        },
    }
    .map_err(|e| format!("STEPSCOPE_MAX_INPUT: {e}"))
}

/// A size in bytes: digits, optionally followed by a binary unit `K`, `M`, `G` or `T` (also
/// spelt `KiB`/`KB`, … — all powers of 1024); at least 1 byte. Anything else is refused
/// with the value (cut to 40 characters) and what is accepted.
pub(crate) fn parse_size(v: &str) -> Result<u64, String> {
    let t = v.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => u32::MAX,
    };
    let Some(n) = digits.parse::<u64>().ok().filter(|_| shift != u32::MAX) else {
        return Err(format!(
            "{} is not a size: bytes, or with K, M, G or T (binary units), e.g. 512M",
            crate::format::echo(v)
        ));
    };
    match n.checked_mul(1 << shift) {
        Some(0) => Err("must be at least 1 byte".into()),
        Some(b) => Ok(b),
        None => Err(format!("{} is more than 16 EiB", crate::format::echo(v))),
    }
}

/// Whether `path` (followed through links) is a regular file; an error naming what it is
/// instead (reading a FIFO or a device from a directory would block or never end).
pub fn check_regular(path: &Path) -> Result<(), Error> {
    let label = path.display().to_string();
    let meta =
        std::fs::metadata(path).map_err(|e| Error::input(&label, format!("cannot read: {e}")))?;
    match file_kind(&meta) {
        None => Ok(()),
        Some(kind) => Err(Error::input(&label, format!("not a regular file ({kind})"))),
    }
}

/// What a non-regular file is (`None` for a regular file).
pub(crate) fn file_kind(meta: &std::fs::Metadata) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    Some(if t.is_file() {
        return None;
    } else if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else {
        "not a file"
    })
}

/// A small side file (a CSV, a JSON summary) read whole, with its label for messages: only
/// a regular file, and no larger than [`max_text`].
pub(crate) fn read_small(path: &Path) -> Result<(String, Vec<u8>), Error> {
    let label = path.display().to_string();
    check_regular(path)?;
    let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    if len > max_text() {
        return Err(too_big(&label, len));
    }
    let bytes =
        std::fs::read(path).map_err(|e| Error::input(&label, format!("cannot read: {e}")))?;
    Ok((label, bytes))
}

fn too_big(label: &str, bytes: u64) -> Error {
    Error::input(
        label,
        format!(
            "more than {} to hold in memory ({}); raise STEPSCOPE_MAX_INPUT, or give a plain file \
             (files are mapped, not copied)",
            crate::format::bytes(max_text()),
            crate::format::bytes(bytes)
        ),
    )
}

/// Opens a trace file: mmap when plain, inflate when gzip (detected by magic bytes, not name).
/// A FIFO or a character device named on the command line (`<(zcat …)`, `/dev/stdin`) is
/// read as a stream, as stdin is.
pub(crate) fn open(path: &Path) -> Result<Source, Error> {
    let label = path.display().to_string();
    let meta =
        std::fs::metadata(path).map_err(|e| Error::input(&label, format!("cannot read: {e}")))?;
    if meta.is_dir() {
        return Err(Error::input(&label, "is a directory, not a trace file"));
    }
    let file = File::open(path).map_err(|e| Error::input(&label, format!("cannot read: {e}")))?;
    if !meta.is_file() {
        return stream(label, file);
    }
    if meta.len() == 0 {
        return Err(Error::input_at(&label, 0, "empty file"));
    }
    if meta.len() < READ_WHOLE {
        // A small file is read, not mapped: a map and its unmap take the address space's
        // lock for writing, which two threads opening thousands of summaries queue on.
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        (&file)
            .take(meta.len())
            .read_to_end(&mut bytes)
            .map_err(|e| Error::input(&label, format!("cannot read: {e}")))?;
        if bytes.is_empty() {
            return Err(Error::input_at(&label, 0, "empty file"));
        }
        return from_bytes(label, Text::Owned(bytes), meta.len());
    }
    // SAFETY: the map is read-only; a trace file truncated by another process while mapped
    // would fault, the same hazard every mmap-based reader (ripgrep, etc.) accepts.
    // Pre-faulting in one call is much cheaper than one page fault per 4 KiB taken by two
    // parser threads contending for the address-space lock (measured: 0.38 s vs 0.50 s for
    // 186 MB): a small file is brought in whole here; a big one's parser brings in each
    // chunk as it starts it and gives it back once parsed (`pages`), so that a gigabyte
    // trace is never all held.
    let mut options = memmap2::MmapOptions::new();
    if meta.len() < WHOLE_FETCH {
        options.populate();
    }
    let map = unsafe { options.map(&file) }
        .map_err(|e| Error::input(&label, format!("cannot map: {e}")))?;
    from_bytes(label, Text::Mapped(map), meta.len())
}

/// Reads all of stdin (plain or gzip), checked as it streams.
pub(crate) fn stdin() -> Result<Source, Error> {
    stream("-".to_string(), std::io::stdin().lock())
}

/// Reads a stream labelled `label` as stdin is read (the fuzz target `stream` compares it
/// with the same bytes from memory).
#[cfg(any(test, feature = "fuzz"))]
pub fn from_reader(label: &str, r: impl Read) -> Result<Source, Error> {
    stream(label.to_string(), r)
}

/// Reads a stream to its end into memory: its first significant byte is checked as soon as
/// it arrives (`{`, `[` or gzip's magic, else an error at once — `/dev/zero` is not read for
/// minutes); gzip is inflated as it streams (the compressed bytes are never held); the JSON
/// text is read through [`read_text`], so its cap and checks hold on every stream.
fn stream(label: String, mut r: impl Read) -> Result<Source, Error> {
    let mut head: Vec<u8> = Vec::new();
    let mut block = [0u8; 4096];
    // Leading whitespace already seen: a pipe may give a byte per read, and the start is
    // decided only once something else has arrived (never a rescan per read).
    let mut blank = 0;
    loop {
        let n = read_some(&label, &mut r, &mut block)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&block[..n]);
        while head.get(blank).is_some_and(u8::is_ascii_whitespace) {
            blank += 1;
        }
        if blank < head.len() && first_byte(&label, &head)? {
            break;
        }
        if head.len() as u64 > max_text() {
            return Err(too_big(&label, head.len() as u64));
        }
    }
    let gzipped = head.starts_with(&GZIP_MAGIC);
    let rest = Cursor::new(head).chain(r);
    let (buf, file_bytes) = if gzipped {
        let mut counted = Counted { inner: rest, n: 0 };
        let text = inflate_stream(&label, &mut counted)?;
        (text, counted.n)
    } else {
        let text = read_text(&label, rest, 0).map_err(|e| match e {
            TextError::Bad(e) => e,
            TextError::Read(e) => Error::input(&label, format!("cannot read: {e}")),
        })?;
        let n = text.len() as u64;
        (text, n)
    };
    if buf.iter().all(u8::is_ascii_whitespace) {
        let what = if buf.is_empty() {
            "empty input"
        } else {
            "empty input (only whitespace)"
        };
        return Err(Error::input_at(&label, 0, what));
    }
    Ok(Source {
        label,
        text: Text::Owned(buf),
        file_bytes,
        gzipped,
    })
}

/// Counts the bytes read through it (a stream's compressed size).
struct Counted<R> {
    inner: R,
    n: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.n += n as u64;
        Ok(n)
    }
}

/// One read, retried when interrupted.
fn read_retrying(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    loop {
        match r.read(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            done => return done,
        }
    }
}

/// [`read_retrying`], a failure worded for `label`.
fn read_some(label: &str, r: &mut impl Read, buf: &mut [u8]) -> Result<usize, Error> {
    read_retrying(r, buf).map_err(|e| Error::input(label, format!("cannot read: {e}")))
}

/// Why [`read_text`] stopped early.
enum TextError {
    /// A read failed (the caller words it: a stream, or a corrupt gzip stream).
    Read(std::io::Error),
    /// The text is refused (too big, not JSON, out of memory).
    Bad(Error),
}

impl From<Error> for TextError {
    fn from(e: Error) -> Self {
        TextError::Bad(e)
    }
}

/// Bytes read per call by [`read_text`].
const BLOCK: usize = 1 << 20;

/// Reads JSON text to its end into memory, the one bounded reader of text that cannot be
/// mapped (streams, inflated gzip): never more than [`max_text`] bytes (counted as they
/// arrive, so a gzip bomb stops at the cap, not at its end); the buffer grows only as the
/// text does (presized to `hint`, at most the cap) and an allocation the machine refuses is
/// an error, not an abort; a raw control byte, which JSON allows nowhere (a stream of NULs,
/// a bomb of zeros), is an error as soon as it arrives. `read_error` words a failed read.
fn read_text(label: &str, mut r: impl Read, hint: usize) -> Result<Vec<u8>, TextError> {
    let cap = usize::try_from(max_text()).unwrap_or(usize::MAX);
    // `buf` is zeroed a block at a time as the text reaches it, never per read (a pipe may
    // give a byte per read) nor ahead (a presized buffer's pages stay untouched until used);
    // `at` is how much of it holds text.
    let mut buf: Vec<u8> = Vec::new();
    let mut at = 0;
    reserve(label, &mut buf, hint.min(cap.saturating_add(1)))?;
    loop {
        if buf.len() - at < BLOCK {
            if buf.capacity() - buf.len() < BLOCK {
                let want = at
                    .max(BLOCK)
                    .min(cap.saturating_add(BLOCK).saturating_sub(at));
                reserve(label, &mut buf, want.max(BLOCK))?;
            }
            let zeroed = (buf.len() + BLOCK).min(buf.capacity());
            buf.resize(zeroed, 0);
        }
        let n = read_retrying(&mut r, &mut buf[at..]).map_err(TextError::Read)?;
        if n == 0 {
            buf.truncate(at);
            return Ok(buf);
        }
        let new = at..at + n;
        at += n;
        if let Some(i) = control_byte(&buf[new.clone()]).map(|i| new.start + i) {
            return Err(TextError::Bad(control_error(label, i, buf[i])));
        }
        if at > cap {
            return Err(TextError::Bad(too_big(label, at as u64)));
        }
    }
}

/// Grows `buf` by `more` bytes of capacity, or says the machine would not give them.
fn reserve(label: &str, buf: &mut Vec<u8>, more: usize) -> Result<(), Error> {
    buf.try_reserve_exact(more).map_err(|_| {
        Error::input(
            label,
            format!(
                "out of memory holding {} of it (the machine refused {} more); give a plain \
                 file (files are mapped, not copied), or set STEPSCOPE_MAX_INPUT below what \
                 the machine can hold",
                crate::format::bytes(buf.len() as u64),
                crate::format::bytes(more as u64)
            ),
        )
    })
}

/// A raw control byte `b` at offset `i` of the text: not JSON.
fn control_error(label: &str, i: usize, b: u8) -> Error {
    Error::input_at(
        label,
        i as u64,
        format!("a raw control character (0x{b:02x}) cannot occur in JSON text: not a trace"),
    )
}

/// [`control_byte`] over a whole buffer, a MiB per task (an inflated gigabyte on both cores).
fn control_byte_par(b: &[u8]) -> Option<usize> {
    use rayon::prelude::*;
    const PART: usize = 1 << 20;
    b.par_chunks(PART)
        .enumerate()
        .find_map_first(|(k, part)| control_byte(part).map(|i| k * PART + i))
}

/// The first byte below 0x20 other than tab, LF and CR, if any. Checked in blocks of 64 with
/// no early exit inside a block, so the compiler vectorises it (gigabytes pass through here).
fn control_byte(b: &[u8]) -> Option<usize> {
    let bad = |x: u8| (x < 0x20) & (x != b'\t') & (x != b'\n') & (x != b'\r');
    let mut blocks = b.chunks(64);
    let mut base = 0;
    for block in blocks.by_ref() {
        if block.iter().fold(false, |a, &x| a | bad(x)) {
            return block.iter().position(|&x| bad(x)).map(|i| base + i);
        }
        base += block.len();
    }
    None
}

/// Whether the start of a stream is decided: `Ok(true)` when it can start a trace (JSON's
/// `{` or `[` after whitespace, or gzip's magic), `Ok(false)` when only whitespace (or half
/// of gzip's magic) has arrived, an error at the first byte that cannot.
fn first_byte(label: &str, buf: &[u8]) -> Result<bool, Error> {
    if buf.starts_with(&GZIP_MAGIC) {
        return Ok(true);
    }
    if buf == [GZIP_MAGIC[0]] {
        return Ok(false);
    }
    match buf.iter().position(|b| !b.is_ascii_whitespace()) {
        None => Ok(false),
        Some(i) if matches!(buf[i], b'{' | b'[') => Ok(true),
        // What it is instead, when its first bytes tell (a pickle piped in).
        Some(_) => match super::identify::foreign(label, buf) {
            Some(what) => Err(Error::input(label, what)),
            None => first_byte_error(label, buf),
        },
    }
}

/// The first significant byte of a stream cannot start a trace.
fn first_byte_error(label: &str, buf: &[u8]) -> Result<bool, Error> {
    match buf.iter().position(|b| !b.is_ascii_whitespace()) {
        None => Ok(false),
        Some(i) => Err(Error::input_at(
            label,
            i as u64,
            format!(
                "not a JSON trace or gzip: it starts with byte 0x{:02x}, not `{{`, `[` or gzip's magic",
                buf[i]
            ),
        )),
    }
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

/// Inflates a (possibly multi-member) gzip file in memory into one buffer.
fn inflate(label: &str, gz: &[u8]) -> Result<Vec<u8>, Error> {
    // ISIZE (last 4 bytes) is the uncompressed size mod 2^32: presizing avoids the 2× peak of
    // a doubling Vec on gigabyte traces. It is only a hint (multi-member, >4 GiB, corrupt).
    let hint = gz
        .len()
        .checked_sub(4)
        .map(|at| u32::from_le_bytes([gz[at], gz[at + 1], gz[at + 2], gz[at + 3]]) as usize)
        .unwrap_or(0);
    let hint = hint.min(gz.len().saturating_mul(64)).max(gz.len());
    let cap = usize::try_from(max_text()).unwrap_or(usize::MAX);
    if let Some(text) = super::gunzip::inflate(gz, hint, cap) {
        return match control_byte_par(&text) {
            Some(i) => Err(control_error(label, i, text[i])),
            None => Ok(text),
        };
    }
    let mut dec = MultiGzDecoder::new(Cursor::new(gz));
    let text = read_text(label, &mut dec, hint);
    text.map_err(|e| gzip_error(label, e, dec.get_ref().position()))
}

/// Inflates a gzip stream as it is read (stdin, a FIFO); the compressed bytes read are
/// counted in `r`.
fn inflate_stream(label: &str, r: &mut Counted<impl Read>) -> Result<Vec<u8>, Error> {
    let mut dec = MultiGzDecoder::new(std::io::BufReader::new(r));
    let text = read_text(label, &mut dec, 0);
    text.map_err(|e| gzip_error(label, e, dec.get_ref().get_ref().n))
}

/// A failed inflate: a read error of the decoder is a corrupt or truncated stream, placed at
/// the compressed byte it had reached.
fn gzip_error(label: &str, e: TextError, at: u64) -> Error {
    match e {
        TextError::Bad(e) => e,
        TextError::Read(e) => {
            let what = if e.kind() == std::io::ErrorKind::UnexpectedEof {
                "truncated gzip stream".to_string()
            } else {
                format!("corrupt gzip stream: {e}")
            };
            Error::input_pos(label, Position::CompressedByte(at), what)
        }
    }
}

/// The text of one event of a trace file, read again on demand (a view showing its `args`):
/// a plain file is mapped and sliced; gzip is inflated only up to the event's end.
pub(crate) fn event_text(path: &Path, raw: crate::model::RawSpan) -> Result<String, Error> {
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

#[cfg(test)]
mod tests;
