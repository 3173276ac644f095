//! NCCL's own NVTX ranges (NCCL ≥ 2.19 annotates its API calls in the `NCCL` domain, with a
//! payload that nsys exports as JSON): `ncclCommInitRank` says the process's rank and the
//! communicator's size; each collective call says its communicator and message size (a send
//! or receive, its peer). They name what the kernels launched inside them carry, as Kineto's
//! collective args do.

use super::row::Row;
use crate::model::{Collective, Interner, Kind, Rank};
use serde_json::Value;

/// One NCCL API call with what its payload says (each field when the payload has it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Call {
    /// The range (its name is the API: `ncclAllReduce`, `ncclCommInitRank`).
    pub row: Row,
    /// `NCCL communicator ID`.
    pub comm: Option<u64>,
    /// `Message size [bytes]`.
    pub bytes: Option<u64>,
    /// `Peer rank` of a send or receive, within the communicator.
    pub peer: Option<u64>,
    /// `No. of ranks` of the communicator (an init).
    pub nranks: Option<u64>,
    /// `Rank` of this process in the communicator (an init).
    pub rank: Option<u64>,
}

impl Call {
    /// The call of `row` with its JSON `payload` (fields it lacks, or a payload that is not
    /// JSON, are `None`: payload schemas change between NCCL versions).
    pub(super) fn of(row: Row, payload: &str) -> Call {
        let json: Value = serde_json::from_str(payload).unwrap_or_default();
        let mut call = Call {
            row,
            comm: None,
            bytes: None,
            peer: None,
            nranks: None,
            rank: None,
        };
        let Some(fields) = json.as_object() else {
            return call;
        };
        for (key, v) in fields {
            let key = key.to_ascii_lowercase();
            let slot = if key.contains("communicator") {
                &mut call.comm
            } else if key.starts_with("message size") {
                &mut call.bytes
            } else if key.contains("peer") {
                &mut call.peer
            } else if key.contains("no. of ranks") || key == "nranks" {
                &mut call.nranks
            } else if key == "rank" || key == "my rank" {
                &mut call.rank
            } else {
                continue;
            };
            *slot = number(v);
        }
        call
    }

    /// The collective's name as the role table reads it (`ncclAllReduce` → `allreduce`), or
    /// `None` for a call that moves no data (init, group start/end, comm destroy).
    pub(super) fn collective(&self) -> Option<String> {
        let api = self.row.name.strip_prefix("nccl")?;
        let bytes_moved =
            self.bytes.is_some() && !api.starts_with("Comm") && !api.starts_with("Group");
        bytes_moved.then(|| api.to_ascii_lowercase())
    }

    /// Whether this is a communicator's creation (`ncclCommInitRank`, `…InitRankConfig`,
    /// `…InitAll`, `ncclCommSplit`): its payload places the process in that communicator.
    pub(super) fn is_init(&self) -> bool {
        self.row.name.starts_with("ncclComm") && self.nranks.is_some() && self.rank.is_some()
    }
}

/// An unsigned integer from a JSON number or a decimal string.
fn number(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// The process's global rank and the world size: its place in the largest communicator it
/// initialised (the world; sub-communicators number their ranks from 0).
pub(super) fn world_place(calls: &[Call], process: i64) -> Option<(u32, u32)> {
    calls
        .iter()
        .filter(|c| c.row.process == process && c.is_init())
        .filter_map(|c| Some((u32::try_from(c.nranks?).ok()?, u32::try_from(c.rank?).ok()?)))
        .filter(|&(n, r)| r < n)
        .max_by_key(|&(n, _)| n)
        .map(|(n, r)| (r, n))
}

/// Records the collective metadata of the communication kernels launched inside each NCCL
/// call of the process (`lane_of` finds a thread's lane): its name, message size in elements
/// of the kernel's data type, communicator (named `nccl:<id>`) and its size where an init
/// said it, the peer of a send or receive. `epoch` puts the calls on the rank's clock.
pub(super) fn attach(
    rank: &mut Rank,
    strings: &mut Interner,
    (calls, epoch): (&[Call], i64),
    process: i64,
    lane_of: impl Fn(i64) -> Option<u16>,
) {
    let sizes: std::collections::BTreeMap<u64, u64> = calls
        .iter()
        .filter(|c| c.row.process == process && c.is_init())
        .filter_map(|c| Some((c.comm?, c.nranks?)))
        .collect();
    for call in calls.iter().filter(|c| c.row.process == process) {
        let (Some(name), Some(lane)) = (call.collective(), lane_of(call.row.lane.1)) else {
            continue;
        };
        let (from, to) = (
            call.row.start.saturating_add(epoch),
            call.row.end.saturating_add(epoch),
        );
        for k in super::ops::launched_within(rank, lane, from, to) {
            let i = k.0 as usize;
            if rank.events.kind[i] != Kind::Comm {
                continue;
            }
            let kernel = strings.resolve(rank.events.name[i]).to_string();
            let (dtype, width) = kernel_dtype(&kernel).unwrap_or(("Byte", 1));
            let elems = call.bytes.map(|b| b / width);
            let c = Collective {
                event: k,
                name: Some(strings.intern(&name)),
                in_nelems: elems,
                out_nelems: elems,
                dtype: Some(strings.intern(dtype)),
                group: call.comm.map(|id| strings.intern(&group_name(id))),
                group_ranks: None,
                group_size: call.comm.and_then(|id| sizes.get(&id).copied()),
                seq: None,
                src_rank: call.peer.filter(|_| name == "recv"),
                dst_rank: call.peer.filter(|_| name == "send"),
            };
            rank.collectives.push(c);
        }
    }
    rank.collectives.sort_by_key(|c| c.event);
}

/// The data type an NCCL kernel's name carries (`…_AllReduce_Sum_bf16_RING_LL`, older
/// `…_RING_LL_Sum_float`), as PyTorch names it, and its width in bytes.
fn kernel_dtype(kernel: &str) -> Option<(&'static str, u64)> {
    let base = kernel.split('(').next().unwrap_or(kernel);
    base.split('_').find_map(|t| {
        Some(match t {
            "bf16" => ("BFloat16", 2),
            "f16" | "half" => ("Half", 2),
            "f32" | "float" => ("Float", 4),
            "f64" | "double" => ("Double", 8),
            "i8" | "int8" => ("Char", 1),
            "u8" | "uint8" => ("Byte", 1),
            "i32" | "int32" => ("Int", 4),
            "u32" | "uint32" => ("UInt32", 4),
            "i64" | "int64" => ("Long", 8),
            "u64" | "uint64" => ("UInt64", 8),
            "f8e4m3" => ("Float8_e4m3fn", 1),
            "f8e5m2" => ("Float8_e5m2", 1),
            _ => return None,
        })
    })
}

/// The communicators the process joined, each with its place and size.
pub(super) fn memberships(
    calls: &[Call],
    process: i64,
) -> Vec<crate::ingest::membership::Membership> {
    let mut v: Vec<_> = calls
        .iter()
        .filter(|c| c.row.process == process && c.is_init())
        .filter_map(|c| {
            Some(crate::ingest::membership::Membership {
                group: group_name(c.comm?),
                local: u32::try_from(c.rank?).ok()?,
                size: u32::try_from(c.nranks?).ok()?,
            })
        })
        .collect();
    v.sort_by(|a, b| a.group.cmp(&b.group));
    v.dedup_by(|a, b| a.group == b.group);
    v
}

/// The name stepscope gives a communicator: `nccl:` and its id in hex.
fn group_name(comm: u64) -> String {
    format!("nccl:{comm:x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, process: i64) -> Row {
        Row {
            start: 0,
            end: 1,
            process,
            lane: (-1, 1),
            corr: None,
            name: name.into(),
        }
    }

    #[test]
    fn payload_fields_by_name_in_any_case() {
        let c = Call::of(
            row("ncclAllReduce", 1),
            r#"{"NCCL communicator ID": 77, "Message size [bytes]": "4096", "Reduction operation": "Sum"}"#,
        );
        assert_eq!((c.comm, c.bytes, c.peer), (Some(77), Some(4096), None));
        assert_eq!(c.collective().as_deref(), Some("allreduce"));
        let s = Call::of(
            row("ncclSend", 1),
            r#"{"message size [bytes]": 8, "Peer rank": 1}"#,
        );
        assert_eq!((s.bytes, s.peer), (Some(8), Some(1)));
        assert_eq!(s.collective().as_deref(), Some("send"));
        let bad = Call::of(row("ncclAllReduce", 1), "not json");
        assert_eq!((bad.bytes, bad.collective()), (None, None));
    }

    #[test]
    fn the_world_is_the_largest_communicator() {
        let init = |n, r, p| {
            Call::of(
                row("ncclCommInitRank", p),
                &format!(r#"{{"No. of ranks": {n}, "Rank": {r}}}"#),
            )
        };
        let calls = [init(2, 1, 5), init(8, 6, 5), init(8, 3, 9), init(4, 9, 9)];
        assert_eq!(world_place(&calls, 5), Some((6, 8)));
        // A rank outside its communicator's size is no evidence.
        assert_eq!(world_place(&calls, 9), Some((3, 8)));
        assert_eq!(world_place(&calls, 1), None);
        assert!(init(2, 1, 5).collective().is_none());
    }

    #[test]
    fn kernel_names_carry_the_data_type() {
        let k = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
        assert_eq!(kernel_dtype(k), Some(("BFloat16", 2)));
        assert_eq!(
            kernel_dtype("ncclKernel_AllReduce_RING_LL_Sum_float"),
            Some(("Float", 4))
        );
        assert_eq!(kernel_dtype("ncclDevKernel_SendRecv(ncclDevComm*)"), None);
    }
}
