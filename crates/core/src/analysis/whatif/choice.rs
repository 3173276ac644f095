//! What `stepscope whatif --fix` names: a finding's rule, the ideal step, or every finding's
//! fix at once; resolved against the job's findings into the fixes to replay.

use super::cover::Stall;
use super::fix::{DEFAULT_BUCKET_BYTES, Fix};
use super::savings::fix_for;
use crate::analysis::advisor::Finding;
use crate::model::RankId;

/// The fix asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// The fix of the finding of this rule (or the rule's own fix when it found nothing and
    /// its fix needs no evidence).
    Rule(String),
    /// Every fix at once (OSDI'25's ideal step).
    Ideal,
    /// Every finding's fix together.
    All,
    /// One rank's own work and links at its peers' (`--rank` without `--fix`).
    Rank(RankId),
}

impl Choice {
    /// From `--fix` (`None`: every finding's fix) and `--rank`.
    pub fn parse(fix: Option<&str>, rank: Option<RankId>) -> Choice {
        match (fix, rank) {
            (None | Some("straggler"), Some(r)) => Choice::Rank(r),
            (None | Some("all"), None) => Choice::All,
            (Some("ideal"), _) => Choice::Ideal,
            (Some("all"), Some(r)) => Choice::Rank(r),
            (Some(rule), _) => Choice::Rule(rule.to_string()),
        }
    }

    /// The name the output shows.
    pub fn name(&self) -> String {
        match self {
            Choice::Rule(r) => r.clone(),
            Choice::Ideal => "ideal".into(),
            Choice::All => "all".into(),
            Choice::Rank(r) => format!("rank {r}"),
        }
    }

    /// The fixes to apply together, or why there are none.
    pub fn fixes(&self, findings: &[Finding]) -> Result<Vec<Fix>, NoFix> {
        match self {
            Choice::Ideal => Ok(vec![Fix::Ideal]),
            Choice::Rank(r) => Ok(vec![Fix::Ranks(vec![*r]), Fix::Links(vec![*r])]),
            Choice::All => Ok(findings.iter().filter_map(fix_for).collect()),
            Choice::Rule(rule) => {
                if let Some(f) = findings.iter().find(|f| f.rule == rule.as_str()) {
                    return fix_for(f)
                        .map(|x| vec![x])
                        .ok_or_else(|| NoFix::NotReplayable(rule.clone()));
                }
                standalone(rule)
                    .map(|x| vec![x])
                    .ok_or_else(|| NoFix::NeedsFinding(rule.clone()))
            }
        }
    }
}

/// Why a `--fix` names nothing to replay: a usage error (the user picks another fix).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoFix {
    /// The rule's finding is on the job but its fix cannot be replayed.
    NotReplayable(String),
    /// No finding of the rule, and its fix needs one's evidence.
    NeedsFinding(String),
}

impl std::fmt::Display for NoFix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoFix::NotReplayable(rule) => write!(f, "the {rule} finding has no replayable fix"),
            NoFix::NeedsFinding(rule) => write!(
                f,
                "no {rule} finding on this job, and its fix needs one; fixes that need none: {}, ideal, all",
                STANDALONE
                    .iter()
                    .map(|x| x.0)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

/// Rules whose fix needs no finding's evidence (no ranks, steps or sizes).
const STANDALONE: &[(&str, Fix)] = &[
    ("dataloader", Fix::Stall(Stall::DataLoader)),
    ("gc", Fix::Stall(Stall::Gc)),
    ("allocator_churn", Fix::Stall(Stall::Allocator)),
    ("graph_capture", Fix::Stall(Stall::GraphCapture)),
    ("dynamic_shapes", Fix::Stall(Stall::OnlineCompile)),
    ("sync_points", Fix::Syncs),
    ("pageable_memcpy", Fix::Pinned),
    ("launch_bound", Fix::LaunchDelays),
    ("small_messages", Fix::Buckets(DEFAULT_BUCKET_BYTES)),
    ("poor_overlap", Fix::Overlap),
    ("free_time", Fix::HostGaps),
    ("rank_imbalance", Fix::Balance),
    ("stage_imbalance", Fix::Stages),
];

/// The fix of a rule that needs no evidence.
fn standalone(rule: &str) -> Option<Fix> {
    STANDALONE.iter().find(|x| x.0 == rule).map(|x| x.1.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_parse_from_fix_and_rank() {
        assert_eq!(Choice::parse(None, None), Choice::All);
        assert_eq!(Choice::parse(Some("ideal"), None), Choice::Ideal);
        assert_eq!(
            Choice::parse(None, Some(RankId(3))),
            Choice::Rank(RankId(3))
        );
        assert_eq!(
            Choice::parse(Some("dataloader"), None),
            Choice::Rule("dataloader".into())
        );
        let fixes = Choice::Rule("dataloader".into()).fixes(&[]).unwrap();
        assert_eq!(fixes, vec![Fix::Stall(Stall::DataLoader)]);
        let err = Choice::Rule("straggler".into()).fixes(&[]).unwrap_err();
        assert_eq!(err, NoFix::NeedsFinding("straggler".into()));
        assert!(err.to_string().contains("no straggler finding"), "{err}");
    }
}
