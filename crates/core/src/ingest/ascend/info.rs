//! `profiler_info_{rank}.json` (the rank, the profiler level) and `profiler_metadata.json`
//! (distributed args, parallel groups, environment), both small: read as JSON values, every
//! field optional because versions differ (`rank_id` an int or a string, `_export_type` a
//! string or a list).

use crate::error::{Error, Position};
use crate::model::{ParallelSizes, ProcessGroup, RankId};
use serde_json::Value;
use std::path::Path;

/// What `profiler_info` and `profiler_metadata` say about a rank.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Info {
    /// The rank (`rank_id`, else the file name's, else `distributed_args.rank`).
    pub rank: Option<RankId>,
    /// `_profiler_level` (`Level0`, `Level1`, `Level2`): which files to expect.
    pub level: Option<String>,
    /// `distributed_args.world_size`.
    pub world_size: Option<u32>,
    /// `parallel_group_info`: HCCL group id, framework name (`tp`, `dp`, ...), global ranks.
    pub groups: Vec<ProcessGroup>,
    /// `distributed_args`' parallel sizes, when it states any.
    pub parallel: Option<ParallelSizes>,
    /// `ENV_VARIABLES` that were set (an empty string means not set), sorted by name;
    /// `None` when the metadata records no environment.
    pub env: Option<Vec<(String, String)>>,
}

/// Reads whichever of the two files exist.
pub(crate) fn read(profiler_info: Option<&Path>, metadata: Option<&Path>) -> Result<Info, Error> {
    let small = |p: Option<&Path>| p.map(crate::ingest::source::read_small).transpose();
    let (info, meta) = (small(profiler_info)?, small(metadata)?);
    parse_files(
        info.as_ref().map(|(l, b)| (l.as_str(), b.as_slice())),
        meta.as_ref().map(|(l, b)| (l.as_str(), b.as_slice())),
    )
}

/// [`read`] over the files' labels (paths, whose names can hold the rank) and texts.
pub fn parse_files(
    profiler_info: Option<(&str, &[u8])>,
    metadata: Option<(&str, &[u8])>,
) -> Result<Info, Error> {
    let mut info = Info::default();
    if let Some((label, text)) = profiler_info {
        let v = json(label, text)?;
        info.rank = rank_id(&v["rank_id"]).or_else(|| rank_in_name(Path::new(label)));
        info.level = v["config"]["experimental_config"]["_profiler_level"]
            .as_str()
            .map(str::to_string);
    }
    if let Some((label, text)) = metadata {
        let v = json(label, text)?;
        let dist = &v["distributed_args"];
        info.rank = info.rank.or_else(|| rank_id(&dist["rank"]));
        info.world_size = dist["world_size"]
            .as_u64()
            .and_then(|n| u32::try_from(n).ok());
        info.groups = parallel_groups(&v["parallel_group_info"]);
        info.parallel = parallel_sizes(dist);
        info.env = env(&v["ENV_VARIABLES"]);
    }
    Ok(info)
}

/// Megatron's `distributed_args` sizes (`tensor_model_parallel_size`, ...), 1 where unstated;
/// `None` when it states none of them.
pub(crate) fn parallel_sizes(dist: &Value) -> Option<ParallelSizes> {
    let size = |k: &str| dist[k].as_u64().and_then(|n| u32::try_from(n).ok());
    let keys = [
        "tensor_model_parallel_size",
        "pipeline_model_parallel_size",
        "data_parallel_size",
        "context_parallel_size",
        "expert_model_parallel_size",
    ];
    let [tp, pp, dp, cp, ep] = keys.map(size);
    [tp, pp, dp, cp, ep]
        .iter()
        .any(Option::is_some)
        .then(|| ParallelSizes {
            tp: tp.unwrap_or(1).max(1),
            pp: pp.unwrap_or(1).max(1),
            dp: dp.unwrap_or(1).max(1),
            cp: cp.unwrap_or(1).max(1),
            ep: ep.unwrap_or(1).max(1),
        })
}

/// The variables of an `ENV_VARIABLES` object that were set, by name; `None` for no object.
pub(crate) fn env(v: &Value) -> Option<Vec<(String, String)>> {
    let mut set: Vec<(String, String)> = v
        .as_object()?
        .iter()
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
        .filter(|(_, v)| !v.is_empty())
        .collect();
    set.sort();
    Some(set)
}

/// A JSON file's value, or a one-line error at the line serde stopped on.
fn json(label: &str, bytes: &[u8]) -> Result<Value, Error> {
    serde_json::from_slice(bytes).map_err(|e| {
        Error::input_pos(
            label,
            Position::Line(e.line() as u32),
            format!("not valid JSON: {e}"),
        )
    })
}

/// `rank_id` as an int or a decimal string; negative (`-1`: not distributed) is none.
fn rank_id(v: &Value) -> Option<RankId> {
    let n = match v {
        Value::String(s) => s.trim().parse::<u64>().ok()?,
        v => v.as_u64()?,
    };
    u32::try_from(n).ok().map(RankId)
}

/// The `{rank}` of `profiler_info_{rank}.json`.
fn rank_in_name(path: &Path) -> Option<RankId> {
    let name = path.file_name()?.to_str()?;
    let digits = name.strip_prefix("profiler_info_")?.strip_suffix(".json")?;
    digits.parse().ok().map(RankId)
}

/// HCCL's short name of a group id (`10.174.216.241%enp189s0f1_55000_0_1738895486152654`):
/// msprof-analyze's `double_hash`, two 32-bit polynomial hashes of the id's characters side by
/// side, in decimal. `communication.json` and `communication_matrix.json` name groups by it
/// (`hcom_allReduce__586_0_1@17522688603477080586`), so every Ascend group is keyed by it.
pub(crate) fn double_hash(id: &str) -> String {
    let (mut a, mut b) = (0u32, 0u32);
    for c in id.chars() {
        a = a.wrapping_mul(29).wrapping_add(c as u32);
        b = b.wrapping_mul(131).wrapping_add(c as u32);
    }
    ((u64::from(a) << 32) | u64::from(b)).to_string()
}

/// `parallel_group_info`: `{group id: {group_name, group_rank, global_ranks}}`, each group
/// named by its [`double_hash`].
pub(crate) fn parallel_groups(v: &Value) -> Vec<ProcessGroup> {
    let Some(map) = v.as_object() else {
        return Vec::new();
    };
    let mut out: Vec<ProcessGroup> = map
        .iter()
        .map(|(id, g)| ProcessGroup {
            name: double_hash(id),
            description: g["group_name"].as_str().unwrap_or("").to_string(),
            ranks: g["global_ranks"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|r| r.as_u64().and_then(|n| u32::try_from(n).ok()))
                        .map(RankId)
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_ids_hash_as_msprof_analyze_does() {
        // msprof-analyze's double_hash (cluster_analyse/recipes/hccl_sum) of these ids.
        assert_eq!(
            double_hash("10.174.216.241%enp189s0f1_55000_0_1738895486152654"),
            "212011646445595226"
        );
        assert_eq!(
            double_hash("90.91.105.46%enp189s0f0_60000_0_1736410538306028"),
            "17148521525495523210"
        );
        assert_eq!(double_hash(""), "0");
    }

    #[test]
    fn rank_forms() {
        assert_eq!(rank_id(&serde_json::json!(3)), Some(RankId(3)));
        assert_eq!(rank_id(&serde_json::json!("12")), Some(RankId(12)));
        assert_eq!(rank_id(&serde_json::json!(-1)), None);
        assert_eq!(
            rank_in_name(Path::new("d/profiler_info_7.json")),
            Some(RankId(7))
        );
        assert_eq!(rank_in_name(Path::new("profiler_info.json")), None);
    }

    #[test]
    fn metadata_groups_and_env() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("profiler_metadata.json");
        std::fs::write(
            &p,
            r#"{"distributed_args": {"rank": 2, "world_size": 8},
                "ENV_VARIABLES": {"HCCL_ALGO": "", "ASCEND_LAUNCH_BLOCKING": "1"},
                "parallel_group_info": {"g1": {"group_name": "tp", "group_rank": 0, "global_ranks": [2, 3]}}}"#,
        )
        .unwrap();
        let i = read(None, Some(&p)).unwrap();
        assert_eq!((i.rank, i.world_size), (Some(RankId(2)), Some(8)));
        assert_eq!(
            i.env,
            Some(vec![("ASCEND_LAUNCH_BLOCKING".into(), "1".into())])
        );
        assert_eq!(i.groups[0].name, double_hash("g1"));
        assert_eq!(i.groups[0].description, "tp");
        assert_eq!(i.groups[0].ranks, vec![RankId(2), RankId(3)]);
        std::fs::write(&p, "{\n\"a\": }").unwrap();
        let e = read(None, Some(&p)).unwrap_err().to_string();
        assert!(e.contains("line 2"), "{e}");
    }

    /// msinsight's TP2×PP2×DP2 metadata (rank 0's `distributed_args` and groups), read in
    /// place: the layout every rank sits in, from one rank's file. Under CI its absence
    /// fails.
    #[test]
    fn msinsight_metadata_declares_tp2_pp2_dp2() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/traces/ascend/msinsight/server/src/test/test_data/metadata/profiler_metadata.json"
        );
        let Ok(text) = std::fs::read(path) else {
            assert!(std::env::var("CI").is_err(), "{path} missing under CI");
            return;
        };
        let i = parse_files(None, Some(("profiler_metadata.json", &text))).unwrap();
        let s = i.parallel.expect("distributed_args sizes");
        assert_eq!((s.tp, s.pp, s.dp, s.cp, s.ep), (2, 2, 2, 1, 1));
        let job = crate::model::Job {
            world_size: i.world_size,
            groups: i.groups,
            parallel: i.parallel,
            ..Default::default()
        };
        let l = crate::analysis::layout::layout(&job, None, None).expect("a layout");
        assert_eq!(l.shape(), "TP 2 × DP 2 × PP 2");
        assert!(l.tiles);
        let labels: Vec<String> = (0..8).map(|r| l.label(RankId(r))).collect();
        assert_eq!(labels[1], "pp0·dp0·tp1");
        assert_eq!(labels[2], "pp0·dp1·tp0");
        assert_eq!(labels[6], "pp1·dp1·tp0");
    }
}
