//! End to end: the real binary in a real terminal (tmux). Keys go in with `send-keys`, the
//! screen comes back with `capture-pane`; after `q` the shell around stepscope checks that the
//! terminal settings and the main screen are back. Under CI (`CI=true`) a missing tmux fails.

use crate::common;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

struct Session {
    name: String,
    dir: tempfile::TempDir,
}

fn tmux_available() -> bool {
    let ok = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        common::skip("tmux is not installed (.ci/run installs it)");
    }
    ok
}

fn tmux(args: &[&str]) -> String {
    let o = Command::new("tmux").args(args).output().expect("tmux runs");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

impl Session {
    /// Starts `shell` (a POSIX sh script) in a detached 120×40 tmux session; the script can
    /// use $BIN (stepscope) and $OUT (a scratch file). The config dir is empty, so the
    /// embedded keymap and theme are in effect.
    fn start(tag: &str, shell: &str) -> Session {
        let dir = tempfile::tempdir().unwrap();
        let name = format!("stepscope-e2e-{tag}-{}", std::process::id());
        let bin = env!("CARGO_BIN_EXE_stepscope");
        let script = format!(
            "export XDG_CONFIG_HOME='{cfg}' BIN='{bin}' OUT='{out}' TERM=xterm-256color; {shell}",
            cfg = dir.path().display(),
            out = dir.path().join("out").display(),
        );
        let status = Command::new("tmux")
            .args([
                "new-session",
                "-d",
                "-s",
                &name,
                "-x",
                "120",
                "-y",
                "40",
                "sh",
                "-c",
                &script,
            ])
            .status()
            .expect("tmux new-session");
        assert!(status.success());
        Session { name, dir }
    }

    fn screen(&self) -> String {
        tmux(&["capture-pane", "-p", "-t", &self.name])
    }

    /// Waits until the screen contains `what` (20 s at most: debug builds load slowly).
    fn wait_for(&self, what: &str) -> String {
        self.wait_until(what, |s| s.contains(what))
    }

    /// Waits until `what` is gone from the screen.
    fn wait_gone(&self, what: &str) -> String {
        self.wait_until(what, |s| !s.contains(what))
    }

    fn wait_until(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let began = Instant::now();
        loop {
            let s = self.screen();
            if ok(&s) {
                return s;
            }
            if began.elapsed() > Duration::from_secs(20) {
                panic!("timed out waiting on `{what}`; screen:\n{s}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn keys(&self, keys: &[&str]) {
        for k in keys {
            tmux(&["send-keys", "-t", &self.name, k]);
        }
    }

    /// Sends literal text (typed characters).
    fn type_text(&self, text: &str) {
        tmux(&["send-keys", "-t", &self.name, "-l", text]);
    }

    fn out(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("out")).unwrap_or_default()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["kill-session", "-t", &self.name])
            .output();
    }
}

/// A shell wrapper that records the terminal state before and after stepscope.
fn wrapped(cmd: &str) -> String {
    format!(
        "before=$(stty -g); {cmd}; code=$?; after=$(stty -g); \
         if [ \"$before\" = \"$after\" ]; then r=restored; else r=changed; fi; \
         echo \"exit=$code tty=$r\" > \"$OUT\"; echo \"exit=$code tty=$r\"; sleep 60"
    )
}

#[test]
fn a_session_drill_search_help_quit() {
    if !tmux_available() {
        return;
    }
    let s = Session::start("main", &wrapped("\"$BIN\""));
    s.wait_for("what to fix first");
    assert_eq!(
        tmux(&["display", "-p", "-t", &s.name, "#{alternate_on}"]).trim(),
        "1"
    );
    // Drill into the straggler (the overview opens on rank 5, the first finding's; rows go
    // by own work, so the next is rank 3).
    s.keys(&["j", "Enter"]);
    s.wait_for("cluster › rank 3");
    s.wait_for("rank 3, step 13: breakdown vs cluster median");
    // Open its top operator, then back out twice.
    s.keys(&["Enter"]);
    s.wait_for("who is slow at it");
    s.keys(&["Escape"]);
    s.wait_for("rank 3: operators by time");
    s.keys(&["BSpace"]);
    s.wait_for("own work vs step median");
    // Search, live results, accept.
    s.keys(&["/"]);
    s.type_text("allred");
    s.wait_for("search operators:");
    s.keys(&["Enter"]);
    s.wait_for("cluster › ncclDevKernel_AllReduce");
    // The operator's statistics arrive from a background thread.
    s.wait_for("count 192");
    // The timeline and its zoom.
    s.keys(&["2"]);
    s.wait_for("step 13: ranks (Marey bands");
    s.keys(&["+"]);
    s.wait_for("of 365.7 ms");
    // Help from the keymap, closed by any key.
    s.keys(&["?"]);
    s.wait_for("keys (any key closes)");
    s.keys(&["x"]);
    let screen = s.wait_gone("keys (any key closes)");
    assert!(screen.contains("step 13: ranks"), "{screen}");
    // Quit: the terminal is back as it was.
    s.keys(&["q"]);
    let screen = s.wait_for("exit=0");
    assert!(s.out().contains("exit=0 tty=restored"), "{}", s.out());
    assert!(
        !screen.contains("what to fix first"),
        "main screen restored:\n{screen}"
    );
    assert_eq!(
        tmux(&["display", "-p", "-t", &s.name, "#{alternate_on}"]).trim(),
        "0"
    );
}

#[test]
fn trace_on_stdin_keys_from_the_terminal() {
    if !tmux_available() {
        return;
    }
    let trace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/two_streams.json");
    let s = Session::start(
        "stdin",
        &wrapped(&format!("cat '{}' | \"$BIN\" -", trace.display())),
    );
    s.wait_for("what to fix first");
    s.keys(&["2"]);
    s.wait_for("Marey bands");
    s.keys(&["q"]);
    s.wait_for("exit=0");
    assert!(s.out().contains("exit=0 tty=restored"), "{}", s.out());
}

#[test]
fn a_bad_trace_restores_the_terminal_and_exits_2() {
    if !tmux_available() {
        return;
    }
    let s = Session::start(
        "bad",
        &wrapped("printf '{\"traceEvents\": [' > \"$OUT.json\"; \"$BIN\" \"$OUT.json\""),
    );
    let screen = s.wait_for("exit=2");
    assert!(s.out().contains("exit=2 tty=restored"), "{}", s.out());
    assert!(
        screen.contains("error: ") && screen.contains("out.json: byte"),
        "{screen}"
    );
}

#[test]
fn a_panic_restores_the_terminal() {
    // Only debug builds panic after the first frame when asked to (a release binary never
    // honours STEPSCOPE_TEST_PANIC); `cargo test --release` builds the binary without it.
    if !tmux_available() || !cfg!(debug_assertions) {
        return;
    }
    let s = Session::start(
        "panic",
        &wrapped(
            "STEPSCOPE_TEST_PANIC=1 RUST_BACKTRACE=0 TMPDIR=\"$(dirname \"$OUT\")\" \"$BIN\" 2>\"$OUT.err\"",
        ),
    );
    s.wait_for("exit=70");
    assert!(s.out().contains("exit=70 tty=restored"), "{}", s.out());
    assert_eq!(
        tmux(&["display", "-p", "-t", &s.name, "#{alternate_on}"]).trim(),
        "0"
    );
    // One line: what failed, where, and the file that holds the backtrace.
    let err = std::fs::read_to_string(s.dir.path().join("out.err")).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: internal error") && err.contains("a panic after the first frame"),
        "{err}"
    );
    let file = err.trim_end().rsplit("details in ").next().unwrap();
    let details = std::fs::read_to_string(file).unwrap();
    assert!(
        details.contains("panicked: STEPSCOPE_TEST_PANIC") && details.contains("after_frame"),
        "{details}"
    );
}

#[test]
fn watch_a_live_pipe_alert_lines_and_quit() {
    if !tmux_available() {
        return;
    }
    // A producer that keeps writing Megatron lines (80 ms apart) while the TUI runs; step 12
    // stalls at 3 s. After q it dies of SIGPIPE on its next write, so the pipeline ends.
    let producer = "i=1; while [ $i -le 2000 ]; do t=1000; [ $i = 12 ] && t=3000; \
         echo \" iteration $i/ 2000 | elapsed time per iteration (ms): $t.0 | lm loss: 2.0 |\"; \
         [ $i = 11 ] && echo 'saving checkpoint at iteration 11 to /ckpt'; \
         i=$((i+1)); sleep 0.08; done";
    let s = Session::start(
        "watch",
        &wrapped(&format!("( {producer} ) | \"$BIN\" watch -")),
    );
    s.wait_for("waiting for step lines");
    // Lines arrive while the screen is up: the step strip forms and the stall is alerted.
    s.wait_for("slow_steps (one-off): steps 12");
    let count = |screen: &str| -> u64 {
        let i = screen.find(" lines ").expect("status line");
        let head = &screen[..i];
        head.rsplit(' ').next().unwrap().parse().unwrap()
    };
    let before = count(&s.screen());
    s.wait_until("more lines", |sc| count(sc) > before);
    s.keys(&["Enter"]);
    // The overlay can be captured half drawn (its title before its lines): wait for the
    // line itself, which fails with the screen if it never shows.
    s.wait_until("the checkpoint line in the alert's source lines", |sc| {
        sc.contains("its source lines") && sc.contains("saving checkpoint at iteration 11")
    });
    s.keys(&["Escape"]);
    s.wait_gone("its source lines");
    s.keys(&["q"]);
    s.wait_for("exit=0");
    assert!(s.out().contains("exit=0 tty=restored"), "{}", s.out());
}

/// A CJK log line and a tqdm bar (multi-byte characters where a line is cut for a look at
/// its head) killed the watch engine's thread, after which the screen ignored `q`. Now they
/// are read as lines like any other and `q` quits.
#[test]
fn watch_reads_cjk_and_tqdm_lines_and_quits() {
    if !tmux_available() {
        return;
    }
    let producer = "printf '训练开始，正在加载数据集，请稍候片刻\\n'; \
         printf 'Training:  70%%|███████   | 700/1000 [00:10<00:04, 70.00it/s]\\n'; \
         i=1; while [ $i -le 2000 ]; do \
         echo \" iteration $i/ 2000 | elapsed time per iteration (ms): 1000.0 | lm loss: 2.0 |\"; \
         i=$((i+1)); [ $i -gt 30 ] && sleep 0.1; done";
    let s = Session::start(
        "watch-cjk",
        &wrapped(&format!("( {producer} ) | \"$BIN\" watch - 2>\"$OUT.err\"")),
    );
    // Both lines are read: the CJK one is not recognised, the bar is a tqdm step; the
    // iterations after them are Megatron's. After `q` the producer dies of SIGPIPE on its
    // next write, so the pipeline ends.
    s.wait_for("recognised · 1 unrecognised");
    s.wait_for("steps 2–");
    s.keys(&["q"]);
    s.wait_for("exit=0");
    assert!(s.out().contains("exit=0 tty=restored"), "{}", s.out());
    let err = std::fs::read_to_string(s.dir.path().join("out.err")).unwrap_or_default();
    assert!(!err.contains("panicked"), "{err}");
}

/// The evidence walk: on every demo scenario, Enter on each finding opens its proof in the
/// real terminal — the advisor gone, the status line saying what to look at — and Esc comes
/// back to the findings. Some proofs are checked by what they show.
#[test]
fn the_evidence_walk_opens_each_finding_s_proof_and_comes_back() {
    if !tmux_available() {
        return;
    }
    use stepscope::session::{Scenario, Session as Job, Settings};
    // (scenario, finding position, what its proof shows).
    let shows: [(&str, usize, &str); 7] = [
        ("default", 0, "step 13: rank 5 lanes"),
        ("default", 1, "rank 3 is last at ncclDevKernel_A"),
        ("default", 2, "cudaStreamSynchronize ("),
        ("default", 3, "collectives per rank, step"),
        (
            "small-messages",
            0,
            "collectives of at most 16.0 MiB per rank",
        ),
        ("allocator-churn", 0, "the host blocks in the allocator"),
        ("stage-imbalance", 0, "rank 4's row, against every rank's"),
    ];
    const ADVISOR: &str = "findings, largest impact first";
    let mut followed = 0;
    for scenario in Scenario::ALL {
        let settings = Settings {
            scenario,
            ..Settings::default()
        };
        let findings = Job::open(&[], &settings)
            .expect("demo")
            .analysis
            .findings
            .len();
        let name = scenario.name();
        let s = Session::start(
            &format!("walk-{name}"),
            &wrapped(&format!("\"$BIN\" --scenario {name}")),
        );
        s.wait_for("what to fix first");
        s.keys(&["5"]);
        s.wait_for(ADVISOR);
        for i in 0..findings {
            s.keys(&["g"]);
            for _ in 0..i {
                s.keys(&["j"]);
            }
            s.keys(&["Enter"]);
            // The status line (the last) says why instead of the key hints.
            let screen = s.wait_until("the proof", |sc| {
                let last = sc
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("");
                !sc.contains(ADVISOR) && !last.contains("? help")
            });
            if let Some((_, _, what)) = shows.iter().find(|x| (x.0, x.1) == (name, i)) {
                assert!(screen.contains(what), "{name} #{i}: {what}\n{screen}");
            }
            s.keys(&["Escape"]);
            s.wait_for(ADVISOR);
            followed += 1;
        }
        s.keys(&["q"]);
        s.wait_for("exit=0");
        assert!(s.out().contains("exit=0 tty=restored"), "{}", s.out());
    }
    assert!(followed >= 30, "{followed}");
}

#[test]
fn the_whatif_pane_replays_a_finding_s_fix_zooms_and_comes_back() {
    if !tmux_available() {
        return;
    }
    const LIST: &str = "what fixing it saves";
    let s = Session::start("whatif", &wrapped("\"$BIN\""));
    s.wait_for("what to fix first");
    s.keys(&["8"]);
    s.wait_for(LIST);
    // The first finding's replay arrives from a background task: measured → with its fix.
    s.wait_for("step 13: fix dataloader saves 286.0 ms of this step: measured 365.4 ms → 79.4 ms");
    // The next finding, the straggler: its own replay of the same step.
    s.keys(&["j"]);
    let screen = s.wait_for("fix straggler saves");
    assert!(screen.contains("r3   msr"), "{screen}");
    // Enter zooms the replay over the whole pane; Esc brings the list back.
    s.keys(&["Enter"]);
    s.wait_gone(LIST);
    s.keys(&["Escape"]);
    s.wait_for(LIST);
    // Another step replays too.
    s.keys(&["]"]);
    s.wait_for("step 14: fix");
    s.keys(&["q"]);
    s.wait_for("exit=0");
    assert!(s.out().contains("exit=0 tty=restored"), "{}", s.out());
}

#[test]
fn the_layout_pane_opens_a_rank_s_timeline_cycles_its_views_and_comes_back() {
    if !tmux_available() {
        return;
    }
    const GRID: &str = "layout: DP 4 × PP 2";
    let s = Session::start("layout", &wrapped("\"$BIN\" --scenario stage-imbalance"));
    s.wait_for("what to fix first");
    s.keys(&["9"]);
    s.wait_for(GRID);
    // Rank 5 sits in stage 1 of replica 1: the fourth rank walking row by row (0, 4, 1, 5).
    for _ in 0..3 {
        s.keys(&["j"]);
    }
    s.wait_for("rank 5 pp1·dp1: ");
    s.keys(&["Enter"]);
    s.wait_for("cluster › rank 5");
    s.keys(&["Escape"]);
    s.wait_for(GRID);
    // `m` the metric, `g` the stage's replicas in one cell (in this pane `g` is not `first`),
    // `t` the topology and back.
    s.keys(&["m"]);
    s.wait_for("collective wait vs median");
    s.keys(&["g"]);
    s.wait_for("cells: dp");
    s.keys(&["t"]);
    s.wait_for("topology: 1 node(s)");
    s.keys(&["t"]);
    s.wait_for(GRID);
    s.keys(&["q"]);
    s.wait_for("exit=0");
    assert!(s.out().contains("exit=0 tty=restored"), "{}", s.out());
}

#[test]
fn the_diff_screen_lists_operators_opens_both_timelines_and_quits() {
    if !tmux_available() {
        return;
    }
    let s = Session::start("diff", &wrapped("\"$BIN\" diff demo demo:straggler"));
    s.wait_for("Breakdown per rank-step");
    s.wait_for("resolved");
    s.keys(&["2"]);
    s.wait_for("Top-level operators");
    s.keys(&["s"]);
    s.wait_for("sorted by before");
    s.keys(&["Enter"]);
    s.wait_for("both runs on one scale");
    s.keys(&["Escape"]);
    s.wait_for("Top-level operators");
    s.keys(&["q"]);
    s.wait_for("exit=0");
    assert!(s.out().contains("exit=0 tty=restored"), "{}", s.out());
}

#[test]
fn the_hang_screen_names_the_absent_rank_opens_its_operations_and_quits() {
    if !tmux_available() {
        return;
    }
    let dumps = common::testdata("flight/hang4");
    let cmd = format!("\"$BIN\" '{}'", dumps.display());
    let s = Session::start("hang", &wrapped(&cmd));
    s.wait_for("rank(s) 2 never entered nccl:all_reduce #12");
    s.keys(&["j", "j", "Enter"]);
    s.wait_for("rank 2 in default_pg: its operations");
    s.keys(&["Escape", "Tab"]);
    s.wait_for("pp:0: last collective");
    s.wait_for("p2p open");
    s.keys(&["q"]);
    s.wait_for("exit=0");
    assert!(s.out().contains("exit=0 tty=restored"), "{}", s.out());
}
