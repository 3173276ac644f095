//! Kernel findings in words.

use super::Words;
use crate::analysis::advisor::rules::compute::Claim;
use crate::analysis::roofline::UnknownCause;
use crate::format::human;

/// The words of a kernel finding.
pub(super) fn words(c: &Claim) -> Words {
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
            unknown_device: true,
            ..
        } => Words {
            title: format!(
                "{:.0}% of kernel time cannot be placed on the roofline (unknown device)",
                share * 100.0
            ),
            cause: "the device has no entry in the peak table",
            suggestions: &["pass --device NAME for devices the table does not recognise"],
        },
        Claim::RooflineUnknown { share, cause, .. } => unknown_words(*share, cause),
    }
}

/// Why kernels are off the roofline, by the cause of most of their time.
fn unknown_words(share: f64, cause: &UnknownCause) -> Words {
    let pct = share * 100.0;
    let list = |ops: &[String]| ops.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
    match cause {
        UnknownCause::NoOperator => Words {
            title: format!(
                "{pct:.0}% of kernel time cannot be placed on the roofline: most of it has no launching operator"
            ),
            cause: "kernels replayed from a CUDA graph, or launched outside any framework operator, carry no operator and so no shapes",
            suggestions: &[
                "profile a step without graph replay (eager, or the capture run) to place its kernels",
                "the classes shown cover the kernels launched from operators",
            ],
        },
        UnknownCause::NoShapesRecorded => Words {
            title: format!("{pct:.0}% of kernel time cannot be placed on the roofline"),
            cause: "kernels lack shapes: the profile was recorded without record_shapes",
            suggestions: &["profile with record_shapes=True (and with_flops=True)"],
        },
        UnknownCause::NoRule(ops) => Words {
            title: format!(
                "{pct:.0}% of kernel time cannot be placed on the roofline: no FLOP rule for {}",
                list(ops)
            ),
            cause: "the trace records shapes, but the operators launching these kernels have no FLOP and byte rule in stepscope's table",
            suggestions: &[
                "the classes shown cover the operators with rules; profile with with_flops=True to give the others FLOPs",
            ],
        },
        UnknownCause::ShapesUnfit(ops) => Words {
            title: format!(
                "{pct:.0}% of kernel time cannot be placed on the roofline: the inputs of {} are missing or fit no rule",
                list(ops)
            ),
            cause: "the trace records shapes, but not for these operators (or in a form the FLOP rules do not cover)",
            suggestions: &[
                "profile with record_shapes=True and with_flops=True; report the operator's Input Dims to stepscope",
            ],
        },
    }
}
