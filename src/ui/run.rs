//! Opening the TUI: the terminal set up (and restored on every way out), the loading screen
//! while a background thread loads and analyses, then the browser — both screens of one
//! shell, on one channel of terminal input and background results.

use super::UiMsg;
use super::browser::Browser;
use super::loading::Loading;
use super::shell::keymap::Keymap;
use super::shell::theme::Theme;
use super::shell::{Ctx, Shell, Spawner, event_loop, terminal};
use crate::error::Error;
use crate::format::printable;
use crate::session::{self, Session, Settings};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::mpsc::channel;

/// How the UI looks and takes input.
#[derive(Debug, Clone)]
pub struct UiOptions {
    /// Theme name or path (`None`: dark, or mono under NO_COLOR).
    pub theme: Option<String>,
    /// Keymap name or path.
    pub keymap: String,
    /// ASCII only.
    pub ascii: bool,
    /// Capture the mouse.
    pub mouse: bool,
}

impl UiOptions {
    /// The theme and keymap these options name (a broken file is a configuration error).
    pub fn resolve(&self) -> Result<(Theme, Keymap), Error> {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let truecolor = std::env::var("COLORTERM").is_ok_and(|v| v == "truecolor" || v == "24bit");
        Ok((
            Theme::load(self.theme.as_deref(), no_color, truecolor)?,
            Keymap::load(&self.keymap)?,
        ))
    }
}

/// Opens the TUI on `paths` (none: the demo cluster). Returns the exit code.
pub fn run(paths: &[PathBuf], settings: &Settings, ui: &UiOptions) -> Result<i32, Error> {
    let opts = settings.analysis_options()?;
    let (theme, keymap) = ui.resolve()?;
    let load_opts = settings.load_options()?;
    let inputs = session::inputs(paths, settings.scenario)?;
    let title = session::title(paths, settings.scenario);
    let labels = inputs.iter().map(session::Input::label).collect();
    let loading = Loading::new(title.clone(), labels);
    let (tx, rx) = channel();
    let spawner = Spawner::new(tx.clone());
    {
        let (counters, analysing) = (loading.counters.clone(), loading.analysing.clone());
        let sp = spawner.clone();
        std::thread::spawn(move || {
            let loaded = session::load_counted(&inputs, &load_opts, &counters);
            analysing.store(true, Ordering::Relaxed);
            let session = loaded.and_then(|l| Session::analyse(l, opts, title, inputs));
            sp.send(UiMsg::Loaded(Box::new(session)));
        });
    }
    let (guard, mut term) = terminal::setup(ui.mouse)?;
    let size = term.size().map_err(|e| Error::terminal(e.to_string()))?;
    event_loop::spawn_input(tx);
    let mut ctx = Ctx::new(keymap, theme, ui.ascii, (size.width, size.height));
    ctx.spawner = Some(spawner);
    let mut shell = Shell::with(loading, ctx);
    event_loop::run(&mut term, &mut shell, &rx)?;
    let Some(result) = shell.screen.result.take() else {
        return Ok(0); // quit while loading
    };
    let session = result?;
    let skipped: Vec<String> = session
        .loaded
        .skipped
        .iter()
        .map(ToString::to_string)
        .collect();
    let mut ctx = shell.ctx;
    if let Some(first) = skipped.first() {
        ctx.status = Some(format!("skipped {} input(s): {first}", skipped.len()));
    }
    let mut shell = Shell::with(Browser::new(session), ctx);
    event_loop::run(&mut term, &mut shell, &rx)?;
    drop(term);
    drop(guard);
    for s in &skipped {
        eprintln!("warning: skipped {}", printable(s));
    }
    // Freeing millions of events one by one would only delay the exit.
    std::mem::forget(shell);
    Ok(0)
}

/// A browser on `session` without a terminal (snapshots, tests, benchmarks): background
/// work off, so every on-demand analysis is computed inline and the result is deterministic.
pub fn headless(
    session: Session,
    keymap: Keymap,
    theme: Theme,
    ascii: bool,
    size: (u16, u16),
) -> Shell<Browser> {
    Shell::new(Browser::new(session), keymap, theme, ascii, size)
}
