//! Nsight Systems SQLite exports (issue 45): the shared real exports of three schema
//! generations load, and CloverLeaf's kernels and copies are exactly the rows `nsys stats`
//! printed for the same report (`cloverleaf_gpu_trace.csv`), its runtime calls those of
//! `cloverleaf-cuda_api_trace.csv`.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use stepscope::input::{Input, LoadOptions, discover};
use stepscope::model::{Kind, LaneSide};
use stepscope::session::Loaded;

fn load(path: &Path) -> Loaded {
    let inputs: Vec<Input> = discover(&[path.to_path_buf()]).expect("discovered");
    stepscope::session::load(&inputs, &LoadOptions::default()).expect("it loads")
}

/// `TARGET_INFO_SESSION_START_TIME.utcEpochNs` of the CloverLeaf export: its rows are ns
/// after it, and stepscope puts them on that UTC clock.
const CLOVERLEAF_EPOCH: i64 = 1_696_392_839_587_175_550;

/// (session ns, duration, name) of each Enter row of a pipit-style `nsys stats` CSV of
/// `trace` type, matched with its Leave row.
fn golden(csv: &Path, stream_col: Option<&str>) -> Vec<(i64, i64, String, String)> {
    let mut r = csv::Reader::from_path(csv).expect("the golden");
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    let head = r.headers().unwrap().clone();
    let col = |n: &str| head.iter().position(|h| h == n).unwrap();
    let (name, kind, at, end) = (
        col("Name"),
        col("Event Type"),
        col("Timestamp (ns)"),
        col("_matching_timestamp"),
    );
    let stream = stream_col.map(col);
    rows.iter()
        .filter(|x| &x[kind] == "Enter")
        .map(|x| {
            let t: i64 = x[at].parse().unwrap();
            let e: i64 = x[end].parse().unwrap();
            let s = stream.map_or(String::new(), |k| x[k].to_string());
            (t, e - t, x[name].to_string(), s)
        })
        .collect()
}

#[test]
fn cloverleaf_reproduces_nsys_stats() {
    let Some(shared) = common::shared() else {
        return common::skip("../shared");
    };
    let dir = shared.join("traces/nsys/pipit-cloverleaf");
    let l = load(&dir.join("perlmutter-cloverleaf-cuda.sqlite"));
    assert_eq!(l.job.ranks.len(), 1);
    let rank = &l.job.ranks[0];
    let ev = &rank.events;
    let s = &l.job.strings;
    // Device work: (session start, duration, stream) → names, against the GPU trace.
    let mut ours: BTreeMap<(i64, i64, String), Vec<String>> = BTreeMap::new();
    let mut host: Vec<(i64, i64, String)> = Vec::new();
    for i in 0..ev.len() {
        let lane = &rank.lanes[ev.lane[i] as usize];
        let at = ev.start[i] - CLOVERLEAF_EPOCH;
        match (lane.side, ev.kind[i]) {
            (LaneSide::Device, Kind::Compute | Kind::Memcpy) => ours
                .entry((at, ev.dur[i], s.resolve(lane.tid).to_string()))
                .or_default()
                .push(s.resolve(ev.name[i]).to_string()),
            (LaneSide::Cpu, Kind::Launch) => {
                host.push((at, ev.dur[i], s.resolve(ev.name[i]).to_string()))
            }
            _ => {}
        }
    }
    let gpu = golden(&dir.join("cloverleaf_gpu_trace.csv"), Some("streamId"));
    assert_eq!(gpu.len(), 1_591, "1 312 kernels and 279 copies");
    assert_eq!(ours.values().map(Vec::len).sum::<usize>(), gpu.len());
    for (t, dur, name, stream) in &gpu {
        let names = ours
            .get(&(*t, *dur, stream.clone()))
            .unwrap_or_else(|| panic!("{name} at {t} ({dur} ns, stream {stream})"));
        // `nsys stats` prints a kernel's short name (stepscope keeps the demangled one) and
        // a copy's kind (`CUDA_MEMCPY_KIND_HTOD`; stepscope: `[CUDA memcpy Host-to-Device]`).
        let want = match name.as_str() {
            "CUDA_MEMCPY_KIND_HTOD" => "[CUDA memcpy Host-to-Device]",
            "CUDA_MEMCPY_KIND_DTOH" => "[CUDA memcpy Device-to-Host]",
            kernel => kernel,
        };
        assert!(
            names.iter().any(|n| n.contains(want)),
            "{name} at {t}: {names:?}"
        );
    }
    // Runtime calls: every `cuda_api_trace` row, same start, duration and name.
    let api = golden(&dir.join("cloverleaf-cuda_api_trace.csv"), None);
    assert_eq!(api.len(), 3_048);
    host.sort();
    let mut want: Vec<(i64, i64, String)> = api.into_iter().map(|(t, d, n, _)| (t, d, n)).collect();
    want.sort();
    assert_eq!(host, want);
    // Each kernel is linked to the runtime call that launched it.
    let linked = (0..ev.len())
        .filter(|&i| ev.kind[i] == Kind::Compute && ev.link[i] != stepscope::model::EventIx::NONE)
        .count();
    assert_eq!(linked, 1_312);
}

/// The three schema generations load: the old `EXPORT_META_DATA` (saxpy, 2022), 3.13 and
/// 3.16; their devices come from `TARGET_INFO_GPU`, NVTX ranges are annotations.
#[test]
fn every_shared_export_loads() {
    let Some(shared) = common::shared() else {
        return common::skip("../shared");
    };
    let nsys = shared.join("traces/nsys");
    // Steps: none of them records `ProfilerStep#N`. nvFuser's 19 kernels do not repeat (one
    // step, the whole trace); saxpy's loop runs its one kernel 5 times (5 steps of one
    // kernel); CloverLeaf's time steps are 250 kernels each, 4 whole ones after the set-up.
    for (file, device, kernels, annotations, steps) in [
        ("nvfuser-h200/report1.sqlite", "NVIDIA H200", 19, 652, 1),
        (
            "pipit-saxpy-mpi/saxpy-mpi-cuda_nsys_perlmutter0.sqlite",
            "NVIDIA A100-SXM4-40GB",
            5,
            22,
            5,
        ),
        (
            "pipit-cloverleaf/perlmutter-cloverleaf-cuda.sqlite",
            "NVIDIA A100-SXM4-80GB",
            1_312,
            0,
            4,
        ),
    ] {
        let l = load(&nsys.join(file));
        let r = &l.job.ranks[0];
        let count = |k: Kind| r.events.kind.iter().filter(|&&x| x == k).count();
        assert_eq!(
            (count(Kind::Compute), count(Kind::Annotation)),
            (kernels, annotations),
            "{file}"
        );
        assert_eq!(l.job.strings.resolve(r.devices[0]), device, "{file}");
        assert_eq!(r.source.format.as_str(), "nsys");
        assert_eq!(r.steps.len(), steps, "{file}");
        let found = l
            .warnings
            .iter()
            .any(|w| w.contains("from the repeating kernel sequence"));
        assert_eq!(found, steps > 1, "{file}: {:?}", l.warnings);
    }
}

/// An Nsight export of `ranks` processes, each driving its own GPU, written from nsys's schema
/// (the tables and columns the 3.16 schema has, none of the rest): 3 steps of NVTX
/// `ProfilerStep#N`, each a GEMM then an NCCL all-reduce that ends on every rank 1 ms after the
/// slowest GEMM. `slow`'s GEMM takes 8 ms, the others' 5 ms. The file holds the processes
/// of `ranks` (of a job of `world`), on a host whose session started `late` ns after the
/// first host's: its rows are that much earlier on its own clock.
fn synthetic(path: &Path, ranks: std::ops::Range<i64>, world: i64, slow: i64, late: i64) {
    let db = rusqlite::Connection::open(path).unwrap();
    db.execute_batch(
        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
         CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INT, utcTime TEXT, localTime TEXT);
         CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT NOT NULL, end INT NOT NULL,
           deviceId INT NOT NULL, contextId INT, streamId INT NOT NULL, correlationId INT,
           globalPid INT, demangledName INT NOT NULL, shortName INT NOT NULL);
         CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INT NOT NULL, end INT NOT NULL,
           eventClass INT, globalTid INT, correlationId INT, nameId INT NOT NULL);
         CREATE TABLE NVTX_EVENTS (start INT NOT NULL, end INT, eventType INT NOT NULL,
           rangeId INT, category INT, color INT, text TEXT, globalTid INT, endGlobalTid INT,
           textId INT, domainId INT);
         INSERT INTO StringIds VALUES (1, 'ampere_sgemm_128x64_tn'),
           (2, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)'),
           (3, 'cudaLaunchKernel'), (4, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL');
",
    )
    .unwrap();
    db.execute(
        "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (?1, '', '')",
        [1_700_000_000_000_000_000i64 + late],
    )
    .unwrap();
    let ms = 1_000_000i64;
    for step in 0..3i64 {
        let t = 10 * ms + step * 12 * ms - late;
        let gemm_end = |r: i64| t + ms + if r == slow { 8 } else { 5 } * ms;
        let all_end = (0..world).map(gemm_end).max().unwrap() + ms;
        for r in ranks.clone() {
            let pid = 1000 + r;
            let (gpid, gtid) = (pid << 24, (pid << 24) | pid);
            let corr = 1 + step * 2;
            db.execute(
                "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (?1, ?2, 59, ?3, ?4)",
                rusqlite::params![t, t + 11 * ms, format!("ProfilerStep#{}", step + 5), gtid],
            )
            .unwrap();
            for (k, at) in [(0, t + ms / 2), (1, t + 2 * ms)] {
                db.execute(
                    "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?1, ?2, 1, ?3, ?4, 3)",
                    rusqlite::params![at, at + 20_000, gtid, corr + k],
                )
                .unwrap();
            }
            db.execute(
                "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?1, ?2, ?3, 1, 7, ?4, ?5, 1, 1)",
                rusqlite::params![t + ms, gemm_end(r), r, corr, gpid],
            )
            .unwrap();
            db.execute(
                "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?1, ?2, ?3, 1, 20, ?4, ?5, 2, 4)",
                rusqlite::params![gemm_end(r), all_end, r, corr + 1, gpid],
            )
            .unwrap();
        }
    }
}

/// nsys around `torchrun`: one file, four processes, one GPU each. Each process is a rank (by
/// pid order, said), its steps are its NVTX `ProfilerStep#N` ranges, its NCCL kernels are
/// collectives matched across the ranks, and the slow rank is the one the report names.
#[test]
fn one_file_of_several_processes_is_a_job_of_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report1.sqlite");
    synthetic(&path, 0..4, 4, 2, 0);
    let l = load(&path);
    assert_eq!(l.job.ranks.len(), 4);
    for r in &l.job.ranks {
        let steps: Vec<u64> = r.steps.iter().map(|s| u64::from(s.number.0)).collect();
        assert_eq!(steps, [5, 6, 7], "{}", r.source.path);
        // Two launches linked to their kernels each step.
        let linked = r
            .events
            .link
            .iter()
            .filter(|&&x| x != stepscope::model::EventIx::NONE);
        assert_eq!(linked.count(), 12);
    }
    // The NCCL kernels are matched by name in the world group (no NVTX payload names their
    // communicator): the others wait 3 ms a step for rank 2's 8 ms GEMM; fixing it saves
    // 3 ms in each of the 3 steps.
    let json = common::report_json(&[&path], &[]);
    let first = &json["findings"][0];
    assert_eq!(first["rule"], "straggler", "{first}");
    assert_eq!(
        first["evidence"]["ranks"],
        serde_json::json!([2]),
        "{first}"
    );
    assert_eq!(first["impact_ns"], 9_000_000, "{first}");
}

/// One file per host (`nsys profile -o report_%q{NODE}` under srun): two files of two
/// processes each, the second host's session started 5 s later on the UTC clock. Its rows
/// are put on that clock, so the job lines up as if one file held it: the same four ranks
/// in file and process order, and the same straggler saving.
#[test]
fn one_file_per_host_lines_up_on_the_sessions_clock() {
    let dir = tempfile::tempdir().unwrap();
    let late = 5_000_000_000;
    synthetic(&dir.path().join("report_0.sqlite"), 0..2, 4, 2, 0);
    synthetic(&dir.path().join("report_1.sqlite"), 2..4, 4, 2, late);
    let l = load(dir.path());
    assert_eq!(l.job.ranks.len(), 4);
    let first = |r: usize| l.job.ranks[r].steps[0].start;
    assert_eq!(first(3), first(0), "one clock");
    let json = common::report_json(&[dir.path()], &[]);
    let f = &json["findings"][0];
    assert_eq!(f["rule"], "straggler", "{f}");
    assert_eq!(f["evidence"]["ranks"], serde_json::json!([2]), "{f}");
    assert_eq!(f["impact_ns"], 9_000_000, "{f}");
}

/// A loop marked with its own NVTX range (`nvtx.range("train_step")`), no `ProfilerStep#N`:
/// `--step-range train_step` makes each range a step, numbered 1, 2, 3 by occurrence, and the
/// diagnosis is the one the `ProfilerStep` export gets (rank 2's 3 ms a step, 9 ms). A name
/// no range has leaves the steps to the repeating kernel sequence and says so.
#[test]
fn a_range_the_user_names_is_the_step() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report1.sqlite");
    synthetic(&path, 0..4, 4, 2, 0);
    let db = rusqlite::Connection::open(&path).unwrap();
    db.execute("UPDATE NVTX_EVENTS SET text = 'train_step'", [])
        .unwrap();
    drop(db);
    let json = common::report_json(&[&path], &["--step-range", "train_step"]);
    let steps: Vec<i64> = json["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["step"].as_i64().unwrap())
        .collect();
    assert_eq!(steps, [1, 2, 3]);
    // The same step times as the `ProfilerStep#N` export's.
    let marked = dir.path().join("marked.sqlite");
    synthetic(&marked, 0..4, 4, 2, 0);
    let times = |j: &serde_json::Value| -> Vec<i64> {
        j["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["time_ns"]["max"].as_i64().unwrap())
            .collect()
    };
    assert_eq!(times(&json), times(&common::report_json(&[&marked], &[])));
    let first = &json["findings"][0];
    assert_eq!(
        (&first["rule"], &first["impact_ns"]),
        (
            &serde_json::json!("straggler"),
            &serde_json::json!(9_000_000)
        ),
        "{first}"
    );
    let other = common::report_json(&[&path], &["--step-range", "step"]).to_string();
    assert!(other.contains("repeating kernel sequence"), "{other}");
}

/// `stepscope demo --as nsys` writes the demo job as Nsight exports (one `report_N.sqlite`
/// per rank: kernels, copies and runtime calls by correlation id, `emit_nvtx` operator ranges,
/// NCCL's ranges with payloads), and read back it is the Kineto job: the same breakdown to the
/// ns, the same findings with the same savings, the same collectives and roofline operators —
/// on data parallel, pipeline (groups from NCCL's communicator payloads) and random jobs.
#[test]
fn demo_as_nsys_reads_as_the_kineto_job() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [&[&str]; 4] = [
        &["--scenario", "default", "demo"],
        &["--scenario", "pipeline-straggler", "demo"],
        &["--scenario", "graph-capture", "demo"],
        &["demo", "--random", "5"],
    ];
    for (k, args) in cases.iter().enumerate() {
        let (kineto, nsys) = (
            dir.path().join(format!("k{k}")),
            dir.path().join(format!("n{k}")),
        );
        for (out, extra) in [
            (&kineto, ["--plain"].as_slice()),
            (&nsys, &["--as", "nsys"]),
        ] {
            let mut a: Vec<std::ffi::OsString> = args.iter().map(|s| (*s).into()).collect();
            a.extend(["--out".into(), out.as_os_str().to_owned()]);
            a.extend(extra.iter().map(|s| (*s).into()));
            let run = common::run(&a);
            assert!(
                run.status.success(),
                "{args:?}: {}",
                String::from_utf8_lossy(&run.stderr)
            );
        }
        let (a, b) = (
            common::report_json(&[&kineto], &[]),
            common::report_json(&[&nsys], &[]),
        );
        for key in ["breakdown", "steps"] {
            assert_eq!(a[key], b[key], "{args:?}: {key}");
        }
        let findings = |j: &serde_json::Value| -> Vec<String> {
            let f = j["findings"].as_array().unwrap();
            f.iter()
                .map(|f| {
                    let e = &f["evidence"];
                    format!(
                        "{} {} {} {}",
                        f["rule"], f["impact_ns"], e["ranks"], e["steps"]
                    )
                })
                .collect()
        };
        assert_eq!(findings(&a), findings(&b), "{args:?}");
        assert_eq!(a["job"]["collectives"], b["job"]["collectives"], "{args:?}");
        let bytes = |j: &serde_json::Value| -> Vec<serde_json::Value> {
            let t = j["communication"]["types"].as_array().unwrap();
            t.iter().map(|t| t["bytes"].clone()).collect()
        };
        assert_eq!(bytes(&a), bytes(&b), "{args:?}");
        let ops = |j: &serde_json::Value| -> Vec<String> {
            let o = j["roofline"]["ops"].as_array().unwrap();
            o.iter()
                .map(|o| format!("{} {} {}", o["op"], o["kernels"], o["flops"]))
                .collect()
        };
        assert_eq!(ops(&a), ops(&b), "{args:?}");
        // Rank ids from NCCL's init payloads, not the file order.
        let sources = b["job"]["sources"].as_array().unwrap();
        assert!(
            sources.iter().all(|s| s["rank_from"] == "nccl_init"),
            "{sources:?}"
        );
    }
}

/// A rank's place in each NCCL communicator is its own file's; a communicator whose members
/// did not all load is no group (said), and the rank whose init payload is missing is placed
/// by file order (said): the job still loads.
#[test]
fn communicators_come_from_the_ranks_that_joined_them() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pp");
    let run = common::run([
        "--scenario",
        "pipeline-straggler",
        "demo",
        "--as",
        "nsys",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(run.status.success());
    let l = load(&out);
    // The 8 ranks' pipeline pairs (ranks r and r+4) and stages (4 ranks each), and the world.
    let mut sizes: Vec<usize> = l.job.groups.iter().map(|g| g.ranks.len()).collect();
    sizes.sort_unstable();
    assert_eq!(sizes, [2, 2, 2, 2, 4, 4, 8]);
    // Rank 6 left out: the world and its pair and stage lose a member.
    std::fs::remove_file(out.join("report_6.sqlite")).unwrap();
    let json = common::report_json(&[&out], &[]);
    assert_eq!(json["job"]["sources"].as_array().unwrap().len(), 7);
    let notes = json["job"]["notes"].to_string();
    assert!(notes.contains("7 of its 8 members"), "{notes}");
    assert!(notes.contains("1 of its 2 members"), "{notes}");
}
