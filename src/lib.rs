#![warn(missing_docs)]
//! stepscope: why is this distributed training step slow?
//!
//! Data flows one way (docs/architecture.md). The engine is the `stepscope-core` crate — the
//! readers, the normalized [`model`], the pure [`analysis`] and the [`session`] that joins them,
//! with no terminal code — re-exported here under its own names. This crate holds the faces
//! over it: [`report`] (text, markdown, JSON, the watch stream) and [`ui`] (the terminal), both
//! wording results through [`prose`] and writing numbers through [`format`]. The `stepscope`
//! binary is a thin command line over this.

pub use stepscope_core::{
    Error, ErrorKind, analysis, config, error, format, input, model, output, prose, session,
    stderr_line, time,
};

/// The readers' internals, for the fuzz targets' bodies only.
#[cfg(any(test, feature = "fuzz"))]
use stepscope_core::ingest;

/// The fuzz targets' bodies (fuzz/, docs/testing.md "Fuzzing"): compiled for the fuzzer
/// (feature `fuzz`) and for the unit test that replays every input they once failed on.
#[cfg(any(test, feature = "fuzz"))]
#[doc(hidden)]
pub mod fuzz;
pub mod report;
pub mod ui;
