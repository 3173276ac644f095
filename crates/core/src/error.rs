//! One error type for everything a user can be told went wrong: its [`ErrorKind`] decides the
//! exit code, and it renders as one line naming the file (or option) and, when known, the
//! position — so a user can open the file there.

use std::fmt;

/// Where in an input an error was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    /// Byte offset into the (decompressed) text.
    Byte(u64),
    /// Byte offset into the compressed file (gzip errors happen before any text exists).
    CompressedByte(u64),
    /// 1-based line of a text file (keymaps, themes, logs).
    Line(u32),
    /// A row of a database table (its rowid).
    Row(&'static str, i64),
}

/// What kind of failure, which sets the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A bad command line: an option's value, a step or rank the job does not have.
    Usage,
    /// An input that cannot be read (a trace, stdin).
    Input,
    /// A configuration file (keymap, theme, device table, thresholds, roles).
    Config,
    /// The terminal could not be set up or drawn on.
    Terminal,
    /// Something stepscope itself got wrong.
    Internal,
}

impl ErrorKind {
    /// The process exit code: 2 for what the user can fix in the command, its inputs or its
    /// configuration (as `--help` says: "2 bad input or usage"); sysexits' EX_IOERR and EX_SOFTWARE for
    /// the terminal and for bugs.
    pub fn exit_code(self) -> i32 {
        match self {
            ErrorKind::Usage | ErrorKind::Input | ErrorKind::Config => 2,
            ErrorKind::Terminal => 74,
            ErrorKind::Internal => 70,
        }
    }
}

/// A failure, rendered as `what: byte N: message` on a single line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// What kind of failure.
    pub kind: ErrorKind,
    /// The file (as the user gave it, `-` for stdin) or the option concerned.
    pub path: String,
    /// Position of the problem, when one is known.
    pub pos: Option<Position>,
    /// What is wrong, without a trailing period.
    pub msg: String,
}

impl Error {
    fn new(kind: ErrorKind, path: &str, pos: Option<Position>, msg: impl Into<String>) -> Self {
        Error {
            kind,
            path: path.to_string(),
            pos,
            msg: msg.into(),
        }
    }

    /// An input error at a byte offset of the text.
    pub fn input_at(path: &str, byte: u64, msg: impl Into<String>) -> Self {
        Self::new(ErrorKind::Input, path, Some(Position::Byte(byte)), msg)
    }

    /// An input error at a position.
    pub fn input_pos(path: &str, pos: Position, msg: impl Into<String>) -> Self {
        Self::new(ErrorKind::Input, path, Some(pos), msg)
    }

    /// An input error about the input as a whole (unreadable, empty directory, ...).
    pub fn input(path: &str, msg: impl Into<String>) -> Self {
        Self::new(ErrorKind::Input, path, None, msg)
    }

    /// A usage error about an option (`--rank`) or a command (`snapshot`); with `what`
    /// empty, the message alone (a value parser's, which the command line prefixes itself).
    pub fn usage(what: &str, msg: impl Into<String>) -> Self {
        Self::new(ErrorKind::Usage, what, None, msg)
    }

    /// A configuration error in a file, at a line when known.
    pub fn config(path: &str, line: Option<u32>, msg: impl Into<String>) -> Self {
        Self::new(ErrorKind::Config, path, line.map(Position::Line), msg)
    }

    /// The terminal failed.
    pub fn terminal(msg: impl Into<String>) -> Self {
        Self::new(ErrorKind::Terminal, "terminal", None, msg)
    }

    /// A bug: an invariant stepscope relies on did not hold.
    pub fn internal(msg: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, "stepscope", None, msg)
    }

    /// The exit code of this error.
    pub fn exit_code(&self) -> i32 {
        self.kind.exit_code()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Messages from libraries can carry newlines; the contract is one line.
        let msg = self.msg.replace(['\n', '\r'], " ");
        match self.pos {
            Some(Position::Byte(b)) => write!(f, "{}: byte {}: {}", self.path, b, msg),
            Some(Position::CompressedByte(b)) => {
                write!(f, "{}: compressed byte {}: {}", self.path, b, msg)
            }
            Some(Position::Line(l)) => write!(f, "{}: line {}: {}", self.path, l, msg),
            Some(Position::Row(t, r)) => write!(f, "{}: table {t} row {r}: {}", self.path, msg),
            None if self.path.is_empty() => f.write_str(&msg),
            None => write!(f, "{}: {}", self.path, msg),
        }
    }
}

impl std::error::Error for Error {}

/// A result whose error is an [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
