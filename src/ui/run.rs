//! The terminal loop: set the terminal up (raw mode, alternate screen, optional mouse),
//! restore it on every exit path including panics, show the loading view while a background
//! thread loads and analyses, then redraw only when an event changed something.

use super::app::{App, Data};
use super::keymap::{self, Keymap};
use super::panes::loading::{self, Loading};
use super::theme::Theme;
use crate::analysis;
use crate::error::InputError;
use crate::ingest::progress::Counters;
use crate::ingest::{self, LoadOptions, Loaded, discover};
use crate::synth::{self, DemoSpec};
use ratatui::Terminal;
use ratatui::crossterm::cursor::Show;
use ratatui::crossterm::event::{
    self, DisableMouseCapture, EnableMouseCapture, Event, KeyEventKind, MouseButton, MouseEventKind,
};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::prelude::CrosstermBackend;
use std::io::Stdout;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

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
    /// The theme and keymap these options name (errors: bad files, exit 2).
    pub fn resolve(&self) -> Result<(Theme, Keymap), InputError> {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let truecolor = std::env::var("COLORTERM").is_ok_and(|v| v == "truecolor" || v == "24bit");
        Ok((
            Theme::load(self.theme.as_deref(), no_color, truecolor)?,
            Keymap::load(&self.keymap)?,
        ))
    }
}

/// Puts the terminal back: mouse off, main screen, cooked mode, cursor shown.
fn restore(mouse: bool) {
    let mut out = std::io::stdout();
    if mouse {
        let _ = execute!(out, DisableMouseCapture);
    }
    let _ = execute!(out, LeaveAlternateScreen, Show);
    let _ = disable_raw_mode();
}

/// Restores the terminal when dropped (normal exit, error, early return).
struct Guard {
    mouse: bool,
}

impl Drop for Guard {
    fn drop(&mut self) {
        restore(self.mouse);
    }
}

fn setup(mouse: bool) -> Result<(Guard, Terminal<CrosstermBackend<Stdout>>), InputError> {
    let fail = |e: std::io::Error| InputError::whole("terminal", e.to_string());
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore(mouse);
        hook(info);
    }));
    enable_raw_mode().map_err(fail)?;
    let guard = Guard { mouse };
    let mut out = std::io::stdout();
    execute!(out, EnterAlternateScreen).map_err(fail)?;
    if mouse {
        execute!(out, EnableMouseCapture).map_err(fail)?;
    }
    let mut term = Terminal::new(CrosstermBackend::new(out)).map_err(fail)?;
    term.hide_cursor().map_err(fail)?;
    term.clear().map_err(fail)?;
    Ok((guard, term))
}

/// What to open.
enum Job {
    Files(Vec<discover::Input>),
    Demo,
}

/// Opens the TUI on `paths` (none: the demo cluster). Returns the exit code.
pub fn run(
    paths: &[PathBuf],
    load: LoadOptions,
    aopts: analysis::Options,
    ui: &UiOptions,
) -> Result<i32, InputError> {
    let (theme, keymap) = ui.resolve()?;
    let (job, labels, title) = if paths.is_empty() {
        let n = DemoSpec::default().ranks;
        (
            Job::Demo,
            (0..n).map(|r| format!("demo:rank-{r}")).collect(),
            "demo cluster".to_string(),
        )
    } else {
        let inputs = discover::discover(paths)?;
        let labels: Vec<String> = inputs.iter().map(discover::Input::label).collect();
        let title = if paths.len() == 1 {
            paths[0].display().to_string()
        } else {
            format!("{} paths", paths.len())
        };
        (Job::Files(inputs), labels, title)
    };
    let counters = Arc::new(Counters::new(labels.len()));
    let analysing = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    {
        let (counters, analysing) = (counters.clone(), analysing.clone());
        std::thread::spawn(move || {
            let loaded: Result<Loaded, InputError> = match &job {
                Job::Demo => ingest::load_sources_counted(
                    synth::sources(DemoSpec::default()),
                    load,
                    &counters,
                ),
                Job::Files(inputs) => ingest::load_counted(inputs, load, &counters),
            };
            analysing.store(true, Ordering::Relaxed);
            let out = loaded.and_then(|l| {
                crate::cli::check_scope(&l, aopts.scope)?;
                let a = analysis::analyze(&l.job, &aopts);
                Ok((l, a, aopts))
            });
            let _ = tx.send(out);
        });
    }
    let (guard, mut term) = setup(ui.mouse)?;
    let io = |e: std::io::Error| InputError::whole("terminal", e.to_string());
    let began = Instant::now();
    // The loading view: redraw every 100 ms until the job arrives; q / Ctrl-C leave.
    let (loaded, analysis, aopts) = loop {
        term.draw(|f| {
            let l = Loading {
                title: &title,
                files: &labels,
                counters: &counters,
                analysing: analysing.load(Ordering::Relaxed),
                elapsed: began.elapsed().as_secs_f64(),
            };
            loading::draw(f, &l, &theme);
        })
        .map_err(io)?;
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(r) => break r?,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(InputError::whole(
                    "stepscope",
                    "the loader stopped unexpectedly",
                ));
            }
        }
        while event::poll(Duration::ZERO).map_err(io)? {
            if let Event::Key(k) = event::read().map_err(io)? {
                let a = keymap.action(keymap::normalize(k));
                if k.kind == KeyEventKind::Press && a == Some(keymap::Action::Quit) {
                    drop(guard);
                    return Ok(0);
                }
            }
        }
    };
    let skipped: Vec<String> = loaded.skipped.iter().map(ToString::to_string).collect();
    let size = term.size().map_err(io)?;
    let mut app = App::new(
        Data::new(loaded, analysis, aopts, title),
        keymap,
        theme,
        ui.ascii,
        (size.width, size.height),
    );
    app.work = Some(super::work::Worker::default());
    if !skipped.is_empty() {
        app.status = Some(format!(
            "skipped {} input(s): {}",
            skipped.len(),
            skipped[0]
        ));
    }
    let mut dirty = true;
    let mut last_wheel = Instant::now() - Duration::from_secs(1);
    while !app.quit {
        if dirty {
            term.draw(|f| super::draw::draw(f, &app)).map_err(io)?;
            dirty = false;
            app.after_frame();
            // Debug builds only: lets the end-to-end test check the panic path restores the
            // terminal (release builds have no such switch).
            #[cfg(debug_assertions)]
            if std::env::var_os("STEPSCOPE_TEST_PANIC").is_some() {
                panic!("STEPSCOPE_TEST_PANIC: a panic after the first frame");
            }
        }
        // Block until something happens (no busy loop) — while background work runs, wake
        // every 50 ms to collect it — then take everything queued before drawing once: a
        // burst of keys over slow SSH costs one frame.
        let busy = app.work.as_ref().is_some_and(super::work::Worker::busy);
        let mut ev = if !busy || event::poll(Duration::from_millis(50)).map_err(io)? {
            Some(event::read().map_err(io)?)
        } else {
            None
        };
        dirty |= app.collect();
        while let Some(e) = ev.take() {
            dirty |= handle(&mut app, e, &mut last_wheel);
            if app.quit || !event::poll(Duration::ZERO).map_err(io)? {
                break;
            }
            ev = Some(event::read().map_err(io)?);
        }
    }
    drop(term);
    drop(guard);
    for s in &skipped {
        eprintln!("warning: skipped {s}");
    }
    // Freeing millions of events one by one would only delay the exit.
    std::mem::forget(app);
    Ok(0)
}

/// Applies one terminal event; true when the screen must be redrawn.
fn handle(app: &mut App, e: Event, last_wheel: &mut Instant) -> bool {
    match e {
        Event::Key(k) if k.kind != KeyEventKind::Release => app.key(keymap::normalize(k)),
        Event::Resize(w, h) => {
            app.size = (w, h);
            app.refresh();
            true
        }
        Event::Mouse(m) => match m.kind {
            MouseEventKind::Down(MouseButton::Left) => {
                app.click(m.column, m.row);
                true
            }
            MouseEventKind::ScrollDown | MouseEventKind::ScrollUp => {
                // Wheels send bursts of events: one move per 30 ms keeps scrolling smooth.
                if last_wheel.elapsed() < Duration::from_millis(30) {
                    return false;
                }
                *last_wheel = Instant::now();
                let by = if m.kind == MouseEventKind::ScrollDown {
                    3
                } else {
                    -3
                };
                app.move_sel(by);
                app.refresh();
                true
            }
            _ => false,
        },
        _ => false,
    }
}
