//! Affinity APIs (docs/metrics.md "Affinity APIs"): msprof-analyze's `timeline_fusion_ops`
//! rule. On Ascend, runs of framework operators that torch_npu offers as one fused API (a
//! permute–reshape as `npu_confusion_transpose`, an RMSNorm as `npu_rms_norm`, an optimizer as
//! `NpuFusedSGD`) each cost host dispatch and separate kernels. Matched on the stepping
//! thread (where the model's code calls them; backward runs elsewhere), over its first-level
//! `aten::` operators in time order — an operator inside another is that one's business —
//! and on the optimizer's step annotations. Only for Ascend ranks: the suggested APIs are
//! torch_npu's.

use crate::model::{Job, Kind, RankId, StepNo};
use crate::time::Ns;
use serde::Serialize;

/// One element of a pattern: one of `ops`, between `min` and `max` times in a row.
struct Part {
    ops: &'static [&'static str],
    min: u8,
    max: u8,
}

const fn one(ops: &'static [&'static str]) -> Part {
    Part {
        ops,
        min: 1,
        max: 1,
    }
}

const fn opt(ops: &'static [&'static str]) -> Part {
    Part {
        ops,
        min: 0,
        max: 1,
    }
}

/// torch_npu's fused APIs and the `aten::` runs they replace (msprof-analyze 26.2.0,
/// `rules/timeline_fusion_ops.yaml`, every CANN ≥ 8.0 entry).
const ATEN: &[(&str, &[Part])] = &[
    (
        "torch_npu.npu_confusion_transpose",
        &[
            one(&["permute", "transpose"]),
            opt(&["contiguous"]),
            one(&["reshape", "view"]),
        ],
    ),
    (
        "torch_npu.npu_confusion_transpose",
        &[
            one(&["reshape", "view"]),
            opt(&["contiguous"]),
            one(&["permute", "transpose"]),
        ],
    ),
    ("torch_npu.fast_gelu", &[one(&["gelu"])]),
    (
        "torch_npu.npu_scaled_masked_softmax",
        &[
            one(&["softmax"]),
            opt(&["mul"]),
            one(&["masked_fill_", "add"]),
        ],
    ),
    (
        "optimizer.clip_grad_norm_fused_",
        &[one(&["add"]), one(&["reciprocal"]), one(&["mul"])],
    ),
    (
        "torch_npu.npu_fusion_attention",
        &[
            one(&["matmul"]),
            opt(&["add"]),
            opt(&["mul"]),
            opt(&["masked_fill_", "add"]),
            one(&["softmax"]),
            opt(&["dropout"]),
            one(&["matmul"]),
        ],
    ),
    (
        "torch_npu.npu_rotary_mul",
        &[
            opt(&["chunk", "slice"]),
            one(&["neg"]),
            one(&["cat"]),
            Part {
                ops: &["mul"],
                min: 0,
                max: 2,
            },
            one(&["add"]),
        ],
    ),
    (
        "torch_npu.npu_rms_norm",
        &[
            opt(&["pow"]),
            opt(&["mean"]),
            opt(&["add"]),
            one(&["rsqrt"]),
            one(&["mul"]),
            opt(&["type_as"]),
        ],
    ),
    (
        "torch_npu.npu_swiglu",
        &[opt(&["slice", "chunk"]), one(&["silu"]), one(&["mul"])],
    ),
    (
        "torch_npu.npu_swiglu",
        &[opt(&["slice", "chunk"]), one(&["mul"]), one(&["silu"])],
    ),
    (
        "torch_npu.npu_swiglu",
        &[
            opt(&["slice", "chunk"]),
            one(&["sigmoid"]),
            one(&["mul"]),
            one(&["mul"]),
        ],
    ),
    (
        "torch_npu.npu_swiglu",
        &[
            opt(&["slice", "chunk"]),
            one(&["mul"]),
            one(&["sigmoid"]),
            one(&["mul"]),
        ],
    ),
    (
        "torch_npu.npu_geglu",
        &[opt(&["slice", "chunk"]), one(&["gelu"]), one(&["mul"])],
    ),
    (
        "torch_npu.npu_geglu",
        &[opt(&["slice", "chunk"]), one(&["mul"]), one(&["gelu"])],
    ),
    (
        "torch_npu.npu_group_norm_silu",
        &[one(&["group_norm"]), one(&["silu"])],
    ),
    (
        "torch.addmm",
        &[one(&["mul"]), one(&["mul"]), one(&["add"])],
    ),
    (
        "torch_npu.npu_add_layer_norm",
        &[one(&["add"]), one(&["layer_norm"])],
    ),
    (
        "mindspeed.ops.npu_matmul_add",
        &[one(&["matmul"]), one(&["add"])],
    ),
    (
        "mindspeed.ops.npu_moe_token_permute",
        &[one(&["argsort"]), one(&["argsort"]), one(&["index_select"])],
    ),
];

/// Optimizers torch_npu fuses, by the class in `Optimizer.step#{class}.step`.
const OPTIMIZERS: &[&str] = &[
    "AdamW",
    "SGD",
    "Adadelta",
    "Lamb",
    "AdamP",
    "BertAdam",
    "RMSprop",
    "RMSpropTF",
    "Adam",
];

/// One fused API the job could use.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AffinityMatch {
    /// The API (`torch_npu.optim.NpuFusedSGD`).
    pub api: String,
    /// What it replaces (`Optimizer.step#SGD.step`, `permute-contiguous-view`: the first
    /// run matched).
    pub replaces: String,
    /// Runs matched.
    pub count: u64,
    /// Σ host time of the matched operators.
    pub host_ns: Ns,
    /// Ranks with a match.
    pub ranks: Vec<RankId>,
    /// Steps with a match.
    pub steps: Vec<StepNo>,
}

/// Every fused API with a match among the ranks and steps in scope, most host time first.
pub fn affinity(job: &Job, in_scope: impl Fn(RankId, StepNo) -> bool) -> Vec<AffinityMatch> {
    let mut out: Vec<AffinityMatch> = Vec::new();
    for rank in job.ranks.iter().filter(|r| r.source.platform.fused_apis) {
        let Some(lane) = rank.stepping_lane else {
            continue;
        };
        let ev = &rank.events;
        let mut atens: Vec<(usize, &str)> = Vec::new();
        let mut reach = Ns::MIN;
        for i in rank.lane_events(lane) {
            let k = ev.kind[i];
            if !matches!(k, Kind::HostOp | Kind::Annotation)
                || !rank.step_of(i).is_some_and(|s| in_scope(rank.id, s))
            {
                continue;
            }
            let name = job.strings.resolve(ev.name[i]);
            // torch_npu records the optimizer's step as an operator, Kineto as an annotation.
            if let Some(class) = optimizer(name) {
                let api = format!("torch_npu.optim.NpuFused{class}");
                add(&mut out, &api, name, (rank.id, rank.step_of(i)), ev.dur[i]);
            } else if let Some(op) = name
                .strip_prefix("aten::")
                .filter(|_| k == Kind::HostOp && ev.start[i] >= reach)
            {
                atens.push((i, op));
                reach = ev.end(i);
            }
        }
        let names: Vec<&str> = atens.iter().map(|a| a.1).collect();
        for (api, pattern) in ATEN {
            let mut at = 0;
            while at < names.len() {
                let Some(n) = matches(pattern, &names[at..]) else {
                    at += 1;
                    continue;
                };
                let run = &atens[at..at + n];
                let host: Ns = run.iter().map(|&(i, _)| ev.dur[i]).sum();
                add(
                    &mut out,
                    api,
                    &names[at..at + n].join("-"),
                    (rank.id, rank.step_of(run[0].0)),
                    host,
                );
                at += n;
            }
        }
    }
    out.sort_by(|a, b| b.host_ns.cmp(&a.host_ns).then_with(|| a.api.cmp(&b.api)));
    out
}

/// The optimizer class of an `Optimizer.step#SGD.step` annotation torch_npu fuses.
fn optimizer(name: &str) -> Option<&str> {
    let class = name
        .strip_prefix("Optimizer.step#")?
        .strip_suffix(".step")?;
    OPTIMIZERS.contains(&class).then_some(class)
}

/// Counts one matched run under its API.
fn add(
    out: &mut Vec<AffinityMatch>,
    api: &str,
    run: &str,
    (rank, step): (RankId, Option<StepNo>),
    host: Ns,
) {
    let m = match out.iter_mut().position(|m| m.api == api) {
        Some(k) => &mut out[k],
        None => {
            out.push(AffinityMatch {
                api: api.to_string(),
                replaces: run.to_string(),
                count: 0,
                host_ns: 0,
                ranks: Vec::new(),
                steps: Vec::new(),
            });
            out.last_mut().expect("just pushed")
        }
    };
    m.count += 1;
    m.host_ns += host;
    if !m.ranks.contains(&rank) {
        m.ranks.push(rank);
        m.ranks.sort_unstable();
    }
    if let Some(s) = step.filter(|s| !m.steps.contains(s)) {
        m.steps.push(s);
        m.steps.sort_unstable();
    }
}

/// The length of the longest run at the start of `names` that `pattern` matches (at least
/// one operator), trying the longer choice of each optional part first.
fn matches(pattern: &[Part], names: &[&str]) -> Option<usize> {
    prefix(pattern, names).filter(|&n| n > 0)
}

/// The length of the longest prefix of `names` that `pattern` matches, possibly empty.
fn prefix(pattern: &[Part], names: &[&str]) -> Option<usize> {
    let Some((part, rest)) = pattern.split_first() else {
        return Some(0);
    };
    let run = names
        .iter()
        .take(part.max as usize)
        .take_while(|n| part.ops.contains(n))
        .count();
    (part.min as usize..=run)
        .rev()
        .find_map(|k| prefix(rest, &names[k..]).map(|n| n + k))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(api: &str, names: &[&str]) -> Vec<usize> {
        ATEN.iter()
            .filter(|(a, _)| *a == api)
            .filter_map(|(_, p)| matches(p, names))
            .collect()
    }

    #[test]
    fn optional_parts_are_taken_when_present() {
        let t = "torch_npu.npu_confusion_transpose";
        assert_eq!(find(t, &["permute", "contiguous", "view", "add"]), [3]);
        assert_eq!(find(t, &["transpose", "reshape"]), [2]);
        assert!(find(t, &["permute", "add", "view"]).is_empty());
        let rope = "torch_npu.npu_rotary_mul";
        assert_eq!(
            find(rope, &["chunk", "neg", "cat", "mul", "mul", "add"]),
            [6]
        );
        assert_eq!(find(rope, &["neg", "cat", "add"]), [3]);
        assert!(find(rope, &["neg", "cat", "mul", "mul", "mul", "add"]).is_empty());
        let rms = "torch_npu.npu_rms_norm";
        assert_eq!(
            find(rms, &["pow", "mean", "add", "rsqrt", "mul", "mul"]),
            [5]
        );
        assert_eq!(find(rms, &["rsqrt", "mul", "type_as"]), [3]);
        assert_eq!(find(rms, &["rsqrt", "mul"]), [2]);
    }

    #[test]
    fn optimizers_by_their_step_annotation() {
        assert_eq!(optimizer("Optimizer.step#SGD.step"), Some("SGD"));
        assert_eq!(optimizer("Optimizer.step#AdamW.step"), Some("AdamW"));
        assert_eq!(optimizer("Optimizer.step#MyOpt.step"), None);
        assert_eq!(optimizer("Optimizer.zero_grad#SGD.zero_grad"), None);
    }
}
