//! Markdown report: the same content as the text report, as tables for PRs and wikis.

use super::text::{MAX_RANK_ROWS, TOP_OPS};
use super::{Report, closing_lists, nonzero_counts, rows_of_step, timings_line};
use crate::format::printable;
use crate::model::StepNo;
use std::fmt::Write;

/// Renders the markdown report.
pub fn render(r: &Report) -> String {
    let mut o = String::new();
    header(&mut o, r);
    table(&mut o, &super::advice::findings(&r.findings));
    if let Some(t) = super::advice::joint(r.whatif.as_ref()) {
        table(&mut o, &t);
    }
    steps(&mut o, r);
    if let Some(step) = r.focus_step {
        breakdown(&mut o, r, step);
    }
    top_ops(&mut o, r);
    for t in super::tables(r) {
        table(&mut o, &t);
    }
    for (title, lines) in closing_lists(r) {
        if !lines.is_empty() {
            let _ = writeln!(o, "\n## {title}\n");
            for l in lines {
                let _ = writeln!(o, "- {}", printable(l));
            }
        }
    }
    let _ = writeln!(o, "\n_{}_", timings_line(r));
    o
}

/// The title and what was loaded: ranks, steps, devices, events.
fn header(o: &mut String, r: &Report) {
    let j = &r.job;
    let _ = writeln!(o, "# stepscope report\n");
    let world = j
        .world_size
        .map(|w| format!(" of world {w}"))
        .unwrap_or_default();
    let _ = writeln!(o, "- **ranks**: {}{world}", j.ranks);
    let steps: Vec<String> = j.steps.iter().map(StepNo::to_string).collect();
    let _ = writeln!(
        o,
        "- **steps**: {}",
        if steps.is_empty() {
            "none marked".to_string()
        } else {
            steps.join(", ")
        }
    );
    for d in &j.devices {
        let _ = writeln!(o, "- **device**: {} (x{})", printable(&d.name), d.ranks);
    }
    let kinds = nonzero_counts(&j.events);
    let _ = writeln!(o, "- **events**: {}", kinds.join(", "));
    for n in &j.notes {
        let _ = writeln!(o, "- **note**: {}", printable(n));
    }
}

fn steps(o: &mut String, r: &Report) {
    let _ = writeln!(o, "\n## Steps\n");
    let _ = writeln!(
        o,
        "| step | max | median | min | ranks | slowest rank (own work) |"
    );
    let _ = writeln!(o, "|---:|---:|---:|---:|---:|---:|");
    for s in &r.steps {
        let _ = writeln!(o, "| {} |", s.cells().join(" | "));
    }
}

fn breakdown(o: &mut String, r: &Report, step: StepNo) {
    let rows = rows_of_step(r, step);
    let _ = writeln!(o, "\n## Breakdown of step {step}\n");
    let _ = writeln!(
        o,
        "| rank | span | compute | overlap | comm | memory | host-bound | free |"
    );
    let _ = writeln!(o, "|---:|---:|---:|---:|---:|---:|---:|---:|");
    for b in rows.iter().take(MAX_RANK_ROWS) {
        let _ = writeln!(o, "| {} |", b.cells().join(" | "));
    }
    if rows.len() > MAX_RANK_ROWS {
        let _ = writeln!(
            o,
            "\n{} more rank(s) in `--format json`.",
            rows.len() - MAX_RANK_ROWS
        );
    }
    if rows.iter().any(|b| b.summary_only) {
        let _ = writeln!(o, "\n{}", super::text::SUMMARY_ONLY);
    }
}

fn top_ops(o: &mut String, r: &Report) {
    if r.top_ops.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "\n## Top operators ({})\n",
        r.top_ops_basis.replace('_', " ")
    );
    let _ = writeln!(o, "| name | kind | count | total | mean | share |");
    let _ = writeln!(o, "|---|---|---:|---:|---:|---:|");
    for op in r.top_ops.iter().take(TOP_OPS) {
        let name = printable(&op.name).replace('|', "\\|").replace('`', "'");
        let _ = writeln!(o, "| `{name}` | {} |", op.cells().join(" | "));
    }
}

/// Writes a table as a markdown section: a pipe table, then its notes as a list. A note
/// numbered `k. ` is an ordered item; an indented note belongs to the item above it and is
/// nested under it (so a finding's evidence, cause and advice stay one item in a PR comment).
pub(super) fn table(o: &mut String, t: &super::table::Table) {
    let _ = writeln!(o, "\n## {}\n", printable(&t.title));
    if !t.header.is_empty() {
        let heads: Vec<&str> = t.header.iter().map(|h| h.trim_start_matches('<')).collect();
        let _ = writeln!(o, "| {} |", heads.join(" | "));
        let aligns: Vec<&str> = t
            .header
            .iter()
            .map(|h| if h.starts_with('<') { "---" } else { "---:" })
            .collect();
        let _ = writeln!(o, "|{}|", aligns.join("|"));
        for row in t.rows.iter().take(super::table::TABLE_ROWS) {
            let cells: Vec<String> = row
                .iter()
                .map(|c| printable(c).replace('|', "\\|"))
                .collect();
            let _ = writeln!(o, "| {} |", cells.join(" | "));
        }
        if !t.notes.is_empty() {
            let _ = writeln!(o);
        }
    }
    for n in &t.notes {
        let _ = writeln!(o, "{}", list_item(n));
    }
}

/// One note as a markdown list line (a line break inside it, a trace name's, is escaped).
fn list_item(note: &str) -> String {
    let note = &*printable(note);
    let body = note.trim_start();
    if body.len() < note.len() {
        // Four spaces nest under both `- ` and `10. ` items without starting a code block.
        return format!("    - {body}");
    }
    let numbered = body
        .split_once(". ")
        .is_some_and(|(k, _)| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()));
    if numbered {
        body.to_string()
    } else {
        format!("- {body}")
    }
}
