//! The advisor's named thresholds (docs/advisor.md), overridable in the `[advisor]` table of
//! `<config dir>/stepscope/config.toml`.

use crate::config;
use crate::error::Error;
use serde::{Deserialize, Serialize};

/// Every threshold a rule uses, by name.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Thresholds {
    /// Severity high at ≥ this share of step time.
    pub high_pct: f64,
    /// Severity medium at ≥ this share of step time.
    pub medium_pct: f64,
    /// A finding worth less than this share of the step time never leads.
    pub lead_min_pct: f64,
    /// A rule's estimate (not replayed) ranks as this share of its size against replayed
    /// savings of the same severity: an estimate bounds the time at stake, a saving is
    /// what the fix gives back.
    pub estimate_weight: f64,
    /// A finding is explained by another when the other's fix takes at least this share of
    /// its saving away in the replay (docs/advisor.md, "Explained by").
    pub explained_share: f64,
    /// poor_overlap: overlap ratio (hidden / all communication) below this …
    pub overlap_ratio: f64,
    /// … with exposed communication at least this share of the step.
    pub exposed_comm_share: f64,
    /// low_bandwidth: median busbw below this share of the link peak.
    pub busbw_of_peak: f64,
    /// dataloader: device idle while loading data, share of the step.
    pub dataloader_share: f64,
    /// launch_bound: host-bound time, share of the step.
    pub host_bound_share: f64,
    /// tiny_kernels: share of kernels shorter than their launch call …
    pub tiny_kernel_share: f64,
    /// … among at least this many launches.
    pub tiny_kernel_min_launches: u64,
    /// free_time: free time, share of the step (msprof-analyze: 10%).
    pub free_share: f64,
    /// memory_bound_elementwise: memory-bound norm/elementwise time, share of kernel time.
    pub elementwise_share: f64,
    /// under_utilized_gemms: GEMMs below this share of the FLOP/s peak.
    pub gemm_of_peak: f64,
    /// critical_path_host: host ops' share of the critical path.
    pub critical_cpu_share: f64,
    /// roofline_unknown: unknown share of kernel time that asks for shapes.
    pub unknown_share: f64,
    /// unbound_operators: share of kernel time in operators no pipe bounds (PMU counters).
    pub unbound_share: f64,
    /// op_dispatch: operators compiled at run time per rank (msprof-analyze: 20) …
    pub op_dispatch_calls: u64,
    /// … or the device idle inside them, share of the step.
    pub op_dispatch_share: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            high_pct: 0.10,
            medium_pct: 0.03,
            lead_min_pct: 0.005,
            estimate_weight: 0.5,
            explained_share: 0.7,
            overlap_ratio: 0.5,
            exposed_comm_share: 0.05,
            busbw_of_peak: 0.5,
            dataloader_share: 0.02,
            host_bound_share: 0.05,
            tiny_kernel_share: 0.3,
            tiny_kernel_min_launches: 100,
            free_share: 0.10,
            elementwise_share: 0.05,
            gemm_of_peak: 0.5,
            critical_cpu_share: 0.5,
            unknown_share: 0.5,
            unbound_share: 0.05,
            op_dispatch_calls: 20,
            op_dispatch_share: 0.02,
        }
    }
}

#[derive(Deserialize, Default)]
struct Config {
    #[serde(default)]
    advisor: Thresholds,
}

impl Thresholds {
    /// Parses the `[advisor]` table of a config file (other tables are ignored).
    pub fn parse(text: &str) -> Result<Thresholds, String> {
        #[derive(Deserialize)]
        struct Loose {
            #[serde(default)]
            advisor: Option<toml::Value>,
        }
        let loose: Loose = toml::from_str(text).map_err(|e| e.to_string().replace('\n', " "))?;
        let Some(a) = loose.advisor else {
            return Ok(Thresholds::default());
        };
        let c: Config = toml::from_str(&format!(
            "[advisor]\n{}",
            toml::to_string(&a).map_err(|e| e.to_string())?
        ))
        .map_err(|e| e.to_string().replace('\n', " "))?;
        Ok(c.advisor)
    }

    /// The user's thresholds (`<config dir>/stepscope/config.toml`), else the defaults. A
    /// broken file is a configuration error (`config.toml: PATH: message`).
    pub fn load() -> Result<Thresholds, Error> {
        let Some(layer) = config::user_layer("config.toml")? else {
            return Ok(Thresholds::default());
        };
        Thresholds::parse(&layer.text)
            .map_err(|e| Error::config("config.toml", None, format!("{}: {e}", layer.label)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_overrides_named_thresholds() {
        let t = Thresholds::parse("[advisor]\nfree_share = 0.2\n[keys]\nquit = 'q'\n").unwrap();
        assert_eq!(t.free_share, 0.2);
        assert_eq!(t.high_pct, 0.10);
        assert_eq!(Thresholds::parse("").unwrap(), Thresholds::default());
        assert!(
            Thresholds::parse("[advisor]\nno_such = 1\n")
                .unwrap_err()
                .contains("no_such")
        );
        assert!(Thresholds::parse("[advisor]\nfree_share = 'x'\n").is_err());
    }
}
