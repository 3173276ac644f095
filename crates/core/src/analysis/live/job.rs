//! What the logs do not print but the user knows, given by flags (docs/metrics.md "Live"):
//! model size, tokens per step, devices and their peak for MFU; ranks per node to group
//! slow ranks by node.

use crate::time::Ns;

/// The job's facts from `stepscope watch` flags (all optional).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Job {
    /// Model parameters (`--model-params 7e9`).
    pub params: Option<f64>,
    /// Tokens per optimizer step, all devices (`--tokens-per-step`).
    pub tokens_per_step: Option<f64>,
    /// Devices the job runs on (`--devices`).
    pub devices: Option<u32>,
    /// Peak dense TFLOP/s of one device at the training precision (`--peak-tflops`).
    pub peak_tflops: Option<f64>,
    /// Ranks per node, ranks numbered node by node (`--ranks-per-node`).
    pub ranks_per_node: Option<u32>,
}

/// Model FLOPs utilisation derived by stepscope.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mfu {
    /// Achieved model TFLOP/s per device.
    pub tflops_per_device: f64,
    /// Its share of the peak, in %.
    pub pct: f64,
    /// What it came from.
    pub from: MfuFrom,
}

/// The evidence an MFU figure rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MfuFrom {
    /// The TFLOP/s the framework printed.
    PrintedTflops,
    /// 6 × params × the tokens/s per device the framework printed.
    PrintedTokens,
    /// 6 × params × tokens per step ÷ (median step time × devices).
    StepTime,
}

impl Job {
    /// MFU from the last printed metrics of a series and its median step, when the flags
    /// and the log give enough (never when the framework printed its own MFU).
    pub fn mfu(&self, metrics: &[(&'static str, f64)], median_step_ns: Option<Ns>) -> Option<Mfu> {
        let peak = self.peak_tflops.filter(|p| *p > 0.0)?;
        let printed = |k: &str| metrics.iter().find(|m| m.0 == k).map(|m| m.1);
        if printed("mfu_pct").is_some() {
            return None;
        }
        let (tflops, from) = if let Some(t) = printed("tflops") {
            (t, MfuFrom::PrintedTflops)
        } else if let (Some(p), Some(tps)) = (self.params, printed("tokens_per_s_per_device")) {
            (6.0 * p * tps / 1e12, MfuFrom::PrintedTokens)
        } else {
            let (p, tokens, devices) = (self.params?, self.tokens_per_step?, self.devices?);
            let step_s = median_step_ns.filter(|&n| n > 0)? as f64 / 1e9;
            (
                6.0 * p * tokens / (step_s * f64::from(devices.max(1))) / 1e12,
                MfuFrom::StepTime,
            )
        };
        (tflops.is_finite() && tflops >= 0.0).then(|| Mfu {
            tflops_per_device: tflops,
            pct: 100.0 * tflops / peak,
            from,
        })
    }

    /// `ranks` by node (node = rank ÷ ranks per node), in order; `None` without the flag.
    pub fn nodes(&self, ranks: &[u32]) -> Option<Vec<(u32, Vec<u32>)>> {
        let per = self.ranks_per_node.filter(|&n| n > 0)?;
        let mut out: Vec<(u32, Vec<u32>)> = Vec::new();
        for &r in ranks {
            match out.iter_mut().find(|x| x.0 == r / per) {
                Some(x) => x.1.push(r),
                None => out.push((r / per, vec![r])),
            }
        }
        out.sort_by_key(|x| x.0);
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mfu_from_each_kind_of_evidence() {
        let job = Job {
            params: Some(7e9),
            tokens_per_step: Some(4_194_304.0),
            devices: Some(64),
            peak_tflops: Some(989.0),
            ranks_per_node: None,
        };
        // Printed 339.16 TFLOP/s: 339.16 / 989 = 34.29%.
        let m = job.mfu(&[("tflops", 339.16)], None).unwrap();
        assert_eq!(m.from, MfuFrom::PrintedTflops);
        assert!((m.pct - 34.293).abs() < 0.001, "{}", m.pct);
        // 6 × 7e9 × 4816.769 tokens/s = 202.30 TFLOP/s → 20.46%.
        let m = job
            .mfu(&[("tokens_per_s_per_device", 4816.769)], None)
            .unwrap();
        assert_eq!(m.from, MfuFrom::PrintedTokens);
        assert!((m.tflops_per_device - 202.304).abs() < 0.001);
        // 4 194 304 tokens in 3.42 s on 64 devices: 19 162.6 tokens/s/device × 6 × 7e9 =
        // 804.83 TFLOP/s → 81.38%.
        let m = job.mfu(&[], Some(3_420_000_000)).unwrap();
        assert_eq!(m.from, MfuFrom::StepTime);
        assert!(
            (m.tflops_per_device - 804.83).abs() < 0.01,
            "{}",
            m.tflops_per_device
        );
        // The framework's own MFU wins; no peak, nothing.
        assert!(
            job.mfu(&[("mfu_pct", 34.0), ("tflops", 1.0)], None)
                .is_none()
        );
        assert!(Job::default().mfu(&[("tflops", 339.16)], None).is_none());
    }

    #[test]
    fn ranks_by_node() {
        let job = Job {
            ranks_per_node: Some(8),
            ..Job::default()
        };
        assert_eq!(
            job.nodes(&[3, 9, 12, 30]),
            Some(vec![(0, vec![3]), (1, vec![9, 12]), (3, vec![30])])
        );
        assert_eq!(Job::default().nodes(&[3]), None);
    }
}
