//! One timed row of an Nsight export, as every table reader and NCCL's payload reader see it.

use crate::time::Ns;

/// A row's name: shared, as `StringIds` shares it (a clone is a count, not a copy).
pub(super) type Name = std::sync::Arc<str>;

/// One timed row: a kernel, copy, set, device sync, runtime call or NVTX range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Row {
    /// Start, ns on the session's clock.
    pub start: Ns,
    /// End, ns (an NVTX mark has none: its start).
    pub end: Ns,
    /// Process (`globalPid`, or the process part of `globalTid`).
    pub process: i64,
    /// Device work: (device id, stream id); host rows: the thread (`globalTid`).
    pub lane: (i64, i64),
    /// CUDA correlation id (runtime call ↔ device work), when the row has one.
    pub corr: Option<i64>,
    /// Its name (shared: a name repeats on most rows).
    pub name: Name,
}
