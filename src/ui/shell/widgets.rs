//! Small drawing helpers every screen shares: framed blocks, paged list offsets,
//! proportional stacked bars, value bars with eighth-cell resolution, label/value lines, and
//! the ASCII fold of `--ascii`. Text fitting is `crate::format`'s.

use super::theme::Theme;
use super::{Ctx, HitTarget};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders};

/// A bordered block with a title.
pub fn block<'a>(theme: &Theme, title: impl Into<String>) -> Block<'a> {
    Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border())
        .title(Span::styled(format!(" {} ", title.into()), theme.title()))
}

/// A rectangle centred in `area`.
pub fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

/// First visible row of a list of `height` rows whose selection is `sel`: whole pages, so
/// the offset follows from the selection alone (drawing keeps no scroll state).
pub fn offset(sel: usize, height: usize) -> usize {
    sel.checked_div(height).map_or(0, |page| page * height)
}

/// The rows a bordered list with `header` lines shows, and its first visible row for the
/// selection `sel`.
pub fn page(area: Rect, header: u16, sel: usize) -> (usize, usize) {
    let rows = area.height.saturating_sub(2 + header) as usize;
    (rows, offset(sel, rows))
}

/// A table's header line (dimmed).
pub fn head<'a>(theme: &Theme, text: String) -> Line<'a> {
    Line::from(Span::styled(text, theme.dim()))
}

/// Splits `width` cells among `values` by the largest-remainder method, so the parts add
/// up to exactly `width` (when any value is positive).
pub fn apportion(values: &[u64], width: usize) -> Vec<usize> {
    let total: u128 = values.iter().map(|&v| v as u128).sum();
    if total == 0 {
        return vec![0; values.len()];
    }
    let exact: Vec<(usize, u128)> = values
        .iter()
        .map(|&v| {
            let x = v as u128 * width as u128;
            ((x / total) as usize, x % total)
        })
        .collect();
    let mut out: Vec<usize> = exact.iter().map(|e| e.0).collect();
    let short = width - out.iter().sum::<usize>();
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| exact[b].1.cmp(&exact[a].1).then(a.cmp(&b)));
    for &i in order.iter().take(short) {
        out[i] += 1;
    }
    out
}

/// A bar of `width` cells split among `(value, colour, glyph)` parts.
pub fn stacked<'a>(parts: &[(u64, Color, char)], width: usize) -> Vec<Span<'a>> {
    let values: Vec<u64> = parts.iter().map(|p| p.0).collect();
    apportion(&values, width)
        .into_iter()
        .zip(parts)
        .filter(|(n, _)| *n > 0)
        .map(|(n, p)| Span::styled(p.2.to_string().repeat(n), Style::default().fg(p.1)))
        .collect()
}

/// A horizontal bar of `value / max` of `width` cells, in eighths.
pub fn bar(value: f64, max: f64, width: usize) -> String {
    const EIGHTHS: [char; 8] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
    if max <= 0.0 || value <= 0.0 {
        return String::new();
    }
    let eighths = ((value / max).min(1.0) * width as f64 * 8.0).round() as usize;
    let mut s = "█".repeat(eighths / 8);
    if eighths % 8 > 0 {
        s.push(EIGHTHS[eighths % 8]);
    }
    s
}

/// A line of label/value pairs (`label value  label value`).
pub fn pairs<'a>(theme: &Theme, items: &[(&str, String)]) -> Line<'a> {
    let mut spans = Vec::new();
    for (i, (k, v)) in items.iter().enumerate() {
        if i > 0 {
            spans.push(Span::raw("  "));
        }
        spans.push(Span::styled(format!("{k} "), theme.dim()));
        spans.push(Span::styled(v.clone(), theme.text()));
    }
    Line::from(spans)
}

/// Records the rows of a bordered list for mouse clicks: `header` lines under the top border,
/// then `rows` rows of which the first is index `first`.
pub fn hit_rows<M>(ctx: &Ctx<M>, area: Rect, header: u16, rows: usize, first: usize) {
    let r = Rect::new(
        area.x + 1,
        area.y + 1 + header,
        area.width.saturating_sub(2),
        (rows as u16).min(area.height.saturating_sub(2 + header)),
    );
    ctx.hit(r, HitTarget::Rows(first));
}

/// The rows of `area` minus a header line, as a count.
pub fn body_rows(area: Rect, header: u16) -> usize {
    area.height.saturating_sub(header) as usize
}

/// The heat glyph and colour of a deviation from a median (below 2%, below 10%, beyond):
/// the glyph tells the level apart without colour.
pub fn heat(theme: &Theme, dev: f64) -> (char, Color) {
    let c = &theme.c;
    if dev < 0.02 {
        ('░', c.heat_low)
    } else if dev < 0.10 {
        ('▒', c.heat_mid)
    } else {
        ('█', c.heat_high)
    }
}

/// A "nothing here" message for an empty view.
pub fn empty<'a>(theme: &Theme, msg: &str) -> Line<'a> {
    Line::from(Span::styled(msg.to_string(), theme.dim()))
}

/// Trace names are untrusted: a cell holding a control character or a bidi override shows
/// U+FFFD instead, so nothing drawn can move the cursor, retitle the window or reorder text.
/// Every frame passes through here (the terminal and snapshots alike).
pub fn defuse(buf: &mut Buffer) {
    for cell in buf.content.iter_mut() {
        if cell.symbol().contains(crate::format::unsafe_char) {
            cell.set_symbol("\u{fffd}");
        }
    }
}

/// Replaces every non-ASCII glyph with an ASCII look-alike (`--ascii`).
pub fn fold_ascii(buf: &mut Buffer) {
    for cell in buf.content.iter_mut() {
        let s = cell.symbol();
        if s.is_ascii() {
            continue;
        }
        let c = s.chars().next().unwrap_or(' ');
        let a = match c {
            '─' | '━' | '╌' | '┄' => "-",
            '│' | '┃' | '╎' | '┆' => "|",
            '┌' | '┐' | '└' | '┘' | '├' | '┤' | '┬' | '┴' | '┼' | '╭' | '╮' | '╰' | '╯' => {
                "+"
            }
            '█' | '▉' | '▊' | '▋' | '▌' | '▐' | '▓' => "#",
            '▍' | '▎' | '▏' | '▕' => "|",
            '▒' => ":",
            '░' | '·' => ".",
            '▁' | '▂' | '▃' | '▄' => "_",
            '▅' | '▆' | '▇' | '▀' | '▔' => "=",
            '›' | '▶' | '→' => ">",
            '◀' | '←' => "<",
            '…' => "~",
            'µ' => "u",
            '•' | '●' => "*",
            '╲' => "\\",
            '✓' => "+",
            '✗' | '╳' => "x",
            '▸' => ">",
            '┊' => "|",
            'Δ' => "d",
            '▚' => "%",
            '╱' => "/",
            '×' => "x",
            '≥' => ">",
            '≤' => "<",
            c if ('\u{2800}'..='\u{28ff}').contains(&c) => ".",
            _ => "?",
        };
        cell.set_symbol(a);
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn names_with_escapes_or_bidi_overrides_never_reach_the_terminal() {
        use ratatui::layout::Rect;
        let mut b = Buffer::empty(Rect::new(0, 0, 12, 1));
        b.set_string(
            0,
            0,
            "ab\u{202e}cd\u{1b}[2Jx",
            ratatui::style::Style::default(),
        );
        // Whatever ratatui keeps of a string, a cell can also be set directly.
        b.content[10].set_symbol("\u{2066}");
        b.content[11].set_symbol("\u{7}");
        defuse(&mut b);
        let text: String = b.content.iter().map(|c| c.symbol()).collect();
        assert!(!text.contains(crate::format::unsafe_char), "{text:?}");
        assert_eq!(b.content[10].symbol(), "\u{fffd}");
        assert_eq!(b.content[11].symbol(), "\u{fffd}");
        assert_eq!(b.content[0].symbol(), "a");
    }

    use super::*;

    #[test]
    fn apportion_adds_up() {
        assert_eq!(apportion(&[1, 1, 1], 10), vec![4, 3, 3]);
        assert_eq!(apportion(&[0, 5, 0], 7), vec![0, 7, 0]);
        assert_eq!(apportion(&[0, 0], 7), vec![0, 0]);
        assert_eq!(apportion(&[2, 1], 3).iter().sum::<usize>(), 3);
    }

    #[test]
    fn bars_and_fitting() {
        assert_eq!(bar(1.0, 2.0, 4), "██");
        assert_eq!(bar(1.0, 16.0, 2), "▌".replace('▌', "▏"));
        assert_eq!(bar(0.0, 1.0, 4), "");
        assert_eq!(offset(25, 10), 20);
    }
}
