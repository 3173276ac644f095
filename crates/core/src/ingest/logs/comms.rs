//! DeepSpeed's comms-logger table (`reference/logs.md` §5), printed at the end of a run with
//! `comms_logger.enabled`: a `Comm. Op  Message Size  Count  Total Latency(ms)  Avg
//! Latency(ms)  tput_avg (Gbps)  busbw_avg (Gbps)` header, then per operation its name alone
//! on a line and one row per message size. The printed total can be negative (DeepSpeed's
//! accumulator overflows): the row keeps calls × average instead, exact from the printed ms.

use super::fields::{duration, number};
use super::{CommRow, Said};

/// The header line.
pub(super) fn is_header(s: &str) -> bool {
    s.starts_with("Comm. Op") && s.contains("Avg Latency")
}

/// A line under the header: an operation's name (`all_reduce`) sets `op` and says `Header`;
/// a size row becomes a [`CommRow`]; anything else ends the table (`None`).
pub(super) fn line(s: &str, op: &mut String) -> Option<Said> {
    let t = s.trim();
    if !t.is_empty()
        && t.bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_')
    {
        op.clear();
        op.push_str(t);
        return Some(Said::Header);
    }
    if op.is_empty() {
        return None;
    }
    let cells: Vec<&str> = t.split_whitespace().collect();
    // `45.6 MB` is two cells; `0B` one.
    let (bytes, rest) = match cells.as_slice() {
        [size, unit, rest @ ..] if unit_scale(unit).is_some() => {
            (number(size)? * unit_scale(unit)?, rest)
        }
        [size, rest @ ..] => (bytes_glued(size)?, rest),
        [] => return None,
    };
    let [count, _total, avg, _tput, busbw] = rest else {
        return None;
    };
    let calls: u64 = count.parse().ok()?;
    let avg_ns = duration(avg, 6)?;
    Some(Said::Comm(CommRow {
        op: op.clone(),
        bytes: bytes.round() as u64,
        calls,
        avg_ns,
        total_ns: avg_ns.saturating_mul(calls as i64),
        busbw_gbps: number(busbw)?,
    }))
}

/// DeepSpeed's `convert_size` units (powers of 1024).
fn unit_scale(u: &str) -> Option<f64> {
    let i = ["B", "KB", "MB", "GB", "TB"].iter().position(|x| *x == u)?;
    Some(1024f64.powi(i as i32))
}

/// `0B`, `512B`: a size with its unit glued on.
fn bytes_glued(s: &str) -> Option<f64> {
    let cut = s.find(|c: char| c.is_ascii_alphabetic())?;
    Some(number(&s[..cut])? * unit_scale(&s[cut..])?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_under_their_operation_with_the_total_recomputed() {
        let mut op = String::new();
        assert!(is_header(
            "Comm. Op            Message Size        Count               Total Latency(ms)   Avg Latency(ms)     tput_avg (Gbps)     busbw_avg (Gbps)"
        ));
        assert_eq!(line("all_reduce", &mut op), Some(Said::Header));
        let Some(Said::Comm(r)) = line(
            "                    874.0 MB            1650                -259904.95          246.25              59.55               59.53",
            &mut op,
        ) else {
            panic!()
        };
        // 874 × 1024² bytes; the negative printed total replaced by 1650 × 246.25 ms.
        assert_eq!(
            (r.op.as_str(), r.bytes, r.calls),
            ("all_reduce", 916_455_424, 1650)
        );
        assert_eq!((r.avg_ns, r.total_ns), (246_250_000, 406_312_500_000));
        assert_eq!(r.busbw_gbps, 59.53);
        line("barrier", &mut op);
        let Some(Said::Comm(r)) = line("   0B    68    6248.29    14.28    0.00    0.00", &mut op)
        else {
            panic!()
        };
        assert_eq!((r.bytes, r.calls, r.avg_ns), (0, 68, 14_280_000));
        assert_eq!(line("wandb: Run summary:", &mut op), None);
    }
}
