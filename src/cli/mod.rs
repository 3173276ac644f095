//! Command line (README.md, `stepscope --help`): parse, dispatch, and map failures to exit codes — 0 ok, 1
//! `--fail-on` tripped, 2 bad input, usage or configuration, 70 an internal failure, 74 the
//! terminal failed.

mod args;
mod commands;
mod panic;

use args::{
    DemoArgs, DiffArgs, ExportArgs, Global, ReportArgs, SnapshotArgs, SummarizeArgs, WatchArgs,
    WhatIfArgs,
};
use clap::{Parser, Subcommand};
use std::io::IsTerminal;
use std::path::PathBuf;
use stepscope::analysis::ops::Scope;
use stepscope::error::ErrorKind;
use stepscope::format::{MAX_ECHO, error_line, fit_middle};
use stepscope::report::Format;

/// Exit code when `--fail-on` trips.
pub const EXIT_FINDINGS: i32 = 1;

/// Why is this distributed training step slow? Reads per-rank PyTorch profiler (Kineto)
/// traces, splits every step of every rank into compute / overlap / comm / memory /
/// host-bound / free time, and reports the slow steps, ranks and operators.
#[derive(Debug, Parser)]
#[command(name = "stepscope", version)]
#[command(
    after_help = "Examples:\n  stepscope                              the embedded demo cluster\n  stepscope traces/                      every *.json[.gz] under traces/, one rank each\n  stepscope report run/ --format json    the stable JSON report (docs/report-schema.md)\n  stepscope demo --out /tmp/demo         write the demo cluster as Kineto .json.gz\n  stepscope --scenario straggler         a demo job with one canonical problem (see --scenario)\n  stepscope whatif run/ --fix ideal      step time with every fix replayed, S and its parts\n  stepscope diff base/ test/             what changed between two runs, and why\n  stepscope export run/ --perfetto o.json.gz   the job and its diagnosis for ui.perfetto.dev\n  srun -N 8 stepscope summarize run/ --out sums/   read a huge job where it lies; then stepscope sums/\n  tail -F train.log | stepscope watch -  slow steps and ranks from a live training log\n\nExit codes:\n  0   ok\n  1   --fail-on tripped (a finding at or above the severity), or --fail-on-regression\n  2   bad input, usage or configuration (one line on stderr: the file and the position)\n  70  internal error, a bug: one line on stderr names the file holding the backtrace\n  74  the terminal could not be set up or drawn on"
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

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the report (text, JSON or markdown) for traces or the demo cluster.
    Report(ReportArgs),
    /// Write the demo cluster as real Kineto trace files.
    Demo(DemoArgs),
    /// Draw one TUI pane to plain text (deterministic; for CI and docs).
    Snapshot(SnapshotArgs),
    /// Read training logs live (files followed, or stdin): slow steps and slow ranks.
    Watch(WatchArgs),
    /// Replay the steps with a fix: measured vs predicted step time, each finding's saving,
    /// the slowdown S and its parts (docs/metrics.md, "Replay").
    Whatif(WhatIfArgs),
    /// Compare two runs: the step time's change by part, rank, operator, collective, critical
    /// path and finding (docs/metrics.md, "Diff"); `--fail-on-regression` gates CI.
    Diff(DiffArgs),
    /// Write the job and its diagnosis (findings, critical path, collective wait vs transit,
    /// the ideal timeline) as one Perfetto / Chrome trace.
    Export(ExportArgs),
    /// Read each trace where it lies and write its summary into one folder (run on the
    /// cluster's scheduler: one task per node or per file); `stepscope DIR` then opens the
    /// summaries as it opens traces (docs/cache.md).
    Summarize(SummarizeArgs),
}

/// A clap usage error on one line: its message, possible values and tip joined, the usage
/// block and the pointer to `--help` replaced by one short hint.
fn one_line(rendered: &str) -> String {
    let parts: Vec<&str> = rendered
        .lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information")
        })
        .collect();
    // clap quotes a refused value whole: each long word is cut, with its size.
    let mut line = parts
        .join("; ")
        .replace(":;", ":")
        .split(' ')
        .map(|w| match w.len() > 2 * MAX_ECHO {
            true => format!("{} ({} bytes)", fit_middle(w, MAX_ECHO), w.len()),
            false => w.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ");
    if !line.starts_with("error:") {
        line = format!("error: {line}");
    }
    format!("{} (stepscope --help)", error_line(&line))
}

/// The worker threads `--threads N` gets: at least 1, at most the machine's cores (said on
/// stderr when it asked for more: more threads than cores only add switching, and a huge
/// N spent minutes spawning).
fn threads(n: usize) -> Result<usize, String> {
    if n == 0 {
        return Err("must be at least 1".into());
    }
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    if n > cores {
        stepscope::stderr_line!("note: --threads {n} capped at this machine's {cores} cores");
    }
    Ok(n.min(cores))
}

/// Runs the command line; returns the process exit code.
pub fn main() -> i32 {
    panic::install();
    panic::test_switch();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) if e.use_stderr() => {
            stepscope::stderr_line!("{}", one_line(&e.render().to_string()));
            return ErrorKind::Usage.exit_code();
        }
        Err(e) => {
            // --help and --version.
            let _ = e.print();
            return 0;
        }
    };
    if let Err(e) =
        stepscope::session::check_max_input().and_then(|()| stepscope::session::check_cache_env())
    {
        stepscope::stderr_line!("error: {}", error_line(&e));
        return ErrorKind::Usage.exit_code();
    }
    if let Some(n) = cli.global.threads {
        let threads = match threads(n) {
            Ok(t) => t,
            Err(e) => {
                stepscope::stderr_line!("error: --threads: {e}");
                return ErrorKind::Usage.exit_code();
            }
        };
        if let Err(e) = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global()
        {
            stepscope::stderr_line!("error: --threads: {e}");
            return ErrorKind::Usage.exit_code();
        }
    }
    let g = &cli.global;
    let result = match &cli.command {
        Some(Command::Report(a)) => commands::report(
            &a.paths,
            a.format.into(),
            &g.settings(a.scope()),
            a.fail_on.map(Into::into),
        ),
        Some(Command::Demo(a)) => commands::demo(a, g).map(|()| 0),
        Some(Command::Snapshot(a)) => commands::snapshot(a, g),
        Some(Command::Watch(a)) => commands::watch(a, g),
        Some(Command::Whatif(a)) => commands::whatif(a, g),
        Some(Command::Diff(a)) => commands::diff(a, g),
        Some(Command::Export(a)) => commands::export(a, g),
        Some(Command::Summarize(a)) => commands::summarize(a, g),
        // The TUI on a terminal; the text report when stdout is a pipe or a file.
        None if std::io::stdout().is_terminal() => commands::browse(&cli.paths, g),
        None => commands::report(
            &cli.paths,
            Format::Text,
            &g.settings(Scope::default()),
            None,
        ),
    };
    // Cache entries are written beside the analysis; they land before the process ends.
    stepscope::session::finish_cache_writes();
    match result {
        Ok(code) => code,
        Err(e) => {
            stepscope::stderr_line!("error: {}", error_line(&e.to_string()));
            e.exit_code()
        }
    }
}
