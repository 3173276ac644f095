//! The one state struct of the TUI: the loaded job and its analysis (read-only), the
//! navigation stack, per-pane selections, and caches of the on-demand analyses the current
//! view needs. Keys become [`Action`]s; [`App::apply`] changes the state and
//! [`App::refresh`] fills the caches, so drawing only reads.

use super::keymap::{Action, Key, Keymap};
use super::search::Search;
use super::theme::Theme;
use super::work::{Done, Task};
use crate::analysis::comm::per_rank::{self, RankComm};
use crate::analysis::critical_path::CriticalPath;
use crate::analysis::operator::{self, OpDetail};
use crate::analysis::ops::{self, OpStat, Scope};
use crate::analysis::timeline::{self, Timeline};
use crate::analysis::{self, Analysis};
use crate::ingest::Loaded;
use crate::model::Sym;
use crate::time::Ns;
use ratatui::crossterm::event::{KeyCode, KeyModifiers};
use std::collections::HashMap;

/// The panes, in `Tab` order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pane {
    /// Step chart, heat map, breakdown bars, top findings (device level: the device view).
    Overview,
    /// Marey bands of the selected step.
    Timeline,
    /// The critical path of the selected step.
    Critical,
    /// Roofline chart and table.
    Roofline,
    /// Findings.
    Advisor,
    /// Operator list / operator detail.
    Operator,
    /// Communication matrix and per-rank collectives.
    Comm,
}

impl Pane {
    /// Every pane, in order.
    pub const ALL: [Pane; 7] = [
        Pane::Overview,
        Pane::Timeline,
        Pane::Critical,
        Pane::Roofline,
        Pane::Advisor,
        Pane::Operator,
        Pane::Comm,
    ];

    /// Tab title (and `--view` name).
    pub fn name(self) -> &'static str {
        match self {
            Pane::Overview => "overview",
            Pane::Timeline => "timeline",
            Pane::Critical => "critical",
            Pane::Roofline => "roofline",
            Pane::Advisor => "advisor",
            Pane::Operator => "operator",
            Pane::Comm => "comm",
        }
    }

    /// The pane of a `--view` name.
    pub fn from_name(s: &str) -> Option<Pane> {
        Pane::ALL.into_iter().find(|p| p.name() == s)
    }

    /// Position in [`Pane::ALL`] (and in `App::sel`).
    pub fn index(self) -> usize {
        Pane::ALL.iter().position(|p| *p == self).expect("listed")
    }
}

/// One level of the drill-down: cluster → device → operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// All ranks.
    Cluster,
    /// One rank (index into `job.ranks`).
    Device(usize),
    /// One operator.
    Operator(Sym),
}

/// What the comm matrix cells show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Metric {
    /// Bytes sent.
    #[default]
    Bytes,
    /// Transfer time.
    Time,
    /// Bandwidth.
    Bandwidth,
}

/// The loaded job and everything computed from it once.
pub struct Data {
    /// The job.
    pub loaded: Loaded,
    /// Its analysis.
    pub analysis: Analysis,
    /// The options it was analysed with.
    pub opts: analysis::Options,
    /// What was opened (`demo cluster`, a path).
    pub title: String,
    /// Every step number of any rank, ascending.
    pub steps: Vec<u32>,
    /// Operator names the search matches.
    pub names: Vec<Sym>,
}

impl Data {
    /// Wraps a loaded and analysed job.
    pub fn new(loaded: Loaded, analysis: Analysis, opts: analysis::Options, title: String) -> Data {
        let mut steps: Vec<u32> = loaded
            .job
            .ranks
            .iter()
            .flat_map(|r| r.steps.iter().map(|s| s.number))
            .collect();
        steps.sort_unstable();
        steps.dedup();
        let names = operator::names(&loaded.job);
        Data {
            loaded,
            analysis,
            opts,
            title,
            steps,
            names,
        }
    }
}

/// The timeline's view state.
#[derive(Debug, Clone, Default)]
pub struct TimelineView {
    /// Visible time window (aligned ns); `None`: the whole step.
    pub zoom: Option<(Ns, Ns)>,
    /// Selected row (index into the timeline's rows).
    pub row: usize,
    /// The selected operator: name and occurrence in the step.
    pub op: Option<(Sym, usize)>,
    /// Rows shown individually after expanding a group (a range of rows).
    pub expanded: Option<(usize, usize)>,
    /// Pending: select this rank's band of this name nearest this aligned start.
    pub focus: Option<(u32, Sym, Ns)>,
    /// Pending: select this rank's row.
    pub focus_rank: Option<u32>,
}

/// Results computed on demand for the current view.
#[derive(Default)]
pub struct Caches {
    /// Timelines of (level's rank or cluster, step), the current one last; the few most
    /// recent are kept so stepping back and forth does not rebuild them.
    pub timelines: Vec<(Option<usize>, u32, Timeline)>,
    /// Critical paths per step.
    pub critical: HashMap<u32, Option<CriticalPath>>,
    /// Operator detail of (name, step: its critical-path share is the step's).
    pub op: Option<(Sym, u32, OpDetail)>,
    /// Args of the operator's longest occurrence: (key, value) or why not.
    pub op_args: Option<super::work::Args>,
    /// A rank's operators by device time: (rank index, ops).
    pub device_ops: Option<(usize, Vec<OpStat>)>,
    /// Per-rank collectives of a step.
    pub comm_ranks: Option<(u32, Vec<RankComm>)>,
    /// The timeline's selected operator on every row, for (timeline key, operator).
    pub selected: Option<SelectedKey>,
    /// Its occurrences, one per timeline row.
    pub selected_bands: Vec<Option<crate::analysis::timeline::Band>>,
}

/// What [`Caches::selected_bands`] was computed for: (device level rank, step, name, k, the
/// timeline row it was picked on).
pub type SelectedKey = (Option<usize>, u32, Sym, usize, usize);

/// The TUI state.
pub struct App {
    /// The job (read-only; shared with background work).
    pub data: std::sync::Arc<Data>,
    /// Background work (the terminal UI); `None`: on-demand analyses run inline.
    pub work: Option<super::work::Worker>,
    /// Key bindings.
    pub keymap: Keymap,
    /// Colours.
    pub theme: Theme,
    /// ASCII-only output.
    pub ascii: bool,
    /// Terminal size (columns, rows): layouts depend on it.
    pub size: (u16, u16),
    /// Current pane.
    pub pane: Pane,
    /// Drill-down stack; the bottom is always the cluster. Each entry remembers the pane to
    /// return to.
    pub stack: Vec<(Level, Pane)>,
    /// Selected step (index into `data.steps`).
    pub step: usize,
    /// Selected row per pane (device view and operator detail have their own).
    pub sel: [usize; 7],
    /// Device view op table row.
    pub device_row: usize,
    /// Operator detail per-rank row.
    pub op_row: usize,
    /// Timeline state.
    pub tl: TimelineView,
    /// Search state.
    pub search: Search,
    /// Help overlay shown.
    pub help: bool,
    /// Comm matrix metric.
    pub metric: Metric,
    /// A one-line message for the footer (cleared by the next key).
    pub status: Option<String>,
    /// On-demand results.
    pub cache: Caches,
    /// Set by quit.
    pub quit: bool,
    /// Clickable areas of the last frame (drawing records them; the mouse reads them).
    pub hits: std::cell::RefCell<Vec<super::Hit>>,
}

/// The selected operator on every row: for a collective on the cluster timeline, the bands
/// of its matched instance (`first` is the row it was picked on); otherwise, or when the
/// call is unmatched, its k-th same-named band on each row.
fn selected_bands(
    t: &Timeline,
    comm: &crate::analysis::comm::Comm,
    rank: Option<usize>,
    first: usize,
    s: Sym,
    k: usize,
) -> Vec<Option<crate::analysis::timeline::Band>> {
    use crate::analysis::timeline::BandKind;
    let picked = t.rows.get(first).and_then(|r| r.occurrence(s, k));
    match picked {
        Some(b)
            if rank.is_none()
                && !matches!(
                    b.kind,
                    BandKind::Compute | BandKind::Memory | BandKind::Host
                ) =>
        {
            t.instance_occurrences(comm, first, b)
                .unwrap_or_else(|| t.occurrences(s, k))
        }
        _ => t.occurrences(s, k),
    }
}

/// Timelines kept for revisits (a 1024-rank step is ~25 MB of bands).
const KEPT_TIMELINES: usize = 5;

/// Rows moved by page up/down.
pub const PAGE: usize = 10;

impl App {
    /// A new app on the overview of the slowest step.
    pub fn new(data: Data, keymap: Keymap, theme: Theme, ascii: bool, size: (u16, u16)) -> App {
        let slowest = data
            .analysis
            .step_times
            .iter()
            .max_by(|a, b| a.max_ns.cmp(&b.max_ns).then(b.step.cmp(&a.step)))
            .map(|s| s.step);
        let step = slowest
            .and_then(|s| data.steps.iter().position(|x| *x == s))
            .unwrap_or(0);
        let mut app = App {
            data: std::sync::Arc::new(data),
            work: None,
            keymap,
            theme,
            ascii,
            size,
            pane: Pane::Overview,
            stack: vec![(Level::Cluster, Pane::Overview)],
            step,
            sel: [0; 7],
            device_row: 0,
            op_row: 0,
            tl: TimelineView::default(),
            search: Search::default(),
            help: false,
            metric: Metric::Bytes,
            status: None,
            cache: Caches::default(),
            quit: false,
            hits: Default::default(),
        };
        // The analysis already walked the slowest step's path (unless --window chose another
        // window): the critical pane opens on it without recomputing.
        if let (None, Some(s)) = (&app.data.opts.window, slowest) {
            let cp = app.data.analysis.critical_path.clone();
            app.cache.critical.insert(s, cp);
        }
        app.refresh();
        app
    }

    /// The current drill-down level.
    pub fn level(&self) -> Level {
        self.stack.last().map_or(Level::Cluster, |l| l.0)
    }

    /// The device level's rank index, also under an operator opened from it.
    pub fn device(&self) -> Option<usize> {
        self.stack.iter().rev().find_map(|(l, _)| match l {
            Level::Device(r) => Some(*r),
            _ => None,
        })
    }

    /// The operator of the operator level.
    pub fn operator(&self) -> Option<Sym> {
        match self.level() {
            Level::Operator(s) => Some(s),
            _ => None,
        }
    }

    /// The selected step number.
    pub fn step_number(&self) -> Option<u32> {
        self.data.steps.get(self.step).copied()
    }

    /// A name's text.
    pub fn name(&self, s: Sym) -> &str {
        self.data.loaded.job.strings.resolve(s)
    }

    /// The critical path of the selected step (computed by `refresh`).
    pub fn critical(&self) -> Option<&CriticalPath> {
        self.step_number()
            .and_then(|s| self.cache.critical.get(&s))
            .and_then(Option::as_ref)
    }

    /// The current timeline (computed by `refresh`).
    pub fn timeline(&self) -> Option<&Timeline> {
        self.cache.timelines.last().map(|t| &t.2)
    }

    /// Pushes a drill-down level, remembering the pane to return to.
    pub fn push(&mut self, level: Level, pane: Pane) {
        if self.level() == level {
            self.pane = pane;
            return;
        }
        let mut back = self.pane;
        // One operator replaces another (search, roofline rows): the stack stays a path.
        if let (Level::Operator(_), Level::Operator(_)) = (self.level(), level) {
            back = self.stack.pop().expect("above the cluster").1;
        }
        self.stack.push((level, back));
        self.pane = pane;
        match level {
            Level::Device(_) => self.device_row = 0,
            Level::Operator(_) => self.op_row = 0,
            Level::Cluster => {}
        }
        self.tl.expanded = None;
        self.tl.row = 0;
    }

    /// Pops one level; returns false at the cluster.
    pub fn pop(&mut self) -> bool {
        if self.stack.len() <= 1 {
            return false;
        }
        let (_, pane) = self.stack.pop().expect("checked");
        self.pane = pane;
        self.tl.row = 0;
        self.tl.expanded = None;
        true
    }

    /// Handles one key: the search prompt and the help overlay take keys first. Returns
    /// false when the key did nothing (no redraw needed).
    pub fn key(&mut self, key: Key) -> bool {
        let had_status = self.status.take().is_some();
        if self.search.typing {
            self.search_key(key);
        } else if self.help {
            self.help = false;
        } else if let Some(a) = self.keymap.action(key) {
            self.apply(a);
        } else {
            return had_status;
        }
        self.refresh();
        true
    }

    fn search_key(&mut self, (code, mods): Key) {
        let (names, strings) = (&self.data.names, &self.data.loaded.job.strings);
        match code {
            KeyCode::Esc => self.search.typing = false,
            KeyCode::Enter => {
                self.search.typing = false;
                match self.search.current() {
                    Some(s) => self.select_op(s),
                    None => {
                        self.status = Some(format!("no operator matches `{}`", self.search.query))
                    }
                }
            }
            KeyCode::Backspace => {
                self.search.query.pop();
                self.search.refresh(names, strings);
            }
            KeyCode::Up => {
                self.search.cursor = self.search.cursor.saturating_sub(1);
            }
            KeyCode::Down => {
                self.search.cursor =
                    (self.search.cursor + 1).min(self.search.results.len().saturating_sub(1));
            }
            KeyCode::Char(c) if !mods.contains(KeyModifiers::CONTROL) => {
                self.search.query.push(c);
                self.search.refresh(names, strings);
            }
            KeyCode::Char('c') => self.search.typing = false,
            _ => {}
        }
    }

    /// Makes `s` the selected operator: in the timeline, its first occurrence; elsewhere, the
    /// operator view.
    pub fn select_op(&mut self, s: Sym) {
        if self.pane == Pane::Timeline {
            let row = self
                .timeline()
                .and_then(|t| t.rows.iter().position(|r| r.occurrence(s, 0).is_some()));
            match row {
                Some(r) => {
                    self.tl.op = Some((s, 0));
                    self.tl.zoom = None;
                    self.tl.expanded = None;
                    super::nav::select_row(self, r);
                }
                None => self.status = Some(format!("{} does not run in this step", self.name(s))),
            }
        } else {
            self.push(Level::Operator(s), Pane::Operator);
        }
    }

    /// Applies one action.
    pub fn apply(&mut self, a: Action) {
        match a {
            Action::Quit => self.quit = true,
            Action::Help => self.help = true,
            Action::Search => {
                let (names, strings) = (&self.data.names, &self.data.loaded.job.strings);
                self.search.open(names, strings);
            }
            Action::NextMatch | Action::PrevMatch => {
                let by = if a == Action::NextMatch { 1 } else { -1 };
                match self.search.step(by) {
                    Some(s) => self.select_op(s),
                    None => self.status = Some("no search results: press / to search".into()),
                }
            }
            Action::NextPane | Action::PrevPane => {
                let n = Pane::ALL.len();
                let by = if a == Action::NextPane { 1 } else { n - 1 };
                self.pane = Pane::ALL[(self.pane.index() + by) % n];
            }
            Action::PaneOverview => self.pane = Pane::Overview,
            Action::PaneTimeline => self.pane = Pane::Timeline,
            Action::PaneCritical => self.pane = Pane::Critical,
            Action::PaneRoofline => self.pane = Pane::Roofline,
            Action::PaneAdvisor => self.pane = Pane::Advisor,
            Action::PaneOperator => self.pane = Pane::Operator,
            Action::PaneComm => self.pane = Pane::Comm,
            Action::Enter => super::nav::enter(self),
            Action::Back => {
                if self.pane == Pane::Timeline && self.tl.expanded.is_some() {
                    self.tl.expanded = None;
                } else if !self.pop() {
                    self.status = Some("at the cluster level (q quits)".into());
                }
            }
            Action::PrevStep | Action::NextStep => {
                let n = self.data.steps.len();
                let next = if a == Action::NextStep {
                    (self.step + 1).min(n.saturating_sub(1))
                } else {
                    self.step.saturating_sub(1)
                };
                if next != self.step {
                    self.step = next;
                    self.tl.zoom = None;
                }
            }
            Action::Up => self.move_sel(-1),
            Action::Down => self.move_sel(1),
            Action::PageUp => self.move_sel(-(PAGE as isize)),
            Action::PageDown => self.move_sel(PAGE as isize),
            Action::Top => self.move_sel(isize::MIN / 2),
            Action::Bottom => self.move_sel(isize::MAX / 2),
            Action::PanLeft
            | Action::PanRight
            | Action::ZoomIn
            | Action::ZoomOut
            | Action::ZoomReset => {
                if self.pane == Pane::Timeline {
                    super::nav::zoom(self, a);
                }
            }
            Action::NextOfKind | Action::PrevOfKind => {
                if self.pane == Pane::Timeline {
                    super::nav::next_of_kind(self, a == Action::NextOfKind);
                }
            }
            Action::CycleMetric => {
                self.metric = match self.metric {
                    Metric::Bytes => Metric::Time,
                    Metric::Time => Metric::Bandwidth,
                    Metric::Bandwidth => Metric::Bytes,
                }
            }
        }
    }

    /// Records a clickable list area (drawing calls this; `first` is the index of its first
    /// line).
    pub fn hit(&self, area: ratatui::layout::Rect, target: super::HitTarget) {
        self.hits.borrow_mut().push(super::Hit { area, target });
    }

    /// A left click: selects the row or the tab under it; a second click on the selected
    /// row opens it (Enter).
    pub fn click(&mut self, x: u16, y: u16) {
        self.status = None;
        let hit = self
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
        let row = match h.target {
            super::HitTarget::Tab(p) => {
                self.pane = p;
                self.refresh();
                return;
            }
            super::HitTarget::Rows(first) => first + (y - h.area.y) as usize,
            super::HitTarget::SpacedRows(first) => {
                if (y - h.area.y) % 2 == 1 {
                    return;
                }
                first + (y - h.area.y) as usize / 2
            }
        };
        if row >= super::nav::list_len(self) {
            return;
        }
        if self.selected() == row {
            self.apply(Action::Enter);
        } else if let Some(slot) = self.sel_slot() {
            *slot = row;
        }
        self.refresh();
    }

    /// Moves the current list's selection by `by` rows (clamped).
    pub fn move_sel(&mut self, by: isize) {
        let len = super::nav::list_len(self);
        let Some(slot) = self.sel_slot() else { return };
        let max = len.saturating_sub(1) as isize;
        *slot = (*slot as isize).saturating_add(by).clamp(0, max.max(0)) as usize;
    }

    /// The selection the current view moves.
    pub fn sel_slot(&mut self) -> Option<&mut usize> {
        Some(match (self.pane, self.level()) {
            (Pane::Overview, Level::Device(_)) => &mut self.device_row,
            (Pane::Operator, Level::Operator(_)) => &mut self.op_row,
            (Pane::Timeline, _) => &mut self.tl.row,
            (p, _) => &mut self.sel[p.index()],
        })
    }

    /// The selected row of a pane's list (cluster level).
    pub fn row_of(&self, p: Pane) -> usize {
        self.sel[p.index()]
    }

    /// The current view's selected row.
    pub fn selected(&self) -> usize {
        match (self.pane, self.level()) {
            (Pane::Overview, Level::Device(_)) => self.device_row,
            (Pane::Operator, Level::Operator(_)) => self.op_row,
            (Pane::Timeline, _) => self.tl.row,
            (p, _) => self.sel[p.index()],
        }
    }

    /// Makes sure a task's result is (or will be) in the caches: inline without a worker,
    /// else started in the background.
    fn need(&mut self, task: Task) {
        let cached = match task {
            Task::Critical(s) => self.cache.critical.contains_key(&s),
            Task::Op(o, s) => self.cache.op.as_ref().is_some_and(|c| (c.0, c.1) == (o, s)),
            Task::Timeline(r, s) => self.cache.timelines.iter().any(|t| (t.0, t.1) == (r, s)),
        };
        if cached {
            return;
        }
        let cp = match task {
            Task::Op(_, s) => self.cache.critical.get(&s).cloned(),
            Task::Critical(_) | Task::Timeline(..) => None,
        };
        match &mut self.work {
            Some(w) => w.start(&self.data, task, cp),
            None => {
                for d in super::work::compute(&self.data, task, cp) {
                    self.store(d);
                }
            }
        }
    }

    fn store(&mut self, d: Done) {
        match d {
            Done::Critical(s, cp) => {
                self.cache.critical.insert(s, cp);
            }
            Done::Op(o, s, detail, args) => {
                self.cache.op = Some((o, s, *detail));
                self.cache.op_args = Some(args);
            }
            Done::Timeline(r, s, t) => {
                let kept = &mut self.cache.timelines;
                if !kept.iter().any(|k| (k.0, k.1) == (r, s)) {
                    // Prefetched: kept at the old end, the current one stays last.
                    if kept.len() >= KEPT_TIMELINES {
                        kept.remove(0);
                    }
                    kept.insert(0, (r, s, *t));
                }
            }
        }
    }

    /// Takes finished background results into the caches; true when any arrived.
    pub fn collect(&mut self) -> bool {
        let done = self.work.as_mut().map(|w| w.finished()).unwrap_or_default();
        let any = !done.is_empty();
        for d in done {
            self.store(d);
        }
        if any {
            self.refresh();
        }
        any
    }

    /// Work for after a frame is on screen (terminal UI only): on the timeline, build the
    /// previous and next steps' bands in the background so `[` and `]` find them ready.
    /// Started after drawing, so the threads do not compete with the frame the key awaits.
    pub fn after_frame(&mut self) {
        if self.work.is_none() || self.pane != Pane::Timeline {
            return;
        }
        let rank = self.device();
        let near: Vec<u32> = [self.step.checked_sub(1), Some(self.step + 1)]
            .into_iter()
            .flatten()
            .filter_map(|i| self.data.steps.get(i).copied())
            .collect();
        for s in near {
            self.need(Task::Timeline(rank, s));
        }
    }

    /// True while `task` runs in the background.
    pub fn pending(&self, task: Task) -> bool {
        self.work.as_ref().is_some_and(|w| w.is_pending(task))
    }

    /// Fills the caches the current view needs (cheap when they are current).
    pub fn refresh(&mut self) {
        let Some(step) = self.step_number() else {
            return;
        };
        // The operator view's task computes the path itself when it is missing.
        if self.pane == Pane::Critical {
            self.need(Task::Critical(step));
        }
        if let Some(op) = self.operator() {
            if self
                .cache
                .op
                .as_ref()
                .is_none_or(|o| (o.0, o.1) != (op, step))
            {
                self.need(Task::Op(op, step));
            }
        }
        let data = self.data.clone();
        let (job, an) = (&data.loaded.job, &data.analysis);
        let rank = self.device();
        let cached = &mut self.cache.timelines;
        if self.pane == Pane::Timeline && cached.last().is_none_or(|t| (t.0, t.1) != (rank, step)) {
            let t = match cached.iter().position(|t| (t.0, t.1) == (rank, step)) {
                Some(i) => cached.remove(i).2,
                None => match rank {
                    Some(r) => timeline::lanes(job, &an.spans, &an.comm.offsets, r, step),
                    None => timeline::cluster(job, &an.spans, &an.comm.offsets, step),
                },
            };
            if cached.len() >= KEPT_TIMELINES {
                cached.remove(0);
            }
            self.tl.row = self.tl.row.min(t.rows.len().saturating_sub(1));
            if self
                .tl
                .op
                .is_none_or(|(s, k)| !t.rows.iter().any(|r| r.occurrence(s, k).is_some()))
            {
                self.tl.op = super::nav::default_op(&t);
            }
            self.cache.timelines.push((rank, step, t));
        }
        if let Some(r) = rank {
            if self.cache.device_ops.as_ref().is_none_or(|d| d.0 != r) {
                let scope = Scope {
                    rank: Some(job.ranks[r].id),
                    step: None,
                };
                self.cache.device_ops = Some((r, ops::top_ops(job, scope).1));
            }
        }
        if self.pane == Pane::Comm && self.cache.comm_ranks.as_ref().is_none_or(|c| c.0 != step) {
            self.cache.comm_ranks = Some((step, per_rank::per_rank(&an.comm, Some(step))));
        }
        if self.pane == Pane::Timeline {
            super::nav::resolve_focus(self);
            let rows = super::nav::list_len(self);
            self.tl.row = self.tl.row.min(rows.saturating_sub(1));
            let first = self.timeline().map_or(0, |t| {
                super::panes::timeline::display_rows(self, t)
                    .get(self.tl.row)
                    .map_or(0, |r| r.start)
            });
            let key = self.tl.op.map(|(s, k)| (rank, step, s, k, first));
            if key != self.cache.selected {
                self.cache.selected_bands = match (self.tl.op, self.timeline()) {
                    (Some((s, k)), Some(t)) => {
                        selected_bands(t, &data.analysis.comm, rank, first, s, k)
                    }
                    _ => Vec::new(),
                };
                self.cache.selected = key;
            }
        }
    }
}
