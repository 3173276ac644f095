//! Layered TOML files of the UI (keymaps, themes): an embedded file by name, overridden key by
//! key by the user's file of the same name in the config directory, or a file given by path.
//! Errors name the file, the line and the key.

use crate::error::{InputError, Position};
use std::path::{Path, PathBuf};

/// One layer: where it came from and its text.
pub struct Layer {
    /// Path or `embedded:NAME` for messages.
    pub label: String,
    /// The TOML text.
    pub text: String,
}

/// The user's config directory for `kind` (`keymaps`, `themes`), when the platform has one.
fn user_dir(kind: &str) -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "stepscope").map(|d| d.config_dir().join(kind))
}

/// The layers for `arg` (a name of `embedded` or a path), base first: the embedded file of
/// that name (or `default` under a path), then the user's file of the same name, then the
/// path's file.
pub fn layers(
    kind: &str,
    arg: &str,
    default: &str,
    embedded: &[(&str, &str)],
) -> Result<Vec<Layer>, InputError> {
    let by_name = embedded.iter().find(|(n, _)| *n == arg);
    let looks_like_path = arg.contains('/') || arg.ends_with(".toml");
    let (base, path) = match (by_name, looks_like_path) {
        (Some(e), false) => (e, None),
        _ if looks_like_path || Path::new(arg).exists() => (
            embedded
                .iter()
                .find(|(n, _)| *n == default)
                .expect("default embedded"),
            Some(PathBuf::from(arg)),
        ),
        _ => {
            let names: Vec<&str> = embedded.iter().map(|(n, _)| *n).collect();
            return Err(InputError::whole(
                &format!("--{}", kind.trim_end_matches('s')),
                format!(
                    "no {} `{arg}` (built in: {}; or give a path)",
                    kind.trim_end_matches('s'),
                    names.join(", ")
                ),
            ));
        }
    };
    let mut out = vec![Layer {
        label: format!("embedded:{kind}/{}.toml", base.0),
        text: base.1.to_string(),
    }];
    let user = user_dir(kind).map(|d| d.join(format!("{}.toml", base.0)));
    for p in user.into_iter().filter(|p| p.is_file()).chain(path) {
        let label = p.display().to_string();
        let text = std::fs::read_to_string(&p)
            .map_err(|e| InputError::whole(&label, format!("cannot read: {e}")))?;
        out.push(Layer { label, text });
    }
    Ok(out)
}

/// Parses a layer as a TOML table; syntax errors carry their line.
pub fn parse(layer: &Layer) -> Result<toml::Table, InputError> {
    layer.text.parse::<toml::Table>().map_err(|e| {
        let line = e.span().map_or(1, |s| line_of(&layer.text, s.start));
        InputError {
            path: layer.label.clone(),
            pos: Some(Position::Line(line)),
            msg: e.message().trim().to_string(),
        }
    })
}

/// 1-based line of a byte offset.
pub fn line_of(text: &str, offset: usize) -> u32 {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count() as u32
        + 1
}

/// The error for `key` of a layer: the line where the key is written (first match), else 1.
pub fn key_error(layer: &Layer, key: &str, msg: impl Into<String>) -> InputError {
    let line = layer
        .text
        .lines()
        .position(|l| {
            let l = l.trim_start();
            let l = l.strip_prefix('"').unwrap_or(l);
            l.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start_matches('"').trim_start().starts_with('='))
        })
        .map_or(1, |i| i as u32 + 1);
    InputError {
        path: layer.label.clone(),
        pos: Some(Position::Line(line)),
        msg: format!("`{key}`: {}", msg.into()),
    }
}

/// The `[section]` table of a parsed layer (missing: empty); anything else at the top level
/// is an error.
pub fn section(layer: &Layer, table: toml::Table, name: &str) -> Result<toml::Table, InputError> {
    let mut out = toml::Table::new();
    for (k, v) in table {
        match v {
            toml::Value::Table(t) if k == name => out = t,
            _ => {
                return Err(key_error(
                    layer,
                    &k,
                    format!("unknown section (expected [{name}])"),
                ));
            }
        }
    }
    Ok(out)
}
