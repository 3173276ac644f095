//! The text report's tables laid out in a width: columns padded to their widest cell; when
//! the table is wider than the page, its name columns (left-aligned) give up room — never a
//! number column — and every name cut there is written whole on the line below it, so that
//! nothing is lost to a `…`.

use crate::format::{fit_name, width};
use std::fmt::Write;

/// The narrowest a name column shrinks to.
const MIN_NAME: usize = 16;

/// Writes `rows` under `heads` (a leading `<` marks a left-aligned column) in `page` columns.
pub fn write(o: &mut String, heads: &[&str], rows: &[Vec<String>], page: usize) {
    let left: Vec<bool> = heads.iter().map(|h| h.starts_with('<')).collect();
    let heads: Vec<&str> = heads.iter().map(|h| h.trim_start_matches('<')).collect();
    let mut w: Vec<usize> = (0..heads.len())
        .map(|c| {
            rows.iter()
                .map(|r| width(&r[c]))
                .chain([width(heads[c])])
                .max()
                .unwrap_or(0)
        })
        .collect();
    shrink(&mut w, &left, page);
    let line = |cells: &[&str]| {
        let mut l = String::new();
        for (c, cell) in cells.iter().enumerate() {
            let text = fit_name(cell, w[c]);
            let pad = " ".repeat(w[c].saturating_sub(width(&text)));
            if left[c] {
                let _ = write!(l, "  {text}{pad}");
            } else {
                let _ = write!(l, "  {pad}{text}");
            }
        }
        l.trim_end().to_string()
    };
    let _ = writeln!(o, "{}", line(&heads));
    for r in rows {
        let cells: Vec<&str> = r.iter().map(String::as_str).collect();
        let _ = writeln!(o, "{}", line(&cells));
        for (c, cell) in r.iter().enumerate() {
            if width(cell) > w[c] {
                let _ = writeln!(o, "      ↳ {cell}");
            }
        }
    }
}

/// Narrows the widest left-aligned columns, one column at a time, until the line (two spaces
/// before each column) fits `page`, none below [`MIN_NAME`].
fn shrink(w: &mut [usize], left: &[bool], page: usize) {
    let total = |w: &[usize]| w.iter().map(|x| x + 2).sum::<usize>();
    while total(w) > page {
        let widest = (0..w.len())
            .filter(|&c| left[c] && w[c] > MIN_NAME)
            .max_by_key(|&c| (w[c], std::cmp::Reverse(c)));
        let Some(c) = widest else { return };
        let over = total(w) - page;
        w[c] = w[c].saturating_sub(over).max(MIN_NAME);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_give_up_room_and_follow_in_full_below() {
        let long =
            "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
        let rows = vec![
            vec![long.to_string(), "192".to_string(), "3.87 s".to_string()],
            vec![
                "aten::mm".to_string(),
                "7".to_string(),
                "1.00 ms".to_string(),
            ],
        ];
        let mut o = String::new();
        write(&mut o, &["<name", "count", "total"], &rows, 50);
        let lines: Vec<&str> = o.lines().collect();
        // The table fits the page; only a name written whole may run past it.
        assert!(
            lines
                .iter()
                .filter(|l| !l.contains('↳'))
                .all(|l| width(l) <= 50),
            "{o}"
        );
        // Every number survives; the long name is cut, then written whole.
        assert!(lines[1].ends_with("  192   3.87 s"), "{o}");
        assert_eq!(lines[2], format!("      ↳ {long}"));
        assert!(lines[3].starts_with("  aten::mm "), "{o}");
        assert_eq!(lines.len(), 4);
        // A wide page keeps everything on one line.
        let mut o = String::new();
        write(&mut o, &["<name", "count", "total"], &rows, 200);
        assert_eq!(o.lines().count(), 3);
        assert!(o.contains(long));
    }
}
