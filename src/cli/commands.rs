//! The commands: the report, a TUI pane drawn to text, the demo cluster written as files.

use super::EXIT_FINDINGS;
use super::args::{
    DIFF_VIEW, DemoArgs, DemoFormat, DiffArgs, ExportArgs, Global, SnapshotArgs, SummarizeArgs,
    WATCH_VIEW, WatchArgs, WhatIfArgs,
};
use std::io::Write;
use std::path::PathBuf;
use stepscope::analysis::advisor::Severity;
use stepscope::error::Error;
use stepscope::output::Refused;
use stepscope::report::{self, Format};
use stepscope::session::{self, DemoSpec, Session, Settings};
use stepscope::ui::browser::Pane;
use stepscope::ui::browser::setup::{self, Setup};
use stepscope::ui::shell::{keymap, snapshot as draw};

/// Writes `text` to stdout; a closed pipe (`| head`) is not an error worth a message.
fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|_| out.flush());
}

/// The text report's width: the terminal's when stdout is one (at least 60 columns), else
/// 100 (a pipe, a CI log).
fn page_width() -> usize {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        return report::text_page();
    }
    ratatui::crossterm::terminal::size()
        .map_or(report::text_page(), |(cols, _)| usize::from(cols).max(60))
}

/// `stepscope report` (and no command off a terminal): the report of `paths`.
pub fn report(
    paths: &[PathBuf],
    format: Format,
    settings: &Settings,
    fail_on: Option<Severity>,
) -> Result<i32, Error> {
    // Flight Recorder dumps among the paths: their triage alone, or beside the traces.
    let (paths, flight) = session::flight::open(paths)?;
    let hung = fail_on.is_some() && flight.as_ref().is_some_and(|f| f.hang.verdict.is_some());
    let hang = flight.as_ref().map(report::hang::build);
    if let (Some(h), true) = (&hang, paths.is_empty()) {
        print(&report::hang::render(h, format, page_width()));
        return Ok(if hung { EXIT_FINDINGS } else { 0 });
    }
    let s = Session::open(&paths, settings)?;
    let mut r = report::build(&s.loaded, &s.analysis, s.opts.scope);
    r.hang = hang;
    print(&report::render_in(&r, format, page_width()));
    let tripped =
        hung || fail_on.is_some_and(|sev| s.analysis.findings.iter().any(|f| f.severity >= sev));
    // The process exits next: freeing millions of events one allocation at a time would only
    // delay the exit (the OS reclaims it all at once).
    std::mem::forget(s);
    Ok(if tripped { EXIT_FINDINGS } else { 0 })
}

/// The TUI (no command, on a terminal): the hang screen when every path is a Flight
/// Recorder dump, else the trace browser of the traces (dumps beside them are left to
/// `report`, said on stderr before the screen opens).
pub fn browse(paths: &[PathBuf], g: &Global) -> Result<i32, Error> {
    let (traces, flight) = session::flight::open(paths)?;
    match flight {
        Some(f) if traces.is_empty() => stepscope::ui::run::run_hang(f, &g.ui()),
        Some(f) => {
            stepscope::stderr_line!(
                "{} Flight Recorder dump(s) given with the traces: `stepscope report` shows their triage beside them; the browser opens the traces",
                f.dumps.len()
            );
            stepscope::ui::run(&traces, &g.settings(Default::default()), &g.ui())
        }
        None => stepscope::ui::run(paths, &g.settings(Default::default()), &g.ui()),
    }
}

/// `stepscope whatif`: the steps replayed with a fix against their measured times.
pub fn whatif(a: &WhatIfArgs, g: &Global) -> Result<i32, Error> {
    use stepscope::analysis::whatif::choice::Choice;
    let s = Session::open(&a.paths, &g.settings(super::args::scope(a.step, None)))?;
    let rank = a.rank.map(stepscope::model::RankId);
    if let Some(r) = rank {
        session::check_rank(&s.loaded.job, r)?;
    }
    let choice = Choice::parse(a.fix.as_deref(), rank);
    let run = report::whatif_cmd::run(&s.loaded.job, &s.analysis, &choice)
        .map_err(|m| Error::usage("whatif", m.to_string()))?;
    print(&report::whatif_cmd::render(
        &run,
        a.format.into(),
        page_width(),
    ));
    std::mem::forget(s);
    Ok(0)
}

/// `stepscope diff`: two runs compared; exit 1 when `--fail-on-regression` trips.
pub fn diff(a: &DiffArgs, g: &Global) -> Result<i32, Error> {
    let opts = stepscope::analysis::diff::DiffOptions {
        steps: a.steps.clone().unwrap_or_default(),
        op_map: a.op_map.clone(),
    };
    let pair = session::diff::open(&a.before, &a.after, &g.settings(Default::default()), &opts)?;
    use std::io::IsTerminal;
    if a.format.is_none() && a.fail_on_regression.is_none() && std::io::stdout().is_terminal() {
        return stepscope::ui::run::run_diff(pair, &g.ui());
    }
    let r = report::diff::of_pair(&pair);
    let format = a.format.map_or(Format::Text, Into::into);
    print(&report::diff::render(&r, format, page_width()));
    let tripped = a
        .fail_on_regression
        .and_then(|pct| report::diff::regression(&r, pct));
    if let Some(why) = &tripped {
        stepscope::stderr_line!("regression: {}", stepscope::format::printable(why));
    }
    std::mem::forget(pair);
    Ok(if tripped.is_some() { EXIT_FINDINGS } else { 0 })
}

/// `stepscope export --perfetto OUT`: the job and its diagnosis as one trace file.
/// `stepscope summarize`: this task's inputs written as summaries; a line per summary on
/// stdout, a line per failed input on stderr (exit 2 when any failed).
pub fn summarize(a: &SummarizeArgs, g: &Global) -> Result<i32, Error> {
    use stepscope::session::summarize::{self, Shard};
    let shard = match (a.shard, Shard::of_slurm()) {
        (Some(s), _) => s,
        (None, Some(s)) => {
            stepscope::stderr_line!(
                "note: srun task {} of {}: summarizing inputs k with k mod {} = {}",
                s.index,
                s.count,
                s.count,
                s.index
            );
            s
        }
        (None, None) => Shard::WHOLE,
    };
    let done = summarize::summarize(&a.paths, &g.settings(Default::default()), &a.out, shard)?;
    let mut out = std::io::stdout().lock();
    for (label, file, bytes) in &done.written {
        let line = format!(
            "{} -> {} ({})",
            stepscope::format::printable(label),
            stepscope::format::printable(&file.display().to_string()),
            stepscope::format::bytes(*bytes)
        );
        if writeln!(out, "{line}").is_err() {
            return Ok(0);
        }
    }
    for e in &done.failed {
        stepscope::stderr_line!("error: {}", stepscope::format::error_line(&e.to_string()));
    }
    if let Some(e) = done.failed.first() {
        return Ok(e.exit_code());
    }
    if done.written.is_empty() && shard != Shard::WHOLE {
        stepscope::stderr_line!(
            "note: task {} of {} has no input (input k goes to task k mod {})",
            shard.index,
            shard.count,
            shard.count
        );
    }
    Ok(0)
}

pub fn export(a: &ExportArgs, g: &Global) -> Result<i32, Error> {
    let out = &a.perfetto;
    let label = out.display().to_string();
    // Refused before the load (minutes on a big job), and again when written.
    stepscope::output::check(out, &a.paths).map_err(|e| Error::usage(&label, e.to_string()))?;
    let s = Session::open(&a.paths, &g.settings(Default::default()))?;
    let n = match report::perfetto::export(&s, out, &a.paths) {
        Ok(n) => n,
        // `--perfetto - | head`: the reader left; nothing to say.
        Err(Refused::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(0),
        Err(e) => return Err(Error::usage(&label, e.to_string())),
    };
    let label = if out.as_os_str() == "-" {
        "stdout".to_string()
    } else {
        label
    };
    stepscope::stderr_line!(
        "wrote {label}: {} event(s), {} diagnosis slice(s), {} launch arrow(s), {} critical-path arrow(s); open it in ui.perfetto.dev",
        n.events,
        n.diagnosis,
        n.launches,
        n.flows
    );
    std::mem::forget(s);
    Ok(0)
}

/// `stepscope snapshot`: one pane drawn to text after the setup's moves and keys.
pub fn snapshot(a: &SnapshotArgs, g: &Global) -> Result<i32, Error> {
    let usage = |msg: String| Error::usage("snapshot", msg);
    let keys = keymap::parse_script(&a.keys).map_err(usage)?;
    let (theme, keys_map) = g.ui().resolve()?;
    if a.view == WATCH_VIEW {
        return snapshot_watch(a, g, keys);
    }
    if a.view == DIFF_VIEW {
        let [before, after] = a.paths.as_slice() else {
            return Err(usage("--view diff needs two PATHs: BEFORE AFTER".into()));
        };
        let opts = stepscope::analysis::diff::DiffOptions::default();
        let pair = session::diff::open(before, after, &g.settings(Default::default()), &opts)?;
        let mut shell = stepscope::ui::diff::headless(pair, keys_map, theme, g.ascii, a.size);
        for k in keys {
            shell.key(k);
        }
        print(&draw::render(&shell));
        std::mem::forget(shell);
        return Ok(0);
    }
    let s = Session::open(&a.paths, &g.settings(Default::default()))?;
    let mut shell = stepscope::ui::headless(s, keys_map, theme, g.ascii, a.size);
    let set = Setup {
        view: Pane::from_name(&a.view),
        step: a.step.map(stepscope::model::StepNo),
        rank: a.rank.map(stepscope::model::RankId),
        op: a.op.clone(),
        keys,
    };
    setup::prepare(&mut shell, &set).map_err(usage)?;
    print(&draw::render(&shell));
    std::mem::forget(shell);
    Ok(0)
}

/// `snapshot --view watch`: PATHs replayed from their start to their end through the watch
/// engine, the live screen drawn after the keys.
fn snapshot_watch(a: &SnapshotArgs, g: &Global, keys: Vec<keymap::Key>) -> Result<i32, Error> {
    if a.paths.is_empty() {
        return Err(Error::usage(
            "snapshot",
            "--view watch needs PATHs (log or monitor files)",
        ));
    }
    let (theme, keys_map) = g.ui().resolve()?;
    let mut shell = stepscope::ui::run::headless_watch(&a.paths, keys_map, theme, g.ascii, a.size)?;
    for k in keys {
        shell.key(k);
    }
    print(&draw::render(&shell));
    Ok(0)
}

/// `stepscope demo`: the demo cluster as Kineto trace files.
pub fn demo(a: &DemoArgs, g: &Global) -> Result<(), Error> {
    let spec = match a.random {
        Some(seed) => DemoSpec {
            scale: a.scale,
            split: a.split_buckets,
            ..DemoSpec::random(seed, a.clean)
        },
        None => DemoSpec {
            ranks: a.ranks,
            steps: a.steps,
            scale: a.scale,
            split: a.split_buckets,
            scenario: g.scenario(),
            clean: a.clean,
            random: None,
        },
    };
    spec.check().map_err(|e| Error::usage("--ranks", e))?;
    let label = a.out.display().to_string();
    let files = match a.format {
        DemoFormat::Kineto => session::write_demo(spec, &a.out, !a.plain),
        DemoFormat::Nsys => session::write_demo_nsys(spec, &a.out),
    }
    .map_err(|e| Error::input(&label, format!("cannot write: {e}")))?;
    let bytes: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    stepscope::stderr_line!(
        "wrote {} rank file(s), {:.1} MB, to {label} ({})",
        files.len(),
        bytes as f64 / 1e6,
        spec.summary()
    );
    Ok(())
}

/// `stepscope watch`: the live screen on a terminal; JSON lines off one (or with `--jsonl`);
/// a text summary at the end of input with `--summary`.
pub fn watch(a: &WatchArgs, g: &Global) -> Result<i32, Error> {
    use std::io::IsTerminal;
    let terminal = std::io::stdout().is_terminal();
    if stepscope::report::watch::dumps::wanted(&a.paths) {
        // Folders: where a hung job's Flight Recorder dumps land.
        let text = a.summary || (terminal && !a.jsonl);
        let every = std::time::Duration::from_secs(1);
        if !a.once {
            let dirs: Vec<String> = a.paths.iter().map(|p| p.display().to_string()).collect();
            stepscope::stderr_line!(
                "watching {} for Flight Recorder dumps (to follow logs, name the files)",
                stepscope::format::printable(&dirs.join(", "))
            );
        }
        let mut out = std::io::stdout().lock();
        stepscope::report::watch::dumps::run(&a.paths, (a.once, text, every), &mut out)?;
        return Ok(0);
    }
    let opts = watch_options(a, g)?;
    if terminal && !a.jsonl && !a.summary {
        let reads_stdin = a.paths.is_empty() || a.paths.iter().any(|p| p.as_os_str() == "-");
        if reads_stdin && std::io::stdin().is_terminal() {
            return Err(Error::usage(
                "watch",
                "stdin is this terminal: pipe a log in (`tail -F train.log | stepscope watch -`) or name files",
            ));
        }
        return stepscope::ui::run::run_watch(&opts, &g.ui());
    }
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    stepscope::report::watch::run(&opts, &mut out)?;
    Ok(0)
}

fn watch_options(
    a: &WatchArgs,
    g: &Global,
) -> Result<stepscope::session::watch::WatchOptions, Error> {
    Ok(stepscope::session::watch::WatchOptions {
        paths: a.paths.clone(),
        follow: stepscope::input::FollowOptions {
            from_start: a.from_start,
            follow: !a.once,
        },
        format: a.format.clone(),
        step_pattern: a.step_pattern.clone(),
        jsonl: a.jsonl || !a.summary,
        summary: a.summary,
        explain: a.explain,
        silence: std::time::Duration::try_from_secs_f64(a.silence)
            .map_err(|e| Error::usage("--silence", e.to_string()))?,
        job: stepscope::analysis::live::job::Job {
            params: a.model_params,
            tokens_per_step: a.tokens_per_step,
            devices: a.devices,
            peak_tflops: a.peak_tflops,
            ranks_per_node: g.ranks_per_node,
        },
    })
}
