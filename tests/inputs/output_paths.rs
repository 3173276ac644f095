//! The one writer against any arrangement (issue 44, class 1, as a class): inputs given as
//! files or folders, links to files and folders (dangling too), hard links, and any output
//! path among them. Whatever the writer does, no input changes, nothing else appears, and a
//! written output is a plain file outside every input's folder; a fresh name in a folder of
//! no input is always written (a writer that refuses everything fails).

use proptest::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use stepscope::output;

/// Every entry under `root`: files by content, links by target, folders.
fn listing(root: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            let what = if m.file_type().is_symlink() {
                format!("link {}", std::fs::read_link(&p).unwrap().display())
            } else if m.is_dir() {
                stack.push(p.clone());
                "folder".to_string()
            } else {
                format!(
                    "file {}",
                    String::from_utf8_lossy(&std::fs::read(&p).unwrap())
                )
            };
            out.insert(p.strip_prefix(root).unwrap().to_path_buf(), what);
        }
    }
    out
}

/// The job: folders `a`, `a/b`, `c`, `d` (never an input), a trace in each of the first
/// three and one at the top; links to a trace, to `a`, to `d`, to nothing; a second name
/// of `c/r2.json`.
fn arrange(root: &Path) {
    for d in ["a/b", "c", "d"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    for f in ["a/r0.json", "a/b/r1.json", "c/r2.json", "r3.json"] {
        std::fs::write(root.join(f), format!("input {f}")).unwrap();
    }
    let link = |to: &str, at: &str| std::os::unix::fs::symlink(root.join(to), root.join(at));
    link("a/r0.json", "ln_file").unwrap();
    link("a", "ln_a").unwrap();
    link("d", "ln_d").unwrap();
    link("nowhere.json", "dangling").unwrap();
    std::fs::hard_link(root.join("c/r2.json"), root.join("hard")).unwrap();
}

const INPUTS: [&str; 7] = ["a", "a/b", "c", "a/r0.json", "c/r2.json", "r3.json", "ln_a"];
const TARGETS: [&str; 16] = [
    "out.json",
    "a/out.json",
    "a/b/out.json",
    "c/out.json",
    "d/out.json",
    "ln_file",
    "ln_a/out.json",
    "ln_d/out.json",
    "dangling",
    "hard",
    "a/r0.json",
    "r3.json",
    "a",
    "a/../d/x.json",
    "d/../c/x.json",
    "d/../r3.json",
];

/// Whether `dir` (canonical) is an input folder, under one, or the folder of an input file.
fn near_an_input(dir: &Path, inputs: &[PathBuf]) -> bool {
    inputs.iter().any(|i| {
        let abs = std::fs::canonicalize(i).unwrap();
        if abs.is_dir() {
            dir.starts_with(&abs)
        } else {
            abs.parent() == Some(dir)
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn no_output_path_changes_an_input_or_lands_beside_one(
        chosen in proptest::sample::subsequence(INPUTS.to_vec(), 1..=3),
        target in proptest::sample::select(TARGETS.to_vec()),
    ) {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        arrange(&root);
        let inputs: Vec<PathBuf> = chosen.iter().map(|i| root.join(i)).collect();
        let before = listing(&root);
        let path = root.join(target);
        let r = output::write(&path, &inputs, |w| w.write_all(b"OUTPUT"));
        let after = listing(&root);
        // Only the target's own name may change, and only by becoming our output.
        // The name the output would have: its folder resolved (through `..` and links).
        let folder = std::fs::canonicalize(path.parent().unwrap()).unwrap();
        let lexical = folder.join(path.file_name().unwrap());
        let lexical = lexical.strip_prefix(&root).unwrap().to_path_buf();
        for (p, what) in &before {
            if *p != lexical {
                prop_assert_eq!(after.get(p), Some(what), "{} changed", p.display());
            }
        }
        for p in after.keys() {
            prop_assert!(before.contains_key(p) || *p == lexical, "{} appeared", p.display());
        }
        match r {
            Ok(()) => {
                prop_assert_eq!(after.get(&lexical).map(String::as_str), Some("file OUTPUT"));
                prop_assert!(!near_an_input(&folder, &inputs), "written beside an input");
            }
            Err(_) => prop_assert_eq!(&before, &after, "a refusal changed something"),
        }
        // A fresh name in a folder of no input is always written.
        if target == "d/out.json" && !chosen.is_empty() {
            let d = root.join("d");
            if !near_an_input(&d, &inputs) {
                prop_assert!(after.contains_key(&lexical), "d/out.json refused");
            }
        }
    }
}
