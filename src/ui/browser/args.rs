//! An operator's `args`, parsed lazily: the event's JSON text is read again from its input
//! (plain file: mapped; gzip: inflated up to the event; demo: regenerated), only when the
//! operator view opens.

use crate::model::EventRef;
use crate::session::Session;

/// Longest value shown per arg.
const MAX_VALUE: usize = 200;

/// Args of an operator's longest occurrence, or why they are not available.
pub type Args = Result<Vec<(String, String)>, String>;

/// The `args` of event `longest` as (key, value text) pairs.
pub fn read(session: &Session, longest: Option<EventRef>) -> Args {
    let e = longest.ok_or("no occurrence")?;
    let text = session.event_text(e)?;
    let path = &session.job().rank(e.rank).source.path;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))?;
    let Some(args) = v.get("args").and_then(|a| a.as_object()) else {
        return Ok(Vec::new());
    };
    Ok(args
        .iter()
        .map(|(k, v)| {
            let s = match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (k.clone(), cut(s))
        })
        .collect())
}

/// A value cut to [`MAX_VALUE`] bytes (at a character boundary) with an ellipsis.
fn cut(mut s: String) -> String {
    if s.len() > MAX_VALUE {
        let at = (0..=MAX_VALUE)
            .rev()
            .find(|&i| s.is_char_boundary(i))
            .unwrap_or(0);
        s.truncate(at);
        s.push('…');
    }
    s
}
