//! Plain-text report: what a person reads in a terminal or a CI log; fits 100 columns, or
//! the terminal's width.

use super::{Report, closing_lists, nonzero_counts, rows_of_step, timings_line};
use crate::format::printable;
use std::fmt::Write;

/// Ranks listed in the per-step breakdown before the rest are summarized.
pub const MAX_RANK_ROWS: usize = 16;
/// Operators listed.
pub const TOP_OPS: usize = 15;

/// The page width of a report not printed to a terminal.
pub const PAGE: usize = 100;

/// Renders the text report in `page` columns (a terminal's width): tables narrow their
/// name columns to fit and write cut names whole on the next line.
pub fn render_in(r: &Report, page: usize) -> String {
    let mut o = String::new();
    header(&mut o, r);
    table(&mut o, &super::advice::findings(&r.findings), page);
    if let Some(t) = super::advice::joint(r.whatif.as_ref()) {
        table(&mut o, &t, page);
    }
    steps(&mut o, r);
    breakdown(&mut o, r);
    top_ops(&mut o, r, page);
    for t in super::tables(r) {
        table(&mut o, &t, page);
    }
    for (title, lines) in closing_lists(r) {
        if !lines.is_empty() {
            let _ = writeln!(o, "\n{title}");
            for l in lines {
                let _ = writeln!(o, "  {}", printable(l));
            }
        }
    }
    let _ = writeln!(o, "\n{}", timings_line(r));
    o
}

/// What was loaded: ranks, steps, devices, events, collectives, the scope.
fn header(o: &mut String, r: &Report) {
    let j = &r.job;
    let world = j
        .world_size
        .map(|w| format!(" of world {w}"))
        .unwrap_or_default();
    let _ = writeln!(
        o,
        "stepscope report: {} rank(s){world}, {} step(s)",
        j.ranks,
        j.steps.len()
    );
    for d in &j.devices {
        let _ = writeln!(o, "  device: {} (x{})", printable(&d.name), d.ranks);
    }
    let kinds = nonzero_counts(&j.events);
    let total: u64 = j.events.values().sum();
    wrap_list(o, &format!("  events: {total}: "), &kinds);
    for (prefix, list) in [
        ("  collectives: ", nonzero_counts(&j.collectives)),
        ("  not stored: ", nonzero_counts(&j.dropped)),
        (
            "  unknown categories (kept as other): ",
            nonzero_counts(&j.unknown_categories),
        ),
    ] {
        if !list.is_empty() {
            wrap_list(o, prefix, &list);
        }
    }
    // How the job was read (a guessed rank, a trace without steps, work before the window).
    for n in &j.notes {
        wrap_words(o, "  ", &format!("note: {n}"));
    }
    if let Some(s) = r.scope.step {
        let _ = writeln!(o, "  scope: step {s}");
    }
    if let Some(rk) = r.scope.rank {
        let _ = writeln!(o, "  scope: rank {rk}");
    }
}

/// Step times across ranks, the focus step marked.
fn steps(o: &mut String, r: &Report) {
    let _ = writeln!(
        o,
        "\nSteps (span per rank; slowest = most own work = span - exposed comm)"
    );
    let _ = writeln!(
        o,
        "  {:>8}  {:>10}  {:>10}  {:>10}  {:>5}  slowest rank (own work)",
        "step", "max", "median", "min", "ranks"
    );
    for s in &r.steps {
        let mark = if Some(s.step) == r.focus_step {
            " <"
        } else {
            ""
        };
        let c = s.cells();
        let _ = writeln!(
            o,
            "  {:>8}  {:>10}  {:>10}  {:>10}  {:>5}  {}{mark}",
            c[0], c[1], c[2], c[3], c[4], c[5]
        );
    }
}

/// The focus step's breakdown, ranks by own work.
fn breakdown(o: &mut String, r: &Report) {
    let Some(step) = r.focus_step else {
        return;
    };
    let rows = rows_of_step(r, step);
    let _ = writeln!(
        o,
        "\nBreakdown of step {step} (ranks by own work; parts sum to the span)"
    );
    let _ = writeln!(
        o,
        "  {:>5}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}",
        "rank", "span", "compute", "overlap", "comm", "memory", "host", "free"
    );
    for b in rows.iter().take(MAX_RANK_ROWS) {
        let c = b.cells();
        let _ = writeln!(
            o,
            "  {:>5}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}",
            c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]
        );
    }
    if rows.len() > MAX_RANK_ROWS {
        let _ = writeln!(
            o,
            "  ... {} more rank(s): --format json lists all",
            rows.len() - MAX_RANK_ROWS
        );
    }
    if rows.iter().any(|b| b.summary_only) {
        let _ = writeln!(o, "  {SUMMARY_ONLY}");
    }
}

/// What `*` after a rank means.
pub const SUMMARY_ONLY: &str = "* summary only: the profiler's step summary (no timeline kept); \
                                memory and host-bound time are in free";

/// Operators by device (or host self) time.
fn top_ops(o: &mut String, r: &Report, page: usize) {
    if r.top_ops.is_empty() {
        return;
    }
    let basis = if r.top_ops_basis == "device" {
        "device time"
    } else {
        "host self time (CPU-only job)"
    };
    let _ = writeln!(o, "\nTop operators by {basis}");
    let rows: Vec<Vec<String>> = r
        .top_ops
        .iter()
        .take(TOP_OPS)
        .map(|op| {
            let mut row = vec![printable(&op.name).into_owned()];
            row.extend(op.cells());
            row
        })
        .collect();
    let heads = ["<name", "<kind", "count", "total", "mean", "share"];
    super::text_grid::write(o, &heads, &rows, page);
}

/// Writes a table: its columns in `page` ([`super::text_grid`]), at most `TABLE_ROWS` rows,
/// then its notes wrapped at 100 columns. Cells hold trace names: each is made printable
/// before it is measured.
pub(super) fn table(o: &mut String, t: &super::table::Table, page: usize) {
    use super::table::TABLE_ROWS;
    let _ = writeln!(o, "\n{}", printable(&t.title));
    if !t.header.is_empty() {
        let rows: Vec<Vec<String>> = t.rows[..t.rows.len().min(TABLE_ROWS)]
            .iter()
            .map(|r| r.iter().map(|c| printable(c).into_owned()).collect())
            .collect();
        super::text_grid::write(o, &t.header, &rows, page);
        if t.rows.len() > TABLE_ROWS {
            let _ = writeln!(
                o,
                "  ... {} more: --format json lists all",
                t.rows.len() - TABLE_ROWS
            );
        }
    }
    for n in &t.notes {
        wrap_words(o, "  ", n);
    }
}

/// Writes `text` word-wrapped at 100 columns, every line starting with `indent`; a line
/// break or tab inside `text` (a trace name's) is written as an escape, never obeyed.
fn wrap_words(o: &mut String, indent: &str, text: &str) {
    let text = &*printable(text);
    // A number and its unit ("1.56 ms") stay on one line.
    const UNITS: [&str; 9] = ["ns", "µs", "ms", "s", "B", "KiB", "MiB", "GiB", "GB/s"];
    let mut words: Vec<String> = Vec::new();
    for w in text.split(' ') {
        let bare = w.trim_end_matches([',', ';', ')', '.']);
        match words.last_mut() {
            Some(prev) if UNITS.contains(&bare) && prev.ends_with(|c: char| c.is_ascii_digit()) => {
                prev.push(' ');
                prev.push_str(w);
            }
            _ => words.push(w.to_string()),
        }
    }
    // Leading spaces of the text deepen the indent of all its lines.
    let lead = text.len() - text.trim_start().len();
    let indent = &format!("{indent}{}", " ".repeat(lead));
    let mut line = indent.to_string();
    for w in words.iter().filter(|w| !w.is_empty()) {
        if line.len() > indent.len() && line.chars().count() + 1 + w.chars().count() > 100 {
            let _ = writeln!(o, "{line}");
            line = format!("{indent}  ");
        }
        if line.len() > indent.len() && !line.ends_with("  ") {
            line.push(' ');
        }
        line.push_str(w);
    }
    let _ = writeln!(o, "{line}");
}

/// Writes `prefix` and comma-separated items, wrapping before 100 columns with the
/// continuation lines indented under the first item.
fn wrap_list(o: &mut String, prefix: &str, items: &[String]) {
    const WIDTH: usize = 100;
    let indent = " ".repeat(prefix.chars().count());
    let mut line = prefix.to_string();
    let mut first = true;
    for (k, item) in items.iter().enumerate() {
        let item = printable(item);
        let piece = if k + 1 < items.len() {
            format!("{item},")
        } else {
            item.into_owned()
        };
        let sep = if first { "" } else { " " };
        if !first && line.chars().count() + sep.len() + piece.chars().count() > WIDTH {
            let _ = writeln!(o, "{line}");
            line = format!("{indent}{piece}");
        } else {
            line.push_str(sep);
            line.push_str(&piece);
        }
        first = false;
    }
    let _ = writeln!(o, "{line}");
}
