//! The one way stepscope writes a file (issue 44, class 1): `-` is stdout; any other path is
//! written to a temporary file in its folder and renamed over it when complete, so that a
//! reader never sees half a file and a failed write leaves the old one. It never writes
//! through a symbolic link (dangling or not), onto a file with other hard links (the link
//! could be an input), over something that is not a regular file, or into a folder that
//! holds an input (the next `report DIR` would load the output as a rank).

use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Why an output cannot go where it was asked.
#[derive(Debug)]
pub enum Refused {
    /// The path is a symbolic link.
    Symlink,
    /// An existing file with other hard links.
    HardLinked(u64),
    /// Something other than a regular file is there (a folder, a FIFO).
    NotAFile,
    /// The folder it would go into holds this input (or is inside it).
    NearInput(String),
    /// Writing failed.
    Io(io::Error),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Symlink => write!(f, "is a symbolic link: stepscope never writes through one"),
            Refused::HardLinked(n) => write!(
                f,
                "has {n} hard links: writing it would change the other names too"
            ),
            Refused::NotAFile => write!(f, "exists and is not a regular file"),
            Refused::NearInput(i) => write!(
                f,
                "is in the folder of the input {i}: write it elsewhere (stepscope never writes \
                 beside or into its inputs)"
            ),
            Refused::Io(e) => write!(f, "cannot write: {e}"),
        }
    }
}

/// Whether `target` may be written, given the job's `inputs` (files or folders).
pub fn check(target: &Path, inputs: &[PathBuf]) -> Result<(), Refused> {
    if target.as_os_str() == "-" {
        return Ok(());
    }
    if let Ok(m) = std::fs::symlink_metadata(target) {
        if m.file_type().is_symlink() {
            return Err(Refused::Symlink);
        }
        if !m.is_file() {
            return Err(Refused::NotAFile);
        }
        let links = hard_links(&m);
        if links > 1 {
            return Err(Refused::HardLinked(links));
        }
    }
    let dir = folder(target).map_err(Refused::Io)?;
    near_input(&dir, inputs)
}

/// Whether files may be written into the folder `dir` (made later if missing), given the
/// job's `inputs`: never an input's folder or one inside it.
pub fn check_folder(dir: &Path, inputs: &[PathBuf]) -> Result<(), Refused> {
    // The nearest part of it that exists, resolved, with the rest after it.
    let mut existing = dir;
    let mut rest = Vec::new();
    while !existing.as_os_str().is_empty() && !existing.exists() {
        rest.extend(existing.file_name());
        existing = existing.parent().unwrap_or(Path::new(""));
    }
    let base = if existing.as_os_str().is_empty() {
        Path::new(".")
    } else {
        existing
    };
    let mut abs = std::fs::canonicalize(base).map_err(Refused::Io)?;
    abs.extend(rest.iter().rev());
    near_input(&abs, inputs)
}

/// `Err` when the resolved folder `dir` holds an input (or is inside an input folder).
fn near_input(dir: &Path, inputs: &[PathBuf]) -> Result<(), Refused> {
    for i in inputs.iter().filter(|i| i.as_os_str() != "-") {
        let Ok(abs) = std::fs::canonicalize(i) else {
            continue;
        };
        let near = if abs.is_dir() {
            dir.starts_with(&abs)
        } else {
            abs.parent().is_some_and(|p| dir == p)
        };
        if near {
            return Err(Refused::NearInput(i.display().to_string()));
        }
    }
    Ok(())
}

/// Writes `target` (checked against `inputs`) with `body`, atomically; `-` writes stdout.
pub fn write<T>(
    target: &Path,
    inputs: &[PathBuf],
    body: impl FnOnce(&mut dyn Write) -> io::Result<T>,
) -> Result<T, Refused> {
    check(target, inputs)?;
    if target.as_os_str() == "-" {
        let mut out = io::stdout().lock();
        let v = body(&mut out).map_err(Refused::Io)?;
        out.flush().map_err(Refused::Io)?;
        return Ok(v);
    }
    let dir = folder(target).map_err(Refused::Io)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".stepscope-")
        .suffix(".tmp")
        .tempfile_in(&dir)
        .map_err(Refused::Io)?;
    let v = {
        let mut w = io::BufWriter::with_capacity(1 << 20, tmp.as_file_mut());
        let v = body(&mut w).map_err(Refused::Io)?;
        w.flush().map_err(Refused::Io)?;
        v
    };
    finish(tmp, target, inputs)?;
    Ok(v)
}

/// Writes `target` (checked against `inputs`) atomically through a writer that opens its
/// own file (SQLite): `body` fills the empty file at the path it is given.
pub fn write_at<T>(
    target: &Path,
    inputs: &[PathBuf],
    body: impl FnOnce(&Path) -> io::Result<T>,
) -> Result<T, Refused> {
    check(target, inputs)?;
    if target.as_os_str() == "-" {
        return Err(Refused::NotAFile);
    }
    let dir = folder(target).map_err(Refused::Io)?;
    let tmp = tempfile::Builder::new()
        .prefix(".stepscope-")
        .suffix(".tmp")
        .tempfile_in(&dir)
        .map_err(Refused::Io)?;
    let v = body(tmp.path()).map_err(Refused::Io)?;
    finish(tmp, target, inputs)?;
    Ok(v)
}

/// Puts a finished temporary file in `target`'s place.
fn finish(tmp: tempfile::NamedTempFile, target: &Path, inputs: &[PathBuf]) -> Result<(), Refused> {
    // Checked again just before the rename: a link made meanwhile is not followed anyway
    // (rename replaces the name), but a refusal is clearer than a surprise.
    check(target, inputs)?;
    #[cfg(unix)]
    {
        // A temporary file is private (0600); the output is an ordinary file.
        use std::os::unix::fs::PermissionsExt;
        let perms = std::fs::Permissions::from_mode(0o644);
        tmp.as_file().set_permissions(perms).map_err(Refused::Io)?;
    }
    tmp.persist(target).map_err(|e| Refused::Io(e.error))?;
    Ok(())
}

/// The folder `target` goes into, canonical (`.` for a bare name).
fn folder(target: &Path) -> io::Result<PathBuf> {
    let dir = target
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::canonicalize(dir)
}

#[cfg(unix)]
fn hard_links(m: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::nlink(m)
}

#[cfg(not(unix))]
fn hard_links(_: &std::fs::Metadata) -> u64 {
    1
}
