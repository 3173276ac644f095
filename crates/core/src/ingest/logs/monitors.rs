//! Tables: GPU / NPU monitor streams (`reference/logs.md` §11) — `nvidia-smi dmon` (current
//! and legacy headers, `-o DT`), `nvidia-smi --query-gpu=… --format=csv`, `dcgmi dmon`,
//! `npu-smi info watch` — and Megatron's timer block (§3.2), whose header line names what the
//! rows that follow hold, so a [`Table`] per source remembers the last header; and
//! dcgm-exporter's Prometheus text, one metric per line. Every monitor row becomes a
//! [`Sample`] of one device with metrics under the canonical names of [`metric`]; every timer
//! row a [`TimerRow`].

use super::fields::duration;
use super::fields::{number, timestamp};
use super::{Said, Sample, TimerRow};

/// The column layout of the table a source is printing (its last header line).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    kind: Option<Kind>,
    columns: Vec<String>,
}

impl Table {
    /// A header has been seen: rows may follow (identical rows are successive samples).
    pub fn is_open(&self) -> bool {
        self.kind.is_some()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Dmon,
    Csv,
    Dcgmi,
    NpuSmi,
    /// Megatron timers; `columns[0]` is the `all` layout's current timer name.
    Timers,
    /// DeepSpeed's comms-logger table; `columns[0]` is the current operation.
    Comms,
}

/// A header (returns `Said::Header`) or a row of the table the last header opened.
pub fn table(text: &str, t: &mut Table) -> Option<Said> {
    let s = text.trim();
    if let Some(kind) = header(s, t) {
        t.kind = Some(kind);
        return Some(Said::Header);
    }
    // dmon's units line and dcgmi's `ID` line follow their header.
    if s.starts_with("# Idx") || s.starts_with("#YYYYMMDD") || s == "ID" || s.starts_with("ID ") {
        return t.kind.map(|_| Said::Header);
    }
    let sample = match t.kind? {
        Kind::Dmon => dmon_row(s, &t.columns),
        Kind::Csv => csv_row(s, &t.columns),
        Kind::Dcgmi => dcgmi_row(s, &t.columns),
        Kind::NpuSmi => npu_row(s, &t.columns),
        Kind::Timers => return timer_row(s, &mut t.columns).map(Said::Timer),
        // The table stays open: a row cut in two by a launcher is rejoined under it.
        Kind::Comms => return super::comms::line(s, &mut t.columns[0]),
    }?;
    Some(Said::Device(sample))
}

/// Recognises a header line and stores its columns.
fn header(s: &str, t: &mut Table) -> Option<Kind> {
    let words = |s: &str| s.split_whitespace().map(str::to_string).collect();
    if super::comms::is_header(s) {
        t.columns = vec![String::new()];
        return Some(Kind::Comms);
    }
    if s.ends_with("across ranks (ms):") {
        t.columns = vec![String::new()];
        return Some(Kind::Timers);
    }
    if let Some(rest) = s.strip_prefix("#Entity") {
        t.columns = words(rest);
        return Some(Kind::Dcgmi);
    }
    if s.starts_with('#') && !s.starts_with("# HELP") && !s.starts_with("# TYPE") {
        let cols: Vec<String> = words(s.trim_start_matches('#'));
        if cols.iter().any(|c| c == "gpu") && cols.iter().any(|c| c == "sm" || c == "pwr") {
            t.columns = cols;
            return Some(Kind::Dmon);
        }
        return None;
    }
    if s.starts_with("NpuID(Idx)") {
        t.columns = npu_columns(s);
        return Some(Kind::NpuSmi);
    }
    if s.contains(',') && (s.contains("utilization.gpu") || s.contains("memory.used")) {
        t.columns = s
            .split(',')
            .map(|c| c.split('[').next().unwrap_or("").trim().to_string())
            .collect();
        return Some(Kind::Csv);
    }
    // A script's own CSV of the same readings (`timestamp,gpu_index,temperature_C,
    // utilization_gpu_percent,power_W`): columns named in words, a device column and a metric.
    if s.contains(',') {
        let cols: Vec<Option<&'static str>> = s.split(',').map(|c| query_name(c.trim())).collect();
        let device = cols.contains(&Some("index"));
        let metrics = cols
            .iter()
            .flatten()
            .filter(|c| metric(c).is_some())
            .count();
        if device && metrics > 0 && cols.len() >= 2 {
            t.columns = s
                .split(',')
                .zip(&cols)
                .map(|(c, q)| q.map_or_else(|| c.trim().to_string(), str::to_string))
                .collect();
            return Some(Kind::Csv);
        }
    }
    None
}

/// The `--query-gpu` name a column written in words stands for (`gpu_index` → `index`,
/// `utilization_gpu_percent` → `utilization.gpu`, `temperature_C` → `temperature.gpu`).
fn query_name(column: &str) -> Option<&'static str> {
    let c = column.to_ascii_lowercase();
    let has = |w: &str| c.contains(w);
    Some(match c.as_str() {
        "timestamp" | "time" | "datetime" => "timestamp",
        "index" | "gpu" | "gpu_index" | "gpu_id" | "device" | "device_id" | "gpu_idx" => "index",
        _ if has("util") && has("mem") => "utilization.memory",
        _ if has("util") => "utilization.gpu",
        _ if has("temp") => "temperature.gpu",
        _ if has("power") && has("limit") => "power.limit",
        _ if has("power") => "power.draw",
        _ if has("mem") && has("used") => "memory.used",
        _ if has("mem") && has("total") => "memory.total",
        _ if has("clock") && has("mem") => "clocks.current.memory",
        _ if has("clock") => "clocks.current.graphics",
        _ => return None,
    })
}

/// npu-smi's column names hold spaces (`AI Core(%)`) and all end with a `(unit)`.
fn npu_columns(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for w in s.split_whitespace() {
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(w);
        if w.ends_with(')') {
            out.push(std::mem::take(&mut cur));
        }
    }
    out
}

/// The canonical metric a monitor's column (or exporter field) reports, and the factor that
/// turns its value into that metric's unit (dcgm's activity ratios are 0..1 → %).
pub fn metric(column: &str) -> Option<(&'static str, f64)> {
    Some(match column {
        "sm" | "utilization.gpu" | "GPUTL" | "AI Core(%)" | "NPU(%)" | "DCGM_FI_DEV_GPU_UTIL" => {
            ("util_pct", 1.0)
        }
        "GRACT" | "DCGM_FI_PROF_GR_ENGINE_ACTIVE" => ("util_pct", 100.0),
        "SMACT" | "DCGM_FI_PROF_SM_ACTIVE" => ("sm_active_pct", 100.0),
        "TENSO" | "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE" => ("tensor_active_pct", 100.0),
        "DRAMA" | "DCGM_FI_PROF_DRAM_ACTIVE" => ("dram_active_pct", 100.0),
        "mem" | "utilization.memory" | "DCGM_FI_DEV_MEM_COPY_UTIL" => ("mem_util_pct", 1.0),
        "pwr" | "power.draw" | "POWER" | "Pwr(W)" | "DCGM_FI_DEV_POWER_USAGE" => ("power_w", 1.0),
        "power.limit" | "enforced.power.limit" | "DCGM_FI_DEV_POWER_MGMT_LIMIT" => {
            ("power_limit_w", 1.0)
        }
        "gtemp" | "temp" | "temperature.gpu" | "TMPTR" | "Temp(C)" | "DCGM_FI_DEV_GPU_TEMP" => {
            ("temp_c", 1.0)
        }
        "pclk"
        | "clocks.current.graphics"
        | "clocks.gr"
        | "clocks.current.sm"
        | "clocks.sm"
        | "SMCLK"
        | "DCGM_FI_DEV_SM_CLOCK" => ("sm_clock_mhz", 1.0),
        "clocks.max.graphics" | "clocks.max.sm" | "clocks.max.gr" => ("sm_clock_max_mhz", 1.0),
        "mclk" | "clocks.current.memory" | "clocks.mem" | "MMCLK" | "DCGM_FI_DEV_MEM_CLOCK" => {
            ("mem_clock_mhz", 1.0)
        }
        "fb" | "memory.used" | "FBUSD" | "DCGM_FI_DEV_FB_USED" => ("mem_used_mib", 1.0),
        "memory.total" => ("mem_total_mib", 1.0),
        "DCGM_FI_DEV_FB_FREE" | "memory.free" => ("mem_free_mib", 1.0),
        "Memory(%)" => ("mem_pct", 1.0),
        "Memory BW(%)" => ("mem_bw_pct", 1.0),
        "AI Cpu(%)" => ("aicpu_pct", 1.0),
        "pviol" => ("power_violation_pct", 1.0),
        "tviol" => ("thermal_violation", 1.0),
        _ => return None,
    })
}

/// A sample of `device` from `(column, value text)` cells.
fn sample<'a>(device: String, cells: impl Iterator<Item = (&'a str, &'a str)>) -> Sample {
    let mut s = Sample {
        device,
        host: None,
        at_ns: None,
        metrics: Vec::new(),
    };
    for (col, v) in cells {
        let Some((name, k)) = metric(col) else {
            continue;
        };
        // `-`, `N/A`, `[Not Supported]`: no value.
        if let Some(x) = number(v).filter(|x| x.is_finite()) {
            s.metrics.push((name, x * k));
        }
    }
    s
}

/// `nvidia-smi dmon` row: whitespace-separated cells under the header's names; `-o DT`
/// adds `Date` (YYYYMMDD) and `Time` first.
fn dmon_row(s: &str, columns: &[String]) -> Option<Sample> {
    let cells: Vec<&str> = s.split_whitespace().collect();
    if cells.len() != columns.len() {
        return None;
    }
    let at = |name: &str| columns.iter().position(|c| c == name).map(|i| cells[i]);
    let gpu: u32 = at("gpu")?.parse().ok()?;
    let mut out = sample(
        format!("GPU {gpu}"),
        columns
            .iter()
            .map(String::as_str)
            .zip(cells.iter().copied()),
    );
    if let (Some(d), Some(t)) = (at("Date"), at("Time")) {
        if d.len() == 8 && d.bytes().all(|b| b.is_ascii_digit()) {
            out.at_ns = timestamp(&format!("{}-{}-{} {t}", &d[..4], &d[4..6], &d[6..]));
        }
    }
    Some(out)
}

/// `--query-gpu … --format=csv` row: `, `-separated, units in the cells; the device is
/// `index` when queried, else the bus id, else the row's name.
fn csv_row(s: &str, columns: &[String]) -> Option<Sample> {
    let cells: Vec<&str> = s.split(',').map(str::trim).collect();
    if cells.len() != columns.len() {
        return None;
    }
    let at = |name: &str| columns.iter().position(|c| c == name).map(|i| cells[i]);
    let device = if let Some(i) = at("index") {
        format!("GPU {i}")
    } else if let Some(b) = at("pci.bus_id") {
        format!("GPU {b}")
    } else {
        at("name").or(at("gpu_name")).unwrap_or("GPU").to_string()
    };
    let mut out = sample(
        device,
        columns
            .iter()
            .map(String::as_str)
            .zip(cells.iter().copied()),
    );
    out.at_ns = at("timestamp").and_then(timestamp);
    (!out.metrics.is_empty()).then_some(out)
}

/// `dcgmi dmon` row: an entity (`GPU 0`, `GPU-I 29`, `GPU 0 LINK 3`), then the values of the
/// header's fields (`N/A` for blanks).
fn dcgmi_row(s: &str, columns: &[String]) -> Option<Sample> {
    let cells: Vec<&str> = s.split_whitespace().collect();
    let kind = *cells.first()?;
    if !(kind.starts_with("GPU") || kind.starts_with("Switch") || kind.starts_with("Cpu")) {
        return None;
    }
    cells.get(1)?.parse::<u32>().ok()?;
    let mut n = 2;
    if cells.get(2) == Some(&"LINK") {
        n = 4;
    }
    if cells.len() != n + columns.len() {
        return None;
    }
    let device = cells[..n].join(" ");
    Some(sample(
        device,
        columns
            .iter()
            .map(String::as_str)
            .zip(cells[n..].iter().copied()),
    ))
}

/// `npu-smi info watch` row: NPU id, chip id, then the header's values.
fn npu_row(s: &str, columns: &[String]) -> Option<Sample> {
    let cells: Vec<&str> = s.split_whitespace().collect();
    if cells.len() != columns.len() || columns.len() < 2 {
        return None;
    }
    let npu: u32 = cells[0].parse().ok()?;
    let chip: u32 = cells[1].parse().ok()?;
    Some(sample(
        format!("NPU {npu} chip {chip}"),
        columns[2..]
            .iter()
            .map(String::as_str)
            .zip(cells[2..].iter().copied()),
    ))
}

/// A Megatron timer row: `name ....: (min, max)` (`minmax`), `name ....: max` (`max`), or in
/// the `all` layout `name:` then `rank  r: t` rows (ms, per iteration).
fn timer_row(s: &str, current: &mut [String]) -> Option<TimerRow> {
    if let Some(rest) = s.strip_prefix("rank") {
        let (r, t) = rest.split_once(':')?;
        return Some(TimerRow {
            name: current.first()?.clone(),
            min_ns: None,
            max_ns: duration(t, 6)?,
            rank: Some(r.trim().parse().ok()?),
        });
    }
    if let Some(name) = s.strip_suffix(':').filter(|n| !n.contains(' ')) {
        *current.first_mut()? = name.to_string();
        return None;
    }
    let (name, value) = s.split_once(" .")?;
    let value = value.trim_start_matches('.').strip_prefix(':')?.trim();
    let (min_ns, max_ns) = match value.strip_prefix('(') {
        Some(pair) => {
            let (lo, hi) = pair.strip_suffix(')')?.split_once(',')?;
            (Some(duration(lo, 6)?), duration(hi, 6)?)
        }
        None => (None, duration(value, 6)?),
    };
    Some(TimerRow {
        name: name.trim().to_string(),
        min_ns,
        max_ns,
        rank: None,
    })
}

/// DCGM's INT64 "blank / not supported" sentinels start here.
const DCGM_BLANK: f64 = 9.223_372_036_854_775e18;

/// dcgm-exporter (Prometheus text): `DCGM_FI_…{gpu="0",…,Hostname="n"} value`; one metric of
/// one device per line (`# HELP`/`# TYPE` lines are headers).
pub fn prometheus(text: &str) -> Option<Said> {
    let s = text.trim();
    if s.starts_with("# HELP DCGM_") || s.starts_with("# TYPE DCGM_") {
        return Some(Said::Header);
    }
    let name_end = s.find('{')?;
    let name = &s[..name_end];
    if !name.starts_with("DCGM_FI_") {
        return None;
    }
    // The last `}` after the `{` (one before it is no label set: `DCGM_FI_X}{`).
    let close = name_end + 1 + s[name_end + 1..].rfind('}')?;
    let labels = &s[name_end + 1..close];
    let value = number(s[close + 1..].trim())?;
    let label = |key: &str| {
        labels.split(',').find_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            (k.trim() == key).then(|| v.trim().trim_matches('"').to_string())
        })
    };
    let gpu = label("gpu")?;
    let mut out = Sample {
        device: format!("GPU {gpu}"),
        host: label("Hostname").or_else(|| label("hostname")),
        at_ns: None,
        metrics: Vec::new(),
    };
    if let Some((metric, k)) = metric(name) {
        if value.is_finite() && value < DCGM_BLANK {
            out.metrics.push((metric, value * k));
        }
    }
    Some(Said::Device(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(lines: &[&str]) -> Vec<Sample> {
        let mut t = Table::default();
        lines
            .iter()
            .filter_map(|l| match table(l, &mut t) {
                Some(Said::Device(s)) => Some(s),
                _ => None,
            })
            .collect()
    }

    fn get(s: &Sample, m: &str) -> Option<f64> {
        s.metrics.iter().find(|x| x.0 == m).map(|x| x.1)
    }

    #[test]
    fn dmon_current_and_dated_headers() {
        let r = rows(&[
            "#Date       Time        gpu   pwr gtemp mtemp    sm   mem   enc   dec  mclk  pclk",
            "#YYYYMMDD   HH:MM:SS    Idx     W     C     C     %     %     %     %   MHz   MHz",
            " 20210102   19:12:31      0    37    19     -    93     0     0     0  4006   582",
        ]);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].device, "GPU 0");
        assert_eq!(get(&r[0], "util_pct"), Some(93.0));
        assert_eq!(get(&r[0], "sm_clock_mhz"), Some(582.0));
        assert_eq!(get(&r[0], "power_w"), Some(37.0));
        // `-` is no value, not zero.
        assert!(r[0].metrics.iter().all(|m| m.0 != "mem_temp_c"));
        assert_eq!(
            r[0].at_ns,
            timestamp("2021-01-02 19:12:31"),
            "the Date and Time columns"
        );
    }

    #[test]
    fn npu_smi_columns_with_spaces() {
        let r = rows(&[
            "NpuID(Idx)  ChipId(Idx) Pwr(W)      Temp(C)     AI Core(%)  AI Cpu(%)   Ctrl Cpu(%) Memory(%)   Memory BW(%)",
            "0           0           4.0         44          7           0           0           32          0",
        ]);
        assert_eq!(r[0].device, "NPU 0 chip 0");
        assert_eq!(get(&r[0], "util_pct"), Some(7.0));
        assert_eq!(get(&r[0], "mem_pct"), Some(32.0));
        assert_eq!(get(&r[0], "power_w"), Some(4.0));
    }

    #[test]
    fn dcgmi_ratios_become_percent() {
        let r = rows(&[
            "#Entity   GRACT        SMACT        SMOCC        TENSO",
            "ID",
            "GPU-I 29  0.495        0.490        0.061        N/A",
        ]);
        assert_eq!(r[0].device, "GPU-I 29");
        assert_eq!(get(&r[0], "util_pct"), Some(49.5));
        assert_eq!(get(&r[0], "tensor_active_pct"), None);
    }

    #[test]
    fn megatron_timer_blocks_of_each_layout() {
        let mut t = Table::default();
        let mut rows = Vec::new();
        for l in [
            "(min, max) time across ranks (ms):",
            "    forward-backward ...............................: (6639.44, 6640.87)",
            "max time across ranks (ms):",
            "    optimizer ......................................: 165.76",
            "some log line between blocks",
            "times across ranks (ms):",
            "  forward-backward:",
            "     rank  0: 3198.27",
            "     rank 12: 3301.50",
        ] {
            if let Some(Said::Timer(r)) = table(l, &mut t) {
                rows.push((r.name, r.min_ns, r.max_ns, r.rank));
            }
        }
        let fb = "forward-backward".to_string();
        assert_eq!(
            rows,
            [
                (fb.clone(), Some(6_639_440_000), 6_640_870_000, None),
                ("optimizer".into(), None, 165_760_000, None),
                (fb.clone(), None, 3_198_270_000, Some(0)),
                (fb, None, 3_301_500_000, Some(12)),
            ]
        );
    }

    #[test]
    fn exporter_lines_and_blank_sentinels() {
        let Some(Said::Device(s)) =
            prometheus(r#"DCGM_FI_DEV_GPU_UTIL{gpu="2", UUID="GPU-x",Hostname="r6i3n0"} 38"#)
        else {
            panic!()
        };
        assert_eq!(
            (s.device.as_str(), s.host.as_deref()),
            ("GPU 2", Some("r6i3n0"))
        );
        assert_eq!(get(&s, "util_pct"), Some(38.0));
        let Some(Said::Device(s)) =
            prometheus(r#"DCGM_FI_DEV_MEMORY_TEMP{gpu="0"} 9223372036854775794"#)
        else {
            panic!()
        };
        assert!(s.metrics.is_empty());
        assert_eq!(
            prometheus("# HELP DCGM_FI_DEV_GPU_UTIL x"),
            Some(Said::Header)
        );
        assert_eq!(prometheus("node_load1{x=\"1\"} 3"), None);
        // A `}` before the `{` closes no label set.
        assert_eq!(prometheus("DCGM_FI_X}{ 3"), None);
        assert_eq!(prometheus("DCGM_FI_X}{gpu=\"0\" 3"), None);
    }
}
