//! The AI Core clock of a `trace_view.json`: the `AI Core Freq` counter (`ph: "C"`, `args:
//! {"MHz": 1800}`), a sample each time the clock changes or the profiler checks it. The
//! Chrome reader counts counter events without reading them, keeping their byte spans (the
//! Ascend dialect asks it to); each is a small object read here on its own.

use crate::model::ClockSample;
use crate::time::micros_text_to_ns;
use serde::Deserialize;
use serde_json::value::RawValue;

#[derive(Deserialize)]
struct Counter<'a> {
    #[serde(borrow, default)]
    ph: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    ts: Option<&'a RawValue>,
    #[serde(default)]
    args: Option<Mhz>,
}

#[derive(Deserialize)]
struct Mhz {
    #[serde(rename = "MHz")]
    mhz: Option<f64>,
}

/// The clock samples among `objects` (the event texts the reader kept), in time order.
pub(crate) fn ai_core_clock<'a>(objects: impl Iterator<Item = &'a [u8]>) -> Vec<ClockSample> {
    let mut out = Vec::new();
    for object in objects {
        let Ok(c) = serde_json::from_slice::<Counter>(object) else {
            continue;
        };
        if c.name.as_deref().map(str::as_bytes) != Some(super::dialect::CLOCK_COUNTER) {
            continue;
        }
        let (Some("C"), Some(ts), Some(mhz)) = (c.ph.as_deref(), c.ts, c.args.and_then(|a| a.mhz))
        else {
            continue;
        };
        // A sample out of the time range (`crate::time`) is as unreadable as a malformed one.
        let at = micros_text_to_ns(ts.get().as_bytes()).and_then(|t| crate::time::event_end(t, 0));
        let Ok(at) = at else {
            continue;
        };
        if mhz.is_finite() && mhz > 0.0 && mhz < f64::from(u32::MAX) {
            out.push(ClockSample {
                at,
                mhz: mhz.round() as u32,
            });
        }
    }
    out.sort_by_key(|s| s.at);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_the_counter_events_alone() {
        let text = br#"[{"name": "process_name", "pid": 6, "tid": 0, "args": {"name": "AI Core Freq"}, "ph": "M"},
{"name": "AI Core Freq", "ts": "2000.000", "pid": 6, "tid": 0, "args": {"MHz": 1200.0}, "ph": "C"},
{"name": "AI Core Freq", "ts": "1000", "pid": 6, "tid": 0, "args": {"MHz": 1800}, "ph": "C"},
{"name": "x}\"{", "ts": "3", "pid": 6, "tid": 0, "args": {"MHz": 1}, "ph": "C"}]"#;
        let s = ai_core_clock(super::super::objects::each(text));
        assert_eq!(
            s,
            [
                ClockSample {
                    at: 1_000_000,
                    mhz: 1800
                },
                ClockSample {
                    at: 2_000_000,
                    mhz: 1200
                }
            ]
        );
    }
}
