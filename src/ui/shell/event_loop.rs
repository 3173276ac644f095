//! The terminal loop: everything arrives on one channel — keys, mouse and resizes from an
//! input thread, results from background work, live data — and the screen is redrawn only
//! when something changed, once per burst (a burst of keys over slow SSH costs one frame).

use super::terminal::Term;
use super::{Event, Screen, Shell, keymap};
use crate::error::Error;
use ratatui::crossterm::event::{self, KeyEventKind, MouseButton, MouseEventKind};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

/// Wheels send bursts of events: one move per this long keeps scrolling smooth.
const WHEEL_EVERY: Duration = Duration::from_millis(30);

/// Reads terminal events on a thread of their own and sends them to the loop.
pub fn spawn_input<M: Send + 'static>(tx: Sender<Event<M>>) {
    std::thread::spawn(move || {
        while let Ok(e) = event::read() {
            if tx.send(Event::Input(e)).is_err() {
                break;
            }
        }
    });
}

/// Runs `shell` until the user quits or the screen is done.
pub fn run<S: Screen>(
    term: &mut Term,
    shell: &mut Shell<S>,
    rx: &Receiver<Event<S::Msg>>,
) -> Result<(), Error> {
    let io = |e: std::io::Error| Error::terminal(e.to_string());
    let mut dirty = true;
    let mut last_wheel = Instant::now() - Duration::from_secs(1);
    while !shell.ctx.quit && !shell.screen.done() {
        if dirty {
            term.draw(|f| shell.draw(f)).map_err(io)?;
            dirty = false;
            shell.after_frame();
        }
        let first = match shell.screen.tick() {
            Some(t) => match rx.recv_timeout(t) {
                Ok(e) => Some(e),
                Err(RecvTimeoutError::Timeout) => {
                    dirty = true;
                    None
                }
                Err(RecvTimeoutError::Disconnected) => return Err(gone()),
            },
            None => Some(rx.recv().map_err(|_| gone())?),
        };
        let mut next = first;
        while let Some(e) = next {
            dirty |= handle(shell, e, &mut last_wheel);
            if shell.ctx.quit || shell.screen.done() {
                break;
            }
            next = rx.try_recv().ok();
        }
    }
    Ok(())
}

fn gone() -> Error {
    Error::internal("the event sources stopped unexpectedly")
}

/// Applies one event; true when the screen must be redrawn.
fn handle<S: Screen>(shell: &mut Shell<S>, e: Event<S::Msg>, last_wheel: &mut Instant) -> bool {
    use event::Event as Input;
    match e {
        Event::Msg(m) => {
            let changed = shell.screen.receive(m, &mut shell.ctx);
            if changed {
                shell.screen.refresh(&mut shell.ctx);
            }
            changed
        }
        Event::Input(Input::Key(k)) if k.kind != KeyEventKind::Release => {
            shell.key(keymap::normalize(k))
        }
        Event::Input(Input::Resize(w, h)) => {
            shell.resize(w, h);
            true
        }
        Event::Input(Input::Mouse(m)) => match m.kind {
            MouseEventKind::Down(MouseButton::Left) => {
                shell.click(m.column, m.row);
                true
            }
            MouseEventKind::ScrollDown | MouseEventKind::ScrollUp => {
                if last_wheel.elapsed() < WHEEL_EVERY {
                    return false;
                }
                *last_wheel = Instant::now();
                let by = if m.kind == MouseEventKind::ScrollDown {
                    3
                } else {
                    -3
                };
                shell.scroll(by);
                true
            }
            _ => false,
        },
        Event::Input(_) => false,
    }
}
