//! What collective operations cost on the bus: NCCL's bus-bandwidth factors
//! (docs/metrics.md, "Collective instance"), and element sizes of `dtype` values. Which
//! operation a name performs is a role (`model::CollOp`, from the role tables).

use crate::model::CollOp;

/// Bus-bandwidth factor of an operation for a group of `n` ranks as (numerator,
/// denominator), per NCCL's performance notes: all-reduce 2(n−1)/n; all-gather,
/// reduce-scatter and all-to-all (n−1)/n; everything else 1.
pub fn bus_factor(op: CollOp, n: u32) -> (u64, u64) {
    let n = u64::from(n.max(1));
    match op {
        CollOp::AllReduce => (2 * (n - 1), n),
        CollOp::AllGather | CollOp::ReduceScatter | CollOp::AllToAll => (n - 1, n),
        _ => (1, 1),
    }
}

/// Bytes per element of a `dtype` / `Input type` value (`Float`, `BFloat16`, `float`, `long`,
/// `c10::Half`, `signed char`, HCCL's `FP32`); `None` when unknown.
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
        // HCCL's names (`FP32`, `BFP16`, `FP64`) beside PyTorch's.
        "double" | "float64" | "fp64" | "long" | "int64" | "longlong" | "uint64"
        | "complexfloat" => 8,
        "float" | "float32" | "fp32" | "int" | "int32" | "uint32" | "complexhalf" => 4,
        "half" | "float16" | "fp16" | "bfloat16" | "bfp16" | "bf16" | "short" | "int16"
        | "uint16" => 2,
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
    fn bus_factors_follow_nccl() {
        assert_eq!(bus_factor(CollOp::AllReduce, 8), (14, 8));
        assert_eq!(bus_factor(CollOp::AllGather, 4), (3, 4));
        assert_eq!(bus_factor(CollOp::ReduceScatter, 4), (3, 4));
        assert_eq!(bus_factor(CollOp::AllToAll, 2), (1, 2));
        assert_eq!(bus_factor(CollOp::Broadcast, 8), (1, 1));
        assert_eq!(bus_factor(CollOp::Send, 2), (1, 1));
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
