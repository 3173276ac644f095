//! The simulation behind the demo, its building blocks: a rank's state within a step, and
//! the host operators, launches, kernels and copies it emits — kernels queue on their stream
//! behind earlier work and their launch. The step's phases are in `step.rs` (data parallel)
//! and `pipeline.rs`; the cluster schedule in `schedule.rs`.

use super::DemoSpec;
use super::scenario::Knobs;
use crate::time::Ns;

/// Deterministic jitter in [-2%, +2%] of `ns`, from a hash of its coordinates (splitmix64),
/// so every run and every platform generates the same job.
pub(super) fn jitter(ns: Ns, a: u64, b: u64, c: u64) -> Ns {
    let mut z = a.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ b.rotate_left(21) ^ c.rotate_left(42);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    let pct = (z % 401) as i64 - 200; // hundredths of a percent
    ns + ns * pct / 10_000
}

/// What the cluster fixes for one step, on the true (unskewed) clock.
#[derive(Debug, Clone, Default)]
pub(super) struct StepPlan {
    /// When each all-reduce ends, by bucket (empty: only time the step, emit none).
    pub allreduce_ends: Vec<Ns>,
    /// Per rank: when each transfer it receives has arrived, in order (pipeline only).
    pub arrivals: Vec<Vec<Ns>>,
}

/// Receives simulated events (or discards them when only timing is wanted).
pub(super) trait Sink {
    /// A complete event.
    fn x(&mut self, cat: &str, name: &str, tid: Tid, start: Ns, dur: Ns, args: &str);
    /// A flow from a launch to the device activity it queued.
    fn flow(&mut self, corr: u64, from: Tid, at: Ns, to: Tid, at_dev: Ns);
}

pub(super) struct Discard;
impl Sink for Discard {
    fn x(&mut self, _: &str, _: &str, _: Tid, _: Ns, _: Ns, _: &str) {}
    fn flow(&mut self, _: u64, _: Tid, _: Ns, _: Tid, _: Ns) {}
}

/// Lanes of a rank.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Tid {
    Main,
    Autograd,
    Compute,
    /// The first communication stream (process group 0).
    Comm,
    /// The second communication stream (process group 1), when buckets use two.
    Comm2,
}

impl Tid {
    /// The CUDA stream id of a device lane (0 for host threads).
    pub(super) fn stream(self) -> u32 {
        match self {
            Tid::Compute => 7,
            Tid::Comm => 20,
            Tid::Comm2 => 21,
            Tid::Main | Tid::Autograd => 0,
        }
    }
}

/// One rank's simulation state within a step.
pub(super) struct RankSim<'s> {
    pub(super) rank: u32,
    pub(super) step: u32,
    pub(super) spec: DemoSpec,
    pub(super) knobs: Knobs,
    pub(super) sink: &'s mut dyn Sink,
    pub(super) corr: u64,
    pub(super) ext: u64,
    /// When the compute and the communication streams are next free.
    pub(super) compute_free: Ns,
    pub(super) comm_free: [Ns; 2],
    /// Inside a graph capture: launches record their kernel here instead of running it.
    pub(super) capturing: Option<Vec<(String, Ns)>>,
    /// The scenario's GC pause already happened in this step (a pipeline runs forward once
    /// per micro-batch).
    pub(super) gc_paused: bool,
}

impl<'s> RankSim<'s> {
    /// `args` of a runtime API call (`cbid` names the CUDA callback, e.g. 211 for
    /// `cudaLaunchKernel`) with the current External id and correlation.
    pub(super) fn runtime_args(&self, cbid: u32) -> String {
        format!(
            r#"{{"External id": {}, "cbid": {cbid}, "correlation": {}}}"#,
            self.ext, self.corr
        )
    }

    /// A rank's simulator for `step`; `ids` are the correlation and External id counters
    /// carried over from the previous step. Streams start idle: every step ends synchronized.
    pub(super) fn new(
        rank: u32,
        step: u32,
        spec: DemoSpec,
        sink: &'s mut dyn Sink,
        ids: (u64, u64),
    ) -> Self {
        RankSim {
            rank,
            step,
            spec,
            knobs: spec.knobs(),
            sink,
            corr: ids.0,
            ext: ids.1,
            compute_free: 0,
            comm_free: [0; 2],
            capturing: None,
            gc_paused: false,
        }
    }

    /// The device time of a kernel that takes `ns` on a healthy H100 at full batch, on
    /// this rank in this step: scaled for the scenario's batch, the straggler, the slow step.
    fn device_ns(&self, ns: Ns) -> Ns {
        let k = &self.knobs;
        let mut pct = k.kernel_pct;
        if self.spec.straggler() == Some(self.rank) {
            pct += pct * k.straggler.map_or(0, |(_, p)| p) / 100;
        }
        if self.spec.slow_step() == Some(self.step) {
            pct += pct * k.slow_step_pct / 100;
        }
        (ns * pct / 100).max(1_000)
    }

    /// The host time of one operator's dispatch (longer while a graph is being captured).
    fn host_ns(&self, key: (u64, u64), capturing: bool) -> Ns {
        let ns = self.knobs.dispatch_ns.max(24_000);
        jitter(if capturing { ns.max(60_000) } else { ns }, key.0, key.1, 1)
    }

    /// A host op on `tid` at `t` launching one kernel on the compute stream (recorded instead
    /// while a graph is captured); returns the op's end.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn op_with_kernel(
        &mut self,
        tid: Tid,
        t: Ns,
        op: &str,
        dims: &str,
        kernel: &str,
        ns: Ns,
        key: (u64, u64),
    ) -> Ns {
        self.ext += 1;
        self.corr += 1;
        let host = self.host_ns(key, self.capturing.is_some());
        let op_args = if dims.is_empty() {
            format!(
                r#"{{"External id": {}, "Record function id": 0, "Ev Idx": {}}}"#,
                self.ext, self.ext
            )
        } else {
            format!(
                r#"{{"External id": {}, "Record function id": 0, "Ev Idx": {}, "Input Dims": {dims}, "Input type": ["c10::BFloat16"]}}"#,
                self.ext, self.ext
            )
        };
        self.sink.x("cpu_op", op, tid, t, host, &op_args);
        let launch = t + host - 9_000;
        let rt_args = self.runtime_args(211);
        self.sink.x(
            "cuda_runtime",
            "cudaLaunchKernel",
            tid,
            launch,
            6_000,
            &rt_args,
        );
        let dur = self.device_ns(jitter(ns, key.0, key.1, 2));
        if let Some(graph) = &mut self.capturing {
            // Recorded into the graph: it runs when the graph is replayed.
            graph.push((kernel.to_string(), dur));
            return t + host;
        }
        let start = self.compute_free.max(launch + 6_000 + 2_500);
        self.compute_free = start + dur;
        self.kernel(kernel, Tid::Compute, start, dur, "");
        self.sink.flow(self.corr, tid, launch, Tid::Compute, start);
        t + host
    }

    /// A kernel on `stream` over [start, start + dur), with the current ids.
    pub(super) fn kernel(&mut self, name: &str, stream: Tid, start: Ns, dur: Ns, extra: &str) {
        let sid = stream.stream();
        let args = format!(
            r#"{{"External id": {}, "queued": 0, "device": {}, "context": 1, "stream": {sid}, "correlation": {}, "registers per thread": 128, "shared memory": 49152, "grid": [132, 1, 1], "block": [256, 1, 1]{extra}}}"#,
            self.ext,
            self.rank % 8,
            self.corr
        );
        self.sink.x("kernel", name, stream, start, dur, &args);
    }

    /// A memcpy issued from the main thread inside a `cpu_op`; returns the op's end.
    pub(super) fn memcpy(&mut self, t: Ns, op: &str, name: &str, bytes: u64, ns: Ns) -> Ns {
        self.ext += 1;
        self.corr += 1;
        let args = format!(r#"{{"External id": {}, "Ev Idx": {}}}"#, self.ext, self.ext);
        self.sink.x("cpu_op", op, Tid::Main, t, 40_000, &args);
        self.copy(t + 20_000, 12_000, name, bytes, ns);
        t + 40_000
    }

    /// A `cudaMemcpyAsync` on the main thread at `launch` (taking `rt` ns) and the copy it
    /// queues on the compute stream; returns when the copy ends.
    pub(super) fn copy(&mut self, launch: Ns, rt: Ns, name: &str, bytes: u64, ns: Ns) -> Ns {
        let args = self.runtime_args(51);
        self.sink.x(
            "cuda_runtime",
            "cudaMemcpyAsync",
            Tid::Main,
            launch,
            rt,
            &args,
        );
        let start = self.compute_free.max(launch + rt + 3_000);
        self.compute_free = start + ns;
        let dev = format!(
            r#"{{"External id": {}, "device": {}, "context": 1, "stream": 7, "correlation": {}, "bytes": {bytes}}}"#,
            self.ext,
            self.rank % 8,
            self.corr
        );
        self.sink
            .x("gpu_memcpy", name, Tid::Compute, start, ns, &dev);
        self.sink
            .flow(self.corr, Tid::Main, launch, Tid::Compute, start);
        self.compute_free
    }

    /// A runtime API call on `tid` over [start, start + dur) with a fresh correlation.
    pub(super) fn runtime(&mut self, tid: Tid, name: &str, cbid: u32, start: Ns, dur: Ns) {
        self.corr += 1;
        let args = self.runtime_args(cbid);
        self.sink.x("cuda_runtime", name, tid, start, dur, &args);
    }

    /// When every device stream of this rank has drained.
    pub(super) fn device_free(&self) -> Ns {
        self.compute_free
            .max(self.comm_free[0])
            .max(self.comm_free[1])
    }

    /// The caching allocator bypassed (allocator-churn), before a forward layer: a
    /// `cudaFree` that waits for the device to drain, then a `cudaMalloc`, on `tid` from `t`;
    /// returns the host time after. (Only in forward: no collective is in flight there, so
    /// the drain does not depend on the other ranks.)
    pub(super) fn allocator_churn(&mut self, tid: Tid, t: Ns) -> Ns {
        if !self.knobs.allocator_churn {
            return t;
        }
        let freed = t.max(self.device_free()) + 300_000;
        self.runtime(tid, "cudaFree", 5, t, freed - t);
        self.runtime(tid, "cudaMalloc", 3, freed + 2_000, 400_000);
        freed + 405_000
    }

    /// `cudaStreamBeginCapture` at `t` when the scenario captures the forward pass; returns
    /// the host time after it.
    pub(super) fn begin_capture(&mut self, t: Ns) -> Ns {
        if !self.knobs.capture_forward {
            return t;
        }
        self.runtime(Tid::Main, "cudaStreamBeginCapture", 306, t, 12_000);
        self.capturing = Some(Vec::new());
        t + 15_000
    }

    /// Ends a capture at `t` and replays the graph: `cudaStreamEndCapture` (which builds the
    /// graph), then `cudaGraphLaunch`, whose kernels run back to back on the compute stream.
    /// Returns the host time after the launch.
    pub(super) fn end_capture_and_replay(&mut self, t: Ns) -> Ns {
        let Some(kernels) = self.capturing.take() else {
            return t;
        };
        self.runtime(Tid::Main, "cudaStreamEndCapture", 307, t, 900_000);
        // `graph.replay()` is no framework operator: the replayed kernels' External id
        // names none, as in real traces (they lose their operators' shapes).
        self.ext += 1;
        let launch = t + 905_000;
        self.runtime(Tid::Main, "cudaGraphLaunch", 311, launch, 15_000);
        let mut start = self.compute_free.max(launch + 15_000 + 3_000);
        self.sink
            .flow(self.corr, Tid::Main, launch, Tid::Compute, start);
        for (name, dur) in kernels {
            self.kernel(&name, Tid::Compute, start, dur, "");
            start += dur + 1_000;
        }
        self.compute_free = start;
        launch + 15_000
    }
}
