//! Columnar (struct-of-arrays) storage of timed events: scanning one column touches only the
//! bytes it needs, which is what makes analyses over millions of events fast.

use super::{EventIx, Sym};
use crate::time::Ns;

/// In [`Events::step`]: an event outside every step.
pub const NO_STEP: u32 = u32::MAX;

/// What an event is, decided once at load time.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[repr(u8)]
pub enum Kind {
    /// A device kernel that computes.
    Compute,
    /// A communication kernel (NCCL/HCCL/RCCL, or carrying collective args).
    Comm,
    /// A device memory copy.
    Memcpy,
    /// A device memory set.
    Memset,
    /// A device synchronization record (`cuda_sync`): not work, never counted as busy.
    Sync,
    /// A framework operator on a CPU thread (`cpu_op`).
    HostOp,
    /// A runtime/driver API call on a CPU thread (`cudaLaunchKernel`, `cudaMemcpyAsync`, ...).
    Launch,
    /// A user annotation (`record_function` range), on the host or projected onto a device.
    Annotation,
    /// Anything else with a duration (unknown categories, profiler spans).
    Other,
}

impl Kind {
    /// Every kind, in report order.
    pub const ALL: [Kind; 9] = [
        Kind::Compute,
        Kind::Comm,
        Kind::Memcpy,
        Kind::Memset,
        Kind::Sync,
        Kind::HostOp,
        Kind::Launch,
        Kind::Annotation,
        Kind::Other,
    ];

    /// Stable lower-case name used in reports and the JSON schema.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Compute => "compute",
            Kind::Comm => "comm",
            Kind::Memcpy => "memcpy",
            Kind::Memset => "memset",
            Kind::Sync => "sync",
            Kind::HostOp => "host_op",
            Kind::Launch => "launch",
            Kind::Annotation => "annotation",
            Kind::Other => "other",
        }
    }

    /// Device work that occupies a device: kernels, copies and sets (not sync records).
    pub fn is_device_work(self) -> bool {
        matches!(
            self,
            Kind::Compute | Kind::Comm | Kind::Memcpy | Kind::Memset
        )
    }
}

/// Byte range of an event's JSON object in its source text; `args` are parsed from it only
/// when a view needs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct RawSpan {
    /// Offset of the event's `{`.
    pub offset: u64,
    /// Length of the event's text.
    pub len: u32,
}

/// Timed events of one rank as parallel columns; index `i` is one event in every column.
#[derive(Debug, Default, Clone)]
pub struct Events {
    /// Start, ns on the rank's clock.
    pub start: Vec<Ns>,
    /// Duration, ns (never negative).
    pub dur: Vec<Ns>,
    /// Interned name.
    pub name: Vec<Sym>,
    /// Lane index into `Rank::lanes`.
    pub lane: Vec<u16>,
    /// What each event is (compute kernel, collective, copy, host op, ...).
    pub kind: Vec<Kind>,
    /// Step index into `Rank::steps` (device work: the step of its launching call), or
    /// [`NO_STEP`].
    pub step: Vec<u32>,
    /// Launch link by correlation id: device event → its runtime call, runtime call → the
    /// device event it launched; [`EventIx::NONE`] when unpaired.
    pub link: Vec<EventIx>,
    /// The `cpu_op` this runtime call or device event belongs to (by `External id`), or
    /// [`EventIx::NONE`].
    pub op: Vec<EventIx>,
    /// Where the event's text is, for lazy `args`.
    pub raw: Vec<RawSpan>,
}

impl Events {
    /// Number of events.
    pub fn len(&self) -> usize {
        self.start.len()
    }

    /// True when there are no events.
    pub fn is_empty(&self) -> bool {
        self.start.is_empty()
    }

    /// End of event `i` (start + dur).
    pub fn end(&self, i: usize) -> Ns {
        self.start[i] + self.dur[i]
    }
}
