//! The reader seam (docs/architecture.md, "Adding an input format"): every file format is a
//! [`Reader`] — it sniffs an input's first bytes and reads the input into ranks — listed once
//! in the table `ingest::READERS`. Every reader gets the same [`ReadContext`].

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
pub(crate) trait Reader: Sync {
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

/// The first non-whitespace byte of `head`.
pub(crate) fn first_byte(head: &[u8]) -> Option<u8> {
    head.iter().copied().find(|b| !b.is_ascii_whitespace())
}
