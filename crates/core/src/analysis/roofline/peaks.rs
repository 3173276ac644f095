//! The device peak table: embedded TOML (`devices.toml`), extended by
//! `<config dir>/stepscope/devices.toml`, picked by `--device` or the trace's device name.

use crate::config::{self, Layer};
use crate::error::Error;
use serde::{Deserialize, Serialize};

/// The embedded table.
pub const EMBEDDED: &str = include_str!("devices.toml");

/// One device's dense peaks.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct Device {
    /// Table name (`H100-SXM`), what `--device` takes.
    pub name: String,
    /// Substrings of `deviceProperties` names that select it.
    #[serde(rename = "match", default)]
    #[serde(skip_serializing)]
    pub matches: Vec<String>,
    /// bf16/fp16 tensor TFLOP/s.
    pub bf16_tflops: f64,
    /// tf32 tensor TFLOP/s.
    #[serde(default)]
    pub tf32_tflops: Option<f64>,
    /// fp32 TFLOP/s.
    #[serde(default)]
    pub fp32_tflops: Option<f64>,
    /// HBM GB/s.
    pub hbm_gbps: f64,
    /// Where the figures come from.
    #[serde(default)]
    pub source: String,
    /// The link between devices of one node by default (`nvlink3`), when not NVLink 4.
    #[serde(default, skip_serializing)]
    pub intra_link: Option<String>,
}

impl Device {
    /// Peak FLOP/s (as TFLOP/s) for an element type (`float` → fp32, else bf16/fp16); `None`
    /// for fp32 on a device with no fp32 figure, which the bf16 peak would overstate by the
    /// whole ratio between the two.
    pub fn peak_tflops(&self, dtype: Option<&str>) -> Option<f64> {
        let d = dtype.unwrap_or("").to_ascii_lowercase();
        let fp32 = matches!(
            d.as_str(),
            "float" | "float32" | "c10::float" | "dt_float" | "fp32"
        );
        if fp32 {
            self.fp32_tflops
        } else {
            Some(self.bf16_tflops)
        }
    }

    /// Ridge point for an element type, FLOP per byte (`None` with no peak for it).
    pub fn ridge(&self, dtype: Option<&str>) -> Option<f64> {
        Some(self.peak_tflops(dtype)? * 1e3 / self.hbm_gbps)
    }
}

#[derive(Deserialize)]
struct Table {
    #[serde(default)]
    device: Vec<Device>,
}

/// The table: user entries (`<config dir>/stepscope/devices.toml`) first, then the embedded
/// ones. A broken user table is a configuration error (`devices.toml: PATH: message`).
pub fn table() -> Result<Vec<Device>, Error> {
    let mut out = Vec::new();
    if let Some(layer) = config::user_layer("devices.toml")? {
        let devices = parse(&layer.text)
            .map_err(|e| Error::config("devices.toml", None, format!("{}: {e}", layer.label)))?;
        out.extend(devices);
    }
    out.extend(embedded());
    Ok(out)
}

/// The embedded table alone.
pub fn embedded() -> Vec<Device> {
    parse(&Layer::embedded("devices.toml", EMBEDDED).text)
        .expect("the embedded device table parses")
}

/// Parses a device table; the error is the message alone (one line).
pub fn parse(text: &str) -> Result<Vec<Device>, String> {
    let t: Table = toml::from_str(text).map_err(|e| e.to_string().replace('\n', " "))?;
    for d in &t.device {
        if !(d.bf16_tflops > 0.0 && d.hbm_gbps > 0.0) {
            return Err(format!("device {}: peaks must be positive", d.name));
        }
    }
    Ok(t.device)
}

/// The entry for a device name from a trace (first whose `match` occurs in it).
pub fn by_trace_name<'t>(table: &'t [Device], name: &str) -> Option<&'t Device> {
    let n = name.to_ascii_lowercase();
    table.iter().find(|d| {
        d.matches
            .iter()
            .any(|m| n.contains(&m.to_ascii_lowercase()))
    })
}

/// The entry named `name` (`--device`), case-insensitive.
pub fn by_name<'t>(table: &'t [Device], name: &str) -> Option<&'t Device> {
    table.iter().find(|d| d.name.eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_device_names_are_unique() {
        let t = parse(EMBEDDED).unwrap();
        let mut names: Vec<&str> = t.iter().map(|d| d.name.as_str()).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(names.len(), before, "a device is listed twice");
        let b4 = by_name(&t, "Ascend910B4").unwrap();
        assert_eq!(b4.intra_link.as_deref(), Some("hccs"));
    }

    #[test]
    fn embedded_table_picks_devices_from_trace_names() {
        let t = parse(EMBEDDED).unwrap();
        let pick = |n: &str| by_trace_name(&t, n).map(|d| d.name.as_str());
        assert_eq!(pick("NVIDIA H100 80GB HBM3"), Some("H100-SXM"));
        // Ascend: the suffix decides; `Ascend910B` alone (NPU_INFO) is no particular part.
        assert_eq!(pick("Ascend910B3"), Some("Ascend910B3"));
        assert_eq!(pick("Ascend910B"), None);
        // A 910C die is its own device; only the part with a published peak matches.
        assert_eq!(pick("Ascend910_9392"), Some("Ascend910_9392"));
        assert_eq!(pick("Ascend910_9391"), None);
        assert_eq!(pick("NVIDIA H100 PCIe"), Some("H100-PCIe"));
        assert_eq!(pick("NVIDIA H100 NVL"), Some("H100-NVL"));
        assert_eq!(pick("NVIDIA A100-SXM4-80GB"), Some("A100-80GB"));
        assert_eq!(pick("NVIDIA A100-PG509-200"), Some("A100-40GB"));
        assert_eq!(pick("AMD Instinct MI300X"), Some("MI300X"));
        assert_eq!(pick("Ascend910B3"), Some("Ascend910B3"));
        assert_eq!(pick("Tesla T4"), None);
        let h100 = by_name(&t, "h100-sxm").unwrap();
        assert_eq!(h100.peak_tflops(Some("c10::BFloat16")), Some(989.4));
        assert_eq!(h100.peak_tflops(Some("float")), Some(66.9));
        assert!((h100.ridge(None).unwrap() - 295.343).abs() < 0.01);
    }

    #[test]
    fn bad_tables_are_errors() {
        assert!(parse("[[device]]\nname = 'x'\nbf16_tflops = 0\nhbm_gbps = 1").is_err());
        assert!(parse("[[device]]\nname = 'x'").is_err());
        assert!(parse("not toml [").is_err());
    }
}
