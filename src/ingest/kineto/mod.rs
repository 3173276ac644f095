//! PyTorch profiler (Kineto) Chrome-trace JSON: `reference/kineto.md` in the shared folder.

mod build;
mod chunk;
mod fast;
mod lanes;
mod link;
mod parse;
mod raw;
mod steps;

pub use build::RankDraft;
pub use parse::ParseOptions;

use super::source::Source;
use crate::error::InputError;
use crate::model::{RankFrom, SourceInfo};

/// Parses one rank's trace into a [`RankDraft`].
pub fn read(src: &Source, opts: &ParseOptions<'_>) -> Result<RankDraft, InputError> {
    let parsed = parse::parse(&src.label, &src.text, opts)?;
    let info = SourceInfo {
        path: src.label.clone(),
        file_bytes: src.file_bytes,
        json_bytes: src.text.len() as u64,
        rank_from: RankFrom::DistributedInfo,
    };
    build::build(&src.label, parsed, info)
}
