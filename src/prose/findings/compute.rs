//! Kernel findings in words.

use super::Words;
use crate::analysis::advisor::rules::compute::Claim;
use crate::format::human;

/// The words of a kernel finding.
pub fn words(c: &Claim) -> Words {
    match c {
        Claim::ElementwiseTraffic {
            share,
            op_types,
            led_by,
        } => Words {
            title: format!(
                "{:.0}% of kernel time is elementwise/normalization traffic ({op_types} op types), led by {led_by}",
                share * 100.0
            ),
            cause: "each elementwise op reads and writes whole tensors: bound by memory bandwidth, not math",
            suggestions: &[
                "fuse chains with torch.compile or fused kernels (fused LayerNorm/RMSNorm, fused bias+GeLU, fused Adam)",
                "keep activations in bf16",
            ],
        },
        Claim::UnderUtilizedGemm { op, of_peak } => Words {
            title: format!(
                "{op} runs at {:.0}% of the device's FLOP/s peak",
                of_peak * 100.0
            ),
            cause: "small or skinny matrix shapes, poor tile fit, or low precision use leave tensor cores idle",
            suggestions: &[
                "larger per-GPU batch or micro-batch; fewer, larger GEMMs (fused QKV projections)",
                "dimensions multiple of 8/16 (tensor cores) or 256 (Ascend cube); bf16 instead of fp32",
            ],
        },
        Claim::UnalignedGemm {
            unaligned,
            kernels,
            op,
        } => Words {
            title: format!(
                "{unaligned} of {kernels} {op} kernels have M, N or K not a multiple of 8"
            ),
            cause: "tensor cores need dimensions in multiples of 8 (fp16/bf16) or 16 (int8/fp8); others pad or fall back",
            suggestions: &[
                "pad vocabulary, hidden and batch×sequence sizes to multiples of 64 (256 on Ascend)",
            ],
        },
        Claim::Fp32Gemms { op_types, time_ns } => Words {
            title: format!(
                "{op_types} fp32 GEMM op type(s) take {} on a tensor-core device",
                human(*time_ns)
            ),
            cause: "fp32 matrix math runs on the slow fp32 path, not tensor cores",
            suggestions: &[
                "torch.backends.cuda.matmul.allow_tf32 = True (or torch.set_float32_matmul_precision('high'))",
                "train in bf16 autocast (torch.autocast('cuda', dtype=torch.bfloat16))",
            ],
        },
        Claim::RooflineUnknown {
            share,
            unknown_device,
            shapes_seen,
            ops,
        } => Words {
            title: format!(
                "{:.0}% of kernel time cannot be placed on the roofline{}",
                share * 100.0,
                if *unknown_device {
                    " (unknown device)".to_string()
                } else if *shapes_seen && !ops.is_empty() {
                    format!(
                        ": no FLOP rule for {}",
                        ops.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
                    )
                } else {
                    String::new()
                }
            ),
            cause: match (unknown_device, shapes_seen) {
                (true, _) => "the device has no entry in the peak table",
                (false, true) => {
                    "the trace records shapes, but the operators launching these kernels have no FLOP and byte rule in stepscope's table"
                }
                (false, false) => {
                    "kernels lack shapes: the profile was recorded without record_shapes"
                }
            },
            suggestions: match (unknown_device, shapes_seen) {
                (true, _) => &["pass --device NAME for devices the table does not recognise"],
                (false, true) => &[
                    "the classes shown cover the operators with rules; profile with with_flops=True to give the others FLOPs",
                ],
                (false, false) => &["profile with record_shapes=True (and with_flops=True)"],
            },
        },
    }
}
