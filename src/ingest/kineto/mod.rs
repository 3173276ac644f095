//! PyTorch profiler (Kineto) Chrome-trace JSON: `reference/kineto.md` in the shared folder.

mod build;
mod chunk;
mod fast;
mod parse;
mod raw;

pub use build::{RankDraft, profiler_step_number};
pub use chunk::is_comm_kernel_name;

use super::source::Source;
use crate::error::InputError;
use crate::model::{RankFrom, SourceInfo};

/// Parses one rank's trace into a [`RankDraft`].
pub fn read(src: &Source) -> Result<RankDraft, InputError> {
    let t = std::time::Instant::now();
    let parsed = parse::parse(&src.label, &src.text)?;
    if std::env::var_os("SS_PROF").is_some() { eprintln!("parse {:?}", t.elapsed()); }
    let t = std::time::Instant::now();
    let r = build_it(src, parsed);
    if std::env::var_os("SS_PROF").is_some() { eprintln!("build {:?}", t.elapsed()); }
    r
}
fn build_it(src: &Source, parsed: parse::Parsed<'_>) -> Result<RankDraft, InputError> {
    let info = SourceInfo {
        path: src.label.clone(),
        file_bytes: src.file_bytes,
        json_bytes: src.text.len() as u64,
        rank_from: RankFrom::DistributedInfo,
    };
    build::build(&src.label, parsed, info)
}
