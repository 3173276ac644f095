//! Identifiers that are all small integers but mean different things: a rank's id in the job
//! (what users and traces call it) is not its position in `Job::ranks`, a step number is not
//! a step's position, and an event index is only meaningful within its rank. Newtypes keep
//! them from being mixed up; each serializes as the bare number.

use serde::Serialize;
use std::fmt;

macro_rules! id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, serde::Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub u32);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl From<$name> for u32 {
            fn from(x: $name) -> u32 {
                x.0
            }
        }
    };
}

id!(
    /// A rank's global id (`distributedInfo.rank`, a file-name token, or discovery order).
    RankId
);
id!(
    /// A rank's position in `Job::ranks` (ranks are sorted by id, but ids may have gaps).
    RankIx
);
id!(
    /// A step number, as the profiler numbers steps (`ProfilerStep#N`).
    StepNo
);

impl RankIx {
    /// The position as an index.
    pub fn get(self) -> usize {
        self.0 as usize
    }

    /// The position of `i`.
    pub fn of(i: usize) -> RankIx {
        RankIx(u32::try_from(i).expect("fewer than 2^32 ranks"))
    }
}

/// An event's position in its rank's `Events` (columns), or none: stored in link columns,
/// where "no event" is common, so it is a sentinel rather than an `Option` (4 bytes, not 8).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, serde::Deserialize,
)]
#[serde(transparent)]
#[repr(transparent)]
pub struct EventIx(pub u32);

// SAFETY: a transparent u32: any bit pattern is a value (`NONE` included), no padding.
unsafe impl bytemuck::Zeroable for EventIx {}
// SAFETY: as above; the column codec copies link columns as bytes (`serial.rs`).
unsafe impl bytemuck::Pod for EventIx {}

impl EventIx {
    /// No event: an unlinked event's link, an event outside every step.
    pub const NONE: EventIx = EventIx(u32::MAX);

    /// The index of event `i`.
    pub fn of(i: usize) -> EventIx {
        EventIx(u32::try_from(i).expect("fewer than 2^32 events per rank"))
    }

    /// The index, unless this is [`EventIx::NONE`].
    pub fn get(self) -> Option<usize> {
        (self != EventIx::NONE).then_some(self.0 as usize)
    }

    /// The index of an event known to exist (a collective's, an operator's).
    pub fn index(self) -> usize {
        debug_assert!(self != EventIx::NONE, "an event index, not NONE");
        self.0 as usize
    }

    /// True for [`EventIx::NONE`].
    pub fn is_none(self) -> bool {
        self == EventIx::NONE
    }
}

impl Default for EventIx {
    fn default() -> Self {
        EventIx::NONE
    }
}

impl fmt::Display for EventIx {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// One event of one rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EventRef {
    /// The rank's position in `Job::ranks`.
    pub rank: RankIx,
    /// The event in that rank.
    pub event: EventIx,
}
