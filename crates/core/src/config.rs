//! Configuration files: the user's config directory (`~/.config/stepscope` on Linux) and the
//! layered TOML files stepscope reads from it — keymaps, themes, the device table, the role
//! tables, the advisor's thresholds. A file shipped with stepscope (embedded) is the base;
//! the user's file of the same name overrides it entry by entry. Errors name the file, the
//! line and the key.

use crate::error::{Error, Position};
use std::path::{Path, PathBuf};

/// The user's config directory, when the platform has one.
pub fn dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "stepscope").map(|d| d.config_dir().to_path_buf())
}

/// The user's file `name` (`devices.toml`, `keymaps/default.toml`), when it exists.
pub fn user_file(name: &str) -> Option<PathBuf> {
    dir().map(|d| d.join(name)).filter(|p| p.is_file())
}

/// The largest configuration file read (the shipped keymaps and themes are a few KiB).
pub const MAX_FILE: u64 = 1 << 20;

/// One layer of a layered file: where it came from and its text.
pub struct Layer {
    /// Path, or `embedded:NAME`, for messages.
    pub label: String,
    /// The TOML text.
    pub text: String,
}

impl Layer {
    /// An embedded file.
    pub fn embedded(name: &str, text: &str) -> Layer {
        Layer {
            label: format!("embedded:{name}"),
            text: text.to_string(),
        }
    }

    /// A file on disk: a regular file of at most [`MAX_FILE`] bytes in UTF-8 (`--theme
    /// /dev/zero` is refused at once, not read until memory runs out).
    pub fn read(path: &Path) -> Result<Layer, Error> {
        use std::io::Read;
        let label = path.display().to_string();
        let fail = |what: String| Error::config(&label, None, what);
        let file = std::fs::File::open(path).map_err(|e| fail(format!("cannot read: {e}")))?;
        let meta = file
            .metadata()
            .map_err(|e| fail(format!("cannot read: {e}")))?;
        if !meta.is_file() {
            return Err(fail("not a regular file".into()));
        }
        let mut bytes = Vec::new();
        file.take(MAX_FILE + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| fail(format!("cannot read: {e}")))?;
        if bytes.len() as u64 > MAX_FILE {
            return Err(fail(format!(
                "more than {}: not a configuration file",
                crate::format::bytes(MAX_FILE)
            )));
        }
        let text = String::from_utf8(bytes).map_err(|e| {
            let at = e.utf8_error().valid_up_to();
            let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
            let line = u32::try_from(line).unwrap_or(u32::MAX);
            Error::config(&label, Some(line), "not UTF-8 text")
        })?;
        Ok(Layer { label, text })
    }
}

/// The user's layer of a file shipped with stepscope (`devices.toml`), when the user has one.
pub fn user_layer(name: &str) -> Result<Option<Layer>, Error> {
    user_file(name).map(|p| Layer::read(&p)).transpose()
}

/// The layers for `arg` (a name among `embedded`, or a path), base first: the embedded file
/// of that name (or `default` under a path), then the user's file of the same name in the
/// config directory's `kind` folder, then the path's file.
pub fn layers(
    kind: &str,
    arg: &str,
    default: &str,
    embedded: &[(&str, &str)],
) -> Result<Vec<Layer>, Error> {
    let by_name = embedded.iter().find(|(n, _)| *n == arg);
    let looks_like_path = arg.contains('/') || arg.ends_with(".toml");
    let singular = kind.trim_end_matches('s');
    let (base, path) = match (by_name, looks_like_path) {
        (Some(e), false) => (e, None),
        _ if looks_like_path || Path::new(arg).exists() => (
            embedded
                .iter()
                .find(|(n, _)| *n == default)
                .expect("the default is embedded"),
            Some(PathBuf::from(arg)),
        ),
        _ => {
            let names: Vec<&str> = embedded.iter().map(|(n, _)| *n).collect();
            return Err(Error::usage(
                &format!("--{singular}"),
                format!(
                    "no {singular} `{arg}` (built in: {}; or give a path)",
                    names.join(", ")
                ),
            ));
        }
    };
    let mut out = vec![Layer::embedded(&format!("{kind}/{}.toml", base.0), base.1)];
    let user = user_file(&format!("{kind}/{}.toml", base.0));
    for p in user.into_iter().chain(path) {
        out.push(Layer::read(&p)?);
    }
    Ok(out)
}

/// Parses a layer as a TOML table; syntax errors carry their line.
pub fn parse(layer: &Layer) -> Result<toml::Table, Error> {
    layer.text.parse::<toml::Table>().map_err(|e| {
        let line = e.span().map_or(1, |s| line_of(&layer.text, s.start));
        Error::config(&layer.label, Some(line), e.message().trim())
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

/// The error for `key` of a layer, at the line where the key is written (first match, else 1).
pub fn key_error(layer: &Layer, key: &str, msg: impl Into<String>) -> Error {
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
    Error {
        pos: Some(Position::Line(line)),
        ..Error::config(&layer.label, None, format!("`{key}`: {}", msg.into()))
    }
}

/// The `[name]` table of a parsed layer (missing: empty); anything else at the top level is
/// an error.
pub fn section(layer: &Layer, table: toml::Table, name: &str) -> Result<toml::Table, Error> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_found_on_their_line() {
        let l = Layer::embedded("x.toml", "[a]\n\n\"k\" = 1\nother = 2\n");
        assert_eq!(
            key_error(&l, "k", "bad").to_string(),
            "embedded:x.toml: line 3: `k`: bad"
        );
        assert_eq!(key_error(&l, "nope", "bad").pos, Some(Position::Line(1)));
        assert_eq!(line_of("a\nb\nc", 4), 3);
    }
}
