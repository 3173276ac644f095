//! Lanes: a device stream or a CPU thread, the rows of every timeline.

use super::{Interner, Sym};

/// Which side of the launch boundary a lane is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum LaneSide {
    /// A GPU/NPU stream (`pid` = device, `tid` = stream).
    Device,
    /// A host thread (`pid` = process, `tid` = thread).
    Cpu,
    /// Profiler markers and spans with string ids (`"Spans"`, `"Traces"`).
    Other,
}

/// One lane of a rank.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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

impl Lane {
    /// A lane of a table export (no metadata to read): its side, `pid`, `tid` and display
    /// name interned in `strings`, its events from `first` on (counted as they are added).
    pub fn named(
        (side, pid, tid, name): (LaneSide, String, String, String),
        first: u32,
        strings: &mut Interner,
    ) -> Lane {
        Lane {
            side,
            pid: strings.intern(&pid),
            tid: strings.intern(&tid),
            name: strings.intern(&name),
            first,
            count: 0,
        }
    }
}
