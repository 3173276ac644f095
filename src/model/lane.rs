//! Lanes: a device stream or a CPU thread, the rows of every timeline.

use super::Sym;

/// Which side of the launch boundary a lane is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LaneSide {
    /// A GPU/NPU stream (`pid` = device, `tid` = stream).
    Device,
    /// A host thread (`pid` = process, `tid` = thread).
    Cpu,
    /// Profiler markers and spans with string ids (`"Spans"`, `"Traces"`).
    Other,
}

/// One lane of a rank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lane {
    /// Device or host.
    pub side: LaneSide,
    /// The trace's `pid` as text (device index, OS process id, or a string id).
    pub pid: Sym,
    /// The trace's `tid` as text (stream id or OS thread id).
    pub tid: Sym,
    /// Display name (`stream 7`, `thread 4037 (pt_main_thread)`), from metadata when present.
    pub name: Sym,
    /// First event of the lane in `Events` (events are grouped by lane).
    pub first: u32,
    /// Number of events on the lane.
    pub count: u32,
}
