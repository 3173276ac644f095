//! Input errors: one line naming the file and the position, so a user can open the file there.

use std::fmt;

/// Where in an input an error was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    /// Byte offset into the (decompressed) JSON text.
    Byte(u64),
    /// Byte offset into the compressed file (gzip errors happen before any JSON exists).
    CompressedByte(u64),
    /// 1-based line of a text file (keymaps, themes).
    Line(u32),
}

/// A problem with one input; rendered as `path: byte N: message` on a single line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    /// The path as the user gave it (or `-` for stdin).
    pub path: String,
    /// Position of the problem, when one is known.
    pub pos: Option<Position>,
    /// What is wrong, without a trailing period.
    pub msg: String,
}

impl InputError {
    /// An error at a byte offset of the JSON text.
    pub fn at(path: &str, byte: u64, msg: impl Into<String>) -> Self {
        Self {
            path: path.to_string(),
            pos: Some(Position::Byte(byte)),
            msg: msg.into(),
        }
    }

    /// An error about the input as a whole (unreadable, empty directory, ...).
    pub fn whole(path: &str, msg: impl Into<String>) -> Self {
        Self {
            path: path.to_string(),
            pos: None,
            msg: msg.into(),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Messages from libraries can carry newlines; the contract is one line.
        let msg = self.msg.replace(['\n', '\r'], " ");
        match self.pos {
            Some(Position::Byte(b)) => write!(f, "{}: byte {}: {}", self.path, b, msg),
            Some(Position::CompressedByte(b)) => {
                write!(f, "{}: compressed byte {}: {}", self.path, b, msg)
            }
            Some(Position::Line(l)) => write!(f, "{}: line {}: {}", self.path, l, msg),
            None => write!(f, "{}: {}", self.path, msg),
        }
    }
}

impl std::error::Error for InputError {}
