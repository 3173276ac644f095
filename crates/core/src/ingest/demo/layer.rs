//! The model the demo trains: one transformer layer's operators (hidden 2048, FFN 8192),
//! their kernels with H100-like device times and shapes, and the backward node of each.

use crate::time::Ns;

/// A transformer-layer operator: host op, kernel name, device time, shapes.
pub(super) struct OpDef {
    /// Host operator.
    pub op: &'static str,
    /// Kernel name.
    pub kernel: &'static str,
    /// Device time.
    pub ns: Ns,
    /// `Input Dims`.
    pub dims: &'static str,
}

pub(super) const GEMM: &str = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas";
pub(super) const LN: &str = "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)";
pub(super) const ADD: &str = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3>)";
pub(super) const GELU: &str = "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2>)";
pub(super) const FLASH_FWD: &str = "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)";
pub(super) const FLASH_BWD: &str = "void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 8, cutlass::bfloat16_t> >, false, true, false, false, true, true, false>(pytorch_flash::Flash_bwd_params)";
pub(super) const ADAM: &str = "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<c10::BFloat16, 4, (at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, double, bool, double*, double*>(at::native::(anonymous namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<c10::BFloat16, 4, (at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, double, bool, double*, double*)";
pub(super) const NCCL_AR: &str =
    "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";

/// Forward operators of one layer (hidden 2048, FFN 8192, 8192 tokens per micro-batch).
pub(super) const FORWARD: [OpDef; 8] = [
    OpDef {
        op: "aten::layer_norm",
        kernel: LN,
        ns: 30_000,
        dims: "[[4, 2048, 2048], [], [2048], [2048], [], []]",
    },
    OpDef {
        op: "aten::linear",
        kernel: GEMM,
        ns: 340_000,
        dims: "[[4, 2048, 2048], [6144, 2048], [6144]]",
    },
    OpDef {
        op: "aten::scaled_dot_product_attention",
        kernel: FLASH_FWD,
        ns: 180_000,
        dims: "[[4, 16, 2048, 128], [4, 16, 2048, 128], [4, 16, 2048, 128], [], [], [], []]",
    },
    OpDef {
        op: "aten::linear",
        kernel: GEMM,
        ns: 115_000,
        dims: "[[4, 2048, 2048], [2048, 2048], [2048]]",
    },
    OpDef {
        op: "aten::add",
        kernel: ADD,
        ns: 40_000,
        dims: "[[4, 2048, 2048], [4, 2048, 2048], []]",
    },
    OpDef {
        op: "aten::linear",
        kernel: GEMM,
        ns: 455_000,
        dims: "[[4, 2048, 2048], [8192, 2048], [8192]]",
    },
    OpDef {
        op: "aten::gelu",
        kernel: GELU,
        ns: 110_000,
        dims: "[[4, 2048, 8192], []]",
    },
    OpDef {
        op: "aten::linear",
        kernel: GEMM,
        ns: 455_000,
        dims: "[[4, 2048, 8192], [2048, 8192], [2048]]",
    },
];

/// Backward node and its kernels (operator, kernel, time, dims) for the forward operator
/// `op` that ran for `ns` on inputs `dims`.
pub(super) fn backward_of(
    op: &str,
    ns: Ns,
    dims: &str,
) -> (&'static str, Vec<(&'static str, &'static str, Ns, String)>) {
    match op {
        "aten::linear" => {
            // Forward dims `[[4, 2048, K], [N, K], [N]]`: the input gradient is
            // [8192, N] · [N, K], the weight gradient [N, 8192] · [8192, K].
            let n: Vec<u64> = dims
                .split(|c: char| !c.is_ascii_digit())
                .filter_map(|t| t.parse().ok())
                .collect();
            let (rows, k, out) = (n[0] * n[1], n[2], n[3]);
            (
                "AddmmBackward0",
                vec![
                    (
                        "aten::mm",
                        GEMM,
                        ns,
                        format!("[[{rows}, {out}], [{out}, {k}]]"),
                    ),
                    (
                        "aten::mm",
                        GEMM,
                        ns,
                        format!("[[{out}, {rows}], [{rows}, {k}]]"),
                    ),
                ],
            )
        }
        "aten::scaled_dot_product_attention" => (
            "ScaledDotProductFlashAttentionBackward0",
            vec![(
                "aten::_flash_attention_backward",
                FLASH_BWD,
                ns * 5 / 2,
                String::new(),
            )],
        ),
        "aten::layer_norm" => (
            "NativeLayerNormBackward0",
            vec![(
                "aten::native_layer_norm_backward",
                LN,
                ns * 2,
                String::new(),
            )],
        ),
        "aten::gelu" => (
            "GeluBackward0",
            vec![("aten::gelu_backward", GELU, ns * 3 / 2, String::new())],
        ),
        _ => ("AddBackward0", vec![]),
    }
}
