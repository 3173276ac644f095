//! Inputs that hold several jobs, one per directory: two runs under one folder
//! (`runs/base/`, `runs/test/`) are never merged. When the ranks together are not one job
//! (a rank claimed twice, different world sizes, process groups, devices, wall clocks) but
//! the ranks of each directory under the inputs' common folder are, those directories are
//! the jobs: the load is refused naming them — compare them with `stepscope diff`, or pick
//! one with `--job N` — or, with `--job N`, goes on with the N-th.

use super::RankDraft;
use crate::error::Error;
use crate::model::RankId;
use std::path::{Component, Path, PathBuf};

type Draft = (RankDraft, Option<RankId>);

/// The drafts of one job: all of them when they are one, else the `--job` one.
pub(super) fn one_job(mut drafts: Vec<Draft>, job: Option<u32>) -> Result<Vec<Draft>, Error> {
    // Several jobs only where the inputs span several directories and are not one job
    // together (checked only then: the load checks the whole again after).
    let split = group_keys(&drafts)
        .filter(|k| k.iter().any(|x| x != &k[0]))
        .and_then(|k| one(&drafts).err().map(|why| (k, why)));
    let Some((keys, why)) = split else {
        return match job {
            Some(n) if n != 1 => Err(Error::usage(
                "--job",
                format!("these inputs are one job, not {n}"),
            )),
            _ => Ok(drafts),
        };
    };
    // Group the drafts by directory, in the order the directories first appear.
    let mut dirs: Vec<PathBuf> = Vec::new();
    for k in &keys {
        if !dirs.contains(k) {
            dirs.push(k.clone());
        }
    }
    let mut by_dir: Vec<Vec<Draft>> = (0..dirs.len()).map(|_| Vec::new()).collect();
    for (d, k) in drafts.drain(..).zip(&keys) {
        by_dir[dirs.iter().position(|x| x == k).expect("a key's dir")].push(d);
    }
    if by_dir.iter().any(|g| one(g).is_err()) {
        return Err(why);
    }
    match job {
        Some(n) if (1..=by_dir.len() as u32).contains(&n) => Ok(by_dir.swap_remove(n as usize - 1)),
        Some(n) => Err(Error::usage(
            "--job",
            format!("{n}: there are {} jobs here", by_dir.len()),
        )),
        None => Err(several(&why, &dirs, &by_dir)),
    }
}

/// The refusal: why the inputs are not one job, and the jobs they are.
fn several(why: &Error, dirs: &[PathBuf], by_dir: &[Vec<Draft>]) -> Error {
    // Each job named by the folder that holds all its files (`/home/a/run1`, not `/home`).
    let dirs: Vec<PathBuf> = dirs
        .iter()
        .zip(by_dir)
        .map(|(d, g)| job_folder(g).unwrap_or_else(|| d.clone()))
        .collect();
    let dirs = &dirs[..];
    let list: Vec<String> = dirs
        .iter()
        .zip(by_dir)
        .enumerate()
        .map(|(k, (d, g))| format!("{} {} ({} rank(s))", k + 1, d.display(), g.len()))
        .collect();
    let diff = match dirs {
        [a, b] => format!(
            "compare them with `stepscope diff {} {}`, or",
            a.display(),
            b.display()
        ),
        _ => "compare two with `stepscope diff A B`, or".to_string(),
    };
    Error::usage(
        "inputs",
        format!(
            "{} jobs, one per directory: {}; {diff} pick one with --job N (why not one: {})",
            dirs.len(),
            list.join(", "),
            first_line(why)
        ),
    )
}

/// The deepest folder holding every file of `g`.
fn job_folder(g: &[Draft]) -> Option<PathBuf> {
    let mut parents = g
        .iter()
        .map(|(d, _)| Path::new(&d.rank.source.path).parent());
    let mut common = parents.next()??.to_path_buf();
    for p in parents {
        let p = p?;
        while !p.starts_with(&common) {
            if !common.pop() {
                return None;
            }
        }
    }
    (!common.as_os_str().is_empty()).then_some(common)
}

/// Why the inputs are not one job: the refusal's reason without its own suggestion.
fn first_line(e: &Error) -> String {
    let text = e.to_string();
    let line = text.lines().next().unwrap_or_default();
    let cut = [
        ": two runs?",
        "; compare them with",
        ": inputs of different jobs",
    ]
    .iter()
    .filter_map(|m| line.find(m))
    .min()
    .unwrap_or(line.len());
    line[..cut].to_string()
}

/// Whether the drafts can be one job, judged on what they state (before ids are resolved).
fn one(drafts: &[Draft]) -> Result<(), Error> {
    super::consistency::claims(drafts)?;
    super::consistency::stated(drafts)
}

/// Each draft's directory right under the inputs' common folder (`runs/base` for
/// `runs/base/rank-0.json` and `runs/test/rank-0.json`); `None` when a draft is not a file
/// below a common folder (stdin, the demo, files side by side).
fn group_keys(drafts: &[Draft]) -> Option<Vec<PathBuf>> {
    let paths: Vec<&Path> = drafts
        .iter()
        .map(|(d, _)| Path::new(&d.rank.source.path))
        .collect();
    let parents: Vec<&Path> = paths.iter().map(|p| p.parent()).collect::<Option<_>>()?;
    let mut common: PathBuf = parents.first()?.to_path_buf();
    for p in &parents[1..] {
        while !p.starts_with(&common) {
            if !common.pop() {
                return None;
            }
        }
    }
    paths
        .iter()
        .map(|p| {
            let rest = p.strip_prefix(&common).ok()?;
            let mut parts = rest.components();
            match (parts.next(), parts.next()) {
                (Some(Component::Normal(dir)), Some(_)) => Some(common.join(dir)),
                _ => None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(path: &str) -> Draft {
        let mut d = RankDraft::undeclared(Default::default(), Default::default(), Vec::new());
        d.rank.source.path = path.to_string();
        (d, None)
    }

    #[test]
    fn each_draft_is_keyed_by_its_directory_under_the_common_folder() {
        let keys = group_keys(&[at("runs/base/r0.json"), at("runs/test/x/r0.json")]).unwrap();
        assert_eq!(
            keys,
            [PathBuf::from("runs/base"), PathBuf::from("runs/test")]
        );
        // Files side by side, stdin: no directories to tell jobs apart.
        assert_eq!(group_keys(&[at("runs/r0.json"), at("runs/r1.json")]), None);
        assert_eq!(group_keys(&[at("-"), at("runs/a/r1.json")]), None);
    }
}
