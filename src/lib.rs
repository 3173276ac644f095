#![warn(missing_docs)]
//! stepscope: why is this distributed training step slow?
//!
//! Data flows one way (docs/architecture.md): `ingest` turns bytes into the normalized
//! [`model`], [`analysis`] computes results with pure functions over the model, and the faces
//! render them — [`report`] (text, markdown, JSON) and [`ui`] (the terminal), both wording
//! results through [`prose`] and writing numbers through [`format`]. [`session`] is the one way
//! from paths to analysed data. The `stepscope` binary is a thin command line over this.

/// One line on stderr, where a failed write (stderr closed, full, or a pipe whose reader
/// left) is ignored: a diagnostic that cannot be shown must not end the program, and
/// `crate::stderr_line!` panics there (issue 44: exit 70 after a successful export).
#[macro_export]
macro_rules! stderr_line {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}

pub mod analysis;
pub mod config;
pub mod error;
pub mod format;
/// The fuzz targets' bodies (fuzz/, docs/testing.md "Fuzzing"): compiled for the fuzzer
/// (feature `fuzz`) and for the unit test that replays every input they once failed on.
#[cfg(any(test, feature = "fuzz"))]
#[doc(hidden)]
pub mod fuzz;
mod ingest;
pub mod model;
pub mod output;
pub mod prose;
pub mod report;
pub mod session;
pub mod time;
pub mod ui;

pub use error::{Error, ErrorKind};

/// What the loader offers beyond [`session`]: the discovery and role-table vocabulary tests
/// and tools need.
pub mod input {
    pub use crate::ingest::demo::{BUSBW_GBPS, Cause, DemoSpec, FIRST_STEP, PAUSE_NS, RandomJob};
    pub use crate::ingest::discover::{discover, is_trace_name, rank_from_name};
    pub use crate::ingest::logs::generic::{Joined, Learned, Member, key_of};
    pub use crate::ingest::logs::stream::FollowOptions;
    pub use crate::ingest::logs::{
        RECOGNISERS, Record, Said, SourceState, Step as LogStep, line, monitors, recognise,
    };
    pub use crate::ingest::roles::RoleTable;
    pub use crate::ingest::{Input, LoadOptions, Origin, progress};
}
