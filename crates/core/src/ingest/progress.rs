//! Load progress on stderr (files, MB, events, rate) — only when stderr is a terminal and the
//! load takes longer than a second; never on stdout, never when piped.

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Counters the loaders bump as they go.
#[derive(Debug, Default)]
pub struct Counters {
    /// Files finished (loaded or skipped).
    pub files_done: AtomicU64,
    /// JSON bytes parsed.
    pub bytes: AtomicU64,
    /// Timed events stored.
    pub events: AtomicU64,
    /// Per input: one of the `FILE_*` states (the TUI's loading view lists them).
    pub files: Vec<AtomicU8>,
}

/// An input not started yet.
pub const FILE_PENDING: u8 = 0;
/// An input being read.
pub const FILE_READING: u8 = 1;
/// An input loaded.
pub const FILE_DONE: u8 = 2;
/// An input that could not be read (skipped).
pub const FILE_FAILED: u8 = 3;

impl Counters {
    /// Counters for `files` inputs, all pending.
    pub fn new(files: usize) -> Counters {
        Counters {
            files: (0..files).map(|_| AtomicU8::new(FILE_PENDING)).collect(),
            ..Counters::default()
        }
    }

    /// Records an input's state.
    pub fn set_file(&self, i: usize, state: u8) {
        if let Some(f) = self.files.get(i) {
            f.store(state, Ordering::Relaxed);
        }
    }
}

/// A running progress display; stops (and clears its line) on drop.
pub struct Progress {
    /// The counters shown.
    pub counters: Arc<Counters>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Progress {
    /// Starts the display thread when stderr is a terminal; otherwise only counts.
    pub fn start(total_files: usize) -> Progress {
        let counters = Arc::new(Counters::new(total_files));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = std::io::stderr().is_terminal().then(|| {
            let (c, s) = (counters.clone(), stop.clone());
            std::thread::spawn(move || show(&c, &s, total_files))
        });
        Progress {
            counters,
            stop,
            thread,
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

fn show(c: &Counters, stop: &AtomicBool, total: usize) {
    let began = Instant::now();
    let mut shown = false;
    while !stop.load(Ordering::Relaxed) {
        std::thread::park_timeout(Duration::from_millis(200));
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let el = began.elapsed();
        if el < Duration::from_secs(1) {
            continue;
        }
        let mb = c.bytes.load(Ordering::Relaxed) as f64 / 1e6;
        let line = format!(
            "\rloading: {}/{} files, {:.0} MB, {} events, {:.0} MB/s ",
            c.files_done.load(Ordering::Relaxed),
            total,
            mb,
            c.events.load(Ordering::Relaxed),
            mb / el.as_secs_f64()
        );
        let _ = std::io::stderr().write_all(line.as_bytes());
        shown = true;
    }
    if shown {
        let _ = std::io::stderr().write_all(b"\r\x1b[2K");
    }
}
