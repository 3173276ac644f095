//! The simulation behind the demo: one rank's step, operator by operator — kernels queue on
//! their stream behind earlier work and their launch, all-reduces end together on every rank
//! (the last arriver's start plus the transfer), each step ends with a `.item()` that
//! synchronizes the host — and the cluster schedule of all-reduce ends.

use super::layer::{ADAM, FORWARD, NCCL_AR, OpDef, backward_of};
use super::{DemoSpec, FIRST_STEP, LAYERS_PER_BUCKET, PAUSE_NS, STRAGGLER_SLOWDOWN_PCT};
use crate::time::Ns;

/// Deterministic jitter in [-2%, +2%] of `ns`, from a hash of its coordinates (splitmix64),
/// so every run and every platform generates the same job.
fn jitter(ns: Ns, a: u64, b: u64, c: u64) -> Ns {
    let mut z = a.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ b.rotate_left(21) ^ c.rotate_left(42);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    let pct = (z % 401) as i64 - 200; // hundredths of a percent
    ns + ns * pct / 10_000
}

/// Collective end times: `ends[step][bucket]`, on the true (unskewed) clock.
pub(super) type Schedule = Vec<Vec<Ns>>;

/// Receives simulated events (or discards them when only timing is wanted).
pub(super) trait Sink {
    /// A complete event.
    fn x(&mut self, cat: &str, name: &str, tid: Tid, start: Ns, dur: Ns, args: &str);
    /// A flow from a launch to the device activity it queued.
    fn flow(&mut self, corr: u64, from: Tid, at: Ns, to: Tid, at_dev: Ns);
}

struct Discard;
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
    Comm,
}

/// One rank's simulation state within a step.
pub(super) struct RankSim<'s> {
    rank: u32,
    spec: DemoSpec,
    sink: &'s mut dyn Sink,
    pub(super) corr: u64,
    pub(super) ext: u64,
    /// When the compute and communication streams are next free.
    compute_free: Ns,
    comm_free: Ns,
}

impl<'s> RankSim<'s> {
    /// `args` of a runtime API call (`cbid` names the CUDA callback, e.g. 211 for
    /// `cudaLaunchKernel`) with the current External id and correlation.
    fn runtime_args(&self, cbid: u32) -> String {
        format!(
            r#"{{"External id": {}, "cbid": {cbid}, "correlation": {}}}"#,
            self.ext, self.corr
        )
    }

    /// A rank's simulator for one step; `ids` are the correlation and External id counters
    /// carried over from the previous step. Streams start idle: every step ends synchronized.
    pub(super) fn new(rank: u32, spec: DemoSpec, sink: &'s mut dyn Sink, ids: (u64, u64)) -> Self {
        RankSim {
            rank,
            spec,
            sink,
            corr: ids.0,
            ext: ids.1,
            compute_free: 0,
            comm_free: 0,
        }
    }

    /// A whole step from host start `t0`, given the all-reduce end times; returns the host
    /// end of the step.
    pub(super) fn run_step(&mut self, step: u32, t0: Ns, ends: &[Ns]) -> Ns {
        let (h, _) = self.forward_backward(step, t0, Some(ends));
        self.optimizer_and_sync(step, h + 20_000)
    }

    fn slow(&self, ns: Ns) -> Ns {
        if self.rank == self.spec.straggler() {
            ns + ns * STRAGGLER_SLOWDOWN_PCT / 100
        } else {
            ns
        }
    }

    /// A host op on `tid` at `t` launching one kernel; returns the op's end.
    #[allow(clippy::too_many_arguments)]
    fn op_with_kernel(
        &mut self,
        tid: Tid,
        t: Ns,
        op: &str,
        dims: &str,
        kernel: &str,
        ns: Ns,
        stream: Tid,
        key: (u64, u64),
    ) -> Ns {
        self.ext += 1;
        self.corr += 1;
        let host = jitter(24_000, key.0, key.1, 1);
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
        let dur = self.slow(jitter(ns, key.0, key.1, 2));
        let ready = launch + 6_000 + 2_500;
        let free = if stream == Tid::Comm {
            &mut self.comm_free
        } else {
            &mut self.compute_free
        };
        let start = (*free).max(ready);
        *free = start + dur;
        self.kernel(kernel, stream, start, dur, "");
        self.sink.flow(self.corr, tid, launch, stream, start);
        t + host
    }

    fn kernel(&mut self, name: &str, stream: Tid, start: Ns, dur: Ns, extra: &str) {
        let sid = if stream == Tid::Comm { 20 } else { 7 };
        let args = format!(
            r#"{{"External id": {}, "queued": 0, "device": {}, "context": 1, "stream": {sid}, "correlation": {}, "registers per thread": 128, "shared memory": 49152, "grid": [132, 1, 1], "block": [256, 1, 1]{extra}}}"#,
            self.ext,
            self.rank % 8,
            self.corr
        );
        self.sink.x("kernel", name, stream, start, dur, &args);
    }

    /// A memcpy issued from the main thread inside a `cpu_op`; returns the op's end.
    fn memcpy(&mut self, t: Ns, op: &str, name: &str, bytes: u64, ns: Ns) -> Ns {
        self.ext += 1;
        self.corr += 1;
        let args = format!(r#"{{"External id": {}, "Ev Idx": {}}}"#, self.ext, self.ext);
        self.sink.x("cpu_op", op, Tid::Main, t, 40_000, &args);
        self.copy(t + 20_000, 12_000, name, bytes, ns);
        t + 40_000
    }

    /// A `cudaMemcpyAsync` on the main thread at `launch` (taking `rt` ns) and the copy it
    /// queues on the compute stream; returns when the copy ends.
    fn copy(&mut self, launch: Ns, rt: Ns, name: &str, bytes: u64, ns: Ns) -> Ns {
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

    /// Phase 1 of a step: data, forward, backward up to each bucket's all-reduce launch.
    /// Returns the host time after backward and each bucket's ready time.
    fn forward_backward(&mut self, step: u32, t0: Ns, ends: Option<&[Ns]>) -> (Ns, Vec<Ns>) {
        let h = self.forward(step, t0);
        self.backward(step, h, ends)
    }

    /// The jitter key of (step, a, b) on this rank: every rank and step varies differently,
    /// and reproducibly.
    fn key(&self, step: u32, a: u32, b: u32) -> (u64, u64) {
        (
            u64::from(self.rank) << 32 | u64::from(step),
            u64::from(a) << 32 | u64::from(b),
        )
    }

    /// The data loader (the culprit's pause in the slow step), the input copy and the
    /// forward pass on the main thread; returns the host time after it.
    fn forward(&mut self, step: u32, t0: Ns) -> Ns {
        let mut h = t0 + 20_000;
        let mut dl = jitter(1_500_000, self.key(step, 0, 0).0, 7, 7);
        if step == self.spec.slow_step() && self.rank == self.spec.culprit() {
            dl += PAUSE_NS;
        }
        let args = r#"{"External id": 0, "Ev Idx": 0}"#;
        self.sink.x(
            "user_annotation",
            "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__",
            Tid::Main,
            h,
            dl,
            args,
        );
        h += dl + 5_000;
        h = self.memcpy(
            h,
            "aten::copy_",
            "Memcpy HtoD (Pinned -> Device)",
            16 << 20,
            jitter(680_000, self.key(step, 0, 1).0, 1, 1),
        ) + 5_000;
        for l in 0..self.spec.layers() {
            for (k, f) in FORWARD.iter().enumerate() {
                h = self.op_with_kernel(
                    Tid::Main,
                    h,
                    f.op,
                    f.dims,
                    f.kernel,
                    f.ns,
                    Tid::Compute,
                    self.key(step, l, k as u32),
                ) + 2_000;
            }
        }
        h
    }

    /// Backward on the autograd thread from host time `h`; DDP launches a bucket's
    /// all-reduce once the gradients of its layers are computed. Returns the host time
    /// after it and each bucket's ready time.
    fn backward(&mut self, step: u32, h: Ns, ends: Option<&[Ns]>) -> (Ns, Vec<Ns>) {
        let mut a = h + 30_000;
        let mut ready = Vec::new();
        for l in (0..self.spec.layers()).rev() {
            for (k, f) in FORWARD.iter().enumerate().rev() {
                a = self.backward_node(step, l, k, f, a);
            }
            if l % LAYERS_PER_BUCKET == 0 {
                for _ in 0..self.spec.split.max(1) {
                    let b = ready.len();
                    let r = self.allreduce(a, b, ends);
                    ready.push(r);
                    a += 60_000;
                }
            }
        }
        (a, ready)
    }

    /// The autograd node of forward op `f` (layer `l`, position `k`) from host time `a`:
    /// its kernels inside an `evaluate_function` op; returns the host time after it.
    fn backward_node(&mut self, step: u32, l: u32, k: usize, f: &OpDef, mut a: Ns) -> Ns {
        let (node, kernels) = backward_of(f);
        if kernels.is_empty() {
            return a;
        }
        let eval = format!("autograd::engine::evaluate_function: {node}");
        let start = a;
        a += 8_000;
        for (j, (op, kern, ns, dims)) in kernels.iter().enumerate() {
            a = self.op_with_kernel(
                Tid::Autograd,
                a,
                op,
                dims,
                kern,
                *ns,
                Tid::Compute,
                self.key(step, l + 1000, (k * 4 + j) as u32),
            ) + 2_000;
        }
        let args = format!(r#"{{"External id": {}, "Ev Idx": 0}}"#, self.ext);
        self.sink.x(
            "cpu_op",
            &eval,
            Tid::Autograd,
            start,
            a - start + 3_000,
            &args,
        );
        a + 5_000
    }

    /// Launches bucket `b`'s all-reduce from the autograd thread at `a`; returns when its
    /// kernel is ready to start (gradients computed, launch done, comm stream free).
    fn allreduce(&mut self, a: Ns, b: usize, ends: Option<&[Ns]>) -> Ns {
        self.ext += 1;
        self.corr += 1;
        let nranks = self.spec.ranks;
        let elems = self.spec.bucket_elems();
        let meta = format!(
            r#", "Collective name": "allreduce", "In msg nelems": {elems}, "Out msg nelems": {elems}, "Group size": {nranks}, "dtype": "BFloat16", "In split size": "[]", "Out split size": "[]", "Process Group Name": "0", "Process Group Description": "default_pg", "Process Group Ranks": "[{}]""#,
            (0..nranks)
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        let op_args = format!(r#"{{"External id": {}, "Ev Idx": 0{meta}}}"#, self.ext);
        self.sink.x(
            "cpu_op",
            "record_param_comms",
            Tid::Autograd,
            a,
            45_000,
            &op_args,
        );
        let launch = a + 30_000;
        let rt = self.runtime_args(211);
        self.sink.x(
            "cuda_runtime",
            "cudaLaunchKernel",
            Tid::Autograd,
            launch,
            7_000,
            &rt,
        );
        // The all-reduce waits for the gradients on the compute stream (stream wait event).
        let ready = (launch + 7_000 + 3_000)
            .max(self.compute_free)
            .max(self.comm_free);
        if let Some(ends) = ends {
            let end = ends[b];
            self.comm_free = end;
            self.kernel(NCCL_AR, Tid::Comm, ready, end - ready, &meta);
            self.sink
                .flow(self.corr, Tid::Autograd, launch, Tid::Comm, ready);
        }
        ready
    }

    /// Phase 2: optimizer after the last all-reduce, then `.item()` synchronizes.
    /// Returns the host end of the step.
    fn optimizer_and_sync(&mut self, step: u32, h: Ns) -> Ns {
        let key = u64::from(self.rank) << 32 | u64::from(step);
        self.compute_free = self.compute_free.max(self.comm_free);
        let start = h;
        let mut h = h + 10_000;
        for g in 0..self.spec.layers().div_ceil(2) {
            h = self.op_with_kernel(
                Tid::Main,
                h,
                "aten::_fused_adamw_",
                "",
                ADAM,
                210_000,
                Tid::Compute,
                (key, 9000 + u64::from(g)),
            ) + 3_000;
        }
        self.sink.x(
            "user_annotation",
            "Optimizer.step#AdamW.step",
            Tid::Main,
            start,
            h - start,
            r#"{"External id": 0, "Ev Idx": 0}"#,
        );
        // loss.item(): copy the scalar back and wait for the device.
        let item = h + 5_000;
        self.ext += 1;
        self.corr += 1;
        let launch = item + 15_000;
        let copied = self.copy(launch, 10_000, "Memcpy DtoH (Device -> Pageable)", 4, 2_000);
        let sync_start = launch + 12_000;
        let sync_end = copied.max(sync_start) + 6_000;
        let end = sync_end + 8_000;
        let args = format!(r#"{{"External id": {}, "Ev Idx": 0}}"#, self.ext);
        self.sink
            .x("cpu_op", "aten::item", Tid::Main, item, end - item, &args);
        self.sink.x(
            "cpu_op",
            "aten::_local_scalar_dense",
            Tid::Main,
            item + 5_000,
            end - item - 8_000,
            &args,
        );
        self.corr += 1;
        let sync = self.runtime_args(131);
        self.sink.x(
            "cuda_runtime",
            "cudaStreamSynchronize",
            Tid::Main,
            sync_start,
            sync_end - sync_start,
            &sync,
        );
        end
    }
}

/// GPUs per simulated node.
pub(super) const GPUS_PER_NODE: u32 = 8;

/// Start of the first step on every rank (true clock).
pub(super) const T_START: Ns = 1_000_000;
/// Host gap between steps (logging, scheduler).
pub(super) const STEP_GAP: Ns = 30_000;

/// Simulates the cluster step by step to find when every all-reduce ends.
pub(super) fn schedule(spec: DemoSpec) -> Schedule {
    let n = spec.ranks as usize;
    let mut t0 = vec![T_START; n];
    let mut sims: Vec<(u64, u64)> = vec![(0, 0); n];
    let mut out = Vec::new();
    for s in 0..spec.steps {
        let step = FIRST_STEP + s;
        let mut readies = Vec::with_capacity(n);
        for r in 0..n {
            let mut sink = Discard;
            let mut sim = RankSim::new(r as u32, spec, &mut sink, sims[r]);
            let (_, ready) = sim.forward_backward(step, t0[r], None);
            readies.push(ready);
        }
        // Bucket b starts on each rank when it is ready and the previous bucket has ended;
        // it ends when the last rank has started plus the ring transfer time.
        let mut ends = Vec::with_capacity(spec.buckets() as usize);
        let mut prev_end = 0;
        for b in 0..spec.buckets() as usize {
            let last_start = readies
                .iter()
                .map(|rd| rd[b].max(prev_end))
                .max()
                .unwrap_or(0);
            let end = last_start + transfer_ns(spec.ranks, spec.bucket_elems());
            ends.push(end);
            prev_end = end;
        }
        for r in 0..n {
            let mut sink = Discard;
            let mut sim = RankSim::new(r as u32, spec, &mut sink, sims[r]);
            let end = sim.run_step(step, t0[r], &ends);
            sims[r] = (sim.corr, sim.ext);
            t0[r] = end + STEP_GAP;
        }
        out.push(ends);
    }
    out
}

/// Bus bandwidth the demo's all-reduces achieve, GB/s.
pub const BUSBW_GBPS: i128 = 360;

/// Ring all-reduce of `elems` bf16 values at 360 GB/s bus bandwidth: bytes / algbw, with
/// algbw = busbw / (2(n−1)/n).
fn transfer_ns(ranks: u32, elems: u64) -> Ns {
    let bytes = i128::from(elems) * 2;
    let n = i128::from(ranks.max(1));
    if n == 1 {
        return 20_000;
    }
    (bytes * 2 * (n - 1) / (n * BUSBW_GBPS)) as Ns
}
