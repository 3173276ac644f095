//! The TUI shell: what every screen shares, apart from any one screen — the keymap and
//! theme, the footer (key hints or a message), the `?` help overlay, the ASCII fold, mouse
//! hit areas, background work whose results come back on one channel (with terminal input
//! and live data: bottom's model), the terminal loop and its guard, and snapshots.
//!
//! A screen (the trace browser; later a live watch or a diff) implements [`Screen`]: it
//! draws its area, takes keys and actions, names the actions its footer hints and its help
//! lists (gitui's model: one command list feeds both), and receives messages.

pub mod event_loop;
pub mod keymap;
pub mod snapshot;
pub mod terminal;
pub mod theme;
pub mod widgets;

use keymap::{Action, Key, Keymap};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};
use std::sync::mpsc::{Receiver, Sender, channel};
use theme::Theme;

/// Where a mouse click lands: rows of a list (the first visible index), or a tab.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HitTarget {
    /// The rows of the current view's list; the area's first line is this index.
    Rows(usize),
    /// Every other line is a row (a timeline with joins between rows).
    SpacedRows(usize),
    /// A tab of the screen (its index).
    Tab(usize),
    /// Rows (every other line when `spaced`) whose columns from `x0` on are `cols` cells of
    /// a measured axis (a timeline's time): a click says which cell.
    Axis {
        /// Every other line is a row.
        spaced: bool,
        /// The screen column of the axis' first cell.
        x0: u16,
        /// Cells of the axis.
        cols: u16,
    },
}

/// A clickable area recorded while drawing.
#[derive(Debug, Clone, Copy)]
pub struct Hit {
    /// Screen area.
    pub area: Rect,
    /// What it selects.
    pub target: HitTarget,
}

/// A click resolved to what it hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Click {
    /// A row of the current list.
    Row(usize),
    /// A row of an axis, at cell `col` of `cols`.
    RowAt(usize, u16, u16),
    /// A tab.
    Tab(usize),
}

/// What arrives on the shell's channel.
pub enum Event<M> {
    /// Terminal input (keys, mouse, resize).
    Input(ratatui::crossterm::event::Event),
    /// A screen's message: background results, live data.
    Msg(M),
}

/// Runs work off the UI thread; its results arrive as messages.
pub struct Spawner<M> {
    tx: Sender<Event<M>>,
}

impl<M> Clone for Spawner<M> {
    fn clone(&self) -> Self {
        Spawner {
            tx: self.tx.clone(),
        }
    }
}

impl<M: Send + 'static> Spawner<M> {
    /// A spawner sending on `tx` (the terminal loop's channel).
    pub fn new(tx: Sender<Event<M>>) -> Spawner<M> {
        Spawner { tx }
    }

    /// Runs `work` on its own thread and sends each message it returns.
    pub fn spawn(&self, work: impl FnOnce() -> Vec<M> + Send + 'static) {
        let tx = self.tx.clone();
        std::thread::spawn(move || {
            for m in work() {
                let _ = tx.send(Event::Msg(m));
            }
        });
    }

    /// Sends a message now (a live source's thread holds a clone).
    pub fn send(&self, m: M) -> bool {
        self.tx.send(Event::Msg(m)).is_ok()
    }
}

/// The state every screen shares.
pub struct Ctx<M> {
    /// Key bindings.
    pub keymap: Keymap,
    /// Colours and styles (from a theme file).
    pub theme: Theme,
    /// ASCII-only output.
    pub ascii: bool,
    /// Terminal size (columns, rows): layouts depend on it.
    pub size: (u16, u16),
    /// Help overlay shown.
    pub help: bool,
    /// A one-line message for the footer (cleared by the next key).
    pub status: Option<String>,
    /// Set by quit.
    pub quit: bool,
    /// Clickable areas of the last frame (drawing records them; the mouse reads them).
    pub hits: std::cell::RefCell<Vec<Hit>>,
    /// Background work (the terminal UI); `None`: screens compute inline (tests, snapshots).
    pub spawner: Option<Spawner<M>>,
}

impl<M> Ctx<M> {
    /// Records a clickable area (drawing calls this).
    pub fn hit(&self, area: Rect, target: HitTarget) {
        self.hits.borrow_mut().push(Hit { area, target });
    }
}

/// A screen of the shell.
pub trait Screen {
    /// What its background work and live sources send.
    type Msg: Send + 'static;

    /// Draws everything above the footer into `area`.
    fn draw(&self, f: &mut Frame, area: Rect, ctx: &Ctx<Self::Msg>);

    /// Where overlays (help) go within the screen's `area`: below its own header lines.
    fn overlay_area(&self, area: Rect) -> Rect {
        area
    }

    /// The actions the footer hints now.
    fn hints(&self) -> Vec<Action>;

    /// The actions the help overlay lists, in keymap order.
    fn commands(&self) -> Vec<Action>;

    /// A key the screen takes before the keymap (a prompt being typed): true when taken.
    fn take_key(&mut self, _key: Key, _ctx: &mut Ctx<Self::Msg>) -> bool {
        false
    }

    /// Applies an action (quit and help are the shell's).
    fn apply(&mut self, a: Action, ctx: &mut Ctx<Self::Msg>);

    /// A click on something drawn: true when it did something.
    fn click(&mut self, c: Click, ctx: &mut Ctx<Self::Msg>) -> bool;

    /// A wheel turn: moves the selection.
    fn scroll(&mut self, by: isize, ctx: &mut Ctx<Self::Msg>);

    /// A message arrived; true when the screen changed (a screen without background work
    /// gets none).
    fn receive(&mut self, _m: Self::Msg, _ctx: &mut Ctx<Self::Msg>) -> bool {
        false
    }

    /// Brings the screen's caches up to date after a change (drawing only reads; a screen
    /// without caches has nothing to do).
    fn refresh(&mut self, _ctx: &mut Ctx<Self::Msg>) {}

    /// Work to start once a frame is on screen (prefetching).
    fn after_frame(&mut self, _ctx: &mut Ctx<Self::Msg>) {}

    /// False for a screen that takes the whole terminal (no footer line).
    fn has_footer(&self) -> bool {
        true
    }

    /// How often to redraw without any event (a progress view), if at all.
    fn tick(&self) -> Option<std::time::Duration> {
        None
    }

    /// True when the screen has finished (the terminal loop returns).
    fn done(&self) -> bool {
        false
    }
}

/// A screen in the shell: the shared state and the screen.
pub struct Shell<S: Screen> {
    /// Shared state.
    pub ctx: Ctx<S::Msg>,
    /// The screen.
    pub screen: S,
    /// Messages from background work, when it runs outside a terminal loop (tests).
    inbox: Option<Receiver<Event<S::Msg>>>,
}

impl<M> Ctx<M> {
    /// Fresh shared state.
    pub fn new(keymap: Keymap, theme: Theme, ascii: bool, size: (u16, u16)) -> Ctx<M> {
        Ctx {
            keymap,
            theme,
            ascii,
            size,
            help: false,
            status: None,
            quit: false,
            hits: Default::default(),
            spawner: None,
        }
    }
}

impl<S: Screen> Shell<S> {
    /// A shell showing `screen`; background work is off until [`Shell::background`].
    pub fn new(screen: S, keymap: Keymap, theme: Theme, ascii: bool, size: (u16, u16)) -> Self {
        Shell::with(screen, Ctx::new(keymap, theme, ascii, size))
    }

    /// A shell showing `screen` with the state another screen left (the loading view hands
    /// over to the browser).
    pub fn with(screen: S, ctx: Ctx<S::Msg>) -> Self {
        let mut shell = Shell {
            ctx,
            screen,
            inbox: None,
        };
        shell.screen.refresh(&mut shell.ctx);
        shell
    }

    /// Brings the screen's caches up to date (after changing its state directly).
    pub fn refresh(&mut self) {
        self.screen.refresh(&mut self.ctx);
    }

    /// Starts the work a screen does once a frame is on screen (the loop calls it after
    /// each draw).
    pub fn after_frame(&mut self) {
        self.screen.after_frame(&mut self.ctx);
    }

    /// Runs background work on threads, its results collected by [`Shell::collect`].
    pub fn background(&mut self) {
        let (tx, rx) = channel();
        self.ctx.spawner = Some(Spawner { tx });
        self.inbox = Some(rx);
    }

    /// Hands finished background results to the screen; true when any arrived.
    pub fn collect(&mut self) -> bool {
        let msgs: Vec<Event<S::Msg>> = match &self.inbox {
            Some(rx) => rx.try_iter().collect(),
            None => return false,
        };
        let mut any = false;
        for e in msgs {
            if let Event::Msg(m) = e {
                any |= self.screen.receive(m, &mut self.ctx);
            }
        }
        if any {
            self.screen.refresh(&mut self.ctx);
        }
        any
    }

    /// Handles one key: a prompt and the help overlay take keys first. Returns false when the
    /// key did nothing (no redraw needed).
    pub fn key(&mut self, key: Key) -> bool {
        let had_status = self.ctx.status.take().is_some();
        if self.screen.take_key(key, &mut self.ctx) {
        } else if self.ctx.help {
            self.ctx.help = false;
        } else if let Some(a) = self.ctx.keymap.action_in(key, &self.screen.commands()) {
            match a {
                Action::Quit => self.ctx.quit = true,
                Action::Help => self.ctx.help = true,
                _ => self.screen.apply(a, &mut self.ctx),
            }
        } else {
            return had_status;
        }
        self.screen.refresh(&mut self.ctx);
        true
    }

    /// A left click at (x, y): what the last frame drew there.
    pub fn click(&mut self, x: u16, y: u16) {
        self.ctx.status = None;
        let hit = self
            .ctx
            .hits
            .borrow()
            .iter()
            .rev()
            .find(|h| {
                let a = h.area;
                x >= a.x && x < a.x + a.width && y >= a.y && y < a.y + a.height
            })
            .copied();
        let Some(h) = hit else { return };
        let c = match h.target {
            HitTarget::Tab(t) => Click::Tab(t),
            HitTarget::Rows(first) => Click::Row(first + (y - h.area.y) as usize),
            HitTarget::SpacedRows(first) => {
                if (y - h.area.y) % 2 == 1 {
                    return;
                }
                Click::Row(first + (y - h.area.y) as usize / 2)
            }
            HitTarget::Axis { spaced, x0, cols } => {
                let dy = (y - h.area.y) as usize;
                if spaced && dy % 2 == 1 {
                    return;
                }
                let row = if spaced { dy / 2 } else { dy };
                match x.checked_sub(x0).filter(|&c| c < cols) {
                    Some(c) => Click::RowAt(row, c, cols),
                    None => Click::Row(row),
                }
            }
        };
        if self.screen.click(c, &mut self.ctx) {
            self.screen.refresh(&mut self.ctx);
        }
    }

    /// A wheel turn by `by` rows.
    pub fn scroll(&mut self, by: isize) {
        self.screen.scroll(by, &mut self.ctx);
        self.screen.refresh(&mut self.ctx);
    }

    /// The terminal was resized.
    pub fn resize(&mut self, w: u16, h: u16) {
        self.ctx.size = (w, h);
        self.screen.refresh(&mut self.ctx);
    }

    /// Draws the whole frame: the screen, the footer, the help overlay, the ASCII fold.
    pub fn draw(&self, f: &mut Frame) {
        self.ctx.hits.borrow_mut().clear();
        let body = if self.screen.has_footer() {
            let [body, footer] =
                Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(f.area());
            f.render_widget(Paragraph::new(self.footer_line(footer.width)), footer);
            body
        } else {
            f.area()
        };
        self.screen.draw(f, body, &self.ctx);
        if self.ctx.help {
            self.help_overlay(f, self.screen.overlay_area(body));
        }
        widgets::defuse(f.buffer_mut());
        if self.ctx.ascii {
            widgets::fold_ascii(f.buffer_mut());
        }
    }

    /// Key hints for the current view (keys and words from the keymap), or the message.
    /// (A message keeps what it states in `width` columns: its long names are cut first.)
    fn footer_line(&self, width: u16) -> Line<'static> {
        let t = &self.ctx.theme;
        if let Some(msg) = &self.ctx.status {
            let msg = crate::format::fit_sentence(msg, usize::from(width).saturating_sub(1));
            return Line::from(Span::styled(format!(" {msg}"), t.fg(t.c.accent)));
        }
        let mut spans = Vec::new();
        for a in self.screen.hints() {
            let b = self.ctx.keymap.binding(a);
            spans.push(Span::styled(
                format!(" {}", self.ctx.keymap.key_of(a)),
                t.fg(t.c.accent),
            ));
            spans.push(Span::styled(format!(" {} ", b.desc), t.dim()));
        }
        Line::from(spans)
    }

    /// The `?` overlay: the screen's commands with their keys, in two columns.
    fn help_overlay(&self, f: &mut Frame, area: Rect) {
        let ctx = &self.ctx;
        let commands = self.screen.commands();
        let bindings: Vec<&keymap::Binding> =
            commands.iter().map(|a| ctx.keymap.binding(*a)).collect();
        let rows = bindings.len().div_ceil(2) as u16;
        let r = widgets::centered(area, 96, rows + 4);
        let cols = Layout::horizontal([Constraint::Ratio(1, 2); 2]).split(Rect::new(
            r.x + 1,
            r.y + 2,
            r.width.saturating_sub(2),
            r.height.saturating_sub(3),
        ));
        f.render_widget(Clear, r);
        f.render_widget(widgets::block(&ctx.theme, "keys (any key closes)"), r);
        let intro = Line::from(Span::styled(
            " keymaps/default.toml; override in ~/.config/stepscope/keymaps/default.toml",
            ctx.theme.dim(),
        ));
        f.render_widget(
            Paragraph::new(intro),
            Rect::new(r.x + 1, r.y + 1, r.width.saturating_sub(2), 1),
        );
        let half = bindings.len().div_ceil(2).max(1);
        for (c, chunk) in bindings.chunks(half).enumerate() {
            let kw = 16usize;
            let lines: Vec<Line> = chunk
                .iter()
                .map(|b| {
                    Line::from(vec![
                        Span::styled(
                            format!(" {:<kw$}", crate::format::fit(&b.keys.join(" "), kw)),
                            ctx.theme.fg(ctx.theme.c.accent),
                        ),
                        Span::styled(b.desc.clone(), ctx.theme.text()),
                    ])
                })
                .collect();
            f.render_widget(Paragraph::new(lines), cols[c]);
        }
    }
}
