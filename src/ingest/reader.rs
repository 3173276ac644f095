//! The reader seam (docs/architecture.md, "Adding an input format"): every file format is a
//! [`Reader`] — it sniffs an input's first bytes and reads the input into ranks — listed once
//! in [`READERS`]. Every reader gets the same [`ReadContext`]. A file no reader takes is named
//! by what its bytes look like ([`super::identify`]) before the default reader says why it
//! is not a trace.

use super::RankDraft;
use super::chrome::document::JsonEvents;
use super::roles::RoleTable;
use super::source::Source;
use crate::error::Error;
use std::path::Path;
use std::sync::atomic::AtomicU64;

/// What every reader reads with: the role tables, the progress counter, and the options
/// that change what is kept.
pub struct ReadContext<'a> {
    /// The role tables names are read with.
    pub roles: &'a RoleTable,
    /// Advanced as input bytes are read (load progress).
    pub bytes_done: &'a AtomicU64,
    /// Keep `python_function` frames (as events of kind other) instead of only counting them.
    pub python_stacks: bool,
    /// Which JSON event parser runs (the fast scanner unless a test asks for serde_json).
    pub events: JsonEvents,
}

/// One input format. A reader never writes anywhere, and sets the platform facts analyses
/// need on each rank it makes (`SourceInfo::platform`), so that no analysis asks which
/// format a rank came from.
pub trait Reader: Sync {
    /// What it reads, as the message for a file no reader takes lists it ("PyTorch profiler
    /// (Kineto) JSON traces (.json, .json.gz)").
    fn reads(&self) -> &'static str;
    /// Whether an input whose text starts with `head` is in this format (`head` is the
    /// whole input when it is mapped; a reader looks only as far as it must).
    fn sniff(&self, head: &[u8]) -> bool;
    /// Reads the input (its bytes, and its path when it is a file) into one rank or more.
    fn read(
        &self,
        src: &Source,
        path: Option<&Path>,
        cx: &ReadContext,
    ) -> Result<Vec<RankDraft>, Error>;
}

/// The file readers, most specific first: the first whose [`Reader::sniff`] takes an input
/// reads it. (Ascend rank folders are found by discovery and read by `ascend::read`.)
pub static READERS: &[&dyn Reader] = &[
    &super::nsys::NsysReader,
    &super::ascend::TraceViewReader,
    &super::kineto::KinetoReader,
];

/// The reader of an input no reader sniffs and [`super::identify`] does not name: Kineto's,
/// which says what a trace would need (`byte 0: not a JSON trace …`).
pub static DEFAULT: &dyn Reader = &super::kineto::KinetoReader;

/// Reads `src` with the first reader that takes it; else names what it looks like; else
/// lets the default reader say why it is not a trace.
pub fn read(src: &Source, path: Option<&Path>, cx: &ReadContext) -> Result<Vec<RankDraft>, Error> {
    if let Some(r) = READERS.iter().find(|r| r.sniff(&src.text)) {
        return r.read(src, path, cx);
    }
    if let Some(what) = super::identify::foreign(&src.label, &src.text) {
        return Err(Error::input(&src.label, what));
    }
    DEFAULT.read(src, path, cx)
}

/// What stepscope reads, from the reader table: said after what a file no reader takes is.
pub fn reads() -> String {
    let v: Vec<&str> = READERS.iter().map(|r| r.reads()).collect();
    match v.split_last() {
        Some((last, rest)) if !rest.is_empty() => {
            format!("stepscope reads {} and {last}", rest.join(", "))
        }
        _ => format!("stepscope reads {}", v.join("")),
    }
}

/// The first non-whitespace byte of `head`.
pub fn first_byte(head: &[u8]) -> Option<u8> {
    head.iter().copied().find(|b| !b.is_ascii_whitespace())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_input_goes_to_the_reader_that_sniffs_it() {
        let takes = |head: &[u8]| READERS.iter().position(|r| r.sniff(head));
        assert_eq!(takes(b"  {\"traceEvents\": []}"), Some(1));
        let ascend = br#"[{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "Ascend Hardware"}}]"#;
        assert_eq!(takes(ascend), Some(0));
        assert_eq!(takes(b"SQLite format 3\0"), None);
        // The message for a file no reader takes lists every reader of the table.
        let said = reads();
        assert!(
            said.starts_with("stepscope reads Ascend profiler output folders"),
            "{said}"
        );
        assert!(said.ends_with(" and PyTorch profiler (Kineto) JSON traces (.json, .json.gz)"));
        assert_eq!(takes(b""), None);
    }
}
