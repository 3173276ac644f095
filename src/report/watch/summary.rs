//! The watch's words: the end-of-input summary and one line per alert (the TUI's alert list
//! uses the same lines).

use crate::analysis::live::job::{Job, MfuFrom};
use crate::analysis::live::{Alert, Live};
use crate::format::human;
use crate::model::live::Provenance;
use crate::session::watch::engine::Engine;

/// The end-of-input summary: counts, then each alert in one line.
pub fn summary(l: &Live, notes: &[String]) -> String {
    let c = &l.counts;
    let rejoined = match c.rejoined {
        0 => String::new(),
        n => format!(" ({n} rejoined from lines cut in two)"),
    };
    let mut s = format!(
        "watch: {} lines, {} recognised{rejoined}, {} unrecognised, {} timed steps; {} alert(s)\n",
        c.lines, c.records, c.unrecognised, c.timed_steps, l.counts.alerts
    );
    if let Some(m) = l.main_series() {
        s.push_str(&pace_line(&m, &l.job));
    }
    s.push_str(&order_line(l));
    let alerts = crate::analysis::live::group(l.alerts.clone(), |a| a);
    for a in &alerts {
        s.push_str(&alert_line(a, &l.job));
    }
    s.push_str(&slow_nodes(&alerts, &l.job));
    for n in notes {
        s.push_str(&format!("note: {n}\n"));
    }
    s
}

/// How the steps were ordered, when a counter restarted per epoch or jumped past a gap
/// (`analysis::live::order`); empty otherwise.
fn order_line(l: &Live) -> String {
    let mut parts = Vec::new();
    if l.counts.epochs > 0 {
        parts.push(format!(
            "{} epoch boundar{} (a step counter restarting per epoch, its steps continued)",
            l.counts.epochs,
            if l.counts.epochs == 1 { "y" } else { "ies" }
        ));
    }
    let gaps: Vec<String> = l
        .gaps
        .iter()
        .map(|g| match g.rank {
            Some(r) => format!("rank {r} step {} → {}", g.from, g.to),
            None => format!("step {} → {}", g.from, g.to),
        })
        .collect();
    if !gaps.is_empty() {
        parts.push(format!(
            "{} gap{} in the step counter, one run resumed or lines missing ({})",
            gaps.len(),
            plural(&gaps),
            gaps.join(", ")
        ));
    }
    if parts.is_empty() {
        return String::new();
    }
    format!("  step order: {}\n", parts.join("; "))
}

/// The ranks named slow (`slow_rank`) by node, when ranks per node are known and several
/// slow ranks exist: ranks of one node point at the node (a link, a switch, cooling).
fn slow_nodes(alerts: &[Alert], job: &Job) -> String {
    let mut ranks: Vec<u32> = alerts
        .iter()
        .filter(|a| a.rule == "slow_rank")
        .flat_map(|a| a.ranks.iter().copied())
        .collect();
    ranks.sort_unstable();
    ranks.dedup();
    match job.nodes(&ranks) {
        Some(nodes) if ranks.len() > 1 => {
            let by: Vec<String> = nodes
                .iter()
                .map(|(n, r)| format!("node {n}: rank{} {}", plural(r), crate::format::join(r)))
                .collect();
            format!("  slow ranks by node: {}\n", by.join("; "))
        }
        _ => String::new(),
    }
}

fn plural<T>(v: &[T]) -> &'static str {
    if v.len() > 1 { "s" } else { "" }
}

/// The ranks of an alert, by node when ranks per node are known.
fn who(ranks: &[u32], job: &Job) -> String {
    if ranks.is_empty() {
        return String::new();
    }
    let plain = format!(" rank{} {}", plural(ranks), crate::format::join(ranks));
    match (job.nodes(ranks), job.ranks_per_node) {
        (Some(nodes), Some(per)) => {
            let whole: Vec<String> = nodes
                .iter()
                .filter(|(_, r)| r.len() as u32 == per)
                .map(|(n, _)| format!("node {n}"))
                .collect();
            match whole.is_empty() {
                true => format!(
                    "{plain} (node{} {})",
                    plural(&nodes),
                    nodes
                        .iter()
                        .map(|x| x.0.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                false => format!("{plain} (every rank of {})", whole.join(", ")),
            }
        }
        _ => plain,
    }
}

/// One alert as a summary line (ranks by node when `job` knows ranks per node).
pub fn alert_line(a: &Alert, job: &Job) -> String {
    let mut who = who(&a.ranks, job);
    if !a.hosts.is_empty() {
        who.push_str(&format!(" on {}", a.hosts.join(", ")));
    }
    other_line(a, &who).unwrap_or_else(|| slow_steps_line(a, &who))
}

/// The line of an alert that is not about slow steps (silence, a slow rank, a device, a
/// timer spread).
fn other_line(a: &Alert, who: &str) -> Option<String> {
    use crate::analysis::live::Pattern;
    Some(match &a.pattern {
        Pattern::Silent {
            source,
            last_line,
            ended,
        } => {
            let state = if *ended { "ended" } else { "silent (hung?)" };
            format!("  {source}{who}: {state}; last line: {last_line}\n")
        }
        _ if a.rule == "slow_rank" => {
            let why = if a.pattern == Pattern::OneOff {
                "named slowest (straggler report, NVRx, or Megatron's per-rank timers)"
            } else {
                "named slowest again: chronic"
            };
            format!("  slow_rank{who}: {why}\n")
        }
        _ if !a.devices.is_empty() => return device_line(a),
        Pattern::Spread {
            timer,
            min_ns,
            spread_max_ns,
            blocks,
        } => {
            let chronic = if *blocks > 1 { " again: chronic" } else { "" };
            format!(
                "  rank_spread: {} takes {} on the fastest rank, {} on the slowest{chronic}; which rank, Megatron's minmax timers do not say (--timing-log-option all, or --log-straggler, would)\n",
                crate::format::printable(timer),
                human(*min_ns),
                human(*spread_max_ns),
            )
        }
        Pattern::CommWait {
            op,
            bytes,
            calls,
            avg_ns,
            total_ns,
            vs_bytes,
            vs_avg_ns,
        } => format!(
            "  comm_wait: {} of {} takes {} a call ({calls} calls, {} in all), against {} for {}: the time is waiting for the slowest rank (or launch latency), not transfer\n",
            crate::format::printable(op),
            crate::format::bytes(*bytes),
            human(*avg_ns),
            human(*total_ns),
            human(*vs_avg_ns),
            crate::format::bytes(*vs_bytes),
        ),
        _ => return None,
    })
}

/// The line of a device alert (idle, throttled, the odd one out, hot, a dip).
fn device_line(a: &Alert) -> Option<String> {
    use crate::analysis::live::Pattern;
    // A device alert placed on the step axis (the monitor's and the log's timestamps).
    let devs = match a.steps.first() {
        Some(n) => format!("{} during step {n}", a.devices.join(", ")),
        None => a.devices.join(", "),
    };
    Some(match &a.pattern {
        Pattern::IdleMemoryHeld {
            util_pct,
            memory,
            memory_unit,
            samples,
        } => format!(
            "  device_idle {devs}: {util_pct:.0}% busy with {memory:.0} {memory_unit} held, {samples} samples in a row (was busy before: stalled?)\n"
        ),
        Pattern::Throttled {
            clock_mhz,
            max_clock_mhz,
            violation_pct,
            ..
        } => format!(
            "  device_throttling {devs}: SM clock {clock_mhz:.0} MHz vs {max_clock_mhz:.0} MHz reached while busy, violation {violation_pct:.0}%\n"
        ),
        Pattern::OddOneOut {
            util_pct,
            peers_util_pct,
            peers,
            ..
        } => format!(
            "  device_outlier {devs}: {util_pct:.0}% busy while its {peers} peers run at {peers_util_pct:.0}%\n"
        ),
        Pattern::Hot {
            temp_c,
            peers_temp_c,
            peers,
            ..
        } => format!(
            "  device_hot {devs}: {temp_c:.0} °C while its {peers} peers run at {peers_temp_c:.0} °C (cooling?)\n"
        ),
        Pattern::Dip {
            util_pct,
            usual_util_pct,
            rounds,
            ..
        } => format!(
            "  device_dip {devs}: all dropped to {util_pct:.0}% busy (usually {usual_util_pct:.0}%) for {rounds} sample round(s): the job paused\n"
        ),
        _ => return None,
    })
}

/// A run of slow steps: its shape, steps, times, the events around it and the phases its
/// time went to.
fn slow_steps_line(a: &Alert, who: &str) -> String {
    use crate::analysis::live::Pattern;
    let what = match &a.pattern {
        Pattern::Periodic { period } => format!("every {period} steps"),
        Pattern::RegimeChange { from_ns, to_ns } => {
            format!("regime change {} → {}", human(*from_ns), human(*to_ns))
        }
        Pattern::Burst => "burst".to_string(),
        _ => "one-off".to_string(),
    };
    let around = if a.events.is_empty() {
        String::new()
    } else {
        let names: Vec<&str> = a.events.iter().map(|e| e.name()).collect();
        format!(", around {}", names.join(", "))
    };
    let went: Vec<String> = a
        .phases
        .iter()
        .map(|p| {
            let name = crate::format::printable(&p.name);
            let grew = human(p.ns - p.median_ns);
            format!(
                "{name} +{grew} ({} vs median {})",
                human(p.ns),
                human(p.median_ns)
            )
        })
        .collect();
    let went = match went.is_empty() {
        true => String::new(),
        false => format!("; the time went to {}", went.join(", ")),
    };
    format!(
        "  {} ({what}){who}: steps {}, up to {} vs median {} (limit {}){around}{went}\n",
        a.rule,
        crate::format::join(&a.steps),
        human(a.max_ns),
        human(a.median_ns),
        human(a.threshold_ns),
    )
}

/// Where a series' step times come from, in words (docs/metrics.md "Step time evidence").
pub fn evidence_words(e: Provenance) -> &'static str {
    match e {
        Provenance::PerStep => "the printed step time",
        Provenance::WindowAverage => "the printed mean over each logging window",
        Provenance::Cumulative => "the deltas of the printed cumulative timer",
        Provenance::FromTimestamps => "the deltas of the line timestamps",
        Provenance::RunningAverage => "a printed running average, which hides slow steps",
    }
}

/// A printed figure to seven significant digits, without trailing zeros
/// (`1390.0635392634388` → `1390.064`, `1806.288` as printed).
fn significant(v: f64) -> String {
    if !v.is_finite() || v == 0.0 {
        return v.to_string();
    }
    let digits = 6 - v.abs().log10().floor() as i32;
    let text = format!("{:.*}", digits.clamp(0, 9) as usize, v);
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// The main series' pace: median step, goodput and where the rest went, the last printed
/// throughput figures.
pub fn pace_line(m: &crate::analysis::live::SeriesView, job: &Job) -> String {
    let mut s = format!("  pace ({})", m.label());
    if let Some((median, _)) = m.limits {
        s.push_str(&format!(": median step {}", human(median)));
    }
    if let Some(e) = m.evidence {
        s.push_str(&format!(" (step time from {})", evidence_words(e)));
    }
    if let Some(g) = m.goodput.share() {
        let pct = |ns: i64| 100.0 * ns as f64 / m.goodput.step_ns.max(1) as f64;
        s.push_str(&format!(
            "; goodput {:.1}% of step time (lost {:.1}% to slow steps near events, {:.1}% to other slow steps)",
            100.0 * g,
            pct(m.goodput.lost_events_ns),
            pct(m.goodput.lost_other_ns)
        ));
    }
    let printed: Vec<String> = m
        .metrics
        .iter()
        .filter(|(k, _)| THROUGHPUT.contains(k))
        .map(|(k, v)| format!("{k} {}", significant(*v)))
        .collect();
    if !printed.is_empty() {
        s.push_str(&format!("; last printed {}", printed.join(", ")));
    }
    if let Some(mfu) = job.mfu(m.metrics, m.limits.map(|l| l.0)) {
        let from = match mfu.from {
            MfuFrom::PrintedTflops => "the printed TFLOP/s",
            MfuFrom::PrintedTokens => "6 × params × the printed tokens/s per device",
            MfuFrom::StepTime => "6 × params × tokens per step ÷ (median step × devices)",
        };
        s.push_str(&format!(
            "; MFU {:.1}% derived ({:.1} TFLOP/s per device from {from}, of a {} TFLOP/s peak)",
            mfu.pct,
            mfu.tflops_per_device,
            job.peak_tflops.unwrap_or_default()
        ));
    }
    s.push('\n');
    s
}

/// Metrics that are throughput (printed by the framework, shown as printed).
pub const THROUGHPUT: &[&str] = &[
    "tokens_per_s",
    "tokens_per_s_per_device",
    "samples_per_s",
    "tflops",
    "mfu_pct",
];

/// Plain words on what the stream cannot tell.
pub fn notes(e: &Engine) -> Vec<String> {
    let live = &e.live;
    let ranked_series = live
        .series()
        .filter(|s| !s.history.is_empty())
        .filter_map(|s| s.rank)
        .collect::<std::collections::BTreeSet<u32>>()
        .len();
    let slow_steps = live.alerts.iter().any(|a| a.rule == "slow_steps");
    let rank_evidence = ranked_series >= 2 || live.alerts.iter().any(|a| a.rule == "slow_rank");
    let mut out = Vec::new();
    if slow_steps && !rank_evidence {
        out.push(
            "which rank is slow cannot be told: one rank's step times, no straggler report (Megatron --log-straggler, or per-rank logs, would tell)".to_string(),
        );
    }
    if live.counts.lines > 0 && live.counts.records == 0 {
        out.push("no line recognised yet: try --format NAME".to_string());
    }
    out
}
