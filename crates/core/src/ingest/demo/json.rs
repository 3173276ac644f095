//! The demo's Kineto JSON: the events a simulated rank emits, written as `torch.profiler`
//! writes them (pretty-printed objects, flows, metadata, the trace header).

use super::pipeline;
use super::schedule::{GPUS_PER_NODE, STEP_GAP, Schedule, T_START};
use super::sim::{RankSim, Sink, Tid};
use super::{BASE_TIME_NS, DemoSpec, FIRST_STEP, ORIGIN_NS};
use crate::time::Ns;
use std::fmt::Write as _;

/// Writes Kineto JSON events for one rank.
struct JsonSink {
    out: String,
    pid: u32,
    rank: u32,
    offset: Ns,
}

impl JsonSink {
    fn tid(&self, t: Tid) -> (u32, u32) {
        match t {
            Tid::Main => (self.pid, self.pid),
            Tid::Autograd => (self.pid, self.pid + 17),
            Tid::Compute | Tid::Comm | Tid::Comm2 => (self.rank % 8, t.stream()),
        }
    }
    fn us(&self, t: Ns) -> String {
        let v = t + self.offset + ORIGIN_NS;
        format!("{}.{:03}", v / 1000, v % 1000)
    }
    fn dur(d: Ns) -> String {
        format!("{}.{:03}", d / 1000, d % 1000)
    }
}

impl Sink for JsonSink {
    fn x(&mut self, cat: &str, name: &str, tid: Tid, start: Ns, dur: Ns, args: &str) {
        let (p, t) = self.tid(tid);
        let (ts, d) = (self.us(start), Self::dur(dur));
        let _ = write!(
            self.out,
            ",\n  {{\n    \"ph\": \"X\", \"cat\": \"{cat}\", \"name\": \"{name}\", \"pid\": {p}, \"tid\": {t},\n    \"ts\": {ts}, \"dur\": {d},\n    \"args\": {args}\n  }}"
        );
    }
    fn flow(&mut self, corr: u64, from: Tid, at: Ns, to: Tid, at_dev: Ns) {
        let (p0, t0) = self.tid(from);
        let (p1, t1) = self.tid(to);
        let (a, b) = (self.us(at), self.us(at_dev));
        let _ = write!(
            self.out,
            ",\n  {{\"ph\": \"s\", \"id\": {corr}, \"pid\": {p0}, \"tid\": {t0}, \"ts\": {a}, \"cat\": \"ac2g\", \"name\": \"ac2g\"}},\n  {{\"ph\": \"f\", \"id\": {corr}, \"pid\": {p1}, \"tid\": {t1}, \"ts\": {b}, \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}}"
        );
    }
}

/// The JSON text of one rank, given the cluster schedule.
pub(super) fn rank_json(spec: DemoSpec, rank: u32, sched: &Schedule) -> String {
    let pid = 31_000 + rank * 13;
    let mut sink = JsonSink {
        out: String::with_capacity(1 << 20),
        pid,
        rank,
        offset: spec.clock_offset(rank),
    };
    header(&mut sink, spec);
    metadata(&mut sink, spec.knobs().comm_streams > 1);
    let t0 = steps(spec, rank, sched, &mut sink);
    let span_ts = sink.us(0);
    let _ = write!(
        sink.out,
        ",\n  {{\"ph\": \"X\", \"cat\": \"Trace\", \"ts\": {span_ts}, \"dur\": {}, \"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\", \"name\": \"PyTorch Profiler (0)\", \"args\": {{\"Op count\": 0}}}},\n  {{\"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\", \"pid\": \"\", \"tid\": \"\", \"ts\": {}}}\n  ]\n}}\n",
        JsonSink::dur(t0),
        sink.us(t0)
    );
    sink.out
}

/// Simulates `rank`'s profiled steps into `sink`, each under its `ProfilerStep#N` annotation;
/// returns when the last ends (plus the gap between steps).
pub(super) fn steps(spec: DemoSpec, rank: u32, sched: &Schedule, sink: &mut dyn Sink) -> Ns {
    let (mut corr, mut ext) = (0u64, 0u64);
    let mut t0 = T_START;
    for s in 0..spec.steps {
        let step = FIRST_STEP + s;
        let mut sim = RankSim::new(rank, step, spec, sink, (corr, ext));
        let (end, _) = sim.run_step(t0, &sched[s as usize]);
        (corr, ext) = (sim.corr, sim.ext);
        let args = format!(
            r#"{{"External id": {}, "Record function id": 1, "Ev Idx": 0}}"#,
            1_000_000 + step
        );
        sink.x(
            "user_annotation",
            &format!("ProfilerStep#{step}"),
            Tid::Main,
            t0,
            end - t0,
            &args,
        );
        t0 = end + STEP_GAP;
    }
    t0
}

/// The trace's header: devices, distributed info, the opening of `traceEvents`.
fn header(sink: &mut JsonSink, spec: DemoSpec) {
    let rank = sink.rank;
    let groups = process_groups(spec)
        .iter()
        .map(|(name, desc, ranks)| {
            let list = ranks
                .iter()
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
                .join(", ");
            format!(
                r#"{{"pg_name": "{name}", "pg_desc": "{desc}", "backend_config": "cuda:nccl", "pg_size": {}, "ranks": [{list}]}}"#,
                ranks.len()
            )
        })
        .collect::<Vec<_>>();
    // Like Kineto, list every device of the node (8 per node), not only the rank's own.
    let devices = (0..GPUS_PER_NODE)
        .map(|d| format!("    {{\"id\": {d}, \"name\": \"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": 84929347584, \"computeMajor\": 9, \"computeMinor\": 0, \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048, \"regsPerBlock\": 65536, \"warpSize\": 32, \"sharedMemPerBlock\": 49152, \"numSms\": 132}}"))
        .collect::<Vec<_>>()
        .join(",\n");
    let _ = write!(
        sink.out,
        "{{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n{devices}\n  ],\n  \"distributedInfo\": {{\"backend\": \"nccl\", \"rank\": {rank}, \"world_size\": {}, \"pg_count\": {}, \"pg_config\": [{}], \"nccl_version\": \"2.21.5\"}},\n  \"record_shapes\": 1,\n  \"with_stack\": 0,\n  \"traceName\": \"demo/rank-{rank}.pt.trace.json\",\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": {BASE_TIME_NS},\n  \"traceEvents\": [",
        spec.ranks,
        groups.len(),
        groups.join(", ")
    );
}

/// The process groups of the job: (name, description, ranks) — the default group, the
/// second gradient group when buckets use two streams, the pipeline pairs and stages.
pub(super) fn process_groups(spec: DemoSpec) -> Vec<(String, &'static str, Vec<u32>)> {
    let all: Vec<u32> = (0..spec.ranks).collect();
    let mut v = vec![("0".to_string(), "default_pg", all.clone())];
    if spec.knobs().comm_streams > 1 {
        v.push(("1".to_string(), "grad_pg", all));
    }
    for (name, pair) in pipeline::groups(spec) {
        v.push((name, "pipeline", pair.to_vec()));
    }
    for (name, ranks) in pipeline::stage_groups(spec) {
        v.push((name, "dp", ranks));
    }
    v
}

/// Process and thread names: the host process, its main and autograd threads, the device
/// and its streams (a second communication stream when `comm2`).
fn metadata(sink: &mut JsonSink, comm2: bool) {
    let (pid, dev) = (sink.pid, sink.rank % GPUS_PER_NODE);
    let meta_ts = sink.us(0);
    let _ = write!(
        sink.out,
        "\n  {{\"name\": \"process_name\", \"ph\": \"M\", \"ts\": {meta_ts}, \"pid\": {pid}, \"tid\": 0, \"args\": {{\"name\": \"python3\"}}}}"
    );
    let metas = [
        format!(
            r#"{{"name": "process_labels", "ph": "M", "ts": {meta_ts}, "pid": {pid}, "tid": 0, "args": {{"labels": "CPU"}}}}"#
        ),
        format!(
            r#"{{"name": "process_labels", "ph": "M", "ts": {meta_ts}, "pid": {dev}, "tid": 0, "args": {{"labels": "GPU {dev}"}}}}"#
        ),
        format!(
            r#"{{"name": "thread_name", "ph": "M", "ts": {meta_ts}, "pid": {pid}, "tid": {pid}, "args": {{"name": "thread {pid} (pt_main_thread)"}}}}"#
        ),
        format!(
            r#"{{"name": "thread_name", "ph": "M", "ts": {meta_ts}, "pid": {pid}, "tid": {}, "args": {{"name": "thread {} (pt_autograd_0)"}}}}"#,
            pid + 17,
            pid + 17
        ),
        format!(
            r#"{{"name": "thread_name", "ph": "M", "ts": {meta_ts}, "pid": {dev}, "tid": 7, "args": {{"name": "stream 7 "}}}}"#
        ),
        format!(
            r#"{{"name": "thread_name", "ph": "M", "ts": {meta_ts}, "pid": {dev}, "tid": 20, "args": {{"name": "stream 20 "}}}}"#
        ),
    ];
    let comm2 = comm2.then(|| format!(
        r#"{{"name": "thread_name", "ph": "M", "ts": {meta_ts}, "pid": {dev}, "tid": 21, "args": {{"name": "stream 21 "}}}}"#
    ));
    for m in metas.into_iter().chain(comm2) {
        sink.out.push_str(",\n  ");
        sink.out.push_str(&m);
    }
}
