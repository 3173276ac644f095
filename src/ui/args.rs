//! An operator's `args`, parsed lazily: the event's JSON text is read again from its file
//! (plain: mapped; gzip: inflated up to the event) or regenerated (demo), only when the
//! operator view opens.

use crate::ingest::Loaded;
use crate::ingest::source;
use crate::synth::{self, DemoSpec};
use std::path::Path;

/// Longest value shown per arg.
const MAX_VALUE: usize = 200;

/// The `args` of event `event` of rank `rank` (index) as (key, value text) pairs.
pub fn read(
    loaded: &Loaded,
    longest: Option<(usize, u32)>,
) -> Result<Vec<(String, String)>, String> {
    let (r, e) = longest.ok_or("no occurrence")?;
    let rank = &loaded.job.ranks[r];
    let raw = rank.events.raw[e as usize];
    let path = &rank.source.path;
    let text = if let Some(n) = path
        .strip_prefix("demo:rank-")
        .and_then(|n| n.parse::<u32>().ok())
    {
        let t = synth::rank_text(DemoSpec::default(), n);
        let (a, b) = (raw.offset as usize, raw.offset as usize + raw.len as usize);
        t.get(a..b).ok_or("the demo trace changed")?.to_string()
    } else if path == "-" {
        return Err("stdin is not kept after loading".into());
    } else {
        source::event_text(Path::new(path), raw).map_err(|e| e.to_string())?
    };
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))?;
    let Some(args) = v.get("args").and_then(|a| a.as_object()) else {
        return Ok(Vec::new());
    };
    Ok(args
        .iter()
        .map(|(k, v)| {
            let mut s = match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            if s.len() > MAX_VALUE {
                let cut = (0..=MAX_VALUE)
                    .rev()
                    .find(|&i| s.is_char_boundary(i))
                    .unwrap_or(0);
                s.truncate(cut);
                s.push('…');
            }
            (k.clone(), s)
        })
        .collect())
}
