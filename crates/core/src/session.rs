//! From what a user names to analysed data, the one way every face gets there — the
//! command line, the TUI, the tests and the benchmarks: paths (or none: the demo cluster) →
//! [`Input`]s → a loaded job (unreadable inputs skipped and said) → checked against the
//! requested scope → analysed, in a [`Session`].

use crate::analysis::advisor::Thresholds;
use crate::analysis::comm::CommOptions;
use crate::analysis::critical_path::Window;
use crate::analysis::ops::Scope;
use crate::analysis::roofline::{RooflineOptions, peaks};
use crate::analysis::{self, Analysis, Options};
use crate::error::Error;
use crate::format::printable;
use crate::ingest::progress::Counters;
use crate::ingest::roles::RoleTable;
use crate::ingest::{self, demo};
use crate::model::{EventRef, Job, RankId, StepNo, Sym};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

pub use crate::ingest::demo::{DemoSpec, Scenario};
pub use crate::ingest::source::{check_max_input, check_regular};
pub use crate::ingest::{Input, LoadOptions};

/// Bytes a view may decompress or generate unasked to show an event's args again (16 MiB:
/// a few milliseconds); beyond, it waits for a key.
pub const CHEAP_REREAD: u64 = 16 << 20;

/// How to read and analyse, as the command line states it.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Ranks and steps the scoped results cover.
    pub scope: Scope,
    /// Clock alignment and topology.
    pub comm: CommOptions,
    /// The critical path's window.
    pub window: Option<Window>,
    /// A device table entry for the roofline peaks (`--device`).
    pub device: Option<String>,
    /// Roofline threshold U.
    pub roofline_u: f64,
    /// Keep Python stack frames.
    pub python_stacks: bool,
    /// The demo job opened when no path is given.
    pub scenario: Scenario,
    /// Of inputs holding several jobs (one per directory), the N-th (`--job N`, from 1).
    pub job: Option<u32>,
    /// The range that is the step (`--step-range NAME`), in place of `ProfilerStep#N`.
    pub step_range: Option<String>,
    /// Read big traces through the user's warm cache (the CLI's default; not `--no-cache`).
    pub cache: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            scope: Scope::default(),
            comm: CommOptions::default(),
            window: None,
            device: None,
            roofline_u: analysis::roofline::DEFAULT_U,
            python_stacks: false,
            scenario: Scenario::Default,
            job: None,
            step_range: None,
            cache: false,
        }
    }
}

impl Settings {
    /// The analysis options: the device table and the thresholds are read from the config
    /// directory here (a broken file is a configuration error; an unknown `--device` a usage
    /// error listing the table).
    pub fn analysis_options(&self) -> Result<Options, Error> {
        let devices = peaks::table()?;
        if let Some(d) = &self.device {
            if peaks::by_name(&devices, d).is_none() {
                let names: Vec<&str> = devices.iter().map(|d| d.name.as_str()).collect();
                return Err(Error::usage(
                    "--device",
                    format!("no device `{d}` (devices: {})", names.join(", ")),
                ));
            }
        }
        Ok(Options {
            scope: self.scope,
            comm: self.comm.clone(),
            window: self.window.clone(),
            roofline: RooflineOptions {
                device: self.device.clone(),
                u: Some(self.roofline_u),
            },
            devices,
            thresholds: Thresholds::load()?,
        })
    }

    /// The load options (the role tables are read from the config directory here).
    pub fn load_options(&self) -> Result<LoadOptions, Error> {
        Ok(LoadOptions {
            python_stacks: self.python_stacks,
            roles: Arc::new(match &self.step_range {
                Some(r) => RoleTable::load()?.with_step_range(r),
                None => RoleTable::load()?,
            }),
            events: Default::default(),
            job: self.job,
            cache: self
                .cache
                .then(ingest::modelfile::cache::Cache::of_user)
                .flatten()
                .map(Arc::new),
        })
    }
}

/// Whether the warm cache's settings in the environment are sizes (docs/cache.md).
pub fn check_cache_env() -> Result<(), String> {
    ingest::modelfile::cache::Cache::check_env()
}

/// Waits for the warm cache's entries being written (docs/cache.md): the binary calls it
/// before it exits.
pub fn finish_cache_writes() {
    ingest::modelfile::cache::finish_writes();
}

/// The inputs `paths` name (discovered), or the demo job of `scenario` when there are none
/// (a scenario other than the default with paths is a usage error: it would be ignored).
pub fn inputs(paths: &[PathBuf], scenario: Scenario) -> Result<Vec<Input>, Error> {
    if paths.is_empty() {
        let spec = DemoSpec {
            scenario,
            ..DemoSpec::default()
        };
        Ok(demo_inputs(spec))
    } else if scenario != Scenario::Default {
        Err(Error::usage(
            "--scenario",
            "picks a demo job; it takes no PATH".to_string(),
        ))
    } else {
        ingest::discover::discover(paths)
    }
}

/// The inputs of a generated demo job.
pub fn demo_inputs(spec: DemoSpec) -> Vec<Input> {
    ingest::demo_inputs(spec)
}

/// What a job opened from `paths` is called: `demo cluster` (`demo: SCENARIO`), the path,
/// or `N paths`.
pub fn title(paths: &[PathBuf], scenario: Scenario) -> String {
    match paths {
        [] if scenario == Scenario::Default => "demo cluster".to_string(),
        [] => format!("demo: {}", scenario.name()),
        [p] => p.display().to_string(),
        ps => format!("{} paths", ps.len()),
    }
}

/// A loaded job, what did not load and how long loading took: what every face is given
/// (with its analysis, in a [`Session`]), never the loader's own types.
#[derive(Debug)]
pub struct Loaded {
    /// The ranks that loaded.
    pub job: Job,
    /// Inputs that could not be read, with why (the others loaded).
    pub skipped: Vec<Error>,
    /// Warnings about inputs that did load.
    pub warnings: Vec<String>,
    /// Wall time of the load, ns.
    pub load_ns: u64,
}

impl Loaded {
    /// What the loader assembled, read in `load_ns`.
    fn of(a: ingest::Assembled, load_ns: u64) -> Loaded {
        Loaded {
            job: a.job,
            skipped: a.skipped,
            warnings: a.warnings,
            load_ns,
        }
    }

    /// A job of ranks already read and checked (a reader's fuzz target), assembled as a
    /// load assembles them.
    pub fn of_drafts(drafts: Vec<ingest::RankDraft>, roles: &RoleTable) -> Result<Loaded, Error> {
        Ok(Loaded::of(ingest::assemble_drafts(drafts, roles)?, 0))
    }
}

/// Loads inputs with progress on stderr (when it is a terminal and the load is slow), and
/// says on stderr which inputs were skipped.
pub fn load(inputs: &[Input], opts: &LoadOptions) -> Result<Loaded, Error> {
    let began = Instant::now();
    let loaded = ingest::load(inputs, opts)?;
    for s in &loaded.skipped {
        crate::stderr_line!("warning: skipped {}", printable(&s.to_string()));
    }
    Ok(Loaded::of(loaded, elapsed_ns(began)))
}

/// Loads inputs silently, bumping `counters` (a view shows them).
pub fn load_counted(
    inputs: &[Input],
    opts: &LoadOptions,
    counters: &Counters,
) -> Result<Loaded, Error> {
    let began = Instant::now();
    let loaded = ingest::load_counted(inputs, opts, counters)?;
    Ok(Loaded::of(loaded, elapsed_ns(began)))
}

/// Nanoseconds since `t` (saturating: a load of 584 years is not one).
fn elapsed_ns(t: Instant) -> u64 {
    u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// `--rank R` of any face must name a loaded rank.
pub fn check_rank(job: &Job, r: RankId) -> Result<(), Error> {
    if job.rank_ix(r).is_some() {
        return Ok(());
    }
    let ids: Vec<String> = job.ranks.iter().map(|x| x.id.to_string()).collect();
    Err(Error::usage(
        "--rank",
        format!("no rank {r} (ranks: {})", ids.join(", ")),
    ))
}

/// `--window` must name a step or an annotation some rank has: a critical path that is
/// silently absent would read as "nothing to say".
pub fn check_window(job: &Job, win: Option<&Window>) -> Result<(), Error> {
    match win.and_then(|w| analysis::critical_path::missing_window(job, w)) {
        Some(why) => Err(Error::usage("--window", why)),
        None => Ok(()),
    }
}

/// `--step`/`--rank` must name something that exists: an empty report would read as "fine".
pub fn check_scope(job: &Job, scope: Scope) -> Result<(), Error> {
    if let Some(r) = scope.rank {
        check_rank(job, r)?;
    }
    if let Some(s) = scope.step {
        if !job.steps.contains(&s) {
            let ids: Vec<String> = job.steps.iter().map(StepNo::to_string).collect();
            return Err(Error::usage(
                "--step",
                format!("no step {s} (steps: {})", ids.join(", ")),
            ));
        }
    }
    Ok(())
}

/// A loaded, checked and analysed job, and where it came from.
pub struct Session {
    /// The job and what did not load.
    pub loaded: Loaded,
    /// Its analysis.
    pub analysis: Analysis,
    /// The options it was analysed with.
    pub opts: Options,
    /// What was opened (`demo cluster`, a path).
    pub title: String,
    /// The inputs it was loaded from (views read an event's args again from them).
    pub inputs: Vec<Input>,
}

impl Session {
    /// Opens `paths` (none: the demo cluster): loads with progress, checks the scope,
    /// analyses.
    pub fn open(paths: &[PathBuf], settings: &Settings) -> Result<Session, Error> {
        Plan::of(paths, settings)?.open(Progress::Stderr)
    }

    /// Checks a loaded job against the scope and analyses it.
    pub fn analyse(
        loaded: Loaded,
        opts: Options,
        title: String,
        inputs: Vec<Input>,
    ) -> Result<Session, Error> {
        check_scope(&loaded.job, opts.scope)?;
        check_window(&loaded.job, opts.window.as_ref())?;
        let analysis = analysis::analyze(&loaded.job, &opts);
        Ok(Session {
            loaded,
            analysis,
            opts,
            title,
            inputs,
        })
    }

    /// The job.
    pub fn job(&self) -> &Job {
        &self.loaded.job
    }

    /// A name's text.
    pub fn name(&self, s: Sym) -> &str {
        self.loaded.job.strings.resolve(s)
    }

    /// True when reading event `e`'s text again is cheap (a mapped file, or at most
    /// [`CHEAP_REREAD`] bytes to decompress or generate): views read it unasked then.
    pub fn event_text_is_cheap(&self, e: EventRef) -> bool {
        let rank = self.loaded.job.rank(e.rank);
        let raw = rank.events.raw[e.event.0 as usize];
        let end = raw.offset + u64::from(raw.len);
        self.inputs
            .get(rank.source.input)
            .is_none_or(|i| i.bytes_to_reread(end, rank.source.json_bytes) <= CHEAP_REREAD)
    }

    /// The JSON text of one event again (for its args), from its input.
    pub fn event_text(&self, e: EventRef) -> Result<String, String> {
        let rank = self.loaded.job.rank(e.rank);
        let raw = rank.events.raw[e.event.0 as usize];
        let input = self
            .inputs
            .get(rank.source.input)
            .ok_or("the input is gone")?;
        input.event_text(raw)
    }
}

/// Re-exported for the demo command.
pub use demo::{write as write_demo, write_nsys as write_demo_nsys};

pub mod diff;
pub mod flight;
mod plan;
pub mod summarize;
pub mod watch;

pub use plan::{Plan, Progress};
