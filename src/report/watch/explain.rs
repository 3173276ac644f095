//! `watch --explain`: for each source, which recogniser (or template the generic recogniser
//! learned) read its step records, and where each series' step times come from — so that a
//! user can check the reading before trusting an alert.

use super::summary::evidence_words;
use crate::format::printable;
use crate::input::{Joined, Learned, Member};
use crate::session::watch::engine::Engine;

/// The explanation, a few lines per source.
pub fn explain(e: &Engine) -> String {
    let mut s = String::from("explain:\n");
    for (i, src) in e.sources.iter().enumerate() {
        s.push_str(&format!("  {}:\n", printable(&src.label)));
        if src.formats.is_empty() {
            s.push_str(
                "    no step line recognised (try --format NAME, or see reference/logs.md)\n",
            );
        }
        for (format, n) in &src.formats {
            s.push_str(&format!("    {format}: {n} step record(s)"));
            let evidence: Vec<&str> = e
                .live
                .series()
                .filter(|v| v.source == i && v.format == *format)
                .filter_map(|v| v.evidence.map(evidence_words))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            if !evidence.is_empty() {
                s.push_str(&format!("; step time from {}", evidence.join(", ")));
            }
            s.push('\n');
        }
        if let Some(p) = &src.state.pattern {
            s.push_str(&format!(
                "    --step-pattern `{}` makes the step records\n",
                printable(&p.text)
            ));
        } else {
            for m in src.state.learned.family() {
                s.push_str(&format!("    {}\n", member(&m)));
            }
        }
    }
    s
}

/// One template of the generic recogniser's family: what it reads, where it was seen, how
/// many step records it gave, and how it joined (a run that changed its line mid-way).
fn member(m: &Member) -> String {
    let (a, b) = m.lines;
    let joined = match m.joined {
        None => "",
        Some(Joined::Adopted) => "; the line changed here: read through the same slot names",
        Some(Joined::Succeeded) => "; the line changed here: learned again, its steps continuing",
    };
    format!(
        "{} (lines {a}–{b}, {} step record(s){joined})",
        learned(&m.learned),
        m.records
    )
}

/// One learned template: its text and what its slots are.
fn learned(l: &Learned) -> String {
    let mut s = format!(
        "generic template `{}`: step = `{}`",
        printable(&l.template),
        printable(&l.step.1)
    );
    if let Some((_, e)) = &l.epoch {
        s.push_str(&format!(" (restarting within `{}`)", printable(e)));
    }
    match &l.time {
        Some((_, name, prov, _)) => s.push_str(&format!(
            ", step time = `{}` ({})",
            printable(name),
            evidence_words(*prov)
        )),
        None => s.push_str(", no step time (line timestamps, if any)"),
    }
    if let Some((_, name, metric)) = &l.rate {
        s.push_str(&format!(", `{}` = {metric}", printable(name)));
    }
    s
}
