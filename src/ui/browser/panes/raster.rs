//! A timeline row's bands rasterized to half-cells (the coverage of each half by kind,
//! summed over the rows of a group) and drawn as styled spans.

use crate::analysis::timeline::{Band, BandKind};
use crate::time::Ns;
use crate::ui::shell::theme::Theme;
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;

/// Glyph of a kind without colour (mono themes) — kinds stay apart by shape.
pub fn mono_glyph(k: BandKind) -> char {
    match k {
        BandKind::Compute => '█',
        BandKind::Collective => '▓',
        BandKind::Send => '▶',
        BandKind::Recv => '◀',
        BandKind::Memory => '░',
        BandKind::Host => '▒',
    }
}

/// The widest window (ns) and most half-cells whose positions are computed in i64.
const FAST_W: Ns = 1 << 52;
const FAST_HALVES: usize = 1 << 10;

/// Coverage of half-cells by kind, summed over rows.
pub struct Raster {
    a: Ns,
    w: Ns,
    halves: usize,
    cover: Vec<[Ns; 6]>,
}

impl Raster {
    /// An empty raster of `cells` cells over `[a, b)`.
    pub fn new(a: Ns, b: Ns, cells: usize) -> Raster {
        let cells = cells.max(1);
        Raster {
            a,
            w: b.saturating_sub(a).max(1),
            halves: cells * 2,
            cover: vec![[0; 6]; cells * 2],
        }
    }

    fn fast(&self) -> bool {
        self.w <= FAST_W && self.halves <= FAST_HALVES
    }

    // i64 is enough while (t − a) ≤ w ≤ 2^52 (52 days) and halves ≤ 2^10, and i128 division
    // costs a library call per band; a wider window (ranks on clocks far apart, unaligned)
    // takes the exact i128 path.
    fn half_of(&self, t: Ns) -> i64 {
        if self.fast() {
            ((t - self.a) * self.halves as i64).div_euclid(self.w)
        } else {
            let x = i128::from(t) - i128::from(self.a);
            (x * self.halves as i128).div_euclid(i128::from(self.w)) as i64
        }
    }

    /// Adds a row's bands (sorted by start; none longer than `max_len`).
    #[inline]
    pub fn add(&mut self, bands: &[Band], max_len: Ns) {
        let b_end = self.a.saturating_add(self.w);
        let from = self.a.saturating_sub(max_len);
        let first = bands.partition_point(|b| b.start < from);
        for b in &bands[first..] {
            if b.start >= b_end {
                break;
            }
            if b.end <= self.a {
                continue;
            }
            let (s, e) = (b.start.max(self.a), b.end.min(b_end));
            let (h0, h1) = (
                self.half_of(s).max(0) as usize,
                (self.half_of(e - 1).max(0) as usize).min(self.halves - 1),
            );
            let k = BandKind::ALL.iter().position(|x| *x == b.kind).unwrap_or(0);
            for h in h0..=h1 {
                let (ha, hb) = (self.time_of(h), self.time_of(h + 1));
                let c = &mut self.cover[h][k];
                *c = c.saturating_add(e.min(hb) - s.max(ha));
            }
        }
    }

    fn time_of(&self, h: usize) -> Ns {
        if self.fast() {
            return self.a + self.w * h as i64 / self.halves as i64;
        }
        let off = i128::from(self.w) * h as i128 / self.halves as i128;
        self.a.saturating_add(off as Ns)
    }

    /// The dominant kind of half `h` when it is at least a quarter covered per row.
    #[inline]
    fn kind(&self, h: usize, rows: usize) -> (Option<BandKind>, bool) {
        let c = &self.cover[h];
        let (i, best) = c
            .iter()
            .enumerate()
            .max_by_key(|(i, v)| (**v, std::cmp::Reverse(*i)))
            .expect("6 kinds");
        let span = (self.time_of(h + 1) - self.time_of(h))
            .max(1)
            .saturating_mul(rows as Ns);
        let any = c.iter().any(|v| *v > 0);
        (
            (best.saturating_mul(4) >= span && *best > 0).then_some(BandKind::ALL[i]),
            any,
        )
    }
}

/// Where a row's selected operator lies, in cells: its earliest and latest start, its
/// earliest and latest end.
pub type SelCells = (i128, i128, i128, i128);

/// One axis's cells: each the dominant kind of its two halves, the selected operator's
/// common span highlighted and its ragged edges underlined. Cells of one style are merged
/// into one span: a frame is hundreds of spans, not tens of thousands.
pub fn band_spans(
    th: &Theme,
    r: &Raster,
    rows: usize,
    cells: usize,
    sel: Option<SelCells>,
) -> Vec<Span<'static>> {
    let mut spans = Vec::new();
    let mut run = String::new();
    let mut run_style = Style::default();
    for c in 0..cells {
        let (l, la) = r.kind(2 * c, rows);
        let (rr, ra) = r.kind(2 * c + 1, rows);
        let (glyph, kind) = match (l, rr) {
            (Some(k), Some(_)) => (if th.mono { mono_glyph(k) } else { '█' }, Some(k)),
            (Some(k), None) => (if th.mono { mono_glyph(k) } else { '▌' }, Some(k)),
            (None, Some(k)) => (if th.mono { mono_glyph(k) } else { '▐' }, Some(k)),
            (None, None) if la || ra => ('▁', None),
            _ => ('─', None),
        };
        let mut style = match kind {
            Some(k) => Style::default().fg(th.band(k)),
            None if la || ra => th.dim(),
            None => Style::default().fg(th.c.idle),
        };
        if let Some((s0, s1, e0, e1)) = sel {
            let x = c as i128;
            if x >= s1 && x <= e0 {
                style = style.patch(th.selected());
            } else if x >= s0 && x <= e1 {
                style = style
                    .add_modifier(Modifier::UNDERLINED | Modifier::BOLD)
                    .fg(th.c.accent);
            }
        }
        if style != run_style && !run.is_empty() {
            spans.push(Span::styled(std::mem::take(&mut run), run_style));
        }
        run_style = style;
        run.push(glyph);
    }
    spans.push(Span::styled(run, run_style));
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raster_halves_take_the_dominant_kind() {
        let band = |s, e, kind| Band {
            start: s,
            end: e,
            kind,
            name: 0,
            event: crate::model::EventIx(0),
        };
        let mut r = Raster::new(0, 100, 5); // 10 halves of 10 ns
        r.add(
            &[
                band(0, 15, BandKind::Compute),
                band(15, 40, BandKind::Collective),
                band(90, 91, BandKind::Memory),
            ],
            25,
        );
        assert_eq!(r.kind(0, 1).0, Some(BandKind::Compute));
        assert_eq!(r.kind(1, 1).0, Some(BandKind::Compute)); // 5 vs 5: the earlier kind
        assert_eq!(r.kind(2, 1).0, Some(BandKind::Collective));
        assert_eq!(r.kind(4, 1), (None, false));
        assert_eq!(r.kind(9, 1), (None, true)); // 1 ns of 10: under a quarter
    }

    use crate::time::strategies::instant;
    use proptest::prelude::*;

    proptest! {
        /// Any window and any bands in the time range rasterize without overflow, and each
        /// half's coverage never exceeds the half times the rows drawn.
        #[test]
        fn any_window_rasterizes(
            a in instant(),
            b in instant(),
            cells in 1usize..300,
            mut ends in proptest::collection::vec((instant(), instant()), 0..20),
        ) {
            let (a, b) = (a.min(b), a.max(b));
            let mut r = Raster::new(a, b, cells);
            ends.iter_mut().for_each(|(s, e)| if s > e { std::mem::swap(s, e) });
            ends.sort();
            let bands: Vec<Band> = ends
                .iter()
                .map(|&(s, e)| Band { start: s, end: e, kind: BandKind::Compute, name: 0, event: crate::model::EventIx(0) })
                .collect();
            let max_len = ends.iter().map(|(s, e)| e - s).max().unwrap_or(0);
            r.add(&bands, max_len);
            for h in 0..r.halves {
                let (k, _) = r.kind(h, 1);
                prop_assert!(k.is_none() || k == Some(BandKind::Compute));
                prop_assert!(r.time_of(h) <= r.time_of(h + 1));
            }
        }
    }
}
