//! The report of two compared runs: each run described, the diff's report built with the
//! timings of both opens (a face renders from it; the session only opens and compares).

use super::{DiffReport, RunInfo, Timings, build};
use crate::session::Session;
use crate::session::diff::DiffPair;

/// The diff's report (every face renders from it).
pub fn of_pair(p: &DiffPair) -> DiffReport {
    let mut r = build(
        &p.diff,
        [info(&p.before), info(&p.after)],
        [&p.before.analysis, &p.after.analysis],
    );
    r.timings = Timings {
        load_ns: [p.before.loaded.load_ns, p.after.loaded.load_ns],
        analysis_ns: [p.before.analysis.analysis_ns, p.after.analysis.analysis_ns],
        diff_ns: p.diff_ns,
    };
    r
}

/// A run's description in the report.
fn info(s: &Session) -> RunInfo {
    let job = s.job();
    let mut devices: Vec<String> = job
        .ranks
        .iter()
        .flat_map(|r| {
            r.devices
                .iter()
                .map(|&d| job.strings.resolve(d).to_string())
        })
        .collect();
    devices.sort();
    devices.dedup();
    RunInfo {
        title: s.title.clone(),
        ranks: job.ranks.iter().map(|r| r.id).collect(),
        steps: s.analysis.step_times.len(),
        devices,
    }
}
