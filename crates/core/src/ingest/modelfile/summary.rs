//! Summaries as inputs: a file `stepscope summarize` wrote (or a cache entry given by
//! path) reads back as the ranks of the trace it was made from, so that every face opens a
//! folder of summaries as it opens the traces. An event's own text is read from the trace
//! when the trace is reachable here, unchanged.

use super::{Identity, MAGIC};
use crate::error::Error;
use crate::ingest::RankDraft;
use crate::ingest::reader::{ReadContext, Reader};
use crate::ingest::source::Source;
use std::path::{Path, PathBuf};

/// The file name a summary of an input gets: the input's own, with this after it.
pub(crate) const EXTENSION: &str = ".stepscope";

/// Reads stepscope's model files.
pub(crate) struct SummaryReader;

impl Reader for SummaryReader {
    fn reads(&self) -> &'static str {
        "stepscope summaries (stepscope summarize)"
    }

    fn sniff(&self, head: &[u8]) -> bool {
        head.starts_with(MAGIC)
    }

    fn read(
        &self,
        src: &Source,
        _: Option<&Path>,
        cx: &ReadContext,
    ) -> Result<Vec<RankDraft>, Error> {
        let (header, mut drafts) =
            super::decode(&src.text).map_err(|why| Error::input(&src.label, why))?;
        for d in &mut drafts {
            d.rank.source.summary = Some(src.label.clone());
        }
        if header.reading.roles != cx.roles.fingerprint() {
            if let Some(d) = drafts.first_mut() {
                d.warnings.push(format!(
                    "{}: summarized with other role tables than these (another roles.toml or \
                     --step-range): its names keep the roles they were read with",
                    src.label
                ));
            }
        }
        Ok(drafts)
    }
}

/// The trace a model file at `path` was made from, when it is reachable here and unchanged
/// since; else why not. `Ok(None)`: `path` is not a model file.
pub(crate) fn trace_of(path: &Path) -> Result<Option<PathBuf>, String> {
    let Some(header) = super::read_header(path)? else {
        return Ok(None);
    };
    let trace = PathBuf::from(&header.source.path);
    match Identity::of(&trace) {
        Ok(now) if now == header.source => Ok(Some(trace)),
        Ok(_) => Err(format!(
            "the trace {} changed since it was summarized",
            header.source.path
        )),
        Err(e) => Err(format!(
            "the trace {} is not reachable here ({e}): the summary keeps no event text",
            header.source.path
        )),
    }
}
