#![warn(missing_docs)]
//! stepscope: why is this distributed training step slow?
//!
//! Data flows one way (DESIGN §3): [`ingest`] turns bytes into the normalized [`model`],
//! [`analysis`] computes results with pure functions over the model, and [`report`] renders
//! them; [`ui`] draws them in the terminal. [`synth`] generates the embedded demo cluster; [`cli`] wires it together.

pub mod analysis;
pub mod cli;
pub mod error;
pub mod ingest;
pub mod model;
pub mod report;
pub mod synth;
pub mod time;
pub mod ui;
