//! The normalized job (docs/architecture.md): ranks, their lanes, columnar events and host
//! steps, with names interned once for the whole job and each name's [`Role`]. Built by
//! `ingest`, read by `analysis`.

mod event;
pub mod flight;
mod ids;
mod interner;
mod lane;
pub mod live;
mod profiler;
mod role;
mod serial;
mod task;

pub use event::{Events, Kind, NO_STEP, RawSpan};
pub use ids::{EventIx, EventRef, RankId, RankIx, StepNo};
pub use interner::{Interner, MAX_NAME, Sym, cut_bytes};
pub use lane::{Lane, LaneSide};
pub use profiler::{
    ClockSample, HcclOpTime, Link, LinkUse, OpStat, PeerWait, PlaneTransfer, ProfilerStep,
    Transport, TransportUse,
};
pub use role::{
    CollOp, Family, GemmForm, GraphCall, HostCollective, OpFamily, PageableCopy, Role, SyncCall,
};
pub use task::{Core, Pipe, Pipes, TaskDetail};

use crate::time::Ns;

/// A whole profiled job: one [`Rank`] per trace, sorted by rank id.
#[derive(Debug, Default)]
pub struct Job {
    /// Ranks in increasing id order.
    pub ranks: Vec<Rank>,
    /// Every name (events, lanes) of every rank, interned once.
    pub strings: Interner,
    /// What each interned name means, indexed by [`Sym`].
    pub roles: Vec<Role>,
    /// Every step number of any rank, ascending.
    pub steps: Vec<StepNo>,
    /// World size as the traces state it (`distributedInfo.world_size`), when any does.
    pub world_size: Option<u32>,
    /// Process groups declared by any rank (`distributedInfo.pg_config`), each once, by name.
    pub groups: Vec<ProcessGroup>,
    /// The parallel sizes a rank's metadata declares (Megatron's `distributed_args`), the
    /// first rank's that has them.
    pub parallel: Option<ParallelSizes>,
    /// Notes about how the job was read that a user must know (guessed ranks, missing steps).
    pub notes: Vec<String>,
}

/// Parallel sizes as a framework declares them (Megatron's `distributed_args`:
/// `tensor_model_parallel_size`, ...); 1 where unstated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct ParallelSizes {
    /// Tensor parallel.
    pub tp: u32,
    /// Pipeline parallel.
    pub pp: u32,
    /// Data parallel.
    pub dp: u32,
    /// Context parallel.
    pub cp: u32,
    /// Expert parallel.
    pub ep: u32,
}

/// A process group (communication domain) as `distributedInfo.pg_config` declares it.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct ProcessGroup {
    /// `pg_name`: what `Process Group Name` on collective events refers to.
    pub name: String,
    /// `pg_desc` (`default_pg`, ...).
    pub description: String,
    /// Global ranks of the group.
    pub ranks: Vec<RankId>,
}

/// One rank's trace, normalized.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Rank {
    /// Global rank id.
    pub id: RankId,
    /// Where the rank came from.
    pub source: SourceInfo,
    /// GPU/NPU streams and CPU threads, indexed by `Events::lane`.
    pub lanes: Vec<Lane>,
    /// All timed events, grouped by lane and sorted by start within a lane.
    pub events: Events,
    /// The first start and the last end of its events (`None` without events), set once
    /// they are checked against the time range at load.
    pub window: Option<(Ns, Ns)>,
    /// Where the profiler stopped recording, when the trace says (Kineto's `Record Window
    /// End`): a step marker that ends later is cut there ([`HostStep`]).
    pub record_end: Option<Ns>,
    /// Host steps (`ProfilerStep#N` on the stepping thread), in time order.
    pub steps: Vec<HostStep>,
    /// The CPU lane carrying the step annotations (the main thread), when there is one.
    pub stepping_lane: Option<u16>,
    /// Device names from `deviceProperties`.
    pub devices: Vec<Sym>,
    /// Events read but not kept as timed events, by reason.
    pub dropped: Dropped,
    /// Timed events of categories stepscope does not know, by category name.
    pub unknown_categories: Vec<(Sym, u64)>,
    /// Collective metadata of events that carry it (NCCL kernels, `record_param_comms`), in
    /// event order.
    pub collectives: Vec<Collective>,
    /// Shapes and FLOPs of operators that launch compute (GEMMs, convolutions, attention,
    /// norms, elementwise), in event order: what the roofline estimates from.
    pub shapes: Vec<OpShape>,
    /// Device work launched before the trace window began, left out of every step.
    pub pre_window: PreWindow,
    /// The profiler's own per-step summary (Ascend's `step_trace_time.csv`), when it wrote one.
    pub profiler_steps: Vec<ProfilerStep>,
    /// Waits for named peers inside collectives (HCCL `Notify_Wait`), in start order.
    pub peer_waits: Vec<PeerWait>,
    /// The profiler's per-operator-type sums of its kernel table (`op_statistic.csv`).
    pub op_stats: Vec<OpStat>,
    /// The accelerator's clock samples, in time order; empty when none were recorded.
    pub clocks: Vec<ClockSample>,
    /// The data-moving tasks of HCCL ops, with their sizes and links, in start order.
    pub transfers: Vec<PlaneTransfer>,
    /// Traffic per HCCL op and transport as the profiler summed it (`communication.json`).
    pub transports: Vec<TransportUse>,
    /// Each HCCL op's elapse and transit as HCCL split them, by (op, step).
    pub hccl_times: Vec<HcclOpTime>,
    /// Traffic per link as the profiler's matrix summed it (`communication_matrix.json`).
    pub links: Vec<LinkUse>,
    /// The environment variables the profiler recorded (Ascend `ENV_VARIABLES`): `None` when
    /// it recorded none; else the ones that were set, by name.
    pub env: Option<Vec<(String, String)>>,
    /// The accelerator's own details of device tasks (Ascend's kernel table), in event
    /// order; empty when the profiler wrote none.
    pub tasks: Vec<TaskDetail>,
    /// Only the profiler's summaries were kept (Ascend's step summary and HCCL ops, no
    /// timeline): its events are its communication ops, its breakdown is the profiler's own.
    pub summary_only: bool,
}

/// Device events launched before the trace window: on a stream, the unlinked events that run
/// before the first event whose launching call is in the trace (the queue the profiler found
/// when it started). They belong to no step (HTA drops them the same way).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PreWindow {
    /// Such events.
    pub events: u64,
    /// Σ their durations.
    pub busy_ns: Ns,
    /// The latest end among them: where the first step's device work can start.
    pub end: Option<Ns>,
}

/// An operator's `Input Dims`, `Input type` and `flops` args.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OpShape {
    /// The `cpu_op` event.
    pub event: EventIx,
    /// `Input Dims` as written (`[[8, 16], [16, 32]]`), interned: shapes repeat.
    pub dims: Option<Sym>,
    /// `Input type` as written (`["float", "float"]`), interned.
    pub types: Option<Sym>,
    /// `flops` (recorded `with_flops=True`).
    pub flops: Option<u64>,
}

/// Collective metadata from one event's args (`Collective name`, `In msg nelems`, `dtype`,
/// `Process Group Name`, ...: what NCCL kernels and `record_param_comms` carry).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Collective {
    /// The event (index into `Rank::events`).
    pub event: EventIx,
    /// `Collective name` (`allreduce`, `broadcast`, ...).
    pub name: Option<Sym>,
    /// `In msg nelems` (or, on gloo annotations and c10d ops, the elements of the first input
    /// from `Input Dims`).
    pub in_nelems: Option<u64>,
    /// `Out msg nelems`.
    pub out_nelems: Option<u64>,
    /// `dtype` (or the first input's `Input type`: `float`).
    pub dtype: Option<Sym>,
    /// `Process Group Name`.
    pub group: Option<Sym>,
    /// `Process Group Ranks` as written (`"[0, 1]"`).
    pub group_ranks: Option<Sym>,
    /// `Group size`.
    pub group_size: Option<u64>,
    /// `Seq`: the call's sequence number in its group (newer PyTorch), the surest matching key.
    pub seq: Option<u64>,
    /// `Src Rank` of a receive, within the group.
    pub src_rank: Option<u64>,
    /// `Dst Rank` of a send, within the group.
    pub dst_rank: Option<u64>,
}

/// Where a rank was read from and how big it was.
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct SourceInfo {
    /// The path as given (or `-`, or `demo:rank-N`).
    pub path: String,
    /// Its position among the inputs it was loaded from (views read an event's args again
    /// from that input).
    pub input: usize,
    /// Bytes on disk (compressed size for gzip).
    pub file_bytes: u64,
    /// Bytes of JSON text parsed.
    pub json_bytes: u64,
    /// How the rank id was found.
    pub rank_from: RankFrom,
    /// Which profiler wrote it.
    pub format: SourceFormat,
    /// What its platform tells analyses, as its reader set it.
    pub platform: Platform,
    /// The summary it was read from (`stepscope summarize`), when it was: `path` is then the
    /// trace the summary was made of.
    pub summary: Option<String>,
}

/// What a rank's platform tells analyses, set by the reader that made the rank: analyses
/// read these facts and never branch on the format that wrote a rank (a new reader sets them
/// for its platform, and every analysis follows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Platform {
    /// The rank's device list is every device of its node (Kineto's `deviceProperties`),
    /// so its length is the ranks per node; else it names the rank's own device only.
    pub lists_node_devices: bool,
    /// The link kinds assumed where nothing names them, as the link table names them:
    /// (within a node, between nodes).
    pub default_links: (&'static str, &'static str),
    /// Fused operator APIs exist that replace sequences of its framework's operators
    /// (torch_npu's affinity APIs): the affinity analysis looks for the sequences.
    pub fused_apis: bool,
}

impl Platform {
    /// A CUDA or ROCm job traced by the PyTorch profiler: the platform a rank has unless its
    /// reader says otherwise.
    pub const KINETO: Platform = Platform {
        lists_node_devices: true,
        default_links: ("nvlink4", "ib-ndr"),
        fused_apis: false,
    };

    /// An Ascend NPU job: a rank names its own device only; HCCS within a node and RoCE
    /// between nodes; torch_npu's fused operator APIs.
    pub const ASCEND: Platform = Platform {
        lists_node_devices: false,
        default_links: ("hccs", "roce-200"),
        fused_apis: true,
    };
}

impl Default for Platform {
    fn default() -> Self {
        Platform::KINETO
    }
}

/// Which profiler wrote a rank: analyses are the same, but some numbers have a profiler's own
/// counterpart to check against, and names differ (streams, collectives).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum SourceFormat {
    /// The PyTorch profiler (Kineto) Chrome trace.
    #[default]
    Kineto,
    /// The Ascend profiler (torch_npu, MindSpore).
    Ascend,
    /// Nsight Systems, exported to SQLite (`nsys export --type sqlite`).
    Nsys,
}

impl SourceFormat {
    /// Its name in messages and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            SourceFormat::Kineto => "kineto",
            SourceFormat::Ascend => "ascend",
            SourceFormat::Nsys => "nsys",
        }
    }
}

/// How a rank's id was determined, most reliable first.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum RankFrom {
    /// `distributedInfo.rank` inside the trace.
    #[default]
    DistributedInfo,
    /// The rank's place in the largest NCCL communicator it joined (an Nsight export's
    /// `ncclCommInitRank` payload).
    NcclInit,
    /// A `rank-N`-style token in the file name.
    FileName,
    /// Neither: the position among the inputs (a warning is issued).
    DiscoveryOrder,
}

/// One host step: the `ProfilerStep#N` annotation (or the whole trace when there is none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HostStep {
    /// The `N` of `ProfilerStep#N`; 0 for the synthetic whole-trace step.
    pub number: StepNo,
    /// Host start of the step annotation.
    pub start: Ns,
    /// Host end of the step annotation.
    pub end: Ns,
    /// True when the trace has no step markers and this step covers the whole trace.
    pub synthetic: bool,
}

/// Counts of events that were parsed but not stored as timed events.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Dropped {
    /// `python_function` stack frames (counted, dropped unless asked for).
    pub python_function: u64,
    /// Flow events (`ph` s/t/f): links are taken from `args.correlation` instead.
    pub flow: u64,
    /// Instant events (`ph` i/I), e.g. `[memory]` allocator records.
    pub instant: u64,
    /// Metadata events (`ph` M): used for lane names, not stored.
    pub metadata: u64,
    /// Counter events (`ph` C) and other phases stepscope does not model.
    pub other_phase: u64,
    /// Tracks the profiler derived from the events themselves (Ascend's `Overlap Analysis`).
    pub derived: u64,
}

impl Dropped {
    /// Adds another rank's (or chunk's) counts.
    pub fn add(&mut self, o: &Dropped) {
        self.python_function += o.python_function;
        self.flow += o.flow;
        self.instant += o.instant;
        self.metadata += o.metadata;
        self.other_phase += o.other_phase;
        self.derived += o.derived;
    }
}

impl Job {
    /// The role of a name.
    pub fn role(&self, name: Sym) -> &Role {
        &self.roles[name as usize]
    }

    /// The position of the rank with id `id`.
    pub fn rank_ix(&self, id: RankId) -> Option<RankIx> {
        // Ranks are kept in id order (a search per lookup: analyses ask per rank of
        // 10 000); a job built out of order by hand is still searched whole.
        match self.ranks.binary_search_by_key(&id, |r| r.id) {
            Ok(i) => Some(RankIx::of(i)),
            Err(_) => self.ranks.iter().position(|r| r.id == id).map(RankIx::of),
        }
    }

    /// The rank at a position.
    pub fn rank(&self, ix: RankIx) -> &Rank {
        &self.ranks[ix.get()]
    }

    /// True when rank `id` is loaded from the profiler's summaries alone
    /// ([`Rank::summary_only`]); ranks are kept in id order.
    pub fn is_summary_only(&self, id: RankId) -> bool {
        self.ranks
            .binary_search_by_key(&id, |r| r.id)
            .is_ok_and(|k| self.ranks[k].summary_only)
    }
}

impl Rank {
    /// The step number of event `i`, `None` outside every step.
    pub fn step_of(&self, i: usize) -> Option<StepNo> {
        let s = self.events.step[i];
        (s != NO_STEP).then(|| self.steps[s as usize].number)
    }

    /// True when the rank has no device work at all (a CPU-only trace: the breakdown's fallback, docs/metrics.md).
    pub fn is_cpu_only(&self) -> bool {
        // Device work only ever sits on device lanes: scan those alone.
        !self
            .lanes
            .iter()
            .enumerate()
            .filter(|(_, l)| l.side == LaneSide::Device)
            .any(|(i, _)| {
                self.lane_events(i as u16)
                    .any(|e| self.events.kind[e].is_device_work())
            })
    }

    /// Event index range of one lane.
    pub fn lane_events(&self, lane: u16) -> std::ops::Range<usize> {
        let l = &self.lanes[lane as usize];
        l.first as usize..(l.first + l.count) as usize
    }
}
