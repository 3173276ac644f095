//! Every input a fuzzer found a failure with (testdata/fuzz/TARGET/), replayed through the
//! same target body (`crate::fuzz`) — each once panicked, hung or leaked something unsafe
//! onto a terminal — and the seeds of every target, so a change that breaks a reader on a
//! real input fails here before any fuzzing (docs/testing.md, "Fuzzing").

#![allow(clippy::disallowed_macros)] // test output: a panic there is the test failing

use proptest::prelude::*;
use std::path::{Path, PathBuf};

/// A fixture under `testdata/`.
fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(name)
}

type Body = fn(&[u8]);

/// The targets whose body says whether the input loaded, as plain bodies.
fn body<T>(f: fn(&[u8]) -> T) -> impl Fn(&[u8]) {
    move |d| {
        f(d);
    }
}

/// A target's name and its body.
type Target = (&'static str, Box<dyn Fn(&[u8])>);

fn targets() -> Vec<Target> {
    use crate::fuzz as f;
    vec![
        ("trace", Box::new(body(f::trace))),
        ("trace_serde", Box::new(body(f::trace_serde))),
        ("gzip", Box::new(body(f::gzip))),
        ("stream", Box::new(f::stream as Body)),
        ("ascend_csv", Box::new(f::ascend_csv as Body)),
        ("ascend_json", Box::new(f::ascend_json as Body)),
        ("ascend_db", Box::new(f::ascend_db as Body)),
        ("nsys", Box::new(f::nsys as Body)),
        ("flight", Box::new(body(f::flight))),
        ("model_file", Box::new(body(f::model_file))),
        ("logs", Box::new(f::logs as Body)),
        ("report", Box::new(body(f::report))),
        ("snapshot", Box::new(body(f::snapshot))),
    ]
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn every_crash_found_stays_fixed() {
    let mut replayed = 0;
    for (name, body) in targets() {
        for f in files(&testdata("fuzz").join(name)) {
            let data = std::fs::read(&f).unwrap();
            // A panic names the file: the harness prints it with the failure.
            eprintln!("replaying {}", f.display());
            body(&data);
            replayed += 1;
        }
    }
    assert!(replayed > 0, "no regression inputs found");
}

/// Each target's body on fixtures framed as its seeds are (scripts/fuzz-seeds.py): valid
/// inputs pass every check the targets make (JSON lines parse, no unsafe character reaches
/// a terminal, the fast and serde parsers agree).
#[test]
fn every_target_accepts_its_kind_of_fixture() {
    let read = |p: &str| std::fs::read(testdata(p)).unwrap();
    let framed = |pick: u8, p: &str| [vec![pick], read(p)].concat();
    let ascend = "ascend/tiny/host_100_20250101000000000_ascend_pt/ASCEND_PROFILER_OUTPUT/";
    let job: Vec<u8> = (0..4)
        .map(|r| read(&format!("cluster4/rank-{r}.json")))
        .collect::<Vec<_>>()
        .join(&crate::fuzz::SEPARATOR);
    assert!(crate::fuzz::trace(&read("two_streams.json")));
    assert!(crate::fuzz::trace_serde(&read("escape_names.json")));
    assert!(crate::fuzz::gzip(&read("two_streams.json.gz")));
    crate::fuzz::stream(&framed(7, "two_streams.json.gz"));
    crate::fuzz::stream(&framed(200, "two_streams.json"));
    crate::fuzz::ascend_csv(&framed(0, &format!("{ascend}kernel_details.csv")));
    crate::fuzz::ascend_csv(&framed(1, &format!("{ascend}step_trace_time.csv")));
    crate::fuzz::ascend_json(&framed(0, &format!("{ascend}communication.json")));
    crate::fuzz::ascend_json(&framed(2, &format!("{ascend}communication_matrix.json")));
    let pp4 = "ascend/pp4/node0_1003_20250109000000000_ascend_pt/ASCEND_PROFILER_OUTPUT/";
    let summary = [
        read(&format!("{pp4}step_trace_time.csv")),
        read(&format!("{pp4}communication.json")),
    ]
    .join(&0u8);
    crate::fuzz::ascend_json(&[&[4u8][..], &summary].concat());
    let logs = [read("watch/rank0.log"), read("watch/rank1.log")].join(&crate::fuzz::SEPARATOR);
    crate::fuzz::logs(&[&[7u8, 0][..], &logs].concat());
    assert!(crate::fuzz::report(&job));
    assert!(crate::fuzz::snapshot(&job));
    let dumps: Vec<u8> = (0..3)
        .map(|r| read(&format!("flight/desync3/fr_{r}.json")))
        .collect::<Vec<_>>()
        .join(&crate::fuzz::SEPARATOR);
    assert!(crate::fuzz::flight(&dumps));
    assert!(crate::fuzz::flight(&read("flight/hang4/nccl_trace_rank_0")));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// A model file's payload with bytes changed is refused or read, never a panic; what
    /// reads is checked, assembled, analysed and reported (the fuzz target's body).
    #[test]
    fn a_mutated_payload_never_panics(flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6), cut in any::<prop::sample::Index>(), cutting in any::<bool>()) {
        let mut payload = seed_payload().to_vec();
        for (at, b) in flips {
            let k = at.index(payload.len());
            payload[k] = b;
        }
        if cutting {
            payload.truncate(cut.index(payload.len()));
        }
        crate::fuzz::model_file(&payload);
    }
}

/// The payload of a small real rank's model file (the fuzz target's seed).
fn seed_payload() -> &'static [u8] {
    static SEED: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    SEED.get_or_init(|| {
        let p = testdata("fuzz/model_file/two_streams.payload");
        std::fs::read(p).unwrap()
    })
}

#[test]
fn the_seed_payload_reads_and_analyses() {
    assert!(crate::fuzz::model_file(seed_payload()));
}
