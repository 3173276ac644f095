//! `stepscope snapshot` from the command line, and the keymap/theme files: user overrides
//! apply key by key; a bad file is a one-line error naming the file, the line and the key
//! (exit 2).

use crate::common;

use std::path::Path;
use std::process::Output;

/// Runs stepscope with an empty (or prepared) config directory.
fn run(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_stepscope"));
    c.args(args)
        .env("XDG_CONFIG_HOME", home)
        .env("HOME", home)
        .env_remove("NO_COLOR");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn usage_error(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    err
}

#[test]
fn snapshot_draws_a_pane_after_keys() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let s = ok(&run(
        h,
        &["snapshot", "--view", "timeline", "--size", "80x24"],
        &[],
    ));
    assert_eq!(s.lines().count(), 24);
    assert!(s.contains("step 13: ranks (Marey bands"));
    // Keys: drill into rank 3 from the overview (it opens on rank 5, the first finding's).
    let s = ok(&run(h, &["snapshot", "--keys", "<enter>"], &[]));
    assert!(s.contains("cluster › rank 5"), "{s}");
    let s = ok(&run(h, &["snapshot", "--keys", "j<enter>"], &[]));
    assert!(s.contains("cluster › rank 3"), "{s}");
    // --step, --rank and --op.
    let s = ok(&run(
        h,
        &[
            "snapshot", "--view", "operator", "--step", "11", "--rank", "5", "--op", "aten::mm",
        ],
        &[],
    ));
    assert!(
        s.contains("step 11 (2 of 6)") && s.contains("cluster › rank 5 › aten::mm"),
        "{s}"
    );
    // Deterministic: the same command, the same text.
    let again = ok(&run(
        h,
        &[
            "snapshot", "--view", "operator", "--step", "11", "--rank", "5", "--op", "aten::mm",
        ],
        &[],
    ));
    assert_eq!(s, again);
    // ASCII only, and NO_COLOR works (text has no colours anyway; it must not fail).
    let s = ok(&run(
        h,
        &["snapshot", "--ascii", "--view", "critical"],
        &[("NO_COLOR", "1")],
    ));
    assert!(s.is_ascii());
    assert!(s.contains("critical path"));
}

#[test]
fn snapshot_usage_errors() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let e = usage_error(&run(h, &["snapshot", "--op", "nope"], &[]));
    assert!(e.contains("no operator named `nope`"), "{e}");
    let e = usage_error(&run(h, &["snapshot", "--keys", "<nope>"], &[]));
    assert!(e.contains("unknown key name `nope`"), "{e}");
    let e = usage_error(&run(h, &["snapshot", "--rank", "99"], &[]));
    assert!(e.contains("no rank 99"), "{e}");
    let out = run(h, &["snapshot", "--size", "10x5"], &[]);
    assert_eq!(out.status.code(), Some(2));
    let out = run(h, &["snapshot", "--view", "nope"], &[]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn user_keymap_overrides_one_action() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("stepscope/keymaps");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("default.toml"),
        "[bindings]\npane_timeline = { keys = [\"t\"], desc = \"bands\" }\n",
    )
    .unwrap();
    let s = ok(&run(home.path(), &["snapshot", "--keys", "t"], &[]));
    assert!(s.contains("Marey bands"), "t opens the timeline: {s}");
    let s = ok(&run(home.path(), &["snapshot", "--keys", "2"], &[]));
    assert!(
        s.contains("own work vs step median"),
        "2 is unbound now: {s}"
    );
    let s = ok(&run(home.path(), &["snapshot", "--keys", "?"], &[]));
    assert!(s.contains("bands"), "help shows the new description");
}

#[test]
fn bad_keymap_and_theme_files_name_file_line_and_key() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let kdir = h.join("stepscope/keymaps");
    std::fs::create_dir_all(&kdir).unwrap();
    let user = kdir.join("default.toml");
    std::fs::write(
        &user,
        "[bindings]\n\nquit = { keys = [\"ctrlq\"], desc = \"quit\" }\n",
    )
    .unwrap();
    let e = usage_error(&run(h, &["snapshot"], &[]));
    assert_eq!(
        e.trim_end(),
        format!(
            "error: {}: line 3: `quit`: unknown key name `ctrlq`",
            user.display()
        )
    );
    std::fs::remove_file(&user).unwrap();

    let theme = h.join("my.toml");
    std::fs::write(&theme, "[theme-colors]\ncomm = \"#12345\"\n").unwrap();
    let e = usage_error(&run(
        h,
        &["snapshot", "--theme", theme.to_str().unwrap()],
        &[],
    ));
    assert_eq!(
        e.trim_end(),
        format!(
            "error: {}: line 2: `comm`: not a colour: `#12345`",
            theme.display()
        )
    );
    std::fs::write(&theme, "[theme-colors]\ncomm = \"red\"\ntypo = \"red\"\n").unwrap();
    let e = usage_error(&run(
        h,
        &["snapshot", "--theme", theme.to_str().unwrap()],
        &[],
    ));
    assert!(e.contains("line 3: `typo`: unknown colour key"), "{e}");
    std::fs::write(&theme, "[theme-colors\n").unwrap();
    let e = usage_error(&run(
        h,
        &["snapshot", "--theme", theme.to_str().unwrap()],
        &[],
    ));
    assert!(e.contains("my.toml: line 1: "), "{e}");
    let e = usage_error(&run(h, &["snapshot", "--theme", "neon"], &[]));
    assert!(
        e.contains("no theme `neon` (built in: dark, light, mono"),
        "{e}"
    );
    let e = usage_error(&run(
        h,
        &["--keymap", "/nonexistent/k.toml", "snapshot"],
        &[],
    ));
    assert!(e.contains("/nonexistent/k.toml: cannot read"), "{e}");
    // A good user theme of a built-in name loads over it.
    let tdir = h.join("stepscope/themes");
    std::fs::create_dir_all(&tdir).unwrap();
    std::fs::write(
        tdir.join("light.toml"),
        "[theme-colors]\ncomm = \"#ff0000\"\n",
    )
    .unwrap();
    ok(&run(h, &["snapshot", "--theme", "light"], &[]));
}

#[test]
fn the_default_command_prints_the_report_when_piped() {
    let home = tempfile::tempdir().unwrap();
    let s = ok(&run(home.path(), &[], &[]));
    assert!(
        s.contains("What to fix first"),
        "{}",
        &s[..s.len().min(400)]
    );
}

/// Trace names are untrusted in the TUI too: no pane of a trace whose names carry ESC/CSI
/// sequences, BEL or a bidi override draws one of those characters.
#[test]
fn no_pane_draws_a_control_character_or_bidi_override_from_a_name() {
    let home = tempfile::tempdir().unwrap();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/escape_names.json");
    for view in [
        "overview", "timeline", "critical", "roofline", "advisor", "operator", "comm",
    ] {
        let s = ok(&run(
            home.path(),
            &["snapshot", "--view", view, "--size", "160x40", path],
            &[],
        ));
        for line in s.lines() {
            assert!(
                !line.contains(stepscope::format::unsafe_char),
                "{view}:\n{s}"
            );
        }
        // The kernel is there, defused.
        if view == "operator" {
            assert!(s.contains("evil"), "{s}");
        }
    }
}

#[test]
fn small_wordings_say_what_they_mean() {
    // Issue #30's smaller items, on the demo.
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let snap = |args: &[&str]| ok(&run(h, &[&["snapshot"], args].concat(), &[]));
    // The overview's advisor box names the key, not a count of findings.
    let s = snap(&["--view", "overview", "--size", "120x40"]);
    assert!(s.contains("what to fix first (key 5: the advisor)"), "{s}");
    // Evidence numbers in words, their unit on the value: no raw `_ns` keys.
    let s = snap(&["--view", "advisor", "--size", "120x40"]);
    assert!(s.contains("device idle 372.0 ms"), "{s}");
    assert!(!s.contains("_ns "), "{s}");
    // A timeline pane too short to draw says so, not that the step has no operators.
    let s = snap(&["--view", "timeline", "--size", "120x8"]);
    assert!(
        s.contains("too small: the timeline pane needs 6 rows and has 5"),
        "{s}"
    );
    assert!(!s.contains("no operators"), "{s}");
    // The timeline's info line keeps the collective's name readable (cut in its middle) and
    // its facts; the start skew gives way first.
    let s = snap(&[
        "--view",
        "timeline",
        "--size",
        "120x40",
        "--keys",
        "/AllReduce_Sum<enter>",
    ]);
    let info = s
        .lines()
        .find(|l| l.contains("last to start"))
        .unwrap_or_else(|| panic!("{s}"));
    assert!(
        info.contains("#0: on 8 rows, last to start rank 5, longest 300.3 ms (rank 7) │"),
        "{info}"
    );
    assert!(info.contains("ncclDevKernel_AllRe…RING_LL(…) #0"), "{info}");
    // For a collective, the rank marked is the late one (least time in it: the others' long
    // totals are their wait for it), not a waiting rank. On the demo, rank 5 (its data loader
    // makes step 13 late by 300 ms) spends 223 ms in the all-reduce, the waiting ranks ~553 ms.
    let nccl = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
    let s = snap(&["--view", "operator", "--op", nccl, "--size", "120x40"]);
    assert!(s.contains("who is late to it: 8 ranks"), "{s}");
    let rows = s.lines().filter(|l| {
        l.strip_prefix('│')
            .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
    });
    let marked: Vec<&str> = rows.filter(|l| l.contains('◀')).collect();
    assert_eq!(marked.len(), 1, "{s}");
    assert!(marked[0].starts_with("│5 ◀"), "{s}");
    // The demo records shapes: a kernel without any says which operator launched it, not
    // "record_shapes=True adds them".
    assert!(
        s.contains("its operator record_param_comms recorded no shapes"),
        "{s}"
    );
    assert!(!s.contains("record_shapes=True"), "{s}");
}

#[test]
fn esc_comes_back_from_an_evidence_jump_to_exactly_where_it_left() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let snap = |keys: &str| {
        let s = ok(&run(
            h,
            &[
                "snapshot", "--view", "advisor", "--size", "120x30", "--keys", keys,
            ],
            &[],
        ));
        let head: Vec<String> = s.lines().take(3).map(str::to_string).collect();
        (head[0].clone(), head[2].clone(), s)
    };
    // The fourth finding's evidence is the comm pane at step 10; Esc comes back to the
    // advisor at step 13 with the fourth finding still selected.
    let (crumb, pane, _) = snap("jjj<enter>");
    assert!(
        crumb.contains("step 10 (1 of 6)") && pane.contains("collectives by type"),
        "{crumb}\n{pane}"
    );
    let (crumb, pane, s) = snap("jjj<enter><esc>");
    assert!(
        crumb.contains("step 13 (slow, 4 of 6)") && crumb.ends_with("│ cluster"),
        "{crumb}"
    );
    assert!(pane.contains("findings, largest impact first"), "{pane}");
    // The same screen as before the jump, but for the footer's "back from the evidence".
    let before = snap("jjj").2;
    let body = |s: &str| {
        s.lines()
            .skip(2)
            .take(27)
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(body(&s), body(&before));
    assert!(
        s.lines().last().unwrap().contains("back from the evidence"),
        "{s}"
    );
    // A jump that drilled to rank 5: Esc from an operator opened there pops to rank 5 first,
    // the next Esc returns to the advisor.
    let (crumb, ..) = snap("<enter>j<enter><esc>");
    assert!(crumb.ends_with("cluster › rank 5"), "{crumb}");
    let (crumb, pane, _) = snap("<enter>j<enter><esc><esc>");
    assert!(
        crumb.ends_with("│ cluster") && pane.contains("findings"),
        "{crumb}\n{pane}"
    );
}

#[test]
fn the_critical_path_legend_keeps_its_largest_categories() {
    let Some(shared) = common::shared() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    // PARAM DLRM, 8 ranks: `wait` (51%) and `kernel_gap` (25%) are the path's largest
    // categories; at 120 columns they lead the legend, and the smallest give way to "+N more".
    let dlrm = shared.join("traces/ext/param-dlrm8");
    let s = ok(&run(
        home.path(),
        &[
            "snapshot",
            "--view",
            "critical",
            "--size",
            "120x40",
            dlrm.to_str().unwrap(),
        ],
        &[],
    ));
    let legend = s.lines().nth(5).unwrap();
    assert!(
        legend.starts_with("│█ wait 10.1 ms (51%)  █ kernel_gap 4.96 ms (25%)"),
        "{s}"
    );
    assert!(legend.contains("more"), "{s}");
}

#[test]
fn a_search_lands_where_the_operator_ran() {
    // The cluster timeline draws device work: the data loader (a host operator) is found on
    // the lanes of rank 5, where it ran 301.5 ms in step 13; Esc comes back to the cluster.
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let keys = "/enumerate<enter>";
    let s = ok(&run(
        h,
        &["snapshot", "--view", "timeline", "--keys", keys],
        &[],
    ));
    assert!(s.contains("step 13: rank 5 lanes"), "{s}");
    assert!(s.contains("301.5 ms"), "{s}");
    let last = s.lines().last().unwrap();
    assert!(
        last.contains("rank 5, step 13: enumerate(DataLoader)"),
        "{last}"
    );
    let keys = "/enumerate<enter><esc>";
    let s = ok(&run(
        h,
        &["snapshot", "--view", "timeline", "--keys", keys],
        &[],
    ));
    assert!(s.lines().next().unwrap().ends_with("│ cluster"), "{s}");
    assert!(s.contains("step 13: ranks (Marey bands"), "{s}");
}
