//! Byte streams for `watch`: stdin (read from its start to its end) and files (followed like
//! `tail -F`: from their end unless asked to start at the beginning, surviving rotation and
//! truncation). One reader thread per source sends what it reads on a bounded channel
//! ([`QUEUE`] chunks of up to 64 KiB): the pipe is drained as fast as stepscope recognises
//! lines (well above what a training job prints), and a burst beyond that waits in the pipe
//! rather than in memory, so memory stays bounded on a stream of any length.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::mpsc::SyncSender;
use std::time::Duration;

/// What a reader sends.
#[derive(Debug)]
pub enum Chunk {
    /// Bytes read from source `0`.
    Bytes(usize, Vec<u8>),
    /// Source `0` ended (stdin closed, or a file read to its end when not following).
    End(usize),
}

/// How files are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FollowOptions {
    /// Read files from their start (default: only lines written from now on).
    pub from_start: bool,
    /// Keep following files at their end (default); without, a file ends at its end.
    pub follow: bool,
}

/// Chunks queued between the readers and the recognisers (at most 16 MiB).
pub(crate) const QUEUE: usize = 256;

/// How often a followed file is polled at its end.
const POLL: Duration = Duration::from_millis(200);
const BUF: usize = 64 * 1024;

/// Starts one reader per source (`-` is stdin); returns their labels, in order.
pub(crate) fn spawn(
    paths: &[PathBuf],
    opts: FollowOptions,
    tx: &SyncSender<Chunk>,
) -> Result<Vec<String>, crate::error::Error> {
    let mut labels = Vec::new();
    for (i, p) in paths.iter().enumerate() {
        let tx = tx.clone();
        if p.as_os_str() == "-" {
            labels.push("stdin".to_string());
            std::thread::spawn(move || read_all(i, std::io::stdin().lock(), &tx));
        } else {
            let label = p.display().to_string();
            let file = File::open(p)
                .map_err(|e| crate::error::Error::input(&label, format!("cannot open: {e}")))?;
            labels.push(label);
            let path = p.clone();
            std::thread::spawn(move || follow_file(i, &path, file, opts, &tx));
        }
    }
    Ok(labels)
}

/// Reads `r` to its end.
fn read_all(i: usize, mut r: impl Read, tx: &SyncSender<Chunk>) {
    let mut buf = vec![0u8; BUF];
    loop {
        match r.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if tx.send(Chunk::Bytes(i, buf[..n].to_vec())).is_err() {
                    return;
                }
            }
        }
    }
    let _ = tx.send(Chunk::End(i));
}

/// Reads a file from its start or end, then (when following) polls it: a file that shrank
/// was truncated (read again from its start); one whose identity changed was rotated (the
/// new file is opened and read from its start).
fn follow_file(i: usize, path: &Path, mut file: File, opts: FollowOptions, tx: &SyncSender<Chunk>) {
    let mut pos = if opts.from_start {
        0
    } else {
        file.seek(SeekFrom::End(0)).unwrap_or(0)
    };
    let mut id = identity(&file);
    let mut buf = vec![0u8; BUF];
    loop {
        match file.read(&mut buf) {
            Ok(n) if n > 0 => {
                pos += n as u64;
                if tx.send(Chunk::Bytes(i, buf[..n].to_vec())).is_err() {
                    return;
                }
                continue;
            }
            _ => {}
        }
        if !opts.follow {
            break;
        }
        std::thread::sleep(POLL);
        if let Ok(m) = std::fs::metadata(path) {
            let now = identity_of(&m);
            if now != id {
                if let Ok(f) = File::open(path) {
                    file = f;
                    id = now;
                    pos = 0;
                }
            } else if m.len() < pos {
                pos = file.seek(SeekFrom::Start(0)).unwrap_or(0);
            }
        }
    }
    let _ = tx.send(Chunk::End(i));
}

/// A file's identity (device, inode) where the platform has one.
fn identity(f: &File) -> Option<(u64, u64)> {
    f.metadata().ok().as_ref().and_then(identity_of)
}

#[cfg(unix)]
fn identity_of(m: &std::fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn identity_of(_: &std::fs::Metadata) -> Option<(u64, u64)> {
    None
}
