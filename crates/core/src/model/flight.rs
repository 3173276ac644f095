//! PyTorch Flight Recorder dumps (docs/flight-recorder.md): what each rank's process groups
//! last enqueued, started and completed when the job hung or timed out. Built by
//! `ingest::flight`, read by `analysis::hang`.

use crate::time::Ns;

/// One rank's dump.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlightDump {
    /// The rank (from the file name: `nccl_trace_rank_<rank>`, any prefix).
    pub rank: u32,
    /// The file it was read from (for messages).
    pub source: String,
    /// The dump's format version (`2.10`), when stated.
    pub version: Option<String>,
    /// The process groups the rank belonged to.
    pub groups: Vec<DumpGroup>,
    /// Its recorded collectives and point-to-point operations, oldest first (the recorder's
    /// ring keeps the last N: older ones are gone).
    pub entries: Vec<FlightEntry>,
}

/// A process group as one rank's dump declares it (`pg_config`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DumpGroup {
    /// Its local name (`0`, `1`, …: creation order on that rank).
    pub name: String,
    /// Its description (`default_pg`, `tp:0`, a user's `group_desc`).
    pub desc: String,
    /// Its member ranks (global ranks, ascending).
    pub ranks: Vec<u32>,
}

/// Where an operation got to when the dump was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FlightState {
    /// Enqueued, not started on the device.
    Scheduled,
    /// Started, not completed.
    Started,
    /// Completed.
    Completed,
}

impl FlightState {
    /// Stable name (the dump's own).
    pub fn as_str(self) -> &'static str {
        match self {
            FlightState::Scheduled => "scheduled",
            FlightState::Started => "started",
            FlightState::Completed => "completed",
        }
    }
}

/// One recorded operation.
#[derive(Debug, Clone, PartialEq)]
pub struct FlightEntry {
    /// The recorder's id of the entry.
    pub record_id: u64,
    /// Its process group's local name (matched to [`DumpGroup::name`]).
    pub group: String,
    /// Its sequence number among the group's collectives (0 for point-to-point).
    pub seq: u64,
    /// Its sequence number among the group's point-to-point operations.
    pub p2p_seq: u64,
    /// A point-to-point operation (send, receive).
    pub is_p2p: bool,
    /// What it is (`nccl:all_reduce`, `gloo:broadcast`).
    pub op: String,
    /// Its inputs' shapes.
    pub input_sizes: Vec<Vec<i64>>,
    /// Its inputs' element types.
    pub input_dtypes: Vec<String>,
    /// Its outputs' shapes.
    pub output_sizes: Vec<Vec<i64>>,
    /// Where it got to.
    pub state: FlightState,
    /// When it was enqueued (the recorder's clock, ns).
    pub created_ns: Ns,
    /// Its device time, when the recorder measured it.
    pub duration_ns: Option<Ns>,
    /// Its timeout, ms.
    pub timeout_ms: Option<u64>,
}
