//! Stepscope's own model files (docs/cache.md): what a reader made of one input — its
//! [`RankDraft`]s, before the time-range check and the job's assembly — written so that it
//! reads back in a fraction of the trace's time. The warm cache ([`cache`]) keeps one per
//! big trace; `stepscope summarize` writes one per input for jobs too big for one machine,
//! and [`summary::SummaryReader`] reads them back as any other input.
//!
//! A file is the magic, a header (what it was read from and how, the payload's length and
//! checksum) and the payload; nothing in it is trusted: a file of another version, a wrong
//! checksum, or a payload whose indices do not hold ([`check`]) is refused, never analysed.

pub(crate) mod cache;
mod check;
pub(crate) mod summary;

use super::RankDraft;
use super::chrome::document::JsonEvents;
use super::reader::ReadContext;
use super::roles::RoleTable;
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::Path;
use std::time::UNIX_EPOCH;

/// The first bytes of every model file.
pub(crate) const MAGIC: &[u8; 16] = b"\x89STEPSCOPE-MODEL";

/// The layout's version: a file of another is refused (and a cache entry re-read).
pub(crate) const VERSION: u32 = 1;

/// What a model file is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FileKind {
    /// A warm-cache entry, valid while its input is unchanged.
    Cache,
    /// A summary written by `stepscope summarize`, read as an input.
    Summary,
}

/// Which file a model was read from, as far as telling it changed needs: its path, size,
/// modification time and a checksum of its first and last 64 KiB.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    /// The path, canonical.
    pub path: String,
    /// Bytes on disk.
    pub size: u64,
    /// Modification time: seconds and nanoseconds since the epoch.
    pub mtime: (i64, u32),
    /// CRC-32 of its first and last 64 KiB.
    pub ends: u32,
}

/// The bytes at each end of a file that [`Identity::ends`] checks.
const ENDS: u64 = 64 << 10;

impl Identity {
    /// The identity of the file at `path` now.
    pub fn of(path: &Path) -> std::io::Result<Identity> {
        let canonical = std::fs::canonicalize(path)?;
        let mut f = std::fs::File::open(&canonical)?;
        let meta = f.metadata()?;
        let since = meta
            .modified()?
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let size = meta.len();
        let mut ends = crc32fast::Hasher::new();
        let mut buf = Vec::with_capacity(ENDS as usize);
        (&mut f).take(ENDS).read_to_end(&mut buf)?;
        ends.update(&buf);
        if size > ENDS {
            use std::io::{Seek, SeekFrom};
            f.seek(SeekFrom::Start(size.saturating_sub(ENDS).max(ENDS)))?;
            buf.clear();
            f.take(ENDS).read_to_end(&mut buf)?;
            ends.update(&buf);
        }
        Ok(Identity {
            path: canonical.to_string_lossy().into_owned(),
            size,
            mtime: (
                i64::try_from(since.as_secs()).unwrap_or(i64::MAX),
                since.subsec_nanos(),
            ),
            ends: ends.finalize(),
        })
    }
}

/// What a read depended on besides the file: a model read otherwise is another model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reading {
    /// `--python-stacks`.
    pub python_stacks: bool,
    /// serde_json for every event (tests and fuzz targets).
    pub serde_only: bool,
    /// The role tables' fingerprint.
    pub roles: u32,
}

impl Reading {
    /// The reading of a context.
    pub fn of(cx: &ReadContext) -> Reading {
        Reading::new(cx.python_stacks, cx.events, cx.roles)
    }

    /// The reading with these options.
    pub fn new(python_stacks: bool, events: JsonEvents, roles: &RoleTable) -> Reading {
        Reading {
            python_stacks,
            serde_only: events == JsonEvents::SerdeOnly,
            roles: roles.fingerprint(),
        }
    }
}

/// A model file's header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// [`VERSION`].
    pub version: u32,
    /// The stepscope that wrote it.
    pub writer: String,
    /// Cache entry or summary.
    pub kind: FileKind,
    /// The input it was read from.
    pub source: Identity,
    /// How it was read.
    pub reading: Reading,
    /// Bytes of payload after the header.
    pub payload_len: u64,
    /// CRC-32 of the payload.
    pub payload_crc: u32,
}

/// This stepscope, as a model file names its writer: the version and the executable's size
/// and modification time. A cache entry of another build is not used (a reader fixed since
/// would read the trace otherwise); a summary of another build is, its layout version allowing.
pub(crate) fn writer() -> &'static str {
    static WRITER: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    WRITER.get_or_init(|| {
        let exe = std::env::current_exe().and_then(std::fs::metadata);
        match exe {
            Ok(m) => {
                let at = m
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(UNIX_EPOCH).ok());
                let at = at.map_or(0, |d| d.as_nanos());
                format!("{}+{:x}.{:x}", env!("CARGO_PKG_VERSION"), m.len(), at)
            }
            Err(_) => env!("CARGO_PKG_VERSION").to_string(),
        }
    })
}

/// A model file, encoded: its magic and header, then its payload (kept apart: the payload
/// is most of the file and is written as it is, never copied again).
pub(crate) struct Encoded {
    /// The magic, the header's length and the header.
    pub head: Vec<u8>,
    /// The drafts.
    pub payload: Vec<u8>,
}

impl Encoded {
    /// Bytes in all.
    pub(crate) fn bytes(&self) -> u64 {
        (self.head.len() + self.payload.len()) as u64
    }

    /// Writes the file.
    pub(crate) fn write_to(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        w.write_all(&self.head)?;
        w.write_all(&self.payload)
    }
}

/// The model file of `drafts`.
pub(crate) fn encode(
    kind: FileKind,
    source: Identity,
    reading: Reading,
    drafts: &[RankDraft],
) -> Result<Encoded, String> {
    // Columns are most of it: about 48 bytes an event, and the names.
    let guess: usize = drafts
        .iter()
        .map(|d| {
            d.rank.events.len() * 48 + d.strings.iter().map(|(_, s)| s.len() + 2).sum::<usize>()
        })
        .sum();
    let payload = postcard::to_extend(drafts, Vec::with_capacity(guess + (1 << 16)))
        .map_err(|e| format!("cannot encode: {e}"))?;
    let header = Header {
        version: VERSION,
        writer: writer().to_string(),
        kind,
        source,
        reading,
        payload_len: payload.len() as u64,
        payload_crc: crc32fast::hash(&payload),
    };
    let encoded = postcard::to_stdvec(&header).map_err(|e| format!("cannot encode: {e}"))?;
    let len = u32::try_from(encoded.len()).map_err(|_| "header too long".to_string())?;
    let mut head = Vec::with_capacity(MAGIC.len() + 4 + encoded.len());
    head.extend_from_slice(MAGIC);
    head.extend_from_slice(&len.to_le_bytes());
    head.extend_from_slice(&encoded);
    Ok(Encoded { head, payload })
}

/// The longest header read: a path and a version string.
const MAX_HEADER: usize = 64 << 10;

/// The header of a model file and where its payload starts; why not, when it is not one of
/// this version.
pub(crate) fn header(bytes: &[u8]) -> Result<(Header, usize), String> {
    let rest = bytes
        .strip_prefix(MAGIC)
        .ok_or("not a stepscope model file")?;
    let len = rest
        .get(..4)
        .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize)
        .ok_or("cut short in its header")?;
    let head = rest
        .get(4..4 + len)
        .filter(|_| len <= MAX_HEADER)
        .ok_or("cut short in its header")?;
    let header: Header = match postcard::from_bytes(head) {
        Ok(h) => h,
        Err(_) => return Err(version_of(head)),
    };
    if header.version != VERSION {
        return Err(version_of(head));
    }
    Ok((header, MAGIC.len() + 4 + len))
}

/// Why a header that does not read is refused: its version when that much reads.
fn version_of(head: &[u8]) -> String {
    match postcard::take_from_bytes::<u32>(head) {
        Ok((v, _)) if v != VERSION => format!(
            "a model file of layout version {v}; this stepscope reads version {VERSION} (write it again)"
        ),
        _ => "a corrupt model file header".to_string(),
    }
}

/// The header of the model file at `path`; `None` when the file is not one, why not when
/// it is one this stepscope does not read.
pub(crate) fn read_header(path: &Path) -> Result<Option<Header>, String> {
    let mut head = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_HEADER as u64 + 32).read_to_end(&mut head))
        .map_err(|e| e.to_string())?;
    if !head.starts_with(MAGIC) {
        return Ok(None);
    }
    header(&head).map(|(h, _)| Some(h))
}

/// The drafts of a model file, checked whole: header, checksum, payload and its indices.
pub fn decode(bytes: &[u8]) -> Result<(Header, Vec<RankDraft>), String> {
    let (header, at) = header(bytes)?;
    let payload = &bytes[at..];
    if payload.len() as u64 != header.payload_len {
        return Err(format!(
            "cut short: {} bytes of payload where the header says {}",
            payload.len(),
            header.payload_len
        ));
    }
    if crc32fast::hash(payload) != header.payload_crc {
        return Err("its checksum does not match (a corrupt file)".into());
    }
    Ok((header, decode_payload(payload)?))
}

/// The drafts of a payload, checked ([`check`]) but without a checksum: what the fuzz target
/// feeds arbitrary bytes.
pub fn decode_payload(payload: &[u8]) -> Result<Vec<RankDraft>, String> {
    let drafts: Vec<RankDraft> =
        postcard::from_bytes(payload).map_err(|e| format!("a corrupt payload ({e})"))?;
    for (i, d) in drafts.iter().enumerate() {
        check::draft(d).map_err(|what| format!("rank {i} of the file: {what}"))?;
    }
    Ok(drafts)
}

#[cfg(test)]
mod tests;
