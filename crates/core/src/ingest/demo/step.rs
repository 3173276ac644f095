//! One data-parallel step of one rank: the data loader and input copy, forward on the main
//! thread, backward on the autograd thread launching each gradient bucket's all-reduce as it
//! is ready (or all of them after backward), the optimizer, and the `.item()` that
//! synchronizes host and device.

use super::layer::{ADAM, FORWARD, NCCL_AR, OpDef, backward_of};
use super::sim::{RankSim, StepPlan, Tid, jitter};
use super::{FIRST_STEP, LAYERS_PER_BUCKET};
use crate::time::Ns;

impl RankSim<'_> {
    /// A whole step from host start `t0`. With the plan's all-reduce ends the collectives
    /// are emitted; without, only timed. Returns the host end of the step and when each
    /// all-reduce was ready to start on this rank (pipeline steps: when each send ended).
    pub(super) fn run_step(&mut self, t0: Ns, plan: &StepPlan) -> (Ns, Vec<Ns>) {
        if self.knobs.pipeline {
            return self.pipeline_step(t0, plan);
        }
        let h = self.inputs(t0);
        let h = self.begin_capture(h);
        let h = self.forward(h, 0..self.spec.layers(), 1);
        let h = self.end_capture_and_replay(h);
        let ends = (!plan.allreduce_ends.is_empty()).then_some(&plan.allreduce_ends[..]);
        let (h, ready) = self.backward(h, ends);
        (self.optimizer_and_sync(h + 20_000), ready)
    }

    /// The jitter key of (a, b) on this rank in this step: every rank and step varies
    /// differently, and reproducibly.
    pub(super) fn key(&self, a: u32, b: u32) -> (u64, u64) {
        (
            u64::from(self.rank) << 32 | u64::from(self.step),
            u64::from(a) << 32 | u64::from(b),
        )
    }

    /// The data loader (with the scenario's pause on its culprit) and the input copy on the
    /// main thread from `t0`; returns the host time after them.
    pub(super) fn inputs(&mut self, t0: Ns) -> Ns {
        let h = t0 + 20_000;
        let mut dl = jitter(self.knobs.loader_ns, self.key(0, 0).0, 7, 7);
        if let Some((_, _, pause)) = self.knobs.pause {
            if self.spec.slow_step() == Some(self.step) && self.spec.culprit() == Some(self.rank) {
                dl += pause;
            }
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
        let copy = jitter(680_000, self.key(0, 1).0, 1, 1);
        let h = self.memcpy(
            h + dl + 5_000,
            "aten::copy_",
            "Memcpy HtoD (Pinned -> Device)",
            16 << 20,
            copy,
        );
        h + 5_000
    }

    /// The forward pass of `layers` on the main thread from `h`, for a micro-batch of
    /// 1/`micro` of the batch; returns the host time after it.
    pub(super) fn forward(&mut self, mut h: Ns, layers: std::ops::Range<u32>, micro: u32) -> Ns {
        let middle = layers.start + layers.len() as u32 / 2;
        for l in layers {
            if l == middle {
                h = self.gc_pause(h);
            }
            h = self.allocator_churn(Tid::Main, h);
            for (k, f) in FORWARD.iter().enumerate() {
                let dims = micro_dims(f.dims, micro);
                h = self.op_with_kernel(
                    Tid::Main,
                    h,
                    f.op,
                    &dims,
                    f.kernel,
                    f.ns / Ns::from(micro),
                    self.key(l, k as u32 + 100 * (micro - 1)),
                ) + 2_000;
                if (k as u32) < self.knobs.syncs_per_layer {
                    h = self.item(h) + 2_000;
                }
            }
        }
        h
    }

    /// Backward on the autograd thread from host time `h`; DDP launches a bucket's
    /// all-reduce once the gradients of its layers are computed (or, when the scenario says
    /// so, every all-reduce after backward). Returns the host time after it and each
    /// all-reduce's ready time.
    fn backward(&mut self, h: Ns, ends: Option<&[Ns]>) -> (Ns, Vec<Ns>) {
        let mut a = h + 30_000;
        let mut ready = Vec::new();
        let parts = self.spec.buckets() / self.spec.layers().div_ceil(LAYERS_PER_BUCKET);
        let mut due = 0;
        for l in (0..self.spec.layers()).rev() {
            a = self.backward_layer(l, a, 1);
            if l % LAYERS_PER_BUCKET == 0 {
                due += parts;
                if !self.knobs.allreduce_after_backward {
                    a = self.launch_allreduces(a, &mut due, &mut ready, ends);
                }
            }
        }
        let a = self.launch_allreduces(a, &mut due, &mut ready, ends);
        (a, ready)
    }

    /// Launches the `due` all-reduces from `a`; returns the host time after them.
    fn launch_allreduces(
        &mut self,
        mut a: Ns,
        due: &mut u32,
        ready: &mut Vec<Ns>,
        ends: Option<&[Ns]>,
    ) -> Ns {
        // A hand-written loop after backward issues them back to back; DDP's hooks are
        // spaced by the autograd engine.
        let spacing = if self.knobs.allreduce_after_backward {
            20_000
        } else {
            60_000
        };
        for _ in 0..*due {
            let b = ready.len();
            ready.push(self.allreduce(a, b, ends));
            a += spacing;
        }
        *due = 0;
        a
    }

    /// The backward of layer `l` from `a` for a micro-batch of 1/`micro`: the autograd
    /// node of each forward operator, last first; returns the host time after it.
    pub(super) fn backward_layer(&mut self, l: u32, mut a: Ns, micro: u32) -> Ns {
        for (k, f) in FORWARD.iter().enumerate().rev() {
            a = self.backward_node(l, k, f, a, micro);
        }
        a
    }

    /// The autograd node of forward op `f` (layer `l`, position `k`) from host time `a`:
    /// its kernels inside an `evaluate_function` op; returns the host time after it.
    fn backward_node(&mut self, l: u32, k: usize, f: &OpDef, mut a: Ns, micro: u32) -> Ns {
        let dims = micro_dims(f.dims, micro);
        let (node, kernels) = backward_of(f.op, f.ns / Ns::from(micro), &dims);
        if kernels.is_empty() {
            return a;
        }
        let eval = format!("autograd::engine::evaluate_function: {node}");
        let start = a;
        // The node's own External id (its operators' are theirs: Kineto links a launch to
        // the innermost operator around it).
        self.ext += 1;
        let own = self.ext;
        a += 8_000;
        for (j, (op, kern, ns, dims)) in kernels.iter().enumerate() {
            a = self.op_with_kernel(
                Tid::Autograd,
                a,
                op,
                dims,
                kern,
                *ns,
                self.key(l + 1000, (k * 4 + j) as u32 + 100 * (micro - 1)),
            ) + 2_000;
        }
        let args = format!(r#"{{"External id": {own}, "Ev Idx": 0}}"#);
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

    /// Launches all-reduce `b` from the autograd thread at `a` on its stream (buckets
    /// alternate between the scenario's streams and process groups); returns when its kernel
    /// is ready to start (gradients computed, launch done, stream free).
    fn allreduce(&mut self, a: Ns, b: usize, ends: Option<&[Ns]>) -> Ns {
        self.ext += 1;
        self.corr += 1;
        let nranks = self.spec.ranks;
        let elems = self.spec.bucket_elems();
        let lane = b % self.knobs.comm_streams.max(1) as usize;
        let (pg, desc) = if lane == 0 {
            ("0", "default_pg")
        } else {
            ("1", "grad_pg")
        };
        let meta = format!(
            r#", "Collective name": "allreduce", "In msg nelems": {elems}, "Out msg nelems": {elems}, "Group size": {nranks}, "dtype": "BFloat16", "In split size": "[]", "Out split size": "[]", "Process Group Name": "{pg}", "Process Group Description": "{desc}", "Process Group Ranks": "[{}]""#,
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
            .max(self.comm_free[lane]);
        if let Some(ends) = ends {
            let end = ends[b];
            self.comm_free[lane] = end;
            let stream = if lane == 0 { Tid::Comm } else { Tid::Comm2 };
            self.kernel(NCCL_AR, stream, ready, end - ready, &meta);
            self.sink
                .flow(self.corr, Tid::Autograd, launch, stream, ready);
        }
        ready
    }

    /// Phase 2: optimizer after the last all-reduce, then `.item()` synchronizes.
    /// Returns the host end of the step.
    pub(super) fn optimizer_and_sync(&mut self, h: Ns) -> Ns {
        self.compute_free = self.device_free();
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
                (self.key(0, 0).0, 9000 + u64::from(g)),
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
        self.item(h + 5_000)
    }

    /// The scenario's GC pause at host time `h`, on its rank in its step; returns the host
    /// time after it.
    fn gc_pause(&mut self, h: Ns) -> Ns {
        let Some((rank, step, ns, recorded)) = self.knobs.gc_pause else {
            return h;
        };
        if self.gc_paused
            || self.rank != rank.min(self.spec.ranks - 1)
            || self.step != FIRST_STEP + step
        {
            return h;
        }
        self.gc_paused = true;
        if recorded {
            let args = r#"{"External id": 0, "Ev Idx": 0}"#;
            self.sink.x("user_annotation", "gc", Tid::Main, h, ns, args);
        }
        h + ns + 2_000
    }

    /// `loss.item()` at `item`: copy the scalar back and wait for the device. Returns the
    /// host end of the step.
    fn item(&mut self, item: Ns) -> Ns {
        self.ext += 1;
        let outer = self.ext;
        // `_local_scalar_dense` inside it makes the copy and the sync: they are its own.
        self.ext += 1;
        self.corr += 1;
        let launch = item + 15_000;
        let copied = self.copy(launch, 10_000, "Memcpy DtoH (Device -> Pageable)", 4, 2_000);
        let sync_start = launch + 12_000;
        let sync_end = copied.max(sync_start) + 6_000;
        let end = sync_end + 8_000;
        let args = format!(r#"{{"External id": {outer}, "Ev Idx": 0}}"#);
        self.sink
            .x("cpu_op", "aten::item", Tid::Main, item, end - item, &args);
        let args = format!(r#"{{"External id": {}, "Ev Idx": 0}}"#, self.ext);
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

/// `Input Dims` of a micro-batch of 1/`micro` of the batch (the leading batch dimension 4).
fn micro_dims(dims: &str, micro: u32) -> String {
    if micro <= 1 {
        return dims.to_string();
    }
    dims.replace("[4, ", &format!("[{}, ", 4 / micro.min(4)))
}
