//! `communication_matrix.json`: HCCL's traffic per link (`"src-dst"` in communicator ranks)
//! for each op type and group. Newer torch_npu writes statistics over an op type's
//! instances (`allreduce-top1@group`, `-middle`, `-bottom1..3`, `-total`): only `total`, the
//! sums, is read. Older versions key by op (`hcom_broadcast__483_0@group`): every op is read.
//! `LOCAL` copies (`0-0`) and `Total Op Info` are left out.

use super::communication::{TOTAL, fragment, size_and_time, step_no, steps};
use crate::error::Error;
use crate::model::{LinkUse, Transport};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;

/// The statistics newer versions write besides `total`.
const STATS: [&str; 5] = ["top1", "middle", "bottom1", "bottom2", "bottom3"];

/// One link of an entry.
#[derive(Deserialize)]
struct Cell<'a> {
    #[serde(rename = "Transport Type", borrow)]
    transport: Cow<'a, str>,
    #[serde(rename = "Transit Size(MB)", borrow)]
    size_mb: Option<&'a RawValue>,
    #[serde(rename = "Transit Time(ms)", borrow)]
    time_ms: Option<&'a RawValue>,
}

/// Reads the file at `path`.
pub(crate) fn read(path: &Path) -> Result<Vec<LinkUse>, Error> {
    let (label, text) = crate::ingest::source::read_small(path)?;
    parse(&label, &text)
}

/// Every link of every step, in file order of steps and key order.
pub fn parse(label: &str, text: &[u8]) -> Result<Vec<LinkUse>, Error> {
    let mut out = Vec::new();
    for (step_key, kinds) in &steps(label, text)? {
        let step = step_no(step_key);
        for raw in kinds.values() {
            // Owned where the file escapes a key (Python writes `\u` escapes by default).
            let entries: BTreeMap<Cow<str>, BTreeMap<Cow<str>, Cell>> = fragment(label, text, raw)?;
            for (key, cells) in entries.iter().filter(|(k, _)| wanted(k)) {
                let group = key.split_once('@').map_or("", |x| x.1);
                for (pair, cell) in cells {
                    let Some(transport) = Transport::of(&cell.transport) else {
                        continue;
                    };
                    let Some((src, dst)) = ranks(pair) else {
                        return Err(Error::input(
                            label,
                            format!("{key}: link {pair:?} is not `src-dst`"),
                        ));
                    };
                    let what = format!("{key} {pair}");
                    let (bytes, time_ns) = size_and_time(label, cell.size_mb, cell.time_ms, &what)?;
                    if src != dst && (bytes > 0 || time_ns > 0) {
                        out.push(LinkUse {
                            step,
                            group: group.to_string(),
                            src,
                            dst,
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

/// An entry to read: a `total`, or an op of the older per-op layout.
pub(super) fn wanted(key: &str) -> bool {
    if key == TOTAL {
        return false;
    }
    let head = key.split('@').next().unwrap_or(key);
    match head.rsplit_once('-') {
        Some((_, "total")) => true,
        Some((_, stat)) => !STATS.contains(&stat),
        None => true,
    }
}

/// `"0-7"` → (0, 7).
fn ranks(pair: &str) -> Option<(u32, u32)> {
    let (a, b) = pair.split_once('-')?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_values_with_json_escapes_are_read() {
        // Python's json.dump escapes non-ASCII by default; any key or value may carry `\u`.
        let text = br#"{"step1": {"collective": {
            "allreduce-total@17\u0035": {"0-1": {"Transport Type": "HC\u0043S", "Transit Size(MB)": 2, "Transit Time(ms)": 1}},
            "allreduce-total@176": {"0\u002d1": {"Transport Type": "LOC\u0041L", "Transit Size(MB)": 2, "Transit Time(ms)": 1}}}}}"#;
        let v = parse("m.json", text).unwrap();
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(
            (v[0].group.as_str(), v[0].transport),
            ("175", Transport::Hccs)
        );
        assert_eq!(
            (v[0].src, v[0].dst, v[0].bytes, v[0].time_ns),
            (0, 1, 2_000_000, 1_000_000)
        );
    }

    #[test]
    fn totals_and_old_per_op_entries_are_read() {
        let text = br#"{"step50": {"p2p": [], "collective": {
            "allreduce-top1@175": {"0-1": {"Transport Type": "HCCS", "Transit Size(MB)": 9, "Transit Time(ms)": 1}},
            "allreduce-total@175": {
              "0-0": {"Transport Type": "LOCAL", "Transit Size(MB)": 4.1, "Transit Time(ms)": 0.01},
              "0-1": {"Transport Type": "HCCS", "Transit Size(MB)": 37.781504, "Transit Time(ms)": 2.153383},
              "0-7": {"Transport Type": "HCCS", "Transit Size(MB)": 37.552128, "Transit Time(ms)": 2.1364026875}},
            "hcom_broadcast__483_0@9": {"0-3": {"Transport Type": "RDMA", "Transit Size(MB)": 1.5, "Transit Time(ms)": 0.5}},
            "Total Op Info": {"0-1": {"Transport Type": "HCCS", "Transit Size(MB)": 99, "Transit Time(ms)": 1}}}}}"#;
        let v = parse("m.json", text).unwrap();
        let got: Vec<_> = v
            .iter()
            .map(|l| {
                (
                    l.group.as_str(),
                    l.src,
                    l.dst,
                    l.transport,
                    l.bytes,
                    l.time_ns,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("175", 0, 1, Transport::Hccs, 37_781_504, 2_153_383),
                ("175", 0, 7, Transport::Hccs, 37_552_128, 2_136_403),
                ("9", 0, 3, Transport::Rdma, 1_500_000, 500_000),
            ]
        );
    }

    #[test]
    fn bad_links_are_errors() {
        let e = parse(
            "m.json",
            br#"{"step1": {"collective": {"a-total@1": {"x": {"Transport Type": "HCCS"}}}}}"#,
        )
        .unwrap_err();
        assert!(e.to_string().contains("not `src-dst`"), "{e}");
        let e = parse(
            "m.json",
            b"{\n\"step1\": {\"collective\": {\n\"a-total@1\": 3}}}",
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("m.json: line 3:"), "{e}");
    }
}
