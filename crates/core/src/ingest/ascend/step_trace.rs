//! `step_trace_time.csv`: the profiler's per-step summary, read by header name (the columns
//! move between versions: `Device_id` first in CANN 8.3, `Preparing` only since 2025), values
//! in decimal µs converted to integer ns exactly.

use super::csv_text::{Lines, csv_error, with_header};
use crate::error::{Error, Position};
use crate::format::echo;
use crate::model::{ProfilerStep, StepNo};
use crate::time::{Ns, micros_text_to_ns};
use std::path::Path;

/// Columns every version writes.
const REQUIRED: [&str; 8] = [
    "Step",
    "Computing",
    "Communication(Not Overlapped)",
    "Overlapped",
    "Communication",
    "Free",
    "Stage",
    "Bubble",
];
const EXCL_RECEIVE: &str = "Communication(Not Overlapped and Exclude Receive)";
const PREPARING: &str = "Preparing";
/// CANN 8.3 writes the device first; one process that profiled several devices writes a row
/// per device.
const DEVICE: &str = "Device_id";

/// Reads the file at `path`.
pub(crate) fn read(path: &Path) -> Result<Vec<ProfilerStep>, Error> {
    let (label, bytes) = crate::ingest::source::read_small(path)?;
    parse(&label, &bytes)
}

/// Parses the text of a `step_trace_time.csv`.
pub fn parse(label: &str, bytes: &[u8]) -> Result<Vec<ProfilerStep>, Error> {
    let (mut r, header) = with_header(label, bytes)?;
    let at_line = |line: u32, msg: String| Error::input_pos(label, Position::Line(line), msg);
    let col = |name: &str| header.iter().position(|h| h == name);
    let mut required = [0usize; REQUIRED.len()];
    for (slot, name) in required.iter_mut().zip(REQUIRED) {
        *slot = col(name).ok_or_else(|| at_line(1, format!("no `{name}` column")))?;
    }
    let (excl, preparing, device) = (col(EXCL_RECEIVE), col(PREPARING), col(DEVICE));
    let mut rows = Vec::new();
    let mut lines = Lines::new(bytes);
    for rec in r.records() {
        let rec = rec.map_err(|e| csv_error(label, bytes, &e))?;
        let line = lines.record(rec.position().map_or(0, |p| p.byte()));
        let cell = |i: usize| rec.get(i).unwrap_or("").trim();
        let us = |i: usize| -> Result<Ns, Error> {
            micros_text_to_ns(cell(i).as_bytes())
                .map_err(|e| at_line(line, format!("`{}` {}: {e}", header[i], echo(cell(i)))))
        };
        let opt = |i: Option<usize>| -> Result<Option<Ns>, Error> {
            match i {
                Some(i) if !cell(i).is_empty() => us(i).map(Some),
                _ => Ok(None),
            }
        };
        let step = match cell(required[0]).trim_start_matches("step") {
            "" => None,
            s => Some(StepNo(s.parse().map_err(|_| {
                at_line(
                    line,
                    format!("`Step` {} is not a step number", echo(cell(required[0]))),
                )
            })?)),
        };
        rows.push(ProfilerStep {
            step,
            computing: us(required[1])?,
            comm_not_overlapped: us(required[2])?,
            overlapped: us(required[3])?,
            communication: us(required[4])?,
            free: us(required[5])?,
            stage: us(required[6])?,
            bubble: us(required[7])?,
            comm_not_overlapped_excl_receive: opt(excl)?,
            preparing: opt(preparing)?,
            device: match device.map(cell) {
                None | Some("") => None,
                Some(d) => {
                    Some(d.parse().map_err(|_| {
                        at_line(line, format!("`{DEVICE}` {d:?} is not a device id"))
                    })?)
                }
            },
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    const JAN_2025: &str = "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,Communication(Not Overlapped and Exclude Receive),Preparing\n\
        50,8873.756000000001,101963.203,4028.6750000000175,105991.87800000001,25744.050000000003,136581.0,0,101963.203,17902.5\n";

    #[test]
    fn values_are_exact_ns() {
        let rows = parse("t", JAN_2025.as_bytes()).unwrap();
        assert_eq!(rows.len(), 1);
        let r = rows[0];
        assert_eq!(r.step, Some(StepNo(50)));
        // 8873.756000000001 µs rounds to 8 873 756 ns; 4028.6750000000175 to 4 028 675.
        assert_eq!(r.computing, 8_873_756);
        assert_eq!(r.overlapped, 4_028_675);
        assert_eq!(r.stage, 136_581_000);
        assert_eq!(r.preparing, Some(17_902_500));
    }

    #[test]
    fn columns_by_name_and_optional_ones() {
        let t = "Device_id,Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble\n\
            4,,1.5,2,0,2,3,6.5,0\n";
        let r = parse("t", t.as_bytes()).unwrap()[0];
        assert_eq!((r.step, r.device), (None, Some(4)));
        assert_eq!((r.computing, r.free, r.preparing), (1_500, 3_000, None));
    }

    #[test]
    fn bad_files_name_their_line() {
        let truncated = &JAN_2025[..JAN_2025.len() - 30];
        let e = parse("t.csv", truncated.as_bytes())
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("t.csv: line 2:"), "{e}");
        let e = parse("t.csv", b"Step,Computing\n1,2\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("line 1") && e.contains("Communication(Not Overlapped)"),
            "{e}"
        );
        let bad = JAN_2025.replace("136581.0", "n/a");
        let e = parse("t.csv", bad.as_bytes()).unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("`Stage`"), "{e}");
    }
}
