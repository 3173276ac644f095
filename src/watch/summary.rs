//! The watch's words: the end-of-input summary and one line per alert (the TUI's alert list
//! uses the same lines).

use crate::analysis::live::{Alert, Live};
use crate::format::human;

/// The end-of-input summary: counts, then each alert in one line.
pub fn summary(l: &Live, notes: &[String]) -> String {
    let c = &l.counts;
    let mut s = format!(
        "watch: {} lines, {} recognised, {} unrecognised, {} timed steps; {} alert(s)\n",
        c.lines, c.records, c.unrecognised, c.timed_steps, l.counts.alerts
    );
    for a in &crate::analysis::live::group(l.alerts.clone(), |a| a) {
        s.push_str(&alert_line(a));
    }
    for n in notes {
        s.push_str(&format!("note: {n}\n"));
    }
    s
}

/// One alert as a summary line.
pub fn alert_line(a: &Alert) -> String {
    use crate::analysis::live::Pattern;
    let who = if a.ranks.is_empty() {
        String::new()
    } else {
        let s = if a.ranks.len() > 1 { "s" } else { "" };
        format!(" rank{s} {}", crate::format::join(&a.ranks))
    };
    let devs = a.devices.join(", ");
    let what = match &a.pattern {
        Pattern::Silent {
            source,
            last_line,
            ended,
        } => {
            let state = if *ended { "ended" } else { "silent (hung?)" };
            return format!("  {source}{who}: {state}; last line: {last_line}\n");
        }
        _ if a.rule == "slow_rank" => {
            let why = if a.pattern == Pattern::OneOff {
                "named slowest by the straggler detector"
            } else {
                "named slowest again: chronic"
            };
            return format!("  slow_rank{who}: {why}\n");
        }
        Pattern::IdleMemoryHeld {
            util_pct,
            memory,
            memory_unit,
            samples,
        } => {
            return format!(
                "  device_idle {devs}: {util_pct:.0}% busy with {memory:.0} {memory_unit} held, {samples} samples in a row (was busy before: stalled?)\n"
            );
        }
        Pattern::Throttled {
            clock_mhz,
            max_clock_mhz,
            violation_pct,
            ..
        } => {
            return format!(
                "  device_throttling {devs}: SM clock {clock_mhz:.0} MHz vs {max_clock_mhz:.0} MHz reached while busy, violation {violation_pct:.0}%\n"
            );
        }
        Pattern::OddOneOut {
            util_pct,
            peers_util_pct,
            peers,
            ..
        } => {
            return format!(
                "  device_outlier {devs}: {util_pct:.0}% busy while its {peers} peers run at {peers_util_pct:.0}%\n"
            );
        }
        Pattern::OneOff => "one-off".to_string(),
        Pattern::Burst => "burst".to_string(),
        Pattern::Periodic { period } => format!("every {period} steps"),
        Pattern::RegimeChange { from_ns, to_ns } => {
            format!("regime change {} → {}", human(*from_ns), human(*to_ns))
        }
    };
    let around = if a.events.is_empty() {
        String::new()
    } else {
        let names: Vec<&str> = a.events.iter().map(|e| e.name()).collect();
        format!(", around {}", names.join(", "))
    };
    format!(
        "  {} ({what}){who}: steps {}, up to {} vs median {} (limit {}){around}\n",
        a.rule,
        crate::format::join(&a.steps),
        human(a.max_ns),
        human(a.median_ns),
        human(a.threshold_ns),
    )
}
