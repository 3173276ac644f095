//! Collective operation types, recognised from `Collective name` args and from kernel and
//! annotation names, with the NCCL bus-bandwidth factors (DESIGN §4).

use serde::Serialize;

/// The operation a collective call performs.
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
    /// NCCL's fused send/receive kernel (pipeline and all-to-all traffic).
    SendRecv,
    /// Barrier.
    Barrier,
    /// A collective stepscope does not classify further.
    #[default]
    Other,
}

impl CollOp {
    /// Stable lower-case name used in reports.
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

    /// From a `Collective name` value or an operation token of a kernel or annotation name
    /// (`allreduce`, `all_reduce`, `AllReduce`, `_allgather_base`, `reduce_scatter_tensor`).
    pub fn from_name(name: &str) -> CollOp {
        let s: String = name
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .map(|c| c.to_ascii_lowercase())
            .collect();
        let has = |p: &str| s.contains(p);
        if has("allreduce") {
            CollOp::AllReduce
        } else if has("allgather") {
            CollOp::AllGather
        } else if has("reducescatter") {
            CollOp::ReduceScatter
        } else if has("alltoall") {
            CollOp::AllToAll
        } else if has("broadcast") || has("bcast") {
            CollOp::Broadcast
        } else if has("sendrecv") {
            CollOp::SendRecv
        } else if has("send") {
            CollOp::Send
        } else if has("recv") {
            CollOp::Recv
        } else if has("barrier") {
            CollOp::Barrier
        } else if has("reduce") {
            CollOp::Reduce
        } else if has("gather") || has("scatter") {
            CollOp::Gather
        } else {
            CollOp::Other
        }
    }

    /// The operation of a communication kernel or annotation name: `ncclKernel_AllReduce_…`,
    /// `ncclDevKernel_SendRecv(…)`, `nccl:all_reduce`, `gloo:all_reduce`, `hcom_allReduce_…`.
    pub fn from_event_name(name: &str) -> CollOp {
        let token = ["ncclDevKernel_", "ncclKernel_", "rcclKernel_"]
            .iter()
            .find_map(|p| name.strip_prefix(p))
            .map(|rest| rest.split(['_', '(']).next().unwrap_or(""))
            .or_else(|| {
                ["nccl:", "gloo:", "c10d::", "hcom_", "hccl:"]
                    .iter()
                    .find_map(|p| name.strip_prefix(p))
            })
            .unwrap_or(name);
        CollOp::from_name(token)
    }

    /// Point-to-point: pairs of ranks, not the whole group, take part in one transfer.
    pub fn is_p2p(self) -> bool {
        matches!(self, CollOp::Send | CollOp::Recv | CollOp::SendRecv)
    }

    /// Bus-bandwidth factor for a group of `n` ranks as (numerator, denominator), per NCCL's
    /// performance notes: all-reduce 2(n−1)/n; all-gather, reduce-scatter and all-to-all
    /// (n−1)/n; everything else 1.
    pub fn bus_factor(self, n: u32) -> (u64, u64) {
        let n = u64::from(n.max(1));
        match self {
            CollOp::AllReduce => (2 * (n - 1), n),
            CollOp::AllGather | CollOp::ReduceScatter | CollOp::AllToAll => (n - 1, n),
            _ => (1, 1),
        }
    }
}

/// Bytes per element of a `dtype` / `Input type` value (`Float`, `BFloat16`, `float`, `long`,
/// `c10::Half`, `signed char`); `None` when unknown.
pub fn dtype_bytes(dtype: &str) -> Option<u64> {
    let d: String = dtype
        .rsplit("::")
        .next()
        .unwrap_or(dtype)
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '_')
        .map(|c| c.to_ascii_lowercase())
        .collect();
    Some(match d.as_str() {
        "double" | "float64" | "long" | "int64" | "longlong" | "uint64" | "complexfloat" => 8,
        "float" | "float32" | "int" | "int32" | "uint32" | "complexhalf" => 4,
        "half" | "float16" | "bfloat16" | "short" | "int16" | "uint16" => 2,
        "char" | "signedchar" | "unsignedchar" | "byte" | "int8" | "uint8" | "bool"
        | "float8e4m3fn" | "float8e5m2" | "float8e4m3fnuz" | "float8e5m2fnuz" => 1,
        "complexdouble" | "complex128" => 16,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_to_operations() {
        for (n, op) in [
            ("allreduce", CollOp::AllReduce),
            ("_allgather_base", CollOp::AllGather),
            ("allgather_into_tensor_coalesced", CollOp::AllGather),
            ("reduce_scatter_tensor", CollOp::ReduceScatter),
            ("all_to_all", CollOp::AllToAll),
            ("alltoall_base", CollOp::AllToAll),
            ("broadcast", CollOp::Broadcast),
            ("send", CollOp::Send),
            ("recv", CollOp::Recv),
            ("reduce", CollOp::Reduce),
            ("barrier", CollOp::Barrier),
            ("scatter", CollOp::Gather),
            ("mystery", CollOp::Other),
        ] {
            assert_eq!(CollOp::from_name(n), op, "{n}");
        }
        for (n, op) in [
            (
                "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
                CollOp::AllReduce,
            ),
            (
                "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
                CollOp::AllReduce,
            ),
            (
                "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*)",
                CollOp::SendRecv,
            ),
            (
                "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)",
                CollOp::SendRecv,
            ),
            (
                "ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclWorkElem)",
                CollOp::Broadcast,
            ),
            (
                "ncclKernel_ReduceScatter_RING_LL_Sum_bf16",
                CollOp::ReduceScatter,
            ),
            ("nccl:all_to_all", CollOp::AllToAll),
            ("gloo:all_reduce", CollOp::AllReduce),
            ("c10d::allreduce_", CollOp::AllReduce),
            ("hcom_allReduce__123_0_1", CollOp::AllReduce),
        ] {
            assert_eq!(CollOp::from_event_name(n), op, "{n}");
        }
    }

    #[test]
    fn bus_factors_follow_nccl() {
        assert_eq!(CollOp::AllReduce.bus_factor(8), (14, 8));
        assert_eq!(CollOp::AllGather.bus_factor(4), (3, 4));
        assert_eq!(CollOp::ReduceScatter.bus_factor(4), (3, 4));
        assert_eq!(CollOp::AllToAll.bus_factor(2), (1, 2));
        assert_eq!(CollOp::Broadcast.bus_factor(8), (1, 1));
        assert_eq!(CollOp::Send.bus_factor(2), (1, 1));
    }

    #[test]
    fn dtype_sizes() {
        assert_eq!(dtype_bytes("Float"), Some(4));
        assert_eq!(dtype_bytes("BFloat16"), Some(2));
        assert_eq!(dtype_bytes("c10::BFloat16"), Some(2));
        assert_eq!(dtype_bytes("signed char"), Some(1));
        assert_eq!(dtype_bytes("long"), Some(8));
        assert_eq!(dtype_bytes("Long"), Some(8));
        assert_eq!(dtype_bytes("Float8_e4m3fn"), Some(1));
        assert_eq!(dtype_bytes("quux"), None);
    }
}
