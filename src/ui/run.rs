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
    let (theme, keymap) = ui.resolve()?;
    let plan = session::Plan::of(paths, settings)?;
    let labels = plan.inputs.iter().map(session::Input::label).collect();
    let loading = Loading::new(plan.title.clone(), labels);
    let (tx, rx) = channel();
    let spawner = Spawner::new(tx.clone());
    {
        let (counters, analysing) = (loading.counters.clone(), loading.analysing.clone());
        let sp = spawner.clone();
        std::thread::spawn(move || {
            let loaded = plan.load(session::Progress::Counted(&counters));
            analysing.store(true, Ordering::Relaxed);
            let session = loaded.and_then(|l| plan.analyse(l));
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
        crate::stderr_line!("warning: skipped {}", printable(s));
    }
    // Freeing millions of events one by one would only delay the exit.
    std::mem::forget(shell);
    Ok(0)
}

/// Opens the live screen on `opts`' sources (`stepscope watch` on a terminal). Returns the
/// exit code; a source that cannot be opened is an error before the terminal changes.
pub fn run_watch(opts: &crate::session::watch::WatchOptions, ui: &UiOptions) -> Result<i32, Error> {
    use super::watch::WatchScreen;
    let (theme, keymap) = ui.resolve()?;
    let (engine, rx) = crate::session::watch::start(opts)?;
    let (tx, events) = channel();
    let spawner = Spawner::new(tx.clone());
    let silence = opts.silence;
    std::thread::spawn(move || {
        crate::session::watch::live::publish(
            engine,
            &rx,
            silence,
            super::watch::view::WatchView::of,
            |v| spawner.send(v),
        );
    });
    let (guard, mut term) = terminal::setup(ui.mouse)?;
    let size = term.size().map_err(|e| Error::terminal(e.to_string()))?;
    event_loop::spawn_input(tx);
    let ctx = Ctx::new(keymap, theme, ui.ascii, (size.width, size.height));
    let mut shell = Shell::with(WatchScreen::default(), ctx);
    event_loop::run(&mut term, &mut shell, &events)?;
    drop(term);
    drop(guard);
    Ok(0)
}

/// Opens the diff screen on two analysed runs (`stepscope diff` on a terminal).
pub fn run_diff(pair: crate::session::diff::DiffPair, ui: &UiOptions) -> Result<i32, Error> {
    run_screen(super::diff::DiffScreen::new(pair), ui)
}

/// The hang screen of a job's Flight Recorder dumps on the terminal until the user quits.
pub fn run_hang(flight: crate::session::flight::Flight, ui: &UiOptions) -> Result<i32, Error> {
    run_screen(super::hang::HangScreen::new(flight), ui)
}

/// A screen with no background work on the terminal until the user quits.
fn run_screen<S: super::shell::Screen<Msg = ()>>(screen: S, ui: &UiOptions) -> Result<i32, Error> {
    let (theme, keymap) = ui.resolve()?;
    let (tx, events) = channel::<super::shell::Event<()>>();
    let (guard, mut term) = terminal::setup(ui.mouse)?;
    let size = term.size().map_err(|e| Error::terminal(e.to_string()))?;
    event_loop::spawn_input(tx);
    let ctx = Ctx::new(keymap, theme, ui.ascii, (size.width, size.height));
    let mut shell = Shell::with(screen, ctx);
    event_loop::run(&mut term, &mut shell, &events)?;
    drop(term);
    drop(guard);
    // The process exits next: the OS reclaims the screen's data at once.
    std::mem::forget(shell);
    Ok(0)
}

/// The live screen after replaying `paths` (logs, monitor captures) one after another, each
/// from its start to its end, without a terminal (`snapshot --view watch`, tests): the order
/// is fixed, so the screen is deterministic.
pub fn headless_watch(
    paths: &[PathBuf],
    keymap: Keymap,
    theme: Theme,
    ascii: bool,
    size: (u16, u16),
) -> Result<Shell<super::watch::WatchScreen>, Error> {
    let labels = paths.iter().map(|p| p.display().to_string()).collect();
    let mut engine = crate::session::watch::engine::Engine::new(labels, paths, None);
    for (i, p) in paths.iter().enumerate() {
        // Fed a block at a time, as `watch` reads: a log of any size in bounded memory.
        use std::io::Read;
        let label = p.display().to_string();
        let fail = |e: std::io::Error| Error::input(&label, format!("cannot read: {e}"));
        session::check_regular(p)?;
        let mut file = std::fs::File::open(p).map_err(fail)?;
        let mut block = vec![0u8; 1 << 20];
        loop {
            let n = file.read(&mut block).map_err(fail)?;
            engine.feed(i, &block[..n], n == 0, &mut |_, _, _| {});
            if n == 0 {
                break;
            }
        }
    }
    engine.finish();
    let screen = super::watch::WatchScreen {
        view: Box::new(crate::ui::watch::view::WatchView::of(&engine, 0.0)),
        ..Default::default()
    };
    Ok(Shell::new(screen, keymap, theme, ascii, size))
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
