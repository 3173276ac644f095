//! A panic is a bug, and it ends the process the same way from any thread (the TUI's, the
//! watch engine's, a loader's): the terminal is put back first (the hook the terminal guard
//! chains in front of this one), then one line on stderr names the failure and the file that
//! holds its backtrace, and the process exits 70 (EX_SOFTWARE) — never a backtrace over the
//! screen, never a process that lives on with a dead thread and ignores `q`.

use std::io::Write;
use std::panic::PanicHookInfo;
use stepscope::error::ErrorKind;
use stepscope::format::{fit, printable};

/// Installs the hook; call before anything can panic.
pub fn install() {
    std::panic::set_hook(Box::new(|info| {
        let what = describe(info);
        let backtrace = std::backtrace::Backtrace::force_capture().to_string();
        let file = write_details(&what, &backtrace);
        let mut err = std::io::stderr().lock();
        let details = match &file {
            Some(p) => format!("; details in {}", printable(&p.display().to_string())),
            None => String::new(),
        };
        let _ = writeln!(
            err,
            "error: internal error (a bug in stepscope): {what}{details}"
        );
        if backtrace_asked() {
            let _ = writeln!(err, "{}", printable_backtrace(&backtrace));
        }
        let _ = err.flush();
        std::process::exit(ErrorKind::Internal.exit_code());
    }));
}

/// The panic's message and where it happened, one printable line of bounded length (a
/// message can quote trace or log text).
fn describe(info: &PanicHookInfo<'_>) -> String {
    let payload = info.payload();
    let msg = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".to_string());
    let at = info
        .location()
        .map(|l| format!(" at {}:{}", l.file(), l.line()))
        .unwrap_or_default();
    format!("{}{at}", fit(&printable(&msg), 300))
}

/// Whether the user asked for the backtrace on stderr too (`RUST_BACKTRACE` set, not `0`).
fn backtrace_asked() -> bool {
    std::env::var_os("RUST_BACKTRACE").is_some_and(|v| !v.is_empty() && v != "0")
}

fn printable_backtrace(b: &str) -> String {
    b.lines()
        .map(|l| printable(l).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Writes the details to a new file in the temporary directory (never beside the inputs);
/// `None` when no file can be made.
fn write_details(what: &str, backtrace: &str) -> Option<std::path::PathBuf> {
    let dir = std::env::temp_dir();
    let pid = std::process::id();
    for n in 0..100 {
        let path = dir.join(format!("stepscope-panic-{pid}-{n}.txt"));
        // create_new: never follows or overwrites a file someone placed there.
        let Ok(mut f) = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        else {
            continue;
        };
        let args: Vec<String> = std::env::args().collect();
        let _ = writeln!(
            f,
            "stepscope {} panicked: {what}\ncommand line: {args:?}\n\n{backtrace}",
            env!("CARGO_PKG_VERSION")
        );
        return Some(path);
    }
    None
}

/// Debug builds only: `STEPSCOPE_TEST_PANIC=thread` panics on a worker thread while the main
/// thread waits, so a test can check that such a panic still ends the process with one line
/// (the TUI honours the variable after its first frame). Release builds have no such switch.
pub fn test_switch() {
    #[cfg(debug_assertions)]
    if std::env::var_os("STEPSCOPE_TEST_PANIC").is_some_and(|v| v == "thread") {
        let _ = std::thread::spawn(|| panic!("STEPSCOPE_TEST_PANIC: a worker \u{1b}[2J\nthread"));
        loop {
            std::thread::park();
        }
    }
}
