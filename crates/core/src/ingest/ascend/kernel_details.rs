//! `kernel_details.csv`: one row per device task — its unit (`Accelerator Core`), operator
//! type, `OP State`, `Block Dim`, input shapes and types, and the PMU's pipe ratios when
//! `aic_metrics` was PipeUtilization. Read by header name: the columns move between versions
//! (`Device_id` first or second, `Block Num` for `Block Dim`, Level0's eight columns).

use super::csv_text::{Lines, csv_error, with_header};
use super::tasks::{Placement, TaskRow};
use crate::error::{Error, Position};
use crate::format::echo;
use crate::model::{Core, Pipe, Pipes};
use crate::time::micros_text_to_ns;
use std::path::Path;

/// The rows of a kernel table and what a user must know about them.
#[derive(Debug, Default)]
pub struct KernelTable {
    /// One row per task.
    pub rows: Vec<TaskRow>,
    /// Rows that could be read only in part (a negative duration, counted and set to 0).
    pub warnings: Vec<String>,
}

/// Reads the file at `path`.
pub(crate) fn read(path: &Path) -> Result<KernelTable, Error> {
    let (label, bytes) = crate::ingest::source::read_small(path)?;
    parse(&label, &bytes)
}

/// The columns of one file, by position.
struct Columns {
    name: usize,
    start: usize,
    /// `Duration(us)`, `Stream ID`, `Step Id`: where the task sits without the trace.
    dur: Option<usize>,
    stream: Option<usize>,
    step: Option<usize>,
    op_type: Option<usize>,
    core: Option<usize>,
    state: Option<usize>,
    block_dim: Option<usize>,
    shapes: Option<usize>,
    types: Option<usize>,
    /// `aicore_time(us)` and `aiv_time(us)`: whether each unit ran the task.
    unit_time: [Option<usize>; 2],
    /// `aic_<pipe>_ratio` and `aiv_<pipe>_ratio` per [`Pipe::ALL`].
    ratios: [[Option<usize>; 7]; 2],
}

impl Columns {
    fn of(header: &[String]) -> Result<Columns, String> {
        let col = |name: &str| header.iter().position(|h| h == name);
        let need = |name: &str| col(name).ok_or_else(|| format!("no `{name}` column"));
        let ratios = |unit: &str| Pipe::ALL.map(|p| col(&format!("{unit}_{}_ratio", p.as_str())));
        Ok(Columns {
            name: need("Name")?,
            start: need("Start Time(us)")?,
            dur: col("Duration(us)"),
            stream: col("Stream ID"),
            step: col("Step Id"),
            op_type: col("Type"),
            core: col("Accelerator Core"),
            state: col("OP State"),
            block_dim: col("Block Dim").or_else(|| col("Block Num")),
            shapes: col("Input Shapes"),
            types: col("Input Data Types"),
            unit_time: [col("aicore_time(us)"), col("aiv_time(us)")],
            ratios: [ratios("aic"), ratios("aiv")],
        })
    }
}

/// Parses the text of a `kernel_details.csv`. A negative duration is set to 0 and counted
/// in a warning naming its first line (as a Chrome trace's are).
pub fn parse(label: &str, bytes: &[u8]) -> Result<KernelTable, Error> {
    let (mut r, header) = with_header(label, bytes)?;
    let c = Columns::of(&header).map_err(|m| Error::input_pos(label, Position::Line(1), m))?;
    let mut rows = Vec::new();
    let mut negative: (u64, u32) = (0, 0);
    let mut lines = Lines::new(bytes);
    for rec in r.records() {
        let rec = rec.map_err(|e| csv_error(label, bytes, &e))?;
        let line = lines.record(rec.position().map_or(0, |p| p.byte()));
        let at = |i: usize, what: &str| {
            Error::input_pos(
                label,
                Position::Line(line),
                format!("`{}` {}: {what}", header[i], echo(cell(&rec, i))),
            )
        };
        let start = micros_text_to_ns(cell(&rec, c.start).as_bytes())
            .map_err(|e| at(c.start, &e.to_string()))?;
        let placement = match c.dur {
            Some(i) => {
                let mut dur = micros_text_to_ns(cell(&rec, i).as_bytes())
                    .map_err(|e| at(i, &e.to_string()))?;
                if dur < 0 {
                    negative = (
                        negative.0 + 1,
                        if negative.0 == 0 { line } else { negative.1 },
                    );
                    dur = 0;
                }
                crate::time::event_end(start, dur).map_err(|e| at(i, &e.to_string()))?;
                Some(Placement {
                    dur,
                    stream: parsed(&rec, c.stream).map_err(|i| at(i, "not a stream id"))?,
                    step: parsed(&rec, c.step).map_err(|i| at(i, "not a step number"))?,
                })
            }
            None => {
                crate::time::event_end(start, 0).map_err(|e| at(c.start, &e.to_string()))?;
                None
            }
        };
        let mut pipes = [None, None];
        for (u, slot) in pipes.iter_mut().enumerate() {
            *slot = unit_pipes(&rec, c.unit_time[u], &c.ratios[u])
                .map_err(|i| at(i, "not a number"))?;
        }
        let block_dim = parsed(&rec, c.block_dim).map_err(|i| at(i, "not a count"))?;
        rows.push(TaskRow {
            start,
            name: cell(&rec, c.name).to_string(),
            op_type: known(&rec, c.op_type).map(str::to_string),
            core: known(&rec, c.core).map(Core::parse),
            dynamic: known(&rec, c.state).map(|s| s.eq_ignore_ascii_case("dynamic")),
            block_dim,
            input_shapes: known(&rec, c.shapes).map(|s| s.trim_matches('"').to_string()),
            input_types: known(&rec, c.types).map(str::to_string),
            cube: pipes[0],
            vector: pipes[1],
            placement,
        });
    }
    let mut warnings = Vec::new();
    if negative.0 > 0 {
        warnings.push(format!(
            "{label}: line {}: {} task(s) with a negative `Duration(us)`, read as 0",
            negative.1, negative.0
        ));
    }
    Ok(KernelTable { rows, warnings })
}

/// A cell, trimmed (start times carry a trailing TAB).
fn cell(rec: &csv::StringRecord, i: usize) -> &str {
    rec.get(i).unwrap_or("").trim()
}

/// A cell that says something: not empty and not `N/A`.
fn known(rec: &csv::StringRecord, i: Option<usize>) -> Option<&str> {
    let v = cell(rec, i?);
    (!v.is_empty() && v != "N/A").then_some(v)
}

/// A known cell parsed as a number; the column when it is not one.
fn parsed<T: std::str::FromStr>(
    rec: &csv::StringRecord,
    i: Option<usize>,
) -> Result<Option<T>, usize> {
    match (i, known(rec, i)) {
        (Some(i), Some(v)) => v.parse().map(Some).map_err(|_| i),
        _ => Ok(None),
    }
}

/// One unit's pipe ratios when the unit ran the task (its time is above 0) and the file has
/// ratio columns; the column of a value that is not a number as the error.
fn unit_pipes(
    rec: &csv::StringRecord,
    time: Option<usize>,
    ratios: &[Option<usize>; 7],
) -> Result<Option<Pipes>, usize> {
    let number = |i: usize| -> Result<f32, usize> {
        match known(rec, Some(i)) {
            None => Ok(0.0),
            Some(v) => v.parse::<f32>().map_err(|_| i),
        }
    };
    let Some(t) = time else { return Ok(None) };
    // Other `aic_metrics` (ArithmeticUtilization, MemoryL0 …) write no pipe ratios: no
    // counters to classify by, not a task that left every pipe idle.
    if number(t)? <= 0.0 || ratios.iter().all(Option::is_none) {
        return Ok(None);
    }
    let mut p = Pipes::default();
    for (pipe, col) in Pipe::ALL.iter().zip(ratios) {
        if let Some(i) = *col {
            p.set(*pipe, number(i)?);
        }
    }
    Ok(Some(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEVEL1: &str = "Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Context ID,aicore_time(us),aic_total_cycles,aic_mac_time(us),aic_mac_ratio,aic_scalar_time(us),aic_scalar_ratio,aic_mte1_time(us),aic_mte1_ratio,aic_mte2_time(us),aic_mte2_ratio,aic_fixpipe_time(us),aic_fixpipe_ratio,aic_icache_miss_rate,aiv_time(us),aiv_total_cycles,aiv_vec_time(us),aiv_vec_ratio,aiv_scalar_time(us),aiv_scalar_ratio,aiv_mte2_time(us),aiv_mte2_ratio,aiv_mte3_time(us),aiv_mte3_ratio,aiv_icache_miss_rate,cube_utilization(%)\n\
50,4294967295,11051,2,trans_TransData_0,TransData,dynamic,AI_VECTOR_CORE,1736408883704643.212\t,53.741,0,32,0,NO,\"\"\"32,3,224,224\"\"\",FLOAT,NCHW,\"\"\"32,1,224,224,8\"\"\",FLOAT,NC1HWC0,N/A,0.0,0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,50.522,2910056,9.406,0.186,4.32,0.086,27.875,0.552,33.687,0.667,0.023,0\n\
19,4294967295,61653,2,aclnnMatmul_MatMulCommon_MatMulV2,MatMulV2,static,AI_CORE,\"1736413971558972.912\t\",185.504,1.087,16,0,NO,\"\"\"81920,4096;8192,512\"\"\",DT_BF16;DT_BF16,ND;ND,\"\"\"4096,512\"\"\",DT_BF16,ND,N/A,183.87,5295467,151.425,0.824,88.03,0.479,119.148,0.648,177.314,0.964,5.736,0.031,0.001,0,0,0,0,0,0,0,0,0,0,0,79.295\n";

    #[test]
    fn a_level1_table_gives_units_types_and_pipes() {
        let table = parse("k", LEVEL1.as_bytes()).unwrap();
        assert!(table.warnings.is_empty());
        let (v, m) = (&table.rows[0], &table.rows[1]);
        assert_eq!(
            (v.start, v.name.as_str()),
            (1_736_408_883_704_643_212, "trans_TransData_0")
        );
        assert_eq!(
            (v.core, v.dynamic, v.block_dim),
            (Some(Core::AiVector), Some(true), Some(32))
        );
        assert_eq!(v.input_shapes.as_deref(), Some("32,3,224,224"));
        assert_eq!(v.cube, None);
        let p = v.vector.unwrap();
        assert_eq!(
            (p.get(Pipe::Vec), p.get(Pipe::Mte2), p.get(Pipe::Mte3)),
            (0.186, 0.552, 0.667)
        );
        assert_eq!(p.busiest(), (Pipe::Mte3, 0.667));
        assert_eq!(m.start, 1_736_413_971_558_972_912);
        assert_eq!(
            (m.op_type.as_deref(), m.dynamic),
            (Some("MatMulV2"), Some(false))
        );
        let c = m.cube.unwrap();
        assert_eq!(
            (c.get(Pipe::Mac), c.get(Pipe::Mte2), c.get(Pipe::Fixpipe)),
            (0.824, 0.964, 0.031)
        );
        assert_eq!(m.vector, None);
    }

    #[test]
    fn level0_rows_say_nothing_of_units() {
        let t = "Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Dim\n\
                 50,trans_TransData_0,N/A,N/A,1736405443881410.320\t,50.621,0,0\n";
        let r = &parse("k", t.as_bytes()).unwrap().rows[0];
        assert_eq!((r.op_type.as_ref(), r.core, r.dynamic), (None, None, None));
        assert_eq!((r.block_dim, r.cube, r.vector), (Some(0), None, None));
    }

    #[test]
    fn other_metrics_give_no_pipes() {
        let t = "Name,Start Time(us),Accelerator Core,aicore_time(us),aic_mac_fp16_ratio\n\
                 ZerosLike,1695115378713661,AI_CORE,982.72,0.5\n";
        let r = &parse("k", t.as_bytes()).unwrap().rows[0];
        assert_eq!((r.core, r.cube, r.vector), (Some(Core::AiCore), None, None));
    }

    #[test]
    fn negative_durations_are_read_as_zero_and_said() {
        let t = "Name,Start Time(us),Duration(us)\n\
                 a,100,5\nb,200,-3\nc,300,-1.5\n";
        let table = parse("k.csv", t.as_bytes()).unwrap();
        let durs: Vec<_> = table
            .rows
            .iter()
            .map(|r| r.placement.unwrap().dur)
            .collect();
        assert_eq!(durs, [5_000, 0, 0]);
        assert_eq!(
            table.warnings,
            ["k.csv: line 3: 2 task(s) with a negative `Duration(us)`, read as 0"]
        );
        // A start out of the time range is an error at its line.
        let e = parse(
            "k.csv",
            b"Name,Start Time(us),Duration(us)\na,9000000000000000,1\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("k.csv: line 2:") && e.contains("out of range"),
            "{e}"
        );
    }

    #[test]
    fn bad_rows_name_their_line_and_column() {
        let e = parse("k.csv", LEVEL1.replace("0.824", "x").as_bytes())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("k.csv: line 3:") && e.contains("aic_mac_ratio"),
            "{e}"
        );
        let e = parse("k.csv", &LEVEL1.as_bytes()[..LEVEL1.len() - 40])
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("k.csv: line 3:"), "{e}");
        let e = parse("k.csv", b"Name,Type\nx,y\n").unwrap_err().to_string();
        assert!(e.contains("line 1") && e.contains("Start Time(us)"), "{e}");
    }
}
