//! The engine behind the live screen: runs on a thread of its own and publishes a view of
//! it (the screen's, made by `view`) at most every [`PUBLISH`] (and once more at the end),
//! however fast lines arrive — the screen redraws on each, so at most four times a second.

use super::engine::Engine;
use super::{Next, next};
use crate::ingest::logs::stream::Chunk;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

/// Shortest time between two published views.
pub const PUBLISH: Duration = Duration::from_millis(250);

/// Runs `engine` over what `rx` brings until the sources end or `send` returns false (the
/// screen is gone); `silence` is the watchdog's floor; `view` makes what is sent from the
/// engine and the lines per second measured here.
pub fn publish<V>(
    mut engine: Engine,
    rx: &Receiver<Chunk>,
    silence: Duration,
    view: impl Fn(&Engine, f64) -> V,
    mut send: impl FnMut(Box<V>) -> bool,
) {
    let mut last = Instant::now();
    let mut lines_then = 0;
    let mut dirty = true;
    let mut rate_shown = 0.0;
    loop {
        // The watchdog looks on its own clock: one busy source must not hide a silent one.
        dirty |= !engine.watchdog(silence).is_empty();
        engine.release(&mut |_, _, _| dirty = true);
        match next(rx) {
            Next::Data(i, bytes, end) => {
                engine.feed(i, &bytes, end, &mut |_, _, _| {});
                dirty = true;
            }
            // A tick also publishes when lines stopped since the last view: its rate drops to 0.
            Next::Tick => dirty |= lines_then != engine.live.counts.lines || rate_shown > 0.0,
            Next::Done => break,
        }
        let dt = last.elapsed();
        if dt >= PUBLISH && dirty {
            let lines = engine.live.counts.lines;
            let rate = (lines - lines_then) as f64 / dt.as_secs_f64();
            rate_shown = rate;
            if !send(Box::new(view(&engine, rate))) {
                return;
            }
            (last, lines_then, dirty) = (Instant::now(), lines, false);
        }
    }
    engine.finish();
    send(Box::new(view(&engine, 0.0)));
}
