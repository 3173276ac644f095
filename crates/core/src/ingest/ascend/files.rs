//! Where one Ascend rank's files are. The profilers write `{worker}_{ts}_ascend_pt/` (or
//! `_ascend_ms`) holding `profiler_info_{rank}.json`, `profiler_metadata.json` and
//! `ASCEND_PROFILER_OUTPUT/` with the exports; copies are often renamed or flattened, so a
//! rank is recognised by the files themselves, never by the directory's name.

use std::path::{Path, PathBuf};

/// The folder the profilers put their exports in.
pub(crate) const OUTPUT_DIR: &str = "ASCEND_PROFILER_OUTPUT";

/// One rank's profiler output.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RankDir {
    /// The rank's root (`*_ascend_pt/`, or the folder holding its files): where
    /// `profiler_info_{rank}.json` and `profiler_metadata.json` are.
    pub root: PathBuf,
    /// Where the exports are: `root/ASCEND_PROFILER_OUTPUT`, or `root` itself when flattened.
    pub output: PathBuf,
}

/// True for the names of files the Ascend profilers write into `ASCEND_PROFILER_OUTPUT/`.
pub(crate) fn is_output_name(name: &str) -> bool {
    matches!(
        name,
        "trace_view.json"
            | "kernel_details.csv"
            | "step_trace_time.csv"
            | "op_statistic.csv"
            | "operator_details.csv"
            | "api_statistic.csv"
            | "communication.json"
            | "communication_matrix.json"
            | "analysis.db"
            | "communication_analyzer.db"
    ) || is_profiler_db(name)
}

/// True for the per-rank SQLite exports (`ascend_pytorch_profiler_{rank}.db`, MindSpore's
/// `ascend_mindspore_profiler_{rank}.db`, CANN's own `msprof_*.db`).
pub(crate) fn is_profiler_db(name: &str) -> bool {
    (name.starts_with("ascend_pytorch_profiler")
        || name.starts_with("ascend_mindspore_profiler")
        || name.starts_with("msprof_"))
        && name.ends_with(".db")
}

/// True for the files the profilers write beside `ASCEND_PROFILER_OUTPUT/`.
pub(crate) fn is_root_name(name: &str) -> bool {
    is_profiler_info(name) || name == "profiler_metadata.json"
}

/// `profiler_info_{rank}.json`, or `profiler_info.json` on a single card.
fn is_profiler_info(name: &str) -> bool {
    name.starts_with("profiler_info") && name.ends_with(".json")
}

/// True for any file name an Ascend rank directory holds.
pub(crate) fn is_ascend_name(name: &str) -> bool {
    is_output_name(name) || is_root_name(name)
}

/// The rank whose output `path` is (a directory) or belongs to (a file), if it is one.
pub(crate) fn rank_dir_of(path: &Path) -> Option<RankDir> {
    if path.is_dir() {
        return rank_dir_at(path);
    }
    let name = path.file_name()?.to_str()?;
    if !is_ascend_name(name) {
        return None;
    }
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
    rank_dir_at(dir.unwrap_or(Path::new(".")))
}

/// The rank at directory `dir`: one that holds `ASCEND_PROFILER_OUTPUT/`, is that folder, or
/// holds the exports or `profiler_info` directly.
fn rank_dir_at(dir: &Path) -> Option<RankDir> {
    let out = dir.join(OUTPUT_DIR);
    if out.is_dir() {
        return Some(RankDir {
            root: dir.to_path_buf(),
            output: out,
        });
    }
    if dir.file_name().is_some_and(|n| n == OUTPUT_DIR) {
        let named = |p: &Path| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with("_ascend_pt") || n.ends_with("_ascend_ms"))
        };
        let parent = dir.parent().filter(|p| named(p) || holds(p, is_root_name));
        return Some(RankDir {
            root: parent.unwrap_or(dir).to_path_buf(),
            output: dir.to_path_buf(),
        });
    }
    holds(dir, is_ascend_name).then(|| RankDir {
        root: dir.to_path_buf(),
        output: dir.to_path_buf(),
    })
}

/// True when `dir` holds a file whose name satisfies `f`.
fn holds(dir: &Path, f: fn(&str) -> bool) -> bool {
    std::fs::read_dir(dir).is_ok_and(|rd| {
        rd.flatten()
            .any(|e| e.file_name().to_str().is_some_and(f) && e.path().is_file())
    })
}

impl RankDir {
    /// The export `name` of this rank, when it exists.
    pub fn output_file(&self, name: &str) -> Option<PathBuf> {
        let p = self.output.join(name);
        p.is_file().then_some(p)
    }

    /// The first file of the root (then of the output folder) whose name satisfies `f`, in
    /// name order.
    fn find(&self, f: impl Fn(&str) -> bool) -> Option<PathBuf> {
        [&self.root, &self.output].into_iter().find_map(|d| {
            let mut names: Vec<PathBuf> = std::fs::read_dir(d)
                .ok()?
                .flatten()
                .filter(|e| e.file_name().to_str().is_some_and(&f))
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect();
            names.sort();
            names.into_iter().next()
        })
    }

    /// `profiler_info_{rank}.json`, when present.
    pub fn profiler_info(&self) -> Option<PathBuf> {
        self.find(is_profiler_info)
    }

    /// `profiler_metadata.json`, when present.
    pub fn metadata(&self) -> Option<PathBuf> {
        self.find(|n| n == "profiler_metadata.json")
    }

    /// The per-rank SQLite export, when present.
    pub fn profiler_db(&self) -> Option<PathBuf> {
        self.find(is_profiler_db)
    }

    /// How the rank is named in messages: its root as given.
    pub fn label(&self) -> String {
        self.root.display().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(is_output_name("trace_view.json"));
        assert!(is_output_name("ascend_pytorch_profiler_3.db"));
        assert!(is_output_name("ascend_mindspore_profiler.db"));
        assert!(is_root_name("profiler_info_12.json"));
        assert!(is_root_name("profiler_info.json"));
        assert!(!is_ascend_name("rank0.pt.trace.json"));
        assert!(is_ascend_name("msprof_0.db"));
        assert!(!is_ascend_name("msprof.log"));
    }

    #[test]
    fn layouts() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("host_1_20250101_ascend_pt");
        let out = root.join(OUTPUT_DIR);
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(root.join("profiler_info_3.json"), "{}").unwrap();
        std::fs::write(out.join("trace_view.json"), "[]").unwrap();
        let want = RankDir {
            root: root.clone(),
            output: out.clone(),
        };
        assert_eq!(rank_dir_of(&root), Some(want.clone()));
        assert_eq!(rank_dir_of(&out), Some(want.clone()));
        assert_eq!(
            rank_dir_of(&out.join("trace_view.json")),
            Some(want.clone())
        );
        assert_eq!(rank_dir_of(&root.join("profiler_info_3.json")), Some(want));
        assert_eq!(rank_dir_of(t.path()), None);
        let flat = t.path().join("copy");
        std::fs::create_dir_all(&flat).unwrap();
        std::fs::write(flat.join("step_trace_time.csv"), "Step\n").unwrap();
        assert_eq!(rank_dir_of(&flat).map(|d| d.output), Some(flat));
    }
}
