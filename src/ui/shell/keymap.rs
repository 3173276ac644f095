//! Key bindings: actions, their keys and descriptions, from `keymaps/default.toml` (embedded)
//! overridden action by action by the user's file. One list feeds the dispatcher, the footer
//! hints and the help overlay.

use crate::config::{self, Layer};
use crate::error::Error;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::collections::HashMap;

/// The embedded keymaps, by name.
pub const EMBEDDED: [(&str, &str); 1] =
    [("default", include_str!("../../../keymaps/default.toml"))];

macro_rules! actions {
    ($($v:ident $(($i:literal))? => $n:literal),* $(,)?) => {
        impl Action {
            /// Every action, in help order.
            pub const ALL: &[Action] = &[$(Action::$v $(($i))?),*];
            /// The action's name in keymap files.
            pub fn name(self) -> &'static str {
                match self {
                    $(Action::$v $(($i))? => $n,)*
                    Action::Pane(_) => "pane",
                }
            }
        }
    };
}

/// Everything a key can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    /// Quit.
    Quit,
    /// Show the keys.
    Help,
    /// Search operators.
    Search,
    /// Next search result.
    NextMatch,
    /// Previous search result.
    PrevMatch,
    /// Next pane.
    NextPane,
    /// Previous pane.
    PrevPane,
    /// Show the pane at this position of the tab order (one action for every pane: a new
    /// pane needs a keymap line, not a new action).
    Pane(u8),
    /// Open what is selected.
    Enter,
    /// Back one level, jump or selection.
    Back,
    /// Previous step.
    PrevStep,
    /// Next step.
    NextStep,
    /// Selection up.
    Up,
    /// Selection down.
    Down,
    /// Page up (a detail pane: its text).
    PageUp,
    /// Page down (a detail pane: its text).
    PageDown,
    /// First row.
    Top,
    /// Last row.
    Bottom,
    /// Pan the timeline left.
    PanLeft,
    /// Pan the timeline right.
    PanRight,
    /// Zoom in.
    ZoomIn,
    /// Zoom out.
    ZoomOut,
    /// The whole step.
    ZoomReset,
    /// Next operator of the selected kind.
    NextOfKind,
    /// Previous operator of the selected kind.
    PrevOfKind,
    /// The timeline cursor to the next band or gap.
    NextBand,
    /// The timeline cursor to the previous band or gap.
    PrevBand,
    /// Mark (or clear) a range from the timeline cursor.
    MarkRange,
    /// Show or hide the timeline inspector.
    Inspector,
    /// One more step on the timeline's axis.
    WidenSteps,
    /// One step fewer on the timeline's axis.
    NarrowSteps,
    /// Read the inspected band's args (when reading them is not cheap).
    ReadArgs,
    /// Cycle the pane's metric (the comm matrix's, the layout's).
    CycleMetric,
    /// Cycle which dimension the layout groups into a cell.
    CycleGrouping,
    /// The layout pane's other layout: the topology (nodes and links).
    Topology,
    /// Cycle a list's sort order (the diff's operators).
    CycleSort,
}

impl Action {
    /// The moves of a list's selection, in help order: what every list view takes.
    pub const LIST_MOVES: [Action; 6] = [
        Action::Up,
        Action::Down,
        Action::PageUp,
        Action::PageDown,
        Action::Top,
        Action::Bottom,
    ];

    /// A pane's own action: its key may also be bound to a global action, and wins in the
    /// panes that list it among their commands (`g`: the first row, in the layout pane the
    /// grouping).
    pub fn is_local(self) -> bool {
        matches!(
            self,
            Action::CycleMetric | Action::CycleGrouping | Action::Topology | Action::CycleSort
        )
    }
}

actions! {
    Quit => "quit", Help => "help", Search => "search", NextMatch => "next_match",
    PrevMatch => "prev_match", NextPane => "next_pane", PrevPane => "prev_pane",
    Pane(0) => "pane_overview", Pane(1) => "pane_timeline", Pane(2) => "pane_critical",
    Pane(3) => "pane_roofline", Pane(4) => "pane_advisor", Pane(5) => "pane_operator",
    Pane(6) => "pane_comm", Pane(7) => "pane_whatif", Pane(8) => "pane_layout",
    Enter => "enter", Back => "back", PrevStep => "prev_step", NextStep => "next_step",
    Up => "up", Down => "down", PageUp => "page_up", PageDown => "page_down", Top => "top",
    Bottom => "bottom", PanLeft => "pan_left", PanRight => "pan_right", ZoomIn => "zoom_in",
    ZoomOut => "zoom_out", ZoomReset => "zoom_reset", NextOfKind => "next_of_kind",
    PrevOfKind => "prev_of_kind", NextBand => "next_band", PrevBand => "prev_band",
    MarkRange => "mark_range", Inspector => "inspector", WidenSteps => "widen_steps",
    NarrowSteps => "narrow_steps", ReadArgs => "read_args", CycleMetric => "cycle_metric",
    CycleGrouping => "cycle_grouping", Topology => "topology", CycleSort => "cycle_sort",
}

/// A key with its modifiers (shift folded into the character).
pub type Key = (KeyCode, KeyModifiers);

/// One action's keys and description.
#[derive(Debug, Clone)]
pub struct Binding {
    /// The action.
    pub action: Action,
    /// Its keys, as written (first one shown in hints).
    pub keys: Vec<String>,
    /// What it does.
    pub desc: String,
}

/// The resolved keymap.
#[derive(Debug, Clone)]
pub struct Keymap {
    /// Bindings in [`Action::ALL`] order.
    pub bindings: Vec<Binding>,
    lookup: HashMap<Key, Action>,
    /// Keys of pane actions ([`Action::is_local`]).
    local: HashMap<Key, Vec<Action>>,
}

/// Parses a key name (`q`, `ctrl-c`, `enter`, `backtab`, `f5`).
pub fn parse_key(s: &str) -> Result<Key, String> {
    let mut mods = KeyModifiers::NONE;
    let mut rest = s;
    loop {
        if let Some(r) = rest.strip_prefix("ctrl-").filter(|r| !r.is_empty()) {
            mods |= KeyModifiers::CONTROL;
            rest = r;
        } else if let Some(r) = rest.strip_prefix("alt-").filter(|r| !r.is_empty()) {
            mods |= KeyModifiers::ALT;
            rest = r;
        } else {
            break;
        }
    }
    let code = match rest {
        "enter" => KeyCode::Enter,
        "esc" => KeyCode::Esc,
        "backspace" => KeyCode::Backspace,
        "tab" => KeyCode::Tab,
        "backtab" | "shift-tab" => KeyCode::BackTab,
        "space" => KeyCode::Char(' '),
        "up" => KeyCode::Up,
        "down" => KeyCode::Down,
        "left" => KeyCode::Left,
        "right" => KeyCode::Right,
        "pageup" => KeyCode::PageUp,
        "pagedown" => KeyCode::PageDown,
        "home" => KeyCode::Home,
        "end" => KeyCode::End,
        "delete" => KeyCode::Delete,
        f if f.len() > 1
            && f.starts_with('f')
            && f[1..].parse::<u8>().is_ok_and(|n| (1..=12).contains(&n)) =>
        {
            KeyCode::F(f[1..].parse().expect("checked"))
        }
        c if c.chars().count() == 1 => KeyCode::Char(c.chars().next().expect("one char")),
        _ => return Err(format!("unknown key name {}", crate::format::echo(s))),
    };
    Ok((code, mods))
}

/// A terminal key event as a lookup key: shift is part of the character (`G`, `?`).
pub fn normalize(k: KeyEvent) -> Key {
    let mut mods = k.modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT);
    let code = match k.code {
        KeyCode::Char(c) if mods.contains(KeyModifiers::CONTROL) => {
            KeyCode::Char(c.to_ascii_lowercase())
        }
        other => other,
    };
    if code == KeyCode::BackTab {
        mods = KeyModifiers::NONE;
    }
    (code, mods)
}

impl Keymap {
    /// The keymap `arg` (a built-in name or a path), with the user's overrides.
    pub fn load(arg: &str) -> Result<Keymap, Error> {
        Keymap::from_layers(&config::layers("keymaps", arg, "default", &EMBEDDED)?)
    }

    /// The embedded default keymap.
    pub fn default_map() -> Keymap {
        let layer = Layer {
            label: "embedded:keymaps/default.toml".into(),
            text: EMBEDDED[0].1.into(),
        };
        Keymap::from_layers(&[layer]).expect("the embedded keymap is valid")
    }

    /// Layers applied in order, action by action; every action must end up bound.
    pub fn from_layers(layers: &[Layer]) -> Result<Keymap, Error> {
        let mut found: HashMap<Action, (Binding, usize)> = HashMap::new();
        for (li, layer) in layers.iter().enumerate() {
            let table = config::section(layer, config::parse(layer)?, "bindings")?;
            for (name, v) in table {
                let Some(&action) = Action::ALL.iter().find(|a| a.name() == name) else {
                    return Err(config::key_error(layer, &name, "unknown action"));
                };
                let b = binding(layer, action, &name, v)?;
                found.insert(action, (b, li));
            }
        }
        let mut lookup: HashMap<Key, (Action, usize)> = HashMap::new();
        let mut local: HashMap<Key, Vec<Action>> = HashMap::new();
        let mut bindings = Vec::new();
        for &a in Action::ALL {
            let Some((b, li)) = found.remove(&a) else {
                return Err(config::key_error(
                    &layers[0],
                    a.name(),
                    "action has no binding",
                ));
            };
            for k in &b.keys {
                let key = parse_key(k).map_err(|e| config::key_error(&layers[li], a.name(), e))?;
                if a.is_local() {
                    local.entry(key).or_default().push(a);
                    continue;
                }
                if let Some((other, lo)) = lookup.insert(key, (a, li)) {
                    // Blame the later layer: that is the file the user just edited.
                    let (blamed, layer, with) = if lo > li {
                        (other, lo, a)
                    } else {
                        (a, li, other)
                    };
                    return Err(config::key_error(
                        &layers[layer],
                        blamed.name(),
                        format!("key `{k}` is also bound to `{}`", with.name()),
                    ));
                }
            }
            bindings.push(b);
        }
        let lookup = lookup.into_iter().map(|(k, (a, _))| (k, a)).collect();
        Ok(Keymap {
            bindings,
            lookup,
            local,
        })
    }

    /// The global action of a key, if any.
    pub fn action(&self, key: Key) -> Option<Action> {
        self.lookup.get(&key).copied()
    }

    /// The action of a key where `commands` are the screen's own: one of them bound to the
    /// key, else the global action.
    pub fn action_in(&self, key: Key, commands: &[Action]) -> Option<Action> {
        self.local
            .get(&key)
            .and_then(|v| v.iter().find(|a| commands.contains(a)).copied())
            .or_else(|| self.action(key))
    }

    /// The binding of an action.
    pub fn binding(&self, a: Action) -> &Binding {
        &self.bindings[Action::ALL
            .iter()
            .position(|x| *x == a)
            .expect("every action")]
    }

    /// The first key of an action, for hints.
    pub fn key_of(&self, a: Action) -> &str {
        self.binding(a).keys.first().map_or("", String::as_str)
    }
}

fn binding(layer: &Layer, action: Action, name: &str, v: toml::Value) -> Result<Binding, Error> {
    let toml::Value::Table(t) = v else {
        return Err(config::key_error(
            layer,
            name,
            "expected { keys = [...], desc = \"...\" }",
        ));
    };
    let mut keys = Vec::new();
    let mut desc = None;
    for (k, v) in t {
        match (k.as_str(), v) {
            ("keys", toml::Value::Array(a)) => {
                for x in a {
                    let toml::Value::String(s) = x else {
                        return Err(config::key_error(layer, name, "keys must be strings"));
                    };
                    parse_key(&s).map_err(|e| config::key_error(layer, name, e))?;
                    keys.push(s);
                }
            }
            ("desc", toml::Value::String(s)) => desc = Some(s),
            (other, _) => {
                return Err(config::key_error(
                    layer,
                    name,
                    format!(
                        "unexpected field {} (keys, desc)",
                        crate::format::echo(other)
                    ),
                ));
            }
        }
    }
    if keys.is_empty() {
        return Err(config::key_error(layer, name, "no keys"));
    }
    let desc = desc.ok_or_else(|| config::key_error(layer, name, "missing desc"))?;
    Ok(Binding { action, keys, desc })
}

/// Parses a `--keys` script: characters are keys; `<name>` is a named key (`<enter>`,
/// `<esc>`, `<ctrl-c>`, `<lt>` for `<`).
pub fn parse_script(s: &str) -> Result<Vec<Key>, String> {
    let mut out = Vec::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '<' {
            let name: String = chars.by_ref().take_while(|&c| c != '>').collect();
            let lower = name.to_ascii_lowercase();
            out.push(match lower.as_str() {
                "lt" => (KeyCode::Char('<'), KeyModifiers::NONE),
                "cr" | "return" => (KeyCode::Enter, KeyModifiers::NONE),
                "bs" => (KeyCode::Backspace, KeyModifiers::NONE),
                "s-tab" => (KeyCode::BackTab, KeyModifiers::NONE),
                _ => parse_key(&lower).map_err(|e| format!("--keys: {e}"))?,
            });
        } else {
            out.push((KeyCode::Char(c), KeyModifiers::NONE));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_names() {
        assert_eq!(
            parse_key("ctrl-c"),
            Ok((KeyCode::Char('c'), KeyModifiers::CONTROL))
        );
        assert_eq!(parse_key("G"), Ok((KeyCode::Char('G'), KeyModifiers::NONE)));
        assert_eq!(parse_key("f12"), Ok((KeyCode::F(12), KeyModifiers::NONE)));
        assert_eq!(parse_key("-"), Ok((KeyCode::Char('-'), KeyModifiers::NONE)));
        assert!(parse_key("ctrlc").is_err());
        assert!(parse_key("f13").is_err());
    }

    #[test]
    fn the_default_binds_every_action_once() {
        let k = Keymap::default_map();
        assert_eq!(k.bindings.len(), Action::ALL.len());
        assert_eq!(
            k.action((KeyCode::Char('q'), KeyModifiers::NONE)),
            Some(Action::Quit)
        );
        assert_eq!(
            k.action((KeyCode::Char('c'), KeyModifiers::CONTROL)),
            Some(Action::Quit)
        );
        assert_eq!(k.key_of(Action::Search), "/");
    }

    #[test]
    fn a_user_layer_overrides_one_action() {
        let base = Layer {
            label: "base".into(),
            text: EMBEDDED[0].1.into(),
        };
        let user = Layer {
            label: "user.toml".into(),
            text: "[bindings]\nquit = { keys = [\"x\"], desc = \"leave\" }\n".into(),
        };
        let k = Keymap::from_layers(&[base, user]).unwrap();
        assert_eq!(
            k.action((KeyCode::Char('x'), KeyModifiers::NONE)),
            Some(Action::Quit)
        );
        assert_eq!(k.action((KeyCode::Char('q'), KeyModifiers::NONE)), None);
        assert_eq!(k.binding(Action::Quit).desc, "leave");
        assert_eq!(k.key_of(Action::Help), "?");
    }

    #[test]
    fn bad_files_name_the_line_and_the_key() {
        let base = || Layer {
            label: "base".into(),
            text: EMBEDDED[0].1.into(),
        };
        let bad = |text: &str| {
            let user = Layer {
                label: "u.toml".into(),
                text: text.into(),
            };
            Keymap::from_layers(&[base(), user])
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            bad("[bindings]\n\nqiut = { keys = [\"x\"], desc = \"d\" }\n"),
            "u.toml: line 3: `qiut`: unknown action"
        );
        assert_eq!(
            bad("[bindings]\nquit = { keys = [\"ctrlx\"], desc = \"d\" }\n"),
            "u.toml: line 2: `quit`: unknown key name `ctrlx`"
        );
        assert_eq!(
            bad("[bindings]\nquit = { keys = [\"x\"] }\n"),
            "u.toml: line 2: `quit`: missing desc"
        );
        assert_eq!(
            bad("[bindings]\nquit = { keys = [\"?\"], desc = \"d\" }\n"),
            "u.toml: line 2: `quit`: key `?` is also bound to `help`"
        );
        assert!(bad("[bindings\n").starts_with("u.toml: line 1: "));
    }

    #[test]
    fn key_scripts() {
        let k = parse_script("jj<enter>/mm<esc><lt>").unwrap();
        assert_eq!(k.len(), 8);
        assert_eq!(k[2], (KeyCode::Enter, KeyModifiers::NONE));
        assert_eq!(k[7], (KeyCode::Char('<'), KeyModifiers::NONE));
        assert!(parse_script("<nope>").is_err());
    }
}
