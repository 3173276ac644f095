//! `op_statistic.csv`: the profiler's own sum of the kernel table per operator type and unit
//! (count and total time), read by header name and kept beside the tasks so that the report
//! can check its sums against the tasks themselves (docs/metrics.md "Device tasks").

use super::csv_text::{Lines, csv_error, with_header};
use crate::error::{Error, Position};
use crate::model::{Core, OpStat};
use crate::time::micros_text_to_ns;
use std::path::Path;

/// Reads the file at `path`.
pub(crate) fn read(path: &Path) -> Result<Vec<OpStat>, Error> {
    let (label, bytes) = crate::ingest::source::read_small(path)?;
    parse(&label, &bytes)
}

/// Parses the text of an `op_statistic.csv`.
pub fn parse(label: &str, bytes: &[u8]) -> Result<Vec<OpStat>, Error> {
    let (mut r, header) = with_header(label, bytes)?;
    let at_line = |line: u32, msg: String| Error::input_pos(label, Position::Line(line), msg);
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| at_line(1, format!("no `{name}` column")))
    };
    let (op, core, count, total) = (
        col("OP Type")?,
        col("Core Type")?,
        col("Count")?,
        col("Total Time(us)")?,
    );
    let mut out = Vec::new();
    let mut lines = Lines::new(bytes);
    for rec in r.records() {
        let rec = rec.map_err(|e| csv_error(label, bytes, &e))?;
        let line = lines.record(rec.position().map_or(0, |p| p.byte()));
        let cell = |i: usize| rec.get(i).unwrap_or("").trim();
        let n = cell(count)
            .parse::<u64>()
            .map_err(|_| at_line(line, format!("`Count` {:?} is not a count", cell(count))))?;
        let total_ns = micros_text_to_ns(cell(total).as_bytes())
            .map_err(|e| at_line(line, format!("`Total Time(us)` {:?}: {e}", cell(total))))?;
        out.push(OpStat {
            op_type: cell(op).to_string(),
            core: Core::parse(cell(core)),
            count: n,
            total_ns,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_by_header_and_bad_cells_by_line() {
        let t = "OP Type,Core Type,Count,Total Time(us),Min Time(us)\r\n\
                 TransData,AI_VECTOR_CORE,57,1423.208,6.54\r\nMatMulV2,AI_CORE,8,921.498,16.54\r\n";
        let rows = parse("t", t.as_bytes()).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(
            (
                &rows[0].op_type[..],
                rows[0].core,
                rows[0].count,
                rows[0].total_ns
            ),
            ("TransData", Core::AiVector, 57, 1_423_208)
        );
        let bad = t.replace("921.498", "x");
        let e = parse("t", bad.as_bytes()).unwrap_err().to_string();
        assert!(e.contains("line 3") && e.contains("Total Time"), "{e}");
        let e = parse("t", b"OP Type,Count\n").unwrap_err().to_string();
        assert!(e.contains("Core Type"), "{e}");
    }
}
