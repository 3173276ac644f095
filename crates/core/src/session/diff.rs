//! Two runs opened and compared, the one way `stepscope diff`, the TUI's diff screen and the
//! tests get there. A run is a path, or `demo` / `demo:SCENARIO` (a demo job) when no such
//! path exists.

use super::{DemoSpec, Plan, Progress, Scenario, Session, Settings};
use crate::analysis::critical_path::Window;
use crate::analysis::diff::{self, Diff, DiffOptions, Run, StepAlign};
use crate::error::Error;
use std::path::{Path, PathBuf};

/// Two analysed runs and their diff.
pub struct DiffPair {
    /// The first run (baseline).
    pub before: Session,
    /// The second run.
    pub after: Session,
    /// What changed.
    pub diff: Diff,
    /// How long the comparison itself took (after both runs were analysed).
    pub diff_ns: u64,
}

/// Opens, analyses and compares `before` and `after`. With one step pair named, each run's
/// critical path is that pair's step.
pub fn open(
    before: &Path,
    after: &Path,
    settings: &Settings,
    opts: &DiffOptions,
) -> Result<DiffPair, Error> {
    let window = |k: usize| match &opts.steps {
        StepAlign::Pairs(p) if p.len() == 1 && settings.window.is_none() => {
            Some(Window::Step(if k == 0 { p[0].0 } else { p[0].1 }))
        }
        _ => settings.window.clone(),
    };
    let (sb, sa) = (
        Settings {
            window: window(0),
            ..settings.clone()
        },
        Settings {
            window: window(1),
            ..settings.clone()
        },
    );
    // One load after the other (each shows its progress on a terminal), then both analyses
    // at once: each has serial stretches the other fills.
    let (pb, pa) = (plan(before, &sb)?, plan(after, &sa)?);
    let (lb, la) = (pb.load(Progress::Stderr)?, pa.load(Progress::Stderr)?);
    let (b, a) = rayon::join(|| pb.analyse(lb), || pa.analyse(la));
    compare(b?, a?, opts)
}

/// Compares two analysed runs.
pub fn compare(before: Session, after: Session, opts: &DiffOptions) -> Result<DiffPair, Error> {
    fn run(s: &Session) -> Run<'_> {
        Run {
            job: &s.loaded.job,
            analysis: &s.analysis,
        }
    }
    let began = std::time::Instant::now();
    let d = diff::diff(run(&before), run(&after), opts).map_err(|m| Error::usage("diff", m))?;
    Ok(DiffPair {
        before,
        after,
        diff: d,
        diff_ns: began.elapsed().as_nanos() as u64,
    })
}

/// The plan of one run: a path, or a demo job (`demo`, `demo:SCENARIO` where no such path
/// exists).
fn plan(path: &Path, settings: &Settings) -> Result<Plan, Error> {
    if let Some(name) = path.to_str().and_then(|p| p.strip_prefix("demo:")) {
        if !path.exists() && Scenario::parse(name).is_none() {
            let all: Vec<&str> = Scenario::ALL.map(Scenario::name).to_vec();
            return Err(Error::usage(
                "diff",
                format!("no demo scenario `{name}` (scenarios: {})", all.join(", ")),
            ));
        }
    }
    let inputs = match demo_name(path) {
        Some(scenario) => super::demo_inputs(DemoSpec {
            scenario,
            ..DemoSpec::default()
        }),
        None => super::inputs(&[PathBuf::from(path)], settings.scenario)?,
    };
    Plan::with_inputs(inputs, path.display().to_string(), settings)
}
/// `demo` or `demo:SCENARIO`, when no file or directory has that name.
fn demo_name(path: &Path) -> Option<Scenario> {
    if path.exists() {
        return None;
    }
    match path.to_str()? {
        "demo" => Some(Scenario::Default),
        s => Scenario::parse(s.strip_prefix("demo:")?),
    }
}
