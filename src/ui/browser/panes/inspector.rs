//! The timeline's inspector, under its rows: what the cursor is on — a band's facts, what the
//! host did in a gap, or a marked range summed ([`crate::analysis::inspect`]). Computed when
//! the cursor moves (in `prepare`), drawn from the cache. `i` hides it.

use super::timeline_cursor::{self as cursor, Stop};
pub use super::timeline_nav::inspector_height as height;
use crate::analysis::inspect::{self, BandFacts, HostDoing, RangeFacts};
use crate::analysis::timeline::Timeline;
use crate::format::{bytes, fit, fit_name, human};
use crate::model::{RankId, RankIx, StepNo, Sym};
use crate::time::Ns;
use crate::ui::UiMsg;
use crate::ui::browser::Browser;
use crate::ui::browser::work::Task;
use crate::ui::shell::Ctx;
use crate::ui::shell::theme::Theme;
use crate::ui::shell::widgets::{self, block};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// What the inspection was computed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    rank: Option<RankIx>,
    step: StepNo,
    last: StepNo,
    row: usize,
    op: Option<(Sym, usize)>,
    gap: Option<(Ns, Ns)>,
    mark: Option<Ns>,
}

/// What the inspector shows.
#[derive(Debug, Clone)]
pub enum Inspected {
    /// The band under the cursor.
    Band(Box<BandFacts>),
    /// A gap: its interval and what the host did.
    Gap(RankId, (Ns, Ns), HostDoing),
    /// A marked range of the row.
    Range(RankId, RangeFacts),
    /// Nothing under the cursor.
    Nothing,
}

/// Brings the inspection up to date with the cursor; a band's args are read in the
/// background.
pub fn prepare(b: &mut Browser, ctx: &mut Ctx<UiMsg>) {
    let size = ctx.size;
    if height(b, size) == 0 {
        return;
    }
    let Some(t) = b.timeline() else { return };
    let key = Key {
        rank: b.device(),
        step: t.step,
        last: t.last,
        row: b.panes.timeline.view.row,
        op: b.panes.timeline.view.op,
        gap: b.panes.timeline.view.gap,
        mark: b.panes.timeline.view.mark,
    };
    if b.panes
        .timeline
        .inspected
        .as_ref()
        .is_some_and(|c| c.0 == key)
    {
        return;
    }
    let what = inspect_now(b, t, size);
    let band = match &what {
        Inspected::Band(x) => Some(x.event),
        _ => None,
    };
    b.panes.timeline.inspected = Some((key, what));
    // Args that cost a decompression or a regeneration wait for `a` (read_args).
    if let Some(e) = band.filter(|&e| b.data.event_text_is_cheap(e)) {
        b.need(Task::Args(e), ctx);
    }
}

/// `a`: reads the inspected band's args, however much it costs.
pub fn read_args(b: &mut Browser, ctx: &mut Ctx<UiMsg>) {
    if let Some((_, Inspected::Band(x))) = &b.panes.timeline.inspected {
        let e = x.event;
        b.need(Task::Args(e), ctx);
    }
}

fn inspect_now(b: &Browser, t: &Timeline, size: (u16, u16)) -> Inspected {
    let Some(row) = cursor::row(b, t, size) else {
        return Inspected::Nothing;
    };
    let (job, an) = (&b.data.loaded.job, &b.data.analysis);
    let r = row.rank_index;
    let off = b.offset(r);
    if let Some((from, to)) = cursor::range(b, t, row) {
        return Inspected::Range(row.rank, inspect::range(row, from, to));
    }
    let stops = row.stops(cursor::axis(t));
    match cursor::current(b, row, &stops).map(|i| stops[i]) {
        Some(Stop::Band(i)) => {
            let facts = inspect::band(job, &an.comm, r, row.bands[i].event, off);
            Inspected::Band(Box::new(facts))
        }
        Some(Stop::Gap(a, z)) => Inspected::Gap(row.rank, (a, z), inspect::gap(job, r, a, z, off)),
        None => Inspected::Nothing,
    }
}

/// Draws it into `area`.
pub fn draw(f: &mut Frame, area: Rect, b: &Browser, ctx: &Ctx<UiMsg>) {
    let th = &ctx.theme;
    let (Some(t), Some((_, what))) = (b.timeline(), &b.panes.timeline.inspected) else {
        return;
    };
    let w = area.width.saturating_sub(2) as usize;
    let at = |x: Ns| format!("+{}", human(x - t.start));
    let name = |s: Sym| b.name(s).to_string();
    let (title, lines) = match what {
        Inspected::Band(x) => {
            let mut l = band_lines(th, x, w, &at, &name);
            // Room for four lines of facts, then the args.
            l.truncate(4);
            l.push(args_line(th, b, x));
            ("inspector: band (w/b: next/previous, v: range)", l)
        }
        Inspected::Gap(rank, (a, z), doing) => (
            "inspector: gap (w/b: next/previous, v: range)",
            gap_lines(th, *rank, (at(*a), at(*z), z - a), doing, &name),
        ),
        Inspected::Range(rank, r) => (
            "inspector: range (v clears)",
            range_lines(th, *rank, r, w, &at, &name),
        ),
        Inspected::Nothing => (
            "inspector",
            vec![widgets::empty(
                th,
                " w / b put the cursor on a band or a gap of the selected row",
            )],
        ),
    };
    let lines: Vec<Line> = lines.into_iter().map(|l| fit_line(l, w)).collect();
    f.render_widget(Paragraph::new(lines).block(block(th, title)), area);
}

/// A line cut to `w` columns (its spans' text cut, styles kept).
fn fit_line(l: Line<'static>, w: usize) -> Line<'static> {
    let mut left = w;
    let spans = l
        .spans
        .into_iter()
        .filter_map(|s| {
            if left == 0 {
                return None;
            }
            let text = fit(&s.content, left);
            left -= crate::format::width(&text);
            Some(Span::styled(text, s.style))
        })
        .collect::<Vec<_>>();
    Line::from(spans)
}

fn band_lines(
    th: &Theme,
    x: &BandFacts,
    w: usize,
    at: &dyn Fn(Ns) -> String,
    name: &dyn Fn(Sym) -> String,
) -> Vec<Line<'static>> {
    let mut l = vec![
        Line::from(Span::styled(
            fit_name(&name(x.name), w),
            th.text().add_modifier(Modifier::BOLD),
        )),
        widgets::pairs(
            th,
            // The numbers first: a narrow pane cuts the lane's name, not them.
            &[
                ("duration", human(x.dur)),
                ("start", at(x.start)),
                ("kind", x.kind.as_str().to_string()),
                ("rank", x.rank.to_string()),
                ("lane", name(x.lane)),
            ],
        ),
    ];
    let mut link = Vec::new();
    if let Some(c) = x.launch {
        link.push((
            "launched by",
            format!("{} at {}", name(c.name), at(c.start)),
        ));
        link.push(("launch delay", human(c.delay)));
    }
    if let Some(c) = x.launched {
        link.push((
            "launches",
            format!("{} at {}", fit_name(&name(c.name), 40), at(c.start)),
        ));
    }
    if let Some(op) = x.op {
        link.push(("in", fit_name(&name(op), 40)));
    }
    if !link.is_empty() {
        l.push(widgets::pairs(th, &link));
    }
    if let Some((dims, types)) = x.shapes {
        let text = |s: Option<Sym>| s.map_or("-".to_string(), name);
        l.push(widgets::pairs(
            th,
            &[("shapes", text(dims)), ("types", text(types))],
        ));
    }
    if let Some(c) = x.collective {
        l.push(widgets::pairs(
            th,
            &[
                (
                    "collective",
                    format!("{} of {} ranks", c.op.as_str(), c.members),
                ),
                ("size", c.bytes.map_or("-".into(), bytes)),
                (
                    "waits",
                    format!("{} for rank {}", human(c.wait), c.last_arriver),
                ),
                ("transit", human(c.transit)),
                ("skew", human(c.skew)),
            ],
        ));
    }
    l
}

/// The band's args as `key value` pairs on one line, the correlation id first (what the
/// lines above show already left out); while they are read, says so.
fn args_line(th: &Theme, b: &Browser, x: &BandFacts) -> Line<'static> {
    const SHOWN: [&str; 4] = ["Input Dims", "Input type", "External id", "Ev Idx"];
    let text = match &b.panes.timeline.band_args {
        Some((e, Ok(args))) if *e == x.event => {
            let mut v: Vec<&(String, String)> = args
                .iter()
                .filter(|(k, _)| !SHOWN.contains(&k.as_str()))
                .collect();
            v.sort_by_key(|(k, _)| k != "correlation");
            if v.is_empty() {
                "no other args".to_string()
            } else {
                let pairs: Vec<String> = v.iter().map(|(k, val)| format!("{k} {val}")).collect();
                pairs.join("  ")
            }
        }
        Some((e, Err(why))) if *e == x.event => format!("not available: {why}"),
        _ if b.is_pending(Task::Args(x.event)) => "reading…".to_string(),
        _ => "a reads them (the input is compressed or generated: it is read up to the event)"
            .to_string(),
    };
    widgets::pairs(th, &[("args", text)])
}

fn gap_lines(
    th: &Theme,
    rank: RankId,
    (a, z, len): (String, String, Ns),
    doing: &HostDoing,
    name: &dyn Fn(Sym) -> String,
) -> Vec<Line<'static>> {
    let head = Line::from(Span::styled(
        format!("nothing runs on this row from {a} to {z} ({})", human(len)),
        th.text().add_modifier(Modifier::BOLD),
    ));
    let meanwhile = match doing {
        HostDoing::Nothing => {
            "nothing recorded on its host threads: idle, or work the profiler did not see"
                .to_string()
        }
        HostDoing::In {
            chain,
            blocked,
            loading,
        } => {
            let names: Vec<String> = chain.iter().map(|&s| fit_name(&name(s), 40)).collect();
            let why = if *blocked {
                " — blocked, waiting on the device"
            } else if *loading {
                " — loading data"
            } else {
                " — busy on the host"
            };
            format!("{}{why}", names.join(" › "))
        }
    };
    vec![
        head,
        widgets::pairs(th, &[(&format!("rank {rank}'s host meanwhile"), meanwhile)]),
    ]
}

fn range_lines(
    th: &Theme,
    rank: RankId,
    r: &RangeFacts,
    w: usize,
    at: &dyn Fn(Ns) -> String,
    name: &dyn Fn(Sym) -> String,
) -> Vec<Line<'static>> {
    let len = r.to - r.from;
    let share = |x: Ns| crate::format::share(x, len);
    let mut kinds: Vec<(&str, String)> = r
        .kinds
        .iter()
        .map(|(k, ns)| (k.as_str(), format!("{} {}", human(*ns), share(*ns))))
        .collect();
    kinds.push(("idle", format!("{} {}", human(r.idle), share(r.idle))));
    let mut l = vec![
        Line::from(Span::styled(
            format!(
                "rank {rank}, {} to {} ({})",
                at(r.from),
                at(r.to),
                human(len)
            ),
            th.text().add_modifier(Modifier::BOLD),
        )),
        widgets::pairs(th, &kinds),
    ];
    for (s, ns, n) in &r.top {
        let label = format!("{} ×{n}", human(*ns));
        let room = w.saturating_sub(label.len() + 2);
        l.push(Line::from(vec![
            Span::styled(format!("{label:>12}  "), th.dim()),
            Span::styled(fit_name(&name(*s), room), th.text()),
        ]));
    }
    l
}
