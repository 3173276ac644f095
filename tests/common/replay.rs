//! Replaying logs through `stepscope watch` as a live pipe delivers them: in pieces or at a
//! set line rate, several logs interleaved as ranks under a launcher's prefix, with faults
//! injected (lines cut in two with another rank's line between the halves).

use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How the input is written into the pipe.
#[derive(Debug, Clone, Copy)]
pub struct Pace {
    /// Bytes per write when no rate is set.
    pub chunk: usize,
    /// Lines per second, written a line at a time (`None`: as fast as the pipe takes them).
    pub lines_per_s: Option<u32>,
}

impl Default for Pace {
    fn default() -> Pace {
        Pace {
            chunk: 4093,
            lines_per_s: None,
        }
    }
}

/// Pipes `input` into `stepscope watch --jsonl -` in small pieces; returns the JSON lines
/// (exit must be 0).
pub fn replay(input: &[u8]) -> Vec<Value> {
    replay_paced(input, Pace::default())
}

/// [`replay`] at `pace`.
pub fn replay_paced(input: &[u8], pace: Pace) -> Vec<Value> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_stepscope"))
        .args(["watch", "--jsonl", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let data = input.to_vec();
    // Written from another thread, as a live pipe delivers them.
    let writer = std::thread::spawn(move || write_paced(stdin, &data, pace));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    json_lines(out)
}

/// `stepscope watch --once --from-start --jsonl ARGS FILE`: its JSON lines.
pub fn watch_file(args: &[&str], file: &Path) -> Vec<Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_stepscope"))
        .args(["watch", "--once", "--from-start", "--jsonl"])
        .args(args)
        .arg(file)
        .output()
        .unwrap();
    json_lines(out)
}

/// The JSON lines a successful run wrote (its stderr in the failure message otherwise).
fn json_lines(out: std::process::Output) -> Vec<Value> {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn write_paced(mut to: impl Write, data: &[u8], pace: Pace) {
    let Some(rate) = pace.lines_per_s else {
        for piece in data.chunks(pace.chunk) {
            if to.write_all(piece).is_err() {
                return;
            }
        }
        return;
    };
    let start = Instant::now();
    for (k, line) in data.split_inclusive(|&c| c == b'\n').enumerate() {
        let due = start + Duration::from_secs_f64(k as f64 / f64::from(rate));
        std::thread::sleep(due.saturating_duration_since(Instant::now()));
        if to.write_all(line).and_then(|_| to.flush()).is_err() {
            return;
        }
    }
}

/// A launcher, by the prefix it puts before each line of a rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Launcher {
    /// `[rankN]:`
    Torchrun,
    /// srun -l's right-aligned ` N: `.
    Srun,
    /// Open MPI `--tag-output`'s `[1,N]<stdout>:`.
    OpenMpi,
    /// NeMo-Run's `exp/0 [defaultN]:`.
    NemoRun,
    /// SkyPilot's `(workerN, rank=N, pid=…, ip=…) `.
    SkyPilot,
    /// pdsh / DeepSpeed's multi-node `worker-N: ` (a host, not a rank).
    Pdsh,
}

/// Every launcher.
pub const LAUNCHERS: [Launcher; 5] = [
    Launcher::Torchrun,
    Launcher::Srun,
    Launcher::OpenMpi,
    Launcher::NemoRun,
    Launcher::SkyPilot,
];

impl Launcher {
    /// The prefix of rank `r`'s lines.
    pub fn prefix(self, r: usize) -> String {
        match self {
            Launcher::Torchrun => format!("[rank{r}]:"),
            Launcher::Srun => format!("{r:>2}: "),
            Launcher::OpenMpi => format!("[1,{r}]<stdout>:"),
            Launcher::NemoRun => format!("pretrain/0 [default{r}]:"),
            Launcher::SkyPilot => {
                format!("(worker{r}, rank={r}, pid={}, ip=10.0.0.{r}) ", 4000 + r)
            }
            Launcher::Pdsh => format!("worker-{r}: "),
        }
    }
}

/// `logs` interleaved line by line as ranks 0, 1, … under `launcher`'s prefix; with
/// `cut_every = Some(n)`, every n-th line of each rank longer than 40 bytes is written in two
/// halves, the other ranks' lines of that round between them (a launcher labelling partial
/// writes).
pub fn interleave(logs: &[&[u8]], launcher: Launcher, cut_every: Option<usize>) -> Vec<u8> {
    let lines: Vec<Vec<&[u8]>> = logs
        .iter()
        .map(|l| l.split(|&c| c == b'\n').filter(|l| !l.is_empty()).collect())
        .collect();
    let rounds = lines.iter().map(Vec::len).max().unwrap_or(0);
    let mut out = Vec::new();
    let mut put = |r: usize, text: &[u8]| {
        out.extend_from_slice(launcher.prefix(r).as_bytes());
        out.extend_from_slice(text);
        out.push(b'\n');
    };
    for k in 0..rounds {
        let mut second_halves = Vec::new();
        for (r, ls) in lines.iter().enumerate() {
            let Some(&l) = ls.get(k) else { continue };
            if cut_every.is_some_and(|n| k % n == 0) && l.len() > 40 {
                let mid = l.len() / 2;
                put(r, &l[..mid]);
                second_halves.push((r, &l[mid..]));
            } else {
                put(r, l);
            }
        }
        for (r, half) in second_halves {
            put(r, half);
        }
    }
    out
}

pub fn log(s: &Path, rel: &str) -> Vec<u8> {
    std::fs::read(s.join("traces/logs").join(rel)).unwrap()
}

pub fn of_type<'a>(v: &'a [Value], t: &str) -> Vec<&'a Value> {
    v.iter().filter(|x| x["type"] == t).collect()
}
