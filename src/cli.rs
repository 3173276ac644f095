//! Command line (DESIGN §2): parse, dispatch, and map failures to exit codes
//! (0 ok, 2 bad input or usage).

use crate::analysis::advisor::Severity;
use crate::analysis::comm::CommOptions;
use crate::analysis::comm::align::Align;
use crate::analysis::comm::links::{Link, TopologyOptions};
use crate::analysis::critical_path::Window;
use crate::analysis::{self, ops::Scope};
use crate::error::InputError;
use crate::ingest::{self, LoadOptions, Loaded, discover};
use crate::report::{self, Format};
use crate::synth::{self, DemoSpec};
use clap::{Args, Parser, Subcommand};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

/// Exit code for bad input or usage.
pub const EXIT_BAD_INPUT: i32 = 2;
/// Exit code when `--fail-on` trips.
pub const EXIT_FINDINGS: i32 = 1;

/// Why is this distributed training step slow? Reads per-rank PyTorch profiler (Kineto)
/// traces, splits every step of every rank into compute / overlap / comm / memory /
/// host-bound / free time, and reports the slow steps, ranks and operators.
#[derive(Debug, Parser)]
#[command(name = "stepscope", version)]
#[command(
    after_help = "Examples:\n  stepscope                              the embedded demo cluster\n  stepscope traces/                      every *.json[.gz] under traces/, one rank each\n  stepscope report run/ --format json    the stable JSON report (docs/report-schema.md)\n  stepscope demo --out /tmp/demo         write the demo cluster as Kineto .json.gz\n\nExit codes: 0 ok, 1 --fail-on tripped, 2 bad input or usage."
)]
pub struct Cli {
    /// Trace files (.json, .json.gz), directories searched recursively, or - for stdin.
    /// Without a PATH: the embedded demo cluster.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// Options shared by every command.
    #[command(flatten)]
    pub global: Global,

    /// The subcommand; none opens the traces (until the TUI lands: prints the report).
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Options every command takes.
#[derive(Debug, Args, Clone)]
pub struct Global {
    /// Worker threads for loading and analysis (default: all cores).
    #[arg(long, global = true, value_name = "N")]
    pub threads: Option<usize>,
    /// Keep python_function frames (with_stack=True) as events of kind `other`; by default
    /// they are counted and dropped.
    #[arg(long, global = true)]
    pub python_stacks: bool,
    /// Clock alignment: shift ranks so shared collectives end together, or keep raw clocks.
    #[arg(long, global = true, value_enum, default_value_t = Align::Collective)]
    pub align: Align,
    /// Ranks per node, for intra- vs inter-node links (default: the devices a trace lists
    /// in deviceProperties, else 8).
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub ranks_per_node: Option<u32>,
    /// Intra-node link peak: nvlink4, nvlink3, pcie4, pcie5, or GB/s per direction
    /// (default: nvlink4, nvlink3 on A100).
    #[arg(long, global = true, value_name = "LINK", value_parser = Link::parse)]
    pub intra_link: Option<Link>,
    /// Inter-node link peak: ib-ndr, ib-hdr, roce-200, or GB/s per NIC (default: ib-ndr).
    #[arg(long, global = true, value_name = "LINK", value_parser = Link::parse)]
    pub inter_link: Option<Link>,
    /// Roofline peaks of this device table entry (H100-SXM, A100-80GB, MI300X, ...) instead
    /// of the one the traces name.
    #[arg(long, global = true, value_name = "NAME")]
    pub device: Option<String>,
    /// Roofline threshold U: memory- or compute-bound at ≥ U of the peak (0 < U ≤ 1).
    #[arg(long, global = true, value_name = "U", default_value_t = 0.8, value_parser = parse_u)]
    pub roofline_u: f64,
    /// Critical-path window: the INSTANCE-th (0-based) user annotation named NAME instead of
    /// a step (default: --step, else the slowest step).
    #[arg(long, global = true, value_name = "NAME[:INSTANCE]", value_parser = Window::parse)]
    pub window: Option<Window>,
    /// TUI colours: dark, light, mono, or a theme file (default: dark; mono under NO_COLOR).
    #[arg(long, global = true, value_name = "NAME|FILE")]
    pub theme: Option<String>,
    /// TUI key bindings: default, or a keymap file.
    #[arg(
        long,
        global = true,
        value_name = "NAME|FILE",
        default_value = "default"
    )]
    pub keymap: String,
    /// Draw with ASCII only (terminals without Unicode).
    #[arg(long, global = true)]
    pub ascii: bool,
    /// Do not capture the mouse (keep the terminal's own selection).
    #[arg(long, global = true)]
    pub no_mouse: bool,
}

fn parse_u(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(u) if u > 0.0 && u <= 1.0 => Ok(u),
        _ => Err(format!("`{s}` is not in (0, 1]")),
    }
}

impl Global {
    /// The analysis options these flags select, over `scope`; the device table is read here
    /// (a broken user table or an unknown `--device` is a usage error).
    pub fn analysis(&self, scope: Scope) -> Result<analysis::Options, InputError> {
        let devices = crate::analysis::roofline::peaks::table()
            .map_err(|e| InputError::whole("devices.toml", e))?;
        if let Some(d) = &self.device {
            if crate::analysis::roofline::peaks::by_name(&devices, d).is_none() {
                let names: Vec<&str> = devices.iter().map(|d| d.name.as_str()).collect();
                return Err(InputError::whole(
                    "--device",
                    format!("no device `{d}` (devices: {})", names.join(", ")),
                ));
            }
        }
        Ok(analysis::Options {
            scope,
            comm: CommOptions {
                align: self.align,
                topology: TopologyOptions {
                    ranks_per_node: self.ranks_per_node,
                    intra: self.intra_link.clone(),
                    inter: self.inter_link.clone(),
                },
            },
            window: self.window.clone(),
            roofline: crate::analysis::roofline::RooflineOptions {
                device: self.device.clone(),
                u: Some(self.roofline_u),
            },
            devices,
            thresholds: crate::analysis::advisor::Thresholds::load()
                .map_err(|e| InputError::whole("config.toml", e))?,
        })
    }
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the report (text, JSON or markdown) for traces or the demo cluster.
    Report(ReportArgs),
    /// Write the demo cluster as real Kineto trace files.
    Demo(DemoArgs),
    /// Draw one TUI pane to plain text (deterministic; for CI and docs).
    Snapshot(SnapshotArgs),
}

/// `stepscope snapshot`.
#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// Trace files, directories, or - for stdin; none: the demo cluster.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// The pane.
    #[arg(long, value_parser = ["overview", "timeline", "critical", "roofline", "advisor", "operator", "comm"], default_value = "overview")]
    pub view: String,
    /// Screen size, COLSxROWS.
    #[arg(long, default_value = "120x40", value_parser = parse_size)]
    pub size: (u16, u16),
    /// Select this step (default: the slowest).
    #[arg(long, value_name = "N")]
    pub step: Option<u32>,
    /// Drill into this rank (device level).
    #[arg(long, value_name = "R")]
    pub rank: Option<u32>,
    /// Open this operator (exact name).
    #[arg(long, value_name = "NAME")]
    pub op: Option<String>,
    /// Keys to press first: characters, and <enter>, <esc>, <tab>, <ctrl-c>, <lt> ...
    #[arg(long, value_name = "KEYS", default_value = "")]
    pub keys: String,
}

fn parse_size(s: &str) -> Result<(u16, u16), String> {
    let (w, h) = s
        .split_once('x')
        .ok_or_else(|| format!("`{s}` is not COLSxROWS"))?;
    match (w.parse::<u16>(), h.parse::<u16>()) {
        (Ok(w), Ok(h)) if (20..=1000).contains(&w) && (8..=1000).contains(&h) => Ok((w, h)),
        _ => Err(format!("`{s}`: COLS 20–1000 and ROWS 8–1000")),
    }
}

/// `stepscope report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Trace files, directories, or - for stdin; none: the demo cluster.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Only this step number (ProfilerStep#N).
    #[arg(long, value_name = "N")]
    pub step: Option<u32>,
    /// Only this rank.
    #[arg(long, value_name = "R")]
    pub rank: Option<u32>,
    /// Exit 1 when a finding of this severity or worse exists (a CI gate).
    #[arg(long, value_enum, value_name = "SEVERITY")]
    pub fail_on: Option<Severity>,
}

/// `stepscope demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Directory to write rank-N.pt.trace.json.gz into (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Number of ranks.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub ranks: u32,
    /// Profiled steps per rank.
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub steps: u32,
    /// Multiply events per step (12 transformer layers per unit) to make big traces.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100000))]
    pub scale: u32,
    /// All-reduce each gradient bucket as N smaller collectives (more collectives per step).
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub split_buckets: u32,
    /// Write plain .json instead of .json.gz.
    #[arg(long)]
    pub plain: bool,
}

/// Runs the command line; returns the process exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_BAD_INPUT } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    if let Some(n) = cli.global.threads {
        if let Err(e) = rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build_global()
        {
            eprintln!("error: --threads: {e}");
            return EXIT_BAD_INPUT;
        }
    }
    let opts = LoadOptions {
        python_stacks: cli.global.python_stacks,
    };
    let result = match cli.command {
        Some(Command::Report(a)) => report(
            &a.paths,
            a.format,
            cli.global.analysis(Scope {
                step: a.step,
                rank: a.rank,
            }),
            opts,
            a.fail_on,
        ),
        Some(Command::Demo(a)) => demo(&a).map(|()| 0),
        Some(Command::Snapshot(a)) => snapshot(&a, &cli.global, opts),
        // The TUI on a terminal; the text report when stdout is a pipe or a file.
        None if std::io::stdout().is_terminal() => cli
            .global
            .analysis(Scope::default())
            .and_then(|a| crate::ui::run::run(&cli.paths, opts, a, &ui_options(&cli.global))),
        None => report(
            &cli.paths,
            Format::Text,
            cli.global.analysis(Scope::default()),
            opts,
            None,
        ),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            EXIT_BAD_INPUT
        }
    }
}

/// Loads the paths (or the demo cluster when there are none).
pub fn load(paths: &[PathBuf], opts: LoadOptions) -> Result<Loaded, InputError> {
    let loaded = if paths.is_empty() {
        ingest::load_sources(synth::sources(DemoSpec::default()), opts)?
    } else {
        ingest::load(&discover::discover(paths)?, opts)?
    };
    for s in &loaded.skipped {
        eprintln!("warning: skipped {s}");
    }
    Ok(loaded)
}

fn report(
    paths: &[PathBuf],
    format: Format,
    aopts: Result<analysis::Options, InputError>,
    opts: LoadOptions,
    fail_on: Option<Severity>,
) -> Result<i32, InputError> {
    let aopts = &aopts?;
    let loaded = load(paths, opts)?;
    check_scope(&loaded, aopts.scope)?;
    let analysis = analysis::analyze(&loaded.job, aopts);
    let text = report::render(&report::build(&loaded, &analysis, aopts.scope), format);
    let mut out = std::io::stdout().lock();
    // A closed pipe (`| head`) is not an error worth a message.
    let _ = out.write_all(text.as_bytes()).and_then(|_| out.flush());
    // The process exits next: freeing millions of events one allocation at a time would only
    // delay the exit (the OS reclaims it all at once).
    let tripped = fail_on.is_some_and(|s| analysis.findings.iter().any(|f| f.severity >= s));
    std::mem::forget(analysis);
    std::mem::forget(loaded);
    Ok(if tripped { EXIT_FINDINGS } else { 0 })
}

fn ui_options(g: &Global) -> crate::ui::run::UiOptions {
    crate::ui::run::UiOptions {
        theme: g.theme.clone(),
        keymap: g.keymap.clone(),
        ascii: g.ascii,
        mouse: !g.no_mouse,
    }
}

fn snapshot(a: &SnapshotArgs, g: &Global, opts: LoadOptions) -> Result<i32, InputError> {
    use crate::ui::{app, keymap, snapshot};
    let usage = |msg: String| InputError::whole("snapshot", msg);
    let keys = keymap::parse_script(&a.keys).map_err(usage)?;
    let (theme, keys_map) = ui_options(g).resolve()?;
    let aopts = g.analysis(Scope::default())?;
    let loaded = load(&a.paths, opts)?;
    let analysis = analysis::analyze(&loaded.job, &aopts);
    let title = match a.paths.as_slice() {
        [] => "demo cluster".to_string(),
        [p] => p.display().to_string(),
        ps => format!("{} paths", ps.len()),
    };
    let data = app::Data::new(loaded, analysis, aopts, title);
    let mut app = app::App::new(data, keys_map, theme, g.ascii, a.size);
    let setup = snapshot::Setup {
        view: app::Pane::from_name(&a.view),
        step: a.step,
        rank: a.rank,
        op: a.op.clone(),
        keys,
    };
    snapshot::prepare(&mut app, &setup).map_err(usage)?;
    let text = snapshot::render(&app);
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|_| out.flush());
    std::mem::forget(app);
    Ok(0)
}

/// `--step`/`--rank` must name something that exists: an empty report would read as "fine".
pub fn check_scope(loaded: &Loaded, scope: Scope) -> Result<(), InputError> {
    let job = &loaded.job;
    if let Some(r) = scope.rank {
        if !job.ranks.iter().any(|x| x.id == r) {
            let ids: Vec<String> = job.ranks.iter().map(|x| x.id.to_string()).collect();
            return Err(InputError::whole(
                "--rank",
                format!("no rank {r} (ranks: {})", ids.join(", ")),
            ));
        }
    }
    if let Some(s) = scope.step {
        let mut all: Vec<u32> = job
            .ranks
            .iter()
            .flat_map(|x| x.steps.iter().map(|h| h.number))
            .collect();
        all.sort_unstable();
        all.dedup();
        if !all.contains(&s) {
            let ids: Vec<String> = all.iter().map(u32::to_string).collect();
            return Err(InputError::whole(
                "--step",
                format!("no step {s} (steps: {})", ids.join(", ")),
            ));
        }
    }
    Ok(())
}

fn demo(a: &DemoArgs) -> Result<(), InputError> {
    let spec = DemoSpec {
        ranks: a.ranks,
        steps: a.steps,
        scale: a.scale,
        split: a.split_buckets,
    };
    let label = a.out.display().to_string();
    let files = synth::write(spec, &a.out, !a.plain)
        .map_err(|e| InputError::whole(&label, format!("cannot write: {e}")))?;
    let bytes: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    eprintln!(
        "wrote {} rank file(s), {:.1} MB, to {label} (straggler rank {}, slow step {} caused by rank {})",
        files.len(),
        bytes as f64 / 1e6,
        spec.straggler(),
        spec.slow_step(),
        spec.culprit()
    );
    Ok(())
}
