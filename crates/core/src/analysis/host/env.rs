//! Environment settings (docs/advisor.md, `env_settings`): the variables the Ascend profiler
//! records (`ENV_VARIABLES`), checked against the settings Ascend's tuning guide advises —
//! msprof-analyze's environment rule, with the same thresholds. Only ranks whose profile
//! recorded its environment are judged: an unrecorded variable is unknown, not unset.

use crate::model::{Job, RankId};
use serde::Serialize;

/// What is wrong with a setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EnvIssue {
    /// `ACLNN_CACHE_LIMIT` unset or under 10 000: operator cache misses re-run host-side
    /// operator selection.
    OpCacheSmall,
    /// `HOST_CACHE_CAPACITY` unset or 0: no host-side cache of compiled operators.
    HostCacheOff,
    /// `PYTORCH_NPU_ALLOC_CONF` without `expandable_segments:True`: fragmentation.
    NoExpandableSegments,
    /// `ASCEND_LAUNCH_BLOCKING=1`: every launch waits for its kernel (a debugging switch).
    LaunchBlocking,
    /// `ASCEND_GLOBAL_LOG_LEVEL` set to other than 3 (error): logging on the hot path.
    VerboseLogs,
    /// `HCCL_ALGO` set: a fixed collective algorithm instead of HCCL's choice.
    FixedHcclAlgo,
    /// `HCCL_RDMA_TC` / `HCCL_RDMA_SL` set: RoCE traffic class / service level to check
    /// against the network's QoS.
    RdmaQos,
}

/// One setting advised against, with the ranks it was found on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvSetting {
    /// The variable.
    pub var: String,
    /// Its value (`None`: not set).
    pub value: Option<String>,
    /// What is wrong with it.
    pub issue: EnvIssue,
    /// Ranks whose profile recorded it so.
    pub ranks: Vec<RankId>,
}

/// The settings advised against over the ranks that recorded their environment, each
/// (variable, value, issue) once with its ranks, in issue then variable order.
pub fn settings(job: &Job) -> Vec<EnvSetting> {
    let mut out: Vec<EnvSetting> = Vec::new();
    for r in &job.ranks {
        let Some(env) = &r.env else { continue };
        for (var, value, issue) in check(env) {
            match out
                .iter_mut()
                .find(|s| s.var == var && s.value == value && s.issue == issue)
            {
                Some(s) => s.ranks.push(r.id),
                None => out.push(EnvSetting {
                    var: var.to_string(),
                    value,
                    issue,
                    ranks: vec![r.id],
                }),
            }
        }
    }
    out.sort_by(|a, b| (a.issue, &a.var).cmp(&(b.issue, &b.var)));
    out
}

/// The issues of one rank's set variables.
fn check(env: &[(String, String)]) -> Vec<(&'static str, Option<String>, EnvIssue)> {
    let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.trim());
    let mut out = Vec::new();
    let mut flag = |var: &'static str, bad: bool, issue: EnvIssue| {
        if bad {
            out.push((var, get(var).map(str::to_string), issue));
        }
    };
    let cache = get("ACLNN_CACHE_LIMIT").map(|v| v.parse::<u64>().unwrap_or(0));
    flag(
        "ACLNN_CACHE_LIMIT",
        cache.is_none_or(|n| n < 10_000),
        EnvIssue::OpCacheSmall,
    );
    let host = get("HOST_CACHE_CAPACITY");
    flag(
        "HOST_CACHE_CAPACITY",
        host.is_none_or(|v| v == "0"),
        EnvIssue::HostCacheOff,
    );
    let alloc = get("PYTORCH_NPU_ALLOC_CONF");
    flag(
        "PYTORCH_NPU_ALLOC_CONF",
        alloc.is_none_or(|v| !v.contains("expandable_segments:True")),
        EnvIssue::NoExpandableSegments,
    );
    flag(
        "ASCEND_LAUNCH_BLOCKING",
        get("ASCEND_LAUNCH_BLOCKING") == Some("1"),
        EnvIssue::LaunchBlocking,
    );
    let log = get("ASCEND_GLOBAL_LOG_LEVEL");
    flag(
        "ASCEND_GLOBAL_LOG_LEVEL",
        log.is_some_and(|v| v != "3"),
        EnvIssue::VerboseLogs,
    );
    flag(
        "HCCL_ALGO",
        get("HCCL_ALGO").is_some(),
        EnvIssue::FixedHcclAlgo,
    );
    flag(
        "HCCL_RDMA_TC",
        get("HCCL_RDMA_TC").is_some(),
        EnvIssue::RdmaQos,
    );
    flag(
        "HCCL_RDMA_SL",
        get("HCCL_RDMA_SL").is_some(),
        EnvIssue::RdmaQos,
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Rank;

    fn rank(id: u32, env: Option<&[(&str, &str)]>) -> Rank {
        Rank {
            id: RankId(id),
            env: env.map(|e| {
                e.iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect()
            }),
            ..Rank::default()
        }
    }

    #[test]
    fn thresholds_and_ranks() {
        let good: &[(&str, &str)] = &[
            ("ACLNN_CACHE_LIMIT", "100000"),
            ("HOST_CACHE_CAPACITY", "20"),
            ("PYTORCH_NPU_ALLOC_CONF", "expandable_segments:True"),
            ("ASCEND_GLOBAL_LOG_LEVEL", "3"),
        ];
        let bad: &[(&str, &str)] = &[
            ("ACLNN_CACHE_LIMIT", "9999"),
            ("ASCEND_LAUNCH_BLOCKING", "1"),
            ("HCCL_ALGO", "level0:NA;level1:ring"),
        ];
        let job = Job {
            ranks: vec![
                rank(0, Some(good)),
                rank(1, Some(bad)),
                rank(2, Some(&[])),
                rank(3, None),
            ],
            ..Job::default()
        };
        let s = settings(&job);
        let find = |var: &str| s.iter().filter(|x| x.var == var).collect::<Vec<_>>();
        // Rank 0 is clean; rank 3 recorded nothing and is not judged.
        assert!(
            s.iter()
                .all(|x| !x.ranks.contains(&RankId(0)) && !x.ranks.contains(&RankId(3)))
        );
        // 9999 (rank 1) and unset (rank 2) are two findings of one variable.
        let cache = find("ACLNN_CACHE_LIMIT");
        assert_eq!(cache.len(), 2);
        assert_eq!(
            (cache[0].value.as_deref(), &cache[0].ranks),
            (Some("9999"), &vec![RankId(1)])
        );
        assert_eq!(
            (cache[1].value.as_deref(), &cache[1].ranks),
            (None, &vec![RankId(2)])
        );
        assert_eq!(
            find("HOST_CACHE_CAPACITY")[0].ranks,
            vec![RankId(1), RankId(2)]
        );
        assert_eq!(
            find("ASCEND_LAUNCH_BLOCKING")[0].issue,
            EnvIssue::LaunchBlocking
        );
        assert_eq!(find("HCCL_ALGO")[0].issue, EnvIssue::FixedHcclAlgo);
        assert!(find("ASCEND_GLOBAL_LOG_LEVEL").is_empty());
    }
}
