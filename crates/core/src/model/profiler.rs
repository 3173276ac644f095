//! What a profiler says about its own run, kept beside the events so that analyses can
//! cross-check their numbers against it (Ascend's `step_trace_time.csv`).

use super::StepNo;
use crate::time::Ns;

/// One row of Ascend's per-step summary (`step_trace_time.csv`, `analysis.db`
/// `StepTraceTime`), in integer ns. Definitions (torch_npu's `_trace_step_time_parser.py`, and
/// how they map to stepscope's breakdown) are in docs/metrics.md, "Ascend step summary".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct ProfilerStep {
    /// The step (`None`: the profile had no schedule, one row for the whole run).
    pub step: Option<StepNo>,
    /// Σ `Overlap Analysis` Computing: the union of compute tasks.
    pub computing: Ns,
    /// Communication not hidden behind compute.
    pub comm_not_overlapped: Ns,
    /// Communication hidden behind compute.
    pub overlapped: Ns,
    /// The union of communication.
    pub communication: Ns,
    /// Device time in the step with neither compute nor communication.
    pub free: Ns,
    /// The device span of the step less `bubble`.
    pub stage: Ns,
    /// Pipeline receive waits (`hcom_receive`).
    pub bubble: Ns,
    /// `comm_not_overlapped` less `bubble`, when written.
    pub comm_not_overlapped_excl_receive: Option<Ns>,
    /// From the host step's start to the first device task (newer exports).
    pub preparing: Option<Ns>,
    /// The device the row is of, when the summary names one (`Device_id`, `deviceId`): one
    /// process that profiled several devices writes a row per device.
    pub device: Option<u32>,
}

/// A rank waiting inside a collective for one named peer's signal, as the collective library
/// itself recorded it (HCCL's `Notify_Wait` plane tasks): a measured wait, where the arrival
/// skew between loaded ranks can only see the ranks that were loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PeerWait {
    /// The wait task (kept as an `other` event on its plane lane).
    pub event: super::EventIx,
    /// The peer waited for, as its rank in the collective's communicator.
    pub peer: u32,
}

/// A link type HCCL reports traffic on (`communication.json`). `Sdma` is the on-node total:
/// it already includes `Hccs`, `Pcie` and `Sio`, so the two are never added.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Transport {
    /// Inter-node RDMA (RoCE).
    Rdma,
    /// On-node DMA: all of HCCS, PCIe and SIO together.
    Sdma,
    /// Huawei Cache Coherence System links between NPUs.
    Hccs,
    /// PCIe between NPUs.
    Pcie,
    /// The die-to-die link of a 910C pair.
    Sio,
}

impl Transport {
    /// By HCCL's name (`HCCS`); `None` for `LOCAL` and anything unknown.
    pub fn of(name: &str) -> Option<Transport> {
        Some(match name {
            "RDMA" => Transport::Rdma,
            "SDMA" => Transport::Sdma,
            "HCCS" => Transport::Hccs,
            "PCIE" => Transport::Pcie,
            "SIO" => Transport::Sio,
            _ => return None,
        })
    }

    /// HCCL's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Rdma => "RDMA",
            Transport::Sdma => "SDMA",
            Transport::Hccs => "HCCS",
            Transport::Pcie => "PCIE",
            Transport::Sio => "SIO",
        }
    }
}

/// One link's traffic as HCCL's matrix summed it (`communication_matrix.json`, the `total`
/// statistic of an op type in a group): from one communicator rank to another.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LinkUse {
    /// The step.
    pub step: Option<StepNo>,
    /// The group (HCCL's group id, `17522688603477080586`).
    pub group: String,
    /// The sender, as its rank in the group's communicator.
    pub src: u32,
    /// The receiver, likewise.
    pub dst: u32,
    /// The link type.
    pub transport: Transport,
    /// Bytes (10⁶ B per MB), rounded to the byte.
    pub bytes: u64,
    /// Transfer time, rounded to the ns.
    pub time_ns: Ns,
}

/// One HCCL op's traffic on one transport, as the profiler summed it (`communication.json`
/// `Communication Bandwidth Info`): bytes and the transfer time of its tasks on that link.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TransportUse {
    /// The step (`step50` → 50).
    pub step: Option<StepNo>,
    /// The op (`hcom_allReduce__586_0_1`).
    pub op: String,
    /// The link type.
    pub transport: Transport,
    /// `Transit Size(MB)` in bytes (10⁶ B per MB), rounded to the byte.
    pub bytes: u64,
    /// `Transit Time(ms)` in ns, rounded to the ns.
    pub time_ns: Ns,
}

/// One HCCL op's time as HCCL split it (`communication.json` `Communication Time Info`, db
/// `CommAnalyzerTime`): the op's elapse, of which its data-moving tasks' transit. Kept to set
/// beside the split measured across ranks, which cannot see a rank that is not loaded.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HcclOpTime {
    /// The step (`step50` → 50).
    pub step: Option<StepNo>,
    /// The op (`hcom_allReduce__586_0_1`).
    pub op: String,
    /// `Elapse Time(ms)` in ns, rounded to the ns.
    pub elapse_ns: Ns,
    /// `Transit Time(ms)` in ns. (Its `Wait Time(ms)` is not kept: some versions write it
    /// wrong, and elapse − transit is the time the op did not move data, whatever it did.)
    pub transit_ns: Ns,
}

/// What a collective's data transfer ran over (HCCL's `link type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Link {
    /// A copy within the device (`ON_CHIP`): local, not link traffic.
    OnChip,
    /// A link between devices: HCCS (also `HCCS_SW`), PCIe, SIO, or RoCE (`ROCE`,
    /// `STANDARD_ROCE`) as [`Transport::Rdma`].
    Over(Transport),
}

impl Link {
    /// By HCCL's name; `None` for `N/A`, `INVALID_TYPE`, `RESERVED` and anything unknown.
    pub fn of(name: &str) -> Option<Link> {
        Some(match name {
            "ON_CHIP" => Link::OnChip,
            "HCCS" | "HCCS_SW" => Link::Over(Transport::Hccs),
            "PCIE" => Link::Over(Transport::Pcie),
            "SIO" => Link::Over(Transport::Sio),
            "ROCE" | "STANDARD_ROCE" => Link::Over(Transport::Rdma),
            _ => return None,
        })
    }
}

/// One data-moving task of an HCCL op on one of its planes (`Memcpy`, `Reduce_Inline`), as
/// HCCL recorded it (trace_view plane-task args, db `COMMUNICATION_TASK_INFO`): the bytes it
/// moved, by which engine and over which link. What the byte-alignment analysis reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PlaneTransfer {
    /// The task (an `other` event on its plane lane).
    pub event: super::EventIx,
    /// The engine: [`Transport::Sdma`] or [`Transport::Rdma`] (`transport type`).
    pub transport: Transport,
    /// The link it crossed.
    pub link: Link,
    /// Bytes moved (`size(Byte)`).
    pub bytes: u64,
}

impl PlaneTransfer {
    /// A transfer from HCCL's names of its engine and link; `None` when either is not one
    /// HCCL moves data with (`LOCAL`, `N/A`) or the size is 0.
    pub fn of(event: super::EventIx, transport: &str, link: &str, bytes: u64) -> Option<Self> {
        let transport =
            Transport::of(transport).filter(|t| matches!(t, Transport::Sdma | Transport::Rdma))?;
        Some(PlaneTransfer {
            event,
            transport,
            link: Link::of(link)?,
            bytes: (bytes > 0).then_some(bytes)?,
        })
    }
}

/// The accelerator's compute clock from one moment until the next sample (Ascend's `AI Core
/// Freq` counter, db `AICORE_FREQ`): a clock below the job's top one runs every kernel slower.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ClockSample {
    /// When, ns.
    pub at: Ns,
    /// The clock, MHz.
    pub mhz: u32,
}

/// The profiler's own sum of its kernel table for one operator type on one unit
/// (`op_statistic.csv`): what the tasks' own sums are checked against.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OpStat {
    /// `OP Type`.
    pub op_type: String,
    /// `Core Type`.
    pub core: super::Core,
    /// `Count`.
    pub count: u64,
    /// `Total Time(us)`, in ns.
    pub total_ns: Ns,
}
