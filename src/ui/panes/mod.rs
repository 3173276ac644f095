//! One file per pane; each is a draw function over the app state (read-only).

pub mod advisor;
pub mod comm;
pub mod critical;
pub mod device;
pub mod loading;
pub mod operator;
pub mod overview;
pub mod roofline;
pub mod timeline;
