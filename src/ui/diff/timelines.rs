//! Enter on an operator of the diff: both runs' device-level timelines of one step pair and
//! one rank pair, one above the other on one time scale (each from its own step start), the
//! operator's calls marked on a row under each.

use crate::analysis::diff::OpRow;
use crate::analysis::timeline::{self, Timeline};
use crate::format::{fit, human, pad};
use crate::model::{RankId, StepNo, Sym};
use crate::session::Session;
use crate::session::diff::DiffPair;
use crate::time::Ns;
use crate::ui::browser::panes::raster::{Raster, band_spans};
use crate::ui::shell::Ctx;
use crate::ui::shell::theme::Theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// One run's side: which step and rank, its timeline and the operator's names in it.
pub struct Side {
    /// The step shown.
    pub step: StepNo,
    /// The rank shown.
    pub rank: RankId,
    /// Its lanes in the step.
    pub timeline: Timeline,
    /// The operator's interned names in this run (with a rename: the run's own name).
    pub names: Vec<Sym>,
}

/// Both runs' timelines of an operator.
pub struct PairTimelines {
    /// The operator's row of the diff.
    pub row: OpRow,
    /// The step pair shown (index into the diff's pairs).
    pub step: usize,
    /// The rank pair shown (index into the diff's ranks, the largest change first).
    pub rank: usize,
    /// The first run, then the second.
    pub sides: [Side; 2],
}

/// The timelines of `row`: the step pair whose step time changed most, the rank pair whose
/// span changed most.
pub fn build(pair: &DiffPair, row: &OpRow) -> PairTimelines {
    let step = (0..pair.diff.pairs.len())
        .max_by_key(|&k| {
            let p = &pair.diff.pairs[k];
            (p.delta_ns().unsigned_abs(), std::cmp::Reverse(k))
        })
        .unwrap_or(0);
    at(pair, row, step, 0)
}

/// The timelines of `row` in step pair `step` and rank pair `rank` (clamped to those there are).
pub fn at(pair: &DiffPair, row: &OpRow, step: usize, rank: usize) -> PairTimelines {
    let d = &pair.diff;
    let step = step.min(d.pairs.len().saturating_sub(1));
    let rank = rank.min(d.parts.ranks.len().saturating_sub(1));
    let steps = d
        .pairs
        .get(step)
        .map(|p| (p.before, p.after))
        .unwrap_or_default();
    let ranks = d
        .parts
        .ranks
        .get(rank)
        .map(|r| (r.rank, r.paired_with.unwrap_or(r.rank)))
        .unwrap_or_default();
    let after_name = row.renamed_to.as_deref().unwrap_or(&row.name);
    PairTimelines {
        row: row.clone(),
        step,
        rank,
        sides: [
            side(&pair.before, steps.0, ranks.0, &row.name),
            side(&pair.after, steps.1, ranks.1, after_name),
        ],
    }
}

fn side(s: &Session, step: StepNo, rank: RankId, name: &str) -> Side {
    let job = s.job();
    let timeline = match job.rank_ix(rank) {
        Some(ix) => timeline::lanes(job, &s.analysis.spans, &s.analysis.comm.offsets, ix, step),
        None => timeline::lanes(job, &[], &[], crate::model::RankIx(0), step),
    };
    Side {
        step,
        rank,
        timeline,
        names: job.strings.get(name).into_iter().collect(),
    }
}

/// Draws both timelines into `area`.
pub fn draw(f: &mut Frame, area: Rect, p: &PairTimelines, ctx: &Ctx<()>) {
    let th = &ctx.theme;
    let width = p
        .sides
        .iter()
        .map(|s| s.timeline.end - s.timeline.start)
        .max()
        .unwrap_or(0)
        .max(1);
    let label_w = (area.width as usize / 5).clamp(8, 24);
    let cells = (area.width as usize).saturating_sub(label_w + 1).max(1);
    let mut lines = vec![Line::from(Span::styled(
        fit(
            &format!(
                " {}{}: both runs on one scale ({} across), its calls marked ▀; [ ] step, j k rank",
                p.row.name,
                p.row
                    .renamed_to
                    .as_ref()
                    .map_or(String::new(), |n| format!(" → {n}")),
                human(width)
            ),
            area.width as usize,
        ),
        th.title(),
    ))];
    let per_side = (area.height as usize).saturating_sub(3) / 2;
    for (k, s) in p.sides.iter().enumerate() {
        lines.extend(side_lines(
            th,
            s,
            if k == 0 { "before" } else { "after" },
            width,
            label_w,
            cells,
            per_side,
        ));
    }
    let r = &p.row;
    let mean = r.means().map(|m| m.map_or("-".to_string(), human));
    lines.push(Line::from(""));
    lines.push(Line::from(Span::styled(
        fit(
            &format!(
                " over the compared ranks and steps: {} calls, {} (mean {}) → {} calls, {} (mean {}); matched by {:?}",
                r.count_before,
                human(r.total.before_ns),
                mean[0],
                r.count_after,
                human(r.total.after_ns),
                mean[1],
                r.matched
            )
            .to_lowercase(),
            area.width as usize,
        ),
        th.dim(),
    )));
    f.render_widget(Paragraph::new(lines), area);
}

/// One side: its title, its lanes, and the operator's row, in at most `rows` lines.
fn side_lines(
    th: &Theme,
    s: &Side,
    which: &str,
    width: Ns,
    label_w: usize,
    cells: usize,
    rows: usize,
) -> Vec<Line<'static>> {
    let t = &s.timeline;
    let (a, b) = (t.start, t.start.saturating_add(width));
    let mut out = vec![Line::from(Span::styled(
        format!(
            " {which}: step {}, rank {} — {}",
            s.step,
            s.rank,
            human(t.end.saturating_sub(t.start))
        ),
        th.text(),
    ))];
    let lanes = rows.saturating_sub(2);
    for row in t.rows.iter().take(lanes) {
        let mut r = Raster::new(a, b, cells);
        r.add(&row.bands, row.max_len);
        let mut spans = vec![Span::styled(
            format!("{} ", pad(&row.label, label_w)),
            th.dim(),
        )];
        spans.extend(band_spans(th, &r, 1, cells, None));
        out.push(Line::from(spans));
    }
    if t.rows.len() > lanes {
        out.push(Line::from(Span::styled(
            format!(" … {} more lane(s)", t.rows.len() - lanes),
            th.dim(),
        )));
    }
    out.push(marks(th, s, a, width, label_w, cells));
    out
}

/// The operator's calls on this side, as marks under the lanes.
fn marks(th: &Theme, s: &Side, a: Ns, width: Ns, label_w: usize, cells: usize) -> Line<'static> {
    let mut on = vec![false; cells];
    let cell = |t: Ns| {
        ((i128::from(t - a) * cells as i128) / i128::from(width)).clamp(0, cells as i128 - 1)
            as usize
    };
    let mut calls = 0;
    for row in &s.timeline.rows {
        for band in row.bands.iter().filter(|b| s.names.contains(&b.name)) {
            calls += 1;
            for c in on
                .iter_mut()
                .take(cell(band.end.max(band.start + 1) - 1) + 1)
                .skip(cell(band.start))
            {
                *c = true;
            }
        }
    }
    let text: String = on.iter().map(|&x| if x { '▀' } else { ' ' }).collect();
    Line::from(vec![
        Span::styled(
            format!("{} ", pad(&format!("{calls} call(s)"), label_w)),
            th.dim(),
        ),
        Span::styled(text, th.fg(th.c.accent)),
    ])
}
