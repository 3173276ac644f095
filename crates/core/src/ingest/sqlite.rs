//! The one way every SQLite reader (Ascend's profiler databases, and the next: Nsight Systems
//! exports) opens a database, without ever writing next to it: read-only and immutable (no
//! lock, no `-shm`, no journal), through symbolic links, after checking that what is on disk
//! is complete — a file that is not SQLite, or one whose last writes sit in a write-ahead log
//! or a hot journal, is an error naming the file, never a silently partial answer.

use crate::error::{Error, Position};
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};

/// SQLite's file header magic.
pub(crate) use super::identify::SQLITE_MAGIC as MAGIC;

/// A database opened for reading, with its label for messages.
pub(crate) struct Db {
    /// The connection (read-only, immutable).
    pub conn: Connection,
    /// The path as given.
    pub label: String,
}

impl Db {
    /// Opens `path` after checking its header and that no write is pending beside it.
    pub(crate) fn open(path: &Path) -> Result<Db, Error> {
        let label = path.display().to_string();
        crate::ingest::source::check_regular(path)?;
        let header = read_header(path, &label)?;
        if header.len() < 100 || &header[..16] != MAGIC {
            return Err(Error::input_at(&label, 0, "not an SQLite database"));
        }
        // The profiler writes its log beside the database itself: through a link, that is
        // beside the file the link points to (both places are checked).
        let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        for (suffix, what) in [
            ("-wal", "a write-ahead log"),
            ("-journal", "a rollback journal"),
        ] {
            let beside = [sidecar(path, suffix), sidecar(&real, suffix)];
            let pending = beside
                .into_iter()
                .find(|side| std::fs::metadata(side).is_ok_and(|m| m.len() > 0));
            if let Some(side) = pending {
                return Err(Error::input(
                    &label,
                    format!(
                        "{what} ({}) holds writes not yet in the database: the profiler is still \
                         writing it or stopped mid-write; let it finish, or open it once with \
                         sqlite3 to apply them",
                        side.display()
                    ),
                ));
            }
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(uri(path), flags)
            .map_err(|e| Error::input(&label, format!("cannot open: {e}")))?;
        Ok(Db { conn, label })
    }

    /// True when the database has a table of this name.
    pub(crate) fn has_table(&self, name: &str) -> Result<bool, Error> {
        self.conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
                [name],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n > 0)
            .map_err(|e| self.error(None, e))
    }

    /// True when `table` has a column of this name (columns come and go between versions).
    pub(crate) fn has_column(&self, table: &str, column: &str) -> Result<bool, Error> {
        self.conn
            .query_row(
                "SELECT count(*) FROM pragma_table_info(?1) WHERE name = ?2",
                [table, column],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n > 0)
            .map_err(|e| self.error(None, e))
    }

    /// An SQLite error as a one-line input error, at a table's row when one is known.
    pub(crate) fn error(&self, row: Option<(&'static str, i64)>, e: rusqlite::Error) -> Error {
        let msg = match &e {
            rusqlite::Error::SqliteFailure(_, Some(m)) => m.clone(),
            other => other.to_string(),
        };
        match row {
            Some((t, r)) => Error::input_pos(&self.label, Position::Row(t, r), msg),
            None => Error::input(&self.label, msg),
        }
    }
}

/// The first 100 bytes (SQLite's header).
fn read_header(path: &Path, label: &str) -> Result<Vec<u8>, Error> {
    use std::io::Read;
    let mut f =
        std::fs::File::open(path).map_err(|e| Error::input(label, format!("cannot open: {e}")))?;
    let mut buf = Vec::with_capacity(100);
    f.by_ref()
        .take(100)
        .read_to_end(&mut buf)
        .map_err(|e| Error::input(label, format!("cannot read: {e}")))?;
    Ok(buf)
}

/// `x.db` → `x.db-wal`.
fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// A `file:` URI for `path` with `immutable=1`: the characters a URI gives meaning to are
/// percent-encoded.
fn uri(path: &Path) -> String {
    let mut out = String::from("file:");
    for c in path.to_string_lossy().chars() {
        match c {
            '%' | '?' | '#' => out.push_str(&format!("%{:02X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push_str("?immutable=1");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_escape_what_uris_mean() {
        assert_eq!(
            uri(Path::new("/a b/100%?#.db")),
            "file:/a b/100%25%3F%23.db?immutable=1"
        );
        assert_eq!(
            sidecar(Path::new("/x/y.db"), "-wal"),
            PathBuf::from("/x/y.db-wal")
        );
    }
}
