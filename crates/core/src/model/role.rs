//! Roles: what a name means, whatever vendor or format wrote it. Ingest assigns one [`Role`]
//! to every interned name (from the role tables, `src/ingest/roles/`), and analyses match on
//! roles — `role.sync`, `role.comm_kernel` — never on `cudaStreamSynchronize` or `nccl*`.

use super::ids::StepNo;
use serde::Serialize;

/// What a collective call does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum CollOp {
    /// All-reduce.
    AllReduce,
    /// All-gather.
    AllGather,
    /// Reduce-scatter.
    ReduceScatter,
    /// All-to-all.
    AllToAll,
    /// Broadcast.
    Broadcast,
    /// Reduce to one rank.
    Reduce,
    /// Gather or scatter to/from one rank.
    Gather,
    /// Point-to-point send.
    Send,
    /// Point-to-point receive.
    Recv,
    /// A fused send/receive kernel (pipeline and all-to-all traffic).
    SendRecv,
    /// Barrier.
    Barrier,
    /// A collective stepscope does not classify further.
    #[default]
    Other,
}

impl CollOp {
    /// Every operation, in declaration order (the names role tables use).
    pub const ALL: [CollOp; 12] = [
        CollOp::AllReduce,
        CollOp::AllGather,
        CollOp::ReduceScatter,
        CollOp::AllToAll,
        CollOp::Broadcast,
        CollOp::Reduce,
        CollOp::Gather,
        CollOp::Send,
        CollOp::Recv,
        CollOp::SendRecv,
        CollOp::Barrier,
        CollOp::Other,
    ];

    /// Stable lower-case name used in reports and role tables.
    pub fn as_str(self) -> &'static str {
        match self {
            CollOp::AllReduce => "all_reduce",
            CollOp::AllGather => "all_gather",
            CollOp::ReduceScatter => "reduce_scatter",
            CollOp::AllToAll => "all_to_all",
            CollOp::Broadcast => "broadcast",
            CollOp::Reduce => "reduce",
            CollOp::Gather => "gather",
            CollOp::Send => "send",
            CollOp::Recv => "recv",
            CollOp::SendRecv => "send_recv",
            CollOp::Barrier => "barrier",
            CollOp::Other => "other",
        }
    }

    /// Point-to-point: pairs of ranks, not the whole group, take part in one transfer.
    pub fn is_p2p(self) -> bool {
        matches!(self, CollOp::Send | CollOp::Recv | CollOp::SendRecv)
    }
}

/// The operator family, for FLOP rules and advice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// Matrix multiplications.
    #[default]
    Gemm,
    /// Convolutions.
    Conv,
    /// Attention.
    Attention,
    /// Normalizations and softmax.
    Norm,
    /// Elementwise and reductions.
    Elementwise,
    /// Embedding lookups and their backward: row gathers and scatters, memory-bound.
    Embedding,
}

/// How a GEMM operator lays out its inputs (which `Input Dims` entries are the matrices).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GemmForm {
    /// `A, B[, C]`: `mm`, `bmm`, `matmul`.
    #[default]
    Plain,
    /// `bias, A, B`: `addmm`, `baddbmm`.
    BiasFirst,
    /// `input [..., K], weight [N, K][, bias]`: `linear`.
    Linear,
    /// A backward op: `grad_output` first, then the forward's inputs (`convolution_backward`:
    /// `grad_out, input, weight`; attention backward: `grad_out, q, k, v`).
    Backward,
}

/// An operator the roofline can estimate from its shapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OpFamily {
    /// Its family.
    pub family: Family,
    /// For GEMMs, the input layout.
    pub form: GemmForm,
}

/// A runtime call that blocks the host until the device catches up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncCall {
    /// Waits for every stream of the device.
    Device,
    /// Waits for one stream (stream or event synchronize, synchronous copies).
    Stream,
    /// Polls an event: blocking on the critical path only (HTA's model).
    Query,
    /// A framework op that reads a device value on the host (`.item()`): blocking on the
    /// critical path only where no runtime call is recorded under it and device work ends
    /// inside it (the profile then shows its wait only by its length).
    Implicit,
}

/// A host-side collective call (CPU backends, or the framework's record of a GPU one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostCollective {
    /// The framework op that enqueues a collective (`c10d::allreduce_`).
    Enqueue,
    /// The transfer itself on a CPU backend's thread (`gloo:all_reduce`).
    Transfer,
    /// An annotation of a GPU collective on the host (`nccl:all_reduce`).
    Annotation,
    /// The profiler's record carrying a collective's metadata (`record_param_comms`).
    Metadata,
}

/// A runtime call of graph capture and replay (CUDA / HIP graphs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphCall {
    /// Starts recording a stream's launches into a graph (`cudaStreamBeginCapture`).
    BeginCapture,
    /// Ends the recording (`cudaStreamEndCapture`).
    EndCapture,
    /// Replays a captured graph (`cudaGraphLaunch`).
    Launch,
}

/// The direction of a copy through pageable (unpinned) host memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageableCopy {
    /// Host to device.
    HostToDevice,
    /// Device to host.
    DeviceToHost,
}

/// What one name means. The default is "nothing special".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Role {
    /// A step marker and its step number (`ProfilerStep#N`).
    pub step: Option<StepNo>,
    /// A blocking runtime call.
    pub sync: Option<SyncCall>,
    /// A host-side collective call.
    pub host_collective: Option<HostCollective>,
    /// A communication kernel (its kind is `Comm`).
    pub comm_kernel: bool,
    /// A matrix-multiply kernel of a BLAS library (the diff pairs renamed kernels by kind).
    pub gemm_kernel: bool,
    /// The collective this name performs, for collective kernels, calls and `Collective
    /// name` values (`Other` when it names none).
    pub collective: CollOp,
    /// A roofline operator.
    pub op_family: Option<OpFamily>,
    /// An allocator call (`cudaMalloc`).
    pub allocator: bool,
    /// A copy through pageable host memory.
    pub pageable: Option<PageableCopy>,
    /// A data-loader annotation.
    pub data_loader: bool,
    /// A graph capture or replay call.
    pub graph: Option<GraphCall>,
    /// A kernel launch call (`cudaLaunchKernel`): what a graph capture records.
    pub kernel_launch: bool,
    /// A garbage-collection event.
    pub gc: bool,
    /// A framework operator (`aten::*`): what a blocking call is attributed to.
    pub framework_op: bool,
    /// An operator run through a runtime's compile-at-run-time path (Ascend's
    /// `aclopCompileAndExecute`) rather than a prebuilt kernel.
    pub online_compile: bool,
}

impl Role {
    /// True for a step marker: a window, not work.
    pub fn is_step_marker(&self) -> bool {
        self.step.is_some()
    }

    /// True for a call that blocks the host (synchronize, synchronous copy).
    pub fn is_blocking(&self) -> bool {
        matches!(self.sync, Some(SyncCall::Device | SyncCall::Stream))
    }
}
