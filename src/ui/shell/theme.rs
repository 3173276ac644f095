//! Colours from `themes/{dark,light,mono}.toml` (embedded), overridden key by key by the
//! user's file of the same name. NO_COLOR selects `mono`; without truecolor (COLORTERM)
//! `#rrggbb` maps to the nearest xterm-256 colour.

use crate::analysis::breakdown::Part;
use crate::analysis::roofline::Class;
use crate::analysis::timeline::BandKind;
use crate::config::{self, Layer};
use crate::error::Error;
use ratatui::style::{Color, Modifier, Style};
use std::str::FromStr;

/// The embedded themes, by name.
pub const EMBEDDED: [(&str, &str); 3] = [
    ("dark", include_str!("../../../themes/dark.toml")),
    ("light", include_str!("../../../themes/light.toml")),
    ("mono", include_str!("../../../themes/mono.toml")),
];

macro_rules! colors {
    ($($f:ident),* $(,)?) => {
        /// Every colour a pane uses, by role.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[allow(missing_docs)]
        pub struct Colors { $(pub $f: Color),* }
        impl Colors {
            const KEYS: &[&str] = &[$(stringify!($f)),*];
            fn all(c: Color) -> Colors {
                Colors { $($f: c),* }
            }
            fn set(&mut self, key: &str, c: Color) -> bool {
                match key { $(stringify!($f) => self.$f = c,)* _ => return false }
                true
            }
            fn map(&mut self, f: impl Fn(Color) -> Color) {
                $(self.$f = f(self.$f);)*
            }
        }
    };
}

colors!(
    fg,
    bg,
    dim,
    border,
    title,
    header_fg,
    header_bg,
    selection_fg,
    selection_bg,
    accent,
    compute,
    overlap,
    comm,
    memory,
    host_bound,
    free,
    band_compute,
    band_collective,
    band_send,
    band_recv,
    band_memory,
    band_host,
    idle,
    heat_low,
    heat_mid,
    heat_high,
    severity_high,
    severity_medium,
    severity_low,
    slow,
    roof,
    threshold,
    compute_bound,
    memory_bound,
    under_utilized,
);

/// A resolved theme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    /// The colours.
    pub c: Colors,
    /// No colours to tell things apart: selections use reverse video, bands use glyphs.
    pub mono: bool,
}

impl Theme {
    /// The theme `arg` (a built-in name or a path) with the user's overrides; `NO_COLOR`
    /// (when `arg` is `None`) selects mono; `truecolor` false maps RGB to 256 colours.
    pub fn load(arg: Option<&str>, no_color: bool, truecolor: bool) -> Result<Theme, Error> {
        let name = arg.unwrap_or(if no_color { "mono" } else { "dark" });
        let mut t = Theme::from_layers(&config::layers("themes", name, "dark", &EMBEDDED)?)?;
        if !truecolor {
            t.c.map(|c| match c {
                Color::Rgb(r, g, b) => Color::Indexed(ansi_colours::ansi256_from_rgb((r, g, b))),
                other => other,
            });
        }
        Ok(t)
    }

    /// A built-in theme without user overrides (snapshots, tests).
    pub fn builtin(name: &str) -> Theme {
        let (_, text) = EMBEDDED
            .iter()
            .find(|(n, _)| *n == name)
            .expect("a built-in theme");
        let layer = Layer {
            label: format!("embedded:themes/{name}.toml"),
            text: text.to_string(),
        };
        Theme::from_layers(&[layer]).expect("embedded themes are valid")
    }

    /// Layers applied in order, key by key; the first must set every key.
    pub fn from_layers(layers: &[Layer]) -> Result<Theme, Error> {
        let mut c = Colors::all(Color::Reset);
        let mut seen = std::collections::HashSet::new();
        for layer in layers {
            let table = config::section(layer, config::parse(layer)?, "theme-colors")?;
            for (k, v) in table {
                let toml::Value::String(s) = &v else {
                    return Err(config::key_error(layer, &k, "expected a colour string"));
                };
                let color = Color::from_str(s).map_err(|_| {
                    config::key_error(
                        layer,
                        &k,
                        format!("not a colour: {}", crate::format::echo(s)),
                    )
                })?;
                if !c.set(&k, color) {
                    return Err(config::key_error(layer, &k, "unknown colour key"));
                }
                seen.insert(k);
            }
        }
        if let Some(missing) = Colors::KEYS.iter().find(|k| !seen.contains(**k)) {
            return Err(config::key_error(&layers[0], missing, "colour missing"));
        }
        let bands = [
            c.band_compute,
            c.band_collective,
            c.band_send,
            c.band_recv,
            c.band_memory,
        ];
        let mono = bands.iter().all(|b| *b == bands[0]);
        Ok(Theme { c, mono })
    }

    /// Plain text.
    pub fn text(&self) -> Style {
        Style::default().fg(self.c.fg).bg(self.c.bg)
    }

    /// Secondary text.
    pub fn dim(&self) -> Style {
        Style::default().fg(self.c.dim)
    }

    /// A colour as foreground.
    pub fn fg(&self, c: Color) -> Style {
        Style::default().fg(c)
    }

    /// The selected row or item: colours when the theme has them, reverse video always
    /// visible without.
    pub fn selected(&self) -> Style {
        let s = Style::default().add_modifier(Modifier::BOLD);
        if self.mono || self.c.selection_bg == Color::Reset {
            s.add_modifier(Modifier::REVERSED)
        } else {
            s.fg(self.c.selection_fg).bg(self.c.selection_bg)
        }
    }

    /// Block borders.
    pub fn border(&self) -> Style {
        Style::default().fg(self.c.border)
    }

    /// Block titles.
    pub fn title(&self) -> Style {
        Style::default()
            .fg(self.c.title)
            .add_modifier(Modifier::BOLD)
    }

    /// A band kind's colour.
    pub fn band(&self, k: BandKind) -> Color {
        match k {
            BandKind::Compute => self.c.band_compute,
            BandKind::Collective => self.c.band_collective,
            BandKind::Send => self.c.band_send,
            BandKind::Recv => self.c.band_recv,
            BandKind::Memory => self.c.band_memory,
            BandKind::Host => self.c.band_host,
        }
    }

    /// A roofline class's colour.
    pub fn class(&self, c: Class) -> Color {
        match c {
            Class::ComputeBound => self.c.compute_bound,
            Class::MemoryBound => self.c.memory_bound,
            Class::UnderUtilized => self.c.under_utilized,
            Class::Unknown => self.c.dim,
        }
    }

    /// A breakdown part's colour.
    pub fn part(&self, part: Part) -> Color {
        match part {
            Part::Compute => self.c.compute,
            Part::Overlap => self.c.overlap,
            Part::Comm => self.c.comm,
            Part::Memory => self.c.memory,
            Part::HostBound => self.c.host_bound,
            Part::Free => self.c.free,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_load_and_mono_is_mono() {
        assert!(!Theme::builtin("dark").mono);
        assert!(!Theme::builtin("light").mono);
        let m = Theme::builtin("mono");
        assert!(m.mono);
        assert!(m.selected().add_modifier.contains(Modifier::REVERSED));
    }

    #[test]
    fn overrides_key_by_key_and_reports_bad_keys() {
        let base = || Layer {
            label: "base".into(),
            text: EMBEDDED[0].1.into(),
        };
        let user = |t: &str| Layer {
            label: "u.toml".into(),
            text: t.into(),
        };
        let t =
            Theme::from_layers(&[base(), user("[theme-colors]\ncomm = \"#010203\"\n")]).unwrap();
        assert_eq!(t.c.comm, Color::Rgb(1, 2, 3));
        assert_eq!(t.c.compute, Theme::builtin("dark").c.compute);
        let err = |t: &str| {
            Theme::from_layers(&[base(), user(t)])
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err("[theme-colors]\n\ncomm = \"#01020\"\n"),
            "u.toml: line 3: `comm`: not a colour: `#01020`"
        );
        assert_eq!(
            err("[theme-colors]\ncmm = \"red\"\n"),
            "u.toml: line 2: `cmm`: unknown colour key"
        );
        assert_eq!(
            err("[colors]\ncomm = \"red\"\n"),
            "u.toml: line 1: `colors`: unknown section (expected [theme-colors])"
        );
    }

    #[test]
    fn without_truecolor_rgb_becomes_256() {
        let t = Theme::load(Some("dark"), false, false).unwrap();
        assert!(matches!(t.c.comm, Color::Indexed(_)));
    }
}
