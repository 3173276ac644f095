//! `communication.json`: HCCL's per-op summary, step by step — here, each op's bytes and
//! transfer time per transport (`Communication Bandwidth Info`) and its elapse and transit
//! (`Communication Time Info`). Numbers are read from their
//! decimal text (MB and ms, with Python's float noise: `28.647232000000002`) and rounded once
//! to whole bytes and ns. `Total Op Info` is the profiler's own sum and is skipped.

use crate::error::{Error, Position};
use crate::format::echo;
use crate::model::{HcclOpTime, StepNo, Transport, TransportUse};
use crate::time::Ns;
use crate::time::unit_text_to_ns;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;

/// The profiler's sum over the ops of a step: not an op.
pub(super) const TOTAL: &str = "Total Op Info";

/// One op's entry, with only what is read.
#[derive(Deserialize)]
struct Op<'a> {
    #[serde(rename = "Communication Bandwidth Info", borrow, default)]
    bandwidth: BTreeMap<Cow<'a, str>, Link<'a>>,
    #[serde(rename = "Communication Time Info", borrow, default)]
    time: Option<Times<'a>>,
}

/// An op's time split.
#[derive(Deserialize)]
struct Times<'a> {
    #[serde(rename = "Elapse Time(ms)", borrow)]
    elapse_ms: Option<&'a RawValue>,
    #[serde(rename = "Transit Time(ms)", borrow)]
    transit_ms: Option<&'a RawValue>,
    #[serde(rename = "Start Timestamp(us)", borrow, default)]
    start_us: Option<&'a RawValue>,
}

/// One HCCL op as the summary places it in time: what a rank that kept only the summaries
/// has of its timeline (`summary.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpTiming {
    /// The step it ran in (`None`: the profile had no schedule).
    pub step: Option<StepNo>,
    /// The op (`hcom_allReduce__586_0_1`).
    pub op: String,
    /// Its group (HCCL's hash of the group id).
    pub group: String,
    /// `Start Timestamp(us)` as ns since the epoch, exactly.
    pub start_ns: Ns,
    /// `Elapse Time(ms)` as ns.
    pub elapse_ns: Ns,
}

/// What a `communication.json` gives.
#[derive(Debug, Default)]
pub struct Summary {
    /// Each op's traffic per transport.
    pub transports: Vec<TransportUse>,
    /// Each op's elapse and transit.
    pub times: Vec<HcclOpTime>,
    /// Each op placed in time (ops without a start are left out).
    pub timings: Vec<OpTiming>,
}

/// One transport of an op.
#[derive(Deserialize)]
struct Link<'a> {
    #[serde(rename = "Transit Size(MB)", borrow)]
    size_mb: Option<&'a RawValue>,
    #[serde(rename = "Transit Time(ms)", borrow)]
    time_ms: Option<&'a RawValue>,
}

/// Reads the file at `path`.
pub(crate) fn read(path: &Path) -> Result<Summary, Error> {
    let (label, text) = crate::ingest::source::read_small(path)?;
    parse(&label, &text)
}

/// The traffic and time split of every op of every step, in file order of steps and op name
/// order.
pub fn parse(label: &str, text: &[u8]) -> Result<Summary, Error> {
    let mut out = Summary::default();
    for (step_key, kinds) in &steps(label, text)? {
        let step = step_no(step_key);
        for raw in kinds.values() {
            // Keys are owned where the file escapes them (Python writes `\u` escapes).
            let ops: BTreeMap<Cow<str>, Op> = fragment(label, text, raw)?;
            for (key, op) in ops.iter().filter(|(k, _)| *k != TOTAL) {
                // `hcom_allReduce__586_0_1@17522688603477080586`: the op, then its group.
                let (name, group) = key.split_once('@').unwrap_or((key, ""));
                if let Some(t) = op.time.as_ref().filter(|t| t.elapse_ms.is_some()) {
                    let elapse_ns = millions(label, t.elapse_ms, "Elapse Time(ms)", name)?;
                    out.times.push(HcclOpTime {
                        step,
                        op: name.to_string(),
                        elapse_ns,
                        transit_ns: millions(label, t.transit_ms, "Transit Time(ms)", name)?,
                    });
                    if let Some(start) = t.start_us {
                        out.timings.push(OpTiming {
                            step,
                            op: name.to_string(),
                            group: group.to_string(),
                            start_ns: start_ns(label, start, name)?,
                            elapse_ns,
                        });
                    }
                }
                for (t, link) in &op.bandwidth {
                    let Some(transport) = Transport::of(t) else {
                        continue;
                    };
                    let what = format!("{name} {t}");
                    let (bytes, time_ns) = size_and_time(label, link.size_mb, link.time_ms, &what)?;
                    if bytes > 0 || time_ns > 0 {
                        out.transports.push(TransportUse {
                            step,
                            op: name.to_string(),
                            transport,
                            bytes,
                            time_ns,
                        });
                    }
                }
            }
        }
    }
    Ok(out)
}

/// Each op's group (`hcom_allReduce__586_0_1@17522688603477080586` → the op and
/// `17522688603477080586`, HCCL's hash of the group id), from the keys of every step.
pub(crate) fn op_groups(path: &Path) -> Result<Vec<(String, String)>, Error> {
    let (label, text) = crate::ingest::source::read_small(path)?;
    op_groups_of(&label, &text)
}

/// [`op_groups`] of a file's text.
pub fn op_groups_of(label: &str, text: &[u8]) -> Result<Vec<(String, String)>, Error> {
    let mut out = Vec::new();
    for kinds in steps(label, text)?.values() {
        for raw in kinds.values() {
            let ops: BTreeMap<Cow<str>, serde::de::IgnoredAny> = fragment(label, text, raw)?;
            out.extend(ops.keys().filter_map(|k| {
                let (op, group) = k.split_once('@')?;
                Some((op.to_string(), group.to_string()))
            }));
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// A fragment of `text` parsed, its errors at their line in the file, not in the fragment.
pub(super) fn fragment<'a, T: Deserialize<'a>>(
    label: &str,
    text: &[u8],
    raw: &'a RawValue,
) -> Result<T, Error> {
    let before = (raw.get().as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
    let lines = text[..before.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count();
    serde_json::from_str(raw.get()).map_err(|e| {
        let line = (lines + e.line()) as u32;
        Error::input_pos(label, Position::Line(line), what(&e))
    })
}

/// The steps of a file (`step50` → 50): step key → kind (`collective`, `p2p`) → its raw
/// object; an empty kind is written `[]` and left out.
pub(super) type Steps<'a> = BTreeMap<Cow<'a, str>, BTreeMap<Cow<'a, str>, &'a RawValue>>;

/// Parses the outer levels of a per-step file.
pub(super) fn steps<'a>(label: &str, text: &'a [u8]) -> Result<Steps<'a>, Error> {
    let mut steps: Steps = serde_json::from_slice(text)
        .map_err(|e| Error::input_pos(label, Position::Line(e.line() as u32), what(&e)))?;
    for kinds in steps.values_mut() {
        kinds.retain(|_, raw| !raw.get().trim_start().starts_with('['));
    }
    Ok(steps)
}

/// The step number of a key (`step50` → 50).
pub(super) fn step_no(key: &str) -> Option<StepNo> {
    key.strip_prefix("step")
        .and_then(|n| n.parse().ok())
        .map(StepNo)
}

/// Bytes and ns from `Transit Size(MB)` and `Transit Time(ms)` text, each rounded once;
/// `what` names the entry in errors.
pub(super) fn size_and_time(
    label: &str,
    size_mb: Option<&RawValue>,
    time_ms: Option<&RawValue>,
    what: &str,
) -> Result<(u64, Ns), Error> {
    let bytes = millions(label, size_mb, "Transit Size(MB)", what)?;
    let time_ns = millions(label, time_ms, "Transit Time(ms)", what)?;
    Ok((bytes as u64, time_ns))
}

/// A value in MB or ms as whole bytes or ns (both 10⁶ of the unit kept), from its decimal
/// text, rounded once; absent is 0, negative an error naming column `col` of entry `what`.
fn millions(label: &str, v: Option<&RawValue>, col: &str, what: &str) -> Result<i64, Error> {
    let Some(v) = v else { return Ok(0) };
    let n = unit_text_to_ns(v.get().as_bytes(), 6)
        .map_err(|e| Error::input(label, format!("{what}: `{col}` {}: {e}", echo(v.get()))))?;
    if n < 0 {
        return Err(Error::input(label, format!("{what}: `{col}` is negative")));
    }
    Ok(n)
}

/// `Start Timestamp(us)` as ns, from its decimal text.
fn start_ns(label: &str, v: &RawValue, what: &str) -> Result<Ns, Error> {
    crate::time::micros_text_to_ns(v.get().as_bytes()).map_err(|e| {
        Error::input(
            label,
            format!("{what}: `Start Timestamp(us)` {}: {e}", v.get()),
        )
    })
}

/// serde's message without its own position (the error carries the file's line).
fn what(e: &serde_json::Error) -> String {
    let m = e.to_string();
    m.split(" at line ").next().unwrap_or(&m).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_times_are_rounded_once_and_totals_skipped() {
        let text = br#"{"step50": {"p2p": [], "collective": {
            "hcom_allReduce__586_0_1@175": {"Communication Time Info": {},
              "Communication Bandwidth Info": {
                "HCCS": {"Transit Size(MB)": 28.647232000000002, "Transit Time(ms)": 1.81683634375,
                         "Bandwidth(GB/s)": 15.7676, "Size Distribution": {"2.064384": [12, 1.5]}},
                "RDMA": {"Transit Size(MB)": 0, "Transit Time(ms)": 0},
                "LOCAL": {"Transit Size(MB)": 4.1, "Transit Time(ms)": 0.01}}},
            "Total Op Info": {"Communication Bandwidth Info": {
                "HCCS": {"Transit Size(MB)": 999, "Transit Time(ms)": 1}}}}}}"#;
        let v = parse("c.json", text).unwrap().transports;
        assert_eq!(v.len(), 1);
        let u = &v[0];
        assert_eq!(
            (u.step, u.op.as_str()),
            (Some(StepNo(50)), "hcom_allReduce__586_0_1")
        );
        assert_eq!(
            (u.transport, u.bytes, u.time_ns),
            (Transport::Hccs, 28_647_232, 1_816_836)
        );
    }

    #[test]
    fn each_op_keeps_its_elapse_and_transit() {
        // Level1 rank 0's first all-reduce: 79.09 ms elapsed, 0.24 ms of it moving data.
        let text = br#"{"step50": {"collective": {
            "hcom_allReduce__586_0_1@175": {"Communication Time Info": {
                "Start Timestamp(us)": 1736408883732241.5, "Elapse Time(ms)": 79.09015640625,
                "Transit Time(ms)": 0.2386845625, "Wait Time(ms)": 5.64705}},
            "Total Op Info": {"Communication Time Info": {"Elapse Time(ms)": 105.99}}}}}"#;
        let t = parse("c.json", text).unwrap().times;
        assert_eq!(
            t,
            [HcclOpTime {
                step: Some(StepNo(50)),
                op: "hcom_allReduce__586_0_1".into(),
                elapse_ns: 79_090_156,
                transit_ns: 238_685,
            }]
        );
        let bad = br#"{"step1": {"collective": {"x@1": {"Communication Time Info": {
            "Elapse Time(ms)": -1}}}}}"#;
        let e = parse("c.json", bad).unwrap_err().to_string();
        assert!(e.contains("`Elapse Time(ms)` is negative"), "{e}");
    }

    #[test]
    fn bad_json_names_its_line() {
        let e = parse("c.json", b"{\n\"step1\": {\"collective\": {\"x\": 3}}\n}").unwrap_err();
        assert!(e.to_string().starts_with("c.json: line 2:"), "{e}");
    }
}
