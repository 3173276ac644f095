//! The warm cache (docs/cache.md): a big trace's model is written once, after its first
//! read, to the user's cache folder (`$XDG_CACHE_HOME/stepscope`, or `STEPSCOPE_CACHE_DIR`),
//! and read back instead of the trace while the trace is unchanged (same path, size,
//! modification time and ends). Entries are written atomically, the folder is kept under a
//! size bound by dropping the least recently used, and an entry that does not read whole is
//! ignored with a note and written again: the cache can only ever cost a re-read.

use super::{FileKind, Identity, Reading};
use crate::error::Error;
use crate::ingest::RankDraft;
use std::fs::{self, File};
use std::hash::{Hash, Hasher};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::mpsc::SyncSender;
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

/// Where the cache is and how much it keeps.
#[derive(Debug, Clone)]
pub struct Cache {
    /// The folder of entries.
    pub dir: PathBuf,
    /// The most bytes its entries may take together (`STEPSCOPE_CACHE_MAX`, 4 GiB).
    pub max_bytes: u64,
    /// Inputs smaller than this are read, not cached (`STEPSCOPE_CACHE_MIN`, 16 MiB): their
    /// read costs less than keeping them.
    pub min_input: u64,
}

/// [`Cache::max_bytes`] by default.
pub(crate) const DEFAULT_MAX: u64 = 4 << 30;
/// [`Cache::min_input`] by default.
pub(crate) const DEFAULT_MIN: u64 = 16 << 20;

/// What reading through the cache gave.
pub struct Through {
    /// The input's drafts.
    pub drafts: Vec<RankDraft>,
    /// Whether they came from the cache.
    pub hit: bool,
    /// Why an entry was ignored, when one was.
    pub note: Option<String>,
}

impl Cache {
    /// The user's cache: `STEPSCOPE_CACHE_DIR`, else the platform's cache folder for
    /// stepscope; `None` when there is no home to put it in.
    pub fn of_user() -> Option<Cache> {
        let dir = match std::env::var_os("STEPSCOPE_CACHE_DIR") {
            Some(d) if !d.is_empty() => PathBuf::from(d),
            _ => directories::ProjectDirs::from("", "", "stepscope")?
                .cache_dir()
                .join("models"),
        };
        let size = |var: &str, default: u64| {
            std::env::var(var)
                .ok()
                .and_then(|v| crate::ingest::source::parse_size(&v).ok())
                .unwrap_or(default)
        };
        Some(Cache {
            dir,
            max_bytes: size("STEPSCOPE_CACHE_MAX", DEFAULT_MAX),
            min_input: size("STEPSCOPE_CACHE_MIN", DEFAULT_MIN),
        })
    }

    /// `STEPSCOPE_CACHE_MAX` and `STEPSCOPE_CACHE_MIN`, when set, are sizes
    /// `source::parse_size` accepts; else which is not and why (the CLI refuses it before
    /// reading anything).
    pub fn check_env() -> Result<(), String> {
        for var in ["STEPSCOPE_CACHE_MAX", "STEPSCOPE_CACHE_MIN"] {
            if let Some(v) = std::env::var_os(var) {
                let v = v.to_str().ok_or_else(|| format!("{var} is not UTF-8"))?;
                crate::ingest::source::parse_size(v).map_err(|e| format!("{var}: {e}"))?;
            }
        }
        Ok(())
    }

    /// The entry of the file at `path` (one per path: a changed file replaces its entry).
    pub fn entry(&self, id: &Identity) -> PathBuf {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        id.path.hash(&mut h);
        self.dir.join(format!("{:016x}.model", h.finish()))
    }

    /// The drafts of the file at `path` (labelled `label`): from its entry when one is
    /// valid, else from `read`, then stored.
    pub fn read_through(
        &self,
        path: &Path,
        label: &str,
        reading: Reading,
        read: impl FnOnce() -> Result<Vec<RankDraft>, Error>,
    ) -> Result<Through, Error> {
        let fresh = |drafts| Through {
            drafts,
            hit: false,
            note: None,
        };
        // Only a regular file, told by its metadata: opening a FIFO would block or take
        // its bytes from the read.
        let cacheable = fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() >= self.min_input);
        if !cacheable || is_model_file(path) {
            return read().map(fresh);
        }
        let Ok(id) = Identity::of(path) else {
            return read().map(fresh);
        };
        let entry = self.entry(&id);
        let note = match lookup(&entry, &id, reading) {
            Lookup::Hit(mut drafts) => {
                relabel(&mut drafts, label);
                touch(&entry);
                return Ok(Through {
                    drafts,
                    hit: true,
                    note: None,
                });
            }
            Lookup::Absent => None,
            Lookup::Unusable(why) => Some(format!(
                "{label}: its cache entry {} was ignored ({why}); read the trace again",
                entry.display()
            )),
        };
        let drafts = read()?;
        self.store(entry, id, reading, &drafts);
        Ok(Through {
            drafts,
            hit: false,
            note,
        })
    }

    /// Encodes an entry and hands it to the writer thread (the analysis goes on meanwhile;
    /// [`finish_writes`] waits for it); a cache that cannot be written is no cache — the
    /// read stands.
    fn store(&self, entry: PathBuf, id: Identity, reading: Reading, drafts: &[RankDraft]) {
        let Ok(file) = super::encode(FileKind::Cache, id, reading, drafts) else {
            return;
        };
        if file.bytes() > self.max_bytes {
            return;
        }
        let job = Write {
            dir: self.dir.clone(),
            max: self.max_bytes,
            entry,
            file,
        };
        let mut writer = WRITER.lock().unwrap_or_else(|p| p.into_inner());
        let (tx, _) = writer.get_or_insert_with(|| {
            // Two entries queued at most: a reader that outruns the disk waits here rather
            // than holding every encoded entry of a big job in memory.
            let (tx, rx) = std::sync::mpsc::sync_channel::<Write>(2);
            let handle = std::thread::spawn(move || rx.iter().for_each(|w| w.run()));
            (tx, handle)
        });
        let _ = tx.send(job);
    }
}

/// An entry to write.
struct Write {
    dir: PathBuf,
    max: u64,
    entry: PathBuf,
    file: super::Encoded,
}

impl Write {
    /// Writes the entry atomically, then keeps the folder in bounds.
    fn run(self) {
        let written = fs::create_dir_all(&self.dir).and_then(|()| {
            let mut t = tempfile::Builder::new()
                .prefix(".entry-")
                .tempfile_in(&self.dir)?;
            self.file.write_to(&mut t)?;
            t.persist(&self.entry).map_err(|e| e.error)?;
            Ok(())
        });
        if written.is_ok() {
            evict(&self.dir, self.max, &self.entry);
        }
    }
}

/// The writer thread and its queue, started by the first entry to write.
static WRITER: Mutex<Option<(SyncSender<Write>, JoinHandle<()>)>> = Mutex::new(None);

/// Waits for the entries being written: called before the process exits (an entry whose
/// writer is cut off is not there, never half there: it is renamed into place when whole).
pub(crate) fn finish_writes() {
    let writer = WRITER.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some((tx, handle)) = writer {
        drop(tx);
        let _ = handle.join();
    }
}

/// What an entry holds for an input.
enum Lookup {
    /// Its drafts, valid.
    Hit(Vec<RankDraft>),
    /// No entry, or one of the input as it was before it changed.
    Absent,
    /// An entry that does not read: why.
    Unusable(String),
}

/// The entry's drafts when it is a valid cache entry of `id` read with `reading`.
fn lookup(entry: &Path, id: &Identity, reading: Reading) -> Lookup {
    let Ok(file) = File::open(entry) else {
        return Lookup::Absent;
    };
    // SAFETY: stepscope replaces entries by rename and never truncates or writes one in
    // place, so the mapped file does not change under the map.
    let map = match unsafe { memmap2::Mmap::map(&file) } {
        Ok(m) => m,
        Err(e) => return Lookup::Unusable(e.to_string()),
    };
    match super::header(&map) {
        Err(why) => return Lookup::Unusable(why),
        Ok((h, _)) if h.kind != FileKind::Cache => {
            return Lookup::Unusable("not a cache entry".into());
        }
        Ok((h, _)) if h.source != *id || h.reading != reading || h.writer != super::writer() => {
            return Lookup::Absent;
        }
        Ok(_) => {}
    }
    match super::decode(&map) {
        Ok((_, drafts)) => Lookup::Hit(drafts),
        Err(why) => Lookup::Unusable(why),
    }
}

/// True when the file is itself a model file (a summary: read as it is, never cached).
fn is_model_file(path: &Path) -> bool {
    let mut head = [0u8; 16];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|_| &head == super::MAGIC)
}

/// The drafts as read from `label` now: the entry may have been written under another
/// spelling of the same path.
fn relabel(drafts: &mut [RankDraft], label: &str) {
    for d in drafts {
        let old = std::mem::replace(&mut d.rank.source.path, label.to_string());
        if old != label {
            for w in &mut d.warnings {
                *w = w.replace(&old, label);
            }
        }
    }
}

/// Marks an entry used now (least recently used goes first).
fn touch(entry: &Path) {
    if let Ok(f) = File::options().append(true).open(entry) {
        let _ = f.set_modified(SystemTime::now());
    }
}

/// Temporary files older than this are left by a writer that died: removed.
const STALE_TEMP: Duration = Duration::from_secs(3600);

/// Drops the least recently used entries until the folder holds at most `max` bytes
/// (never `keep`, the entry just written).
fn evict(dir: &Path, max: u64, keep: &Path) {
    let Ok(list) = fs::read_dir(dir) else {
        return;
    };
    let now = SystemTime::now();
    let mut entries = Vec::new();
    for e in list.flatten() {
        let (Ok(meta), name) = (e.metadata(), e.file_name()) else {
            continue;
        };
        let used = meta.modified().unwrap_or(now);
        let name = name.to_string_lossy();
        if name.starts_with(".entry-") {
            if now.duration_since(used).unwrap_or_default() > STALE_TEMP {
                let _ = fs::remove_file(e.path());
            }
        } else if name.ends_with(".model") && meta.is_file() {
            entries.push((used, meta.len(), e.path()));
        }
    }
    let mut total: u64 = entries.iter().map(|e| e.1).sum();
    entries.sort();
    for (_, len, path) in entries {
        if total <= max {
            break;
        }
        if path != keep && fs::remove_file(&path).is_ok() {
            total = total.saturating_sub(len);
        }
    }
}
