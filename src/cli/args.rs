//! The command line's words: options every command takes, each subcommand's arguments, and
//! the value parsers. Clap lives only here, in the binary; the library takes the typed
//! [`Settings`] these become.

use clap::{Args, ValueEnum};
use std::path::PathBuf;
use stepscope::analysis::advisor::Severity;
use stepscope::analysis::comm::CommOptions;
use stepscope::analysis::comm::align::Align;
use stepscope::analysis::comm::links::{Link, TopologyOptions};
use stepscope::analysis::critical_path::Window;
use stepscope::analysis::diff::StepAlign;
use stepscope::analysis::ops::Scope;
use stepscope::format::echo;
use stepscope::model::{RankId, StepNo};
use stepscope::report::Format;
use stepscope::session::{Scenario, Settings};
use stepscope::ui::UiOptions;
use stepscope::ui::browser::Pane;

/// Options every command takes.
#[derive(Debug, Args, Clone)]
pub struct Global {
    /// Worker threads for loading and analysis (default: all cores; at least 1, more than
    /// the cores is capped at them, said on stderr).
    #[arg(long, global = true, value_name = "N")]
    pub threads: Option<usize>,
    /// Keep python_function frames (with_stack=True) as events of kind `other`; by default
    /// they are counted and dropped.
    #[arg(long, global = true)]
    pub python_stacks: bool,
    /// Read every trace, never the warm cache of its model (docs/cache.md); nothing is
    /// written to the cache either.
    #[arg(long, global = true)]
    pub no_cache: bool,
    /// Clock alignment: shift ranks so shared collectives end together, or keep raw clocks.
    #[arg(long, global = true, value_enum, default_value_t = AlignArg::Collective)]
    pub align: AlignArg,
    /// Ranks per node, for intra- vs inter-node links (default: the devices a trace lists
    /// in deviceProperties, else 8); `watch` groups slow ranks by node with it.
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub ranks_per_node: Option<u32>,
    /// Intra-node link peak: nvlink4, nvlink3, pcie4, pcie5, or GB/s per direction
    /// (default: nvlink4, nvlink3 on A100).
    #[arg(long, global = true, value_name = "LINK", value_parser = parse_link)]
    pub intra_link: Option<Link>,
    /// Inter-node link peak: ib-ndr, ib-hdr, roce-200, or GB/s per NIC (default: ib-ndr).
    #[arg(long, global = true, value_name = "LINK", value_parser = parse_link)]
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
    #[arg(long, global = true, value_name = "NAME[:INSTANCE]", value_parser = parse_window)]
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
    /// Without a PATH (and for `demo`): the demo job with this canonical problem.
    #[arg(long, global = true, value_name = "NAME", value_parser = scenario_names(), long_help = scenario_help())]
    pub scenario: Option<String>,
    /// Inputs that hold several jobs (one per directory, e.g. two runs under one folder):
    /// load the N-th (from 1; the refusal lists them).
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub job: Option<u32>,
    /// The step is each range (annotation, NVTX range) of exactly this name, numbered by
    /// occurrence from 1, in place of `ProfilerStep#N` (a training loop marked with its own
    /// range, `nvtx.range("train_step")`).
    #[arg(long, global = true, value_name = "NAME")]
    pub step_range: Option<String>,
}

impl Global {
    /// The demo scenario `--scenario` names (the default without it).
    pub fn scenario(&self) -> Scenario {
        self.scenario
            .as_deref()
            .and_then(Scenario::parse)
            .unwrap_or_default()
    }

    /// The settings these flags select, over `scope`.
    pub fn settings(&self, scope: Scope) -> Settings {
        Settings {
            scope,
            comm: CommOptions {
                align: self.align.into(),
                topology: TopologyOptions {
                    ranks_per_node: self.ranks_per_node,
                    intra: self.intra_link.clone(),
                    inter: self.inter_link.clone(),
                },
            },
            window: self.window.clone(),
            device: self.device.clone(),
            roofline_u: self.roofline_u,
            python_stacks: self.python_stacks,
            scenario: self.scenario(),
            job: self.job,
            step_range: self.step_range.clone(),
            cache: !self.no_cache,
        }
    }

    /// How the TUI looks and takes input.
    pub fn ui(&self) -> UiOptions {
        UiOptions {
            theme: self.theme.clone(),
            keymap: self.keymap.clone(),
            ascii: self.ascii,
            mouse: !self.no_mouse,
        }
    }
}

/// `--align`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AlignArg {
    /// Shift ranks so shared collectives end together.
    Collective,
    /// Keep each rank's raw clock.
    None,
}

impl From<AlignArg> for Align {
    fn from(a: AlignArg) -> Align {
        match a {
            AlignArg::Collective => Align::Collective,
            AlignArg::None => Align::None,
        }
    }
}

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Plain text for terminals and logs.
    Text,
    /// JSON (the command's schema: docs/report-schema.md).
    Json,
    /// Markdown (for PR comments and wikis).
    Md,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Text => Format::Text,
            FormatArg::Json => Format::Json,
            FormatArg::Md => Format::Md,
        }
    }
}

/// `--fail-on`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SeverityArg {
    /// < medium_pct of step time.
    Low,
    /// ≥ medium_pct.
    Medium,
    /// ≥ high_pct.
    High,
}

impl From<SeverityArg> for Severity {
    fn from(s: SeverityArg) -> Severity {
        match s {
            SeverityArg::Low => Severity::Low,
            SeverityArg::Medium => Severity::Medium,
            SeverityArg::High => Severity::High,
        }
    }
}

fn parse_u(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(u) if u > 0.0 && u <= 1.0 => Ok(u),
        _ => Err(format!("{} is not in (0, 1]", echo(s))),
    }
}

fn parse_link(s: &str) -> Result<Link, String> {
    Link::parse(s).map_err(|e| e.to_string())
}

fn parse_window(s: &str) -> Result<Window, String> {
    Window::parse(s).map_err(|e| e.to_string())
}

fn parse_size(s: &str) -> Result<(u16, u16), String> {
    let (w, h) = s
        .split_once('x')
        .ok_or_else(|| format!("{} is not COLSxROWS", echo(s)))?;
    match (w.parse::<u16>(), h.parse::<u16>()) {
        (Ok(w), Ok(h)) if (20..=1000).contains(&w) && (8..=1000).contains(&h) => Ok((w, h)),
        _ => Err(format!("{}: COLS 20–1000 and ROWS 8–1000", echo(s))),
    }
}

/// The scenarios `--scenario` takes, by name.
fn scenario_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(Scenario::ALL.map(Scenario::name))
}

/// `--scenario`'s long help: each scenario and what its job carries.
fn scenario_help() -> String {
    let mut s = String::from(
        "Without a PATH (and for `demo`): the demo job with this canonical problem. The advisor's first finding names it.\n",
    );
    for sc in Scenario::ALL {
        s.push_str(&format!("\n  {:<26} {}", sc.name(), sc.about()));
    }
    s
}

/// The panes `--view` takes, by name.
fn pane_names() -> clap::builder::PossibleValuesParser {
    let mut names: Vec<&str> = Pane::ALL.map(Pane::name).to_vec();
    names.push(WATCH_VIEW);
    names.push(DIFF_VIEW);
    clap::builder::PossibleValuesParser::new(names)
}

/// `snapshot --view watch`: the live screen after replaying PATHs (logs, monitor output).
pub const WATCH_VIEW: &str = "watch";

/// `snapshot --view diff`: the diff screen of two PATHs (BEFORE AFTER).
pub const DIFF_VIEW: &str = "diff";

/// `--step` and `--rank` as a scope.
pub fn scope(step: Option<u32>, rank: Option<u32>) -> Scope {
    Scope {
        step: step.map(StepNo),
        rank: rank.map(RankId),
    }
}

/// `stepscope snapshot`.
#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// Trace files, directories, or - for stdin; none: the demo cluster.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// The pane (`watch`: the live screen after replaying PATHs as logs to their end;
    /// `diff`: the diff screen of two PATHs, BEFORE AFTER).
    #[arg(long, value_parser = pane_names(), default_value = "overview")]
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

/// `stepscope report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Trace files, directories, or - for stdin; none: the demo cluster.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Text)]
    pub format: FormatArg,
    /// Only this step number (ProfilerStep#N).
    #[arg(long, value_name = "N")]
    pub step: Option<u32>,
    /// Only this rank.
    #[arg(long, value_name = "R")]
    pub rank: Option<u32>,
    /// Exit 1 when a finding of this severity or worse exists (a CI gate).
    #[arg(long, value_enum, value_name = "SEVERITY")]
    pub fail_on: Option<SeverityArg>,
}

impl ReportArgs {
    /// The ranks and steps the report covers.
    pub fn scope(&self) -> Scope {
        scope(self.step, self.rank)
    }
}

/// `stepscope whatif`.
#[derive(Debug, Args)]
pub struct WhatIfArgs {
    /// Trace files, directories, or - for stdin; none: the demo cluster.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// The fix to replay: a finding's rule id (dataloader, straggler, small_messages, ...),
    /// `ideal` (every fix at once) or `all` (every finding's fix together; the default).
    #[arg(long, value_name = "RULE|ideal|all")]
    pub fix: Option<String>,
    /// Fix this rank: its own work and links at its peers' (alone, or with --fix straggler).
    #[arg(long, value_name = "R")]
    pub rank: Option<u32>,
    /// Only this step number (ProfilerStep#N).
    #[arg(long, value_name = "N")]
    pub step: Option<u32>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Text)]
    pub format: FormatArg,
}

/// `stepscope diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The baseline run: a trace file or a directory of one job's traces (or `demo`,
    /// `demo:SCENARIO`: a demo job).
    #[arg(value_name = "BEFORE")]
    pub before: PathBuf,
    /// The run compared with it (the same kinds of input).
    #[arg(value_name = "AFTER")]
    pub after: PathBuf,
    /// Output format (default: the diff screen on a terminal, else text).
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,
    /// How steps line up: `number`, `order`, or pairs BEFORE:AFTER[,...] (e.g. 12:40);
    /// default: by number when the runs share step numbers, else by order.
    #[arg(long, value_name = "HOW|B:A,...", value_parser = parse_steps)]
    pub steps: Option<StepAlign>,
    /// Read the first run's operator or kernel A as the second run's B (renamed between
    /// the runs); repeatable.
    #[arg(long = "op-map", value_name = "A=B", value_parser = parse_op_map)]
    pub op_map: Vec<(String, String)>,
    /// Exit 1 when the step time grew more than PCT percent (a CI gate); stderr says what
    /// regressed.
    #[arg(long, value_name = "PCT", value_parser = parse_pct)]
    pub fail_on_regression: Option<f64>,
}

fn parse_steps(s: &str) -> Result<StepAlign, String> {
    StepAlign::parse(s)
}

fn parse_op_map(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((a, b)) if !a.is_empty() && !b.is_empty() => Ok((a.to_string(), b.to_string())),
        _ => Err(format!("{} is not A=B", echo(s))),
    }
}

fn parse_pct(s: &str) -> Result<f64, String> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(format!("{} is not a percentage ≥ 0", echo(s))),
    }
}

/// `stepscope export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Trace files, directories, or - for stdin; none: the demo cluster.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Write one Chrome/Perfetto trace of the job and its diagnosis here (`.json`, or
    /// `.json.gz` compressed); never inside an input directory.
    #[arg(long, value_name = "OUT")]
    pub perfetto: PathBuf,
}

/// `stepscope summarize`.
#[derive(Debug, Args)]
pub struct SummarizeArgs {
    /// Trace files and directories (searched as every command searches them).
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
    /// The folder the summaries go into (made if missing; never a folder of an input).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Summarize only the inputs of task I of N (input k goes to task k mod N); under srun
    /// with several tasks, SLURM_PROCID/SLURM_NTASKS by default.
    #[arg(long, value_name = "I/N", value_parser = stepscope::session::summarize::Shard::parse)]
    pub shard: Option<stepscope::session::summarize::Shard>,
}

/// The profiler format `stepscope demo` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DemoFormat {
    /// `rank-N.pt.trace.json.gz` (or `.json` with `--plain`).
    Kineto,
    /// `report_N.sqlite`, Nsight Systems exports.
    Nsys,
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
    /// The profiler whose files to write: PyTorch profiler (Kineto) JSON, or Nsight Systems
    /// SQLite exports (`report_N.sqlite`, one per rank, as `nsys export --type sqlite` writes
    /// them) of the same job.
    #[arg(long = "as", value_enum, default_value_t = DemoFormat::Kineto, value_name = "FORMAT")]
    pub format: DemoFormat,
    /// Write the scenario's clean twin: the same job without its problem (what fixing it
    /// should give; compare with `stepscope whatif`).
    #[arg(long)]
    pub clean: bool,
    /// A random job of this seed instead of a scenario: data parallel or two pipeline
    /// stages, 4-64 ranks, 0-2 causes of random size and place (the message lists them);
    /// its size and steps are the seed's (--ranks and --steps are ignored)
    #[arg(long, value_name = "SEED")]
    pub random: Option<u64>,
}

/// `stepscope watch`.
#[derive(Debug, Args)]
pub struct WatchArgs {
    /// Log files to follow (like `tail -F`), or - for stdin (the default); or folders where
    /// a hung job's Flight Recorder dumps appear (the triage again as each lands).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Read files from their start (default: only lines written from now on).
    #[arg(long)]
    pub from_start: bool,
    /// Stop at the end of each file instead of following it.
    #[arg(long)]
    pub once: bool,
    /// Only this line format (default: recognise each line).
    #[arg(long, value_name = "NAME", value_parser = clap::builder::PossibleValuesParser::new(stepscope::session::watch::formats()))]
    pub format: Option<String>,
    /// Your own step line: a regex with named groups `step`, `time` (s, or with a unit),
    /// `time_ms`, `elapsed` / `elapsed_ms` (a cumulative timer), `of`, `rank`; it alone makes
    /// step records (e.g. 'it (?P<step>\d+) took (?P<time_ms>[\d.]+)ms').
    #[arg(long, value_name = "REGEX", conflicts_with = "format")]
    pub step_pattern: Option<String>,
    /// One JSON object per record and alert (`stepscope.watch/1`; the default off a terminal
    /// without --summary).
    #[arg(long)]
    pub jsonl: bool,
    /// A text summary at the end of input, instead of the live screen a terminal gets.
    #[arg(long)]
    pub summary: bool,
    /// At the end of input, say which recogniser (or learned template) read each source's
    /// records and where its step times come from (stdout with --summary, else stderr).
    #[arg(long)]
    pub explain: bool,
    /// Watchdog: call a source silent after max(5 typical steps, SECS) without a record.
    #[arg(long, value_name = "SECS", default_value_t = 120.0)]
    pub silence: f64,
    /// Model parameters (e.g. 7e9), to derive MFU when the log prints none.
    #[arg(long, value_name = "N", value_parser = positive)]
    pub model_params: Option<f64>,
    /// Tokens per optimizer step over all devices (global batch × sequence length).
    #[arg(long, value_name = "N", value_parser = positive)]
    pub tokens_per_step: Option<f64>,
    /// Devices the job runs on.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub devices: Option<u32>,
    /// One device's peak dense TFLOP/s at the training precision (H100 SXM BF16: 989).
    #[arg(long, value_name = "TFLOPS", value_parser = positive)]
    pub peak_tflops: Option<f64>,
}

/// A finite number > 0.
fn positive(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ => Err(format!("{} is not a number > 0", echo(s))),
    }
}
