#![warn(missing_docs)]
//! stepscope's engine, with no terminal code: `ingest` turns bytes into the normalized
//! [`model`], [`analysis`] computes results with pure functions over the model, and
//! [`session`] is the one way from paths to analysed data. [`prose`] words results and
//! [`format`] writes numbers for every face; [`output`] writes files without clobbering.
//! The faces (report, TUI, watch) live in the `stepscope` crate over this one
//! (docs/architecture.md).

/// One line on stderr, where a failed write (stderr closed, full, or a pipe whose reader
/// left) is ignored: a diagnostic that cannot be shown must not end the program, and
/// `eprintln!` panics there (issue 44: exit 70 after a successful export).
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
/// The readers' internals, public only for the fuzz targets' bodies (feature `fuzz`); every
/// other caller goes through [`session`] and [`input`].
#[cfg(feature = "fuzz")]
#[doc(hidden)]
pub mod ingest;
#[cfg(not(feature = "fuzz"))]
mod ingest;
pub mod model;
pub mod output;
pub mod prose;
pub mod session;
pub mod time;

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
