//! FLOPs and bytes of an operator from its `Input Dims`, `Input type` and `flops` args, by
//! its family (a role). GEMMs: 2·M·K·N (batched: × batch), bytes = inputs + output;
//! `linear`-form GEMMs: input `[…, K]`, weight `[N, K]`; convolutions: 2·N·C_out·Π(out)·C_in/groups·Π(k)
//! with the output spatial size taken as the input's (stride and padding are not in the
//! args: an upper bound); convolution backward: twice the forward (input and weight
//! gradients), the output size read off `grad_output`; attention: 4·B·H·S_q·S_k·D, its
//! backward 2.5× that; norms (batch, layer, group, RMS, their backwards), softmax,
//! elementwise and reductions: bytes only (inputs + an output the size of the first input). `flops`, when the
//! profile recorded it, replaces the estimate.

use crate::analysis::comm::op::dtype_bytes;
use crate::model::{Family, GemmForm, OpFamily};

/// What an operator computes and moves.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Work {
    /// FLOPs (`None`: bytes-only operator).
    pub flops: Option<f64>,
    /// Bytes read and written.
    pub bytes: f64,
    /// GEMM dimensions (M, N, K) when it is one: tensor-core alignment.
    pub gemm: Option<(u64, u64, u64)>,
}

/// Dimensions of each input (`[]` for scalars and tensor lists): `[[8, 16], [], [[4]]]` →
/// `[[8, 16], [], []]`; torch_npu's form `32,3,224,224;\r\n64;\r\n;` → `[[32, 3, 224,
/// 224], [64], []]`. A small scanner, not a JSON parse: it runs once per kernel.
pub fn parse_dims(text: &str) -> Option<Vec<Vec<u64>>> {
    let b = text.trim().as_bytes();
    if b.first() != Some(&b'[') {
        return npu_dims(text);
    }
    if b.last() != Some(&b']') {
        return None;
    }
    let mut out = Vec::new();
    let mut depth = 0u32;
    let mut cur: Vec<u64> = Vec::new();
    let mut nested = false;
    let mut num: Option<u64> = None;
    for &c in b {
        match c {
            b'[' => {
                depth += 1;
                if depth == 2 {
                    cur.clear();
                    nested = false;
                } else if depth > 2 {
                    nested = true;
                }
            }
            b']' => {
                if let Some(n) = num.take() {
                    if depth == 2 {
                        cur.push(n);
                    }
                }
                if depth == 2 {
                    out.push(if nested {
                        Vec::new()
                    } else {
                        std::mem::take(&mut cur)
                    });
                }
                depth = depth.checked_sub(1)?;
            }
            b'0'..=b'9' => {
                let d = u64::from(c - b'0');
                num = Some(num.unwrap_or(0).checked_mul(10)?.checked_add(d)?);
            }
            b',' | b' ' | b'\n' | b'\r' | b'\t' => {
                if let Some(n) = num.take() {
                    if depth == 2 {
                        cur.push(n);
                    }
                }
            }
            _ => return None,
        }
    }
    (depth == 0).then_some(out)
}

/// torch_npu's `Input Dims`: one entry per input, `;`-separated, each its dimensions
/// `,`-separated (empty for scalars and lists; the last `;` ends an entry).
fn npu_dims(text: &str) -> Option<Vec<Vec<u64>>> {
    let t = text.trim();
    let t = t.strip_suffix(';').unwrap_or(t);
    t.split(';')
        .map(|input| {
            let input = input.trim();
            if input.is_empty() {
                return Some(Vec::new());
            }
            input.split(',').map(|d| d.trim().parse().ok()).collect()
        })
        .collect()
}

/// The first tensor element type of an `Input type` value (Kineto's JSON list, torch_npu's
/// `;`-separated text).
pub fn first_type(text: &str) -> Option<String> {
    let tensor = |t: &&str| dtype_bytes(t).is_some();
    match serde_json::from_str::<Vec<serde_json::Value>>(text) {
        Ok(v) => v
            .iter()
            .filter_map(|t| t.as_str())
            .find(tensor)
            .map(str::to_string),
        Err(_) => text
            .split(';')
            .map(str::trim)
            .find(tensor)
            .map(str::to_string),
    }
}

fn numel(d: &[u64]) -> f64 {
    d.iter().map(|&x| x as f64).product()
}

/// FLOPs and bytes of an operator of family `fam` with these inputs; `None` when the shapes
/// do not fit the rule.
pub fn work(
    fam: OpFamily,
    dims: &[Vec<u64>],
    dtype: Option<&str>,
    flops_arg: Option<u64>,
) -> Option<Work> {
    let size = dtype.and_then(dtype_bytes).unwrap_or(2) as f64;
    let inputs: f64 = dims
        .iter()
        .filter(|d| !d.is_empty())
        .map(|d| numel(d))
        .sum();
    let backward = fam.form == GemmForm::Backward;
    let mut w = match fam.family {
        Family::Gemm => gemm(fam.form, dims, size)?,
        Family::Conv => conv(dims, size, backward)?,
        Family::Attention => attention(dims, size, inputs, backward)?,
        Family::Embedding => {
            // Rows of D read (or the gradient's rows) and written, plus the int64 indices.
            let (table, idx) = (dims.first()?, dims.get(1)?);
            let (n, d) = (numel(idx), *table.last()? as f64);
            Work {
                flops: None,
                bytes: 2.0 * n * d * size + 8.0 * n,
                gemm: None,
            }
        }
        Family::Norm | Family::Elementwise => Work {
            flops: None,
            bytes: (inputs + numel(dims.first()?)) * size,
            gemm: None,
        },
    };
    if let Some(f) = flops_arg.filter(|&f| f > 0) {
        w.flops = Some(f as f64);
    }
    (w.bytes > 0.0).then_some(w)
}

/// A matrix product's work: batch × M × K × N from its operands (`Linear`: input [..., K],
/// weight [N, K]); `None` when the inner sizes disagree.
fn gemm(form: GemmForm, dims: &[Vec<u64>], size: f64) -> Option<Work> {
    let (a, b, bias) = match form {
        GemmForm::BiasFirst => (
            dims.get(1)?,
            dims.get(2)?,
            dims.first().map_or(0.0, |d| numel(d)),
        ),
        _ => (
            dims.first()?,
            dims.get(1)?,
            dims.get(2).map_or(0.0, |d| numel(d)),
        ),
    };
    let (batch, m, k, nn) = if form == GemmForm::Linear {
        // input [..., K], weight [N, K]
        let (k, rest) = a.split_last()?;
        let (nn, wk) = (*b.first()?, *b.get(1)?);
        if wk != *k {
            return None;
        }
        (numel(rest), 1.0, *k, nn)
    } else {
        let (m, k) = (a[a.len().checked_sub(2)?], *a.last()?);
        let nn = *b.last()?;
        if b[b.len().checked_sub(2)?] != k {
            return None;
        }
        (numel(&a[..a.len() - 2]), m as f64, k, nn)
    };
    let (m_rows, kf, nf) = (batch * m, k as f64, nn as f64);
    Some(Work {
        flops: Some(2.0 * m_rows * kf * nf),
        bytes: (numel(a) + numel(b) + bias + m_rows * nf) * size,
        gemm: Some(((m_rows as u64), nn, k)),
    })
}

/// A convolution's work from input [N, C_in, spatial…] and weight [C_out, C_in, kernel…]
/// (backward: grad_out first, then the input and the weight).
fn conv(dims: &[Vec<u64>], size: f64, backward: bool) -> Option<Work> {
    if backward {
        // grad_out [N, C_out, out…] gives the output size exactly; the input and the
        // weight gradients each cost the forward's FLOPs.
        let (go, x, wt) = (dims.first()?, dims.get(1)?, dims.get(2)?);
        if x.len() < 3 || wt.len() != x.len() || go.len() != x.len() {
            return None;
        }
        let forward = 2.0 * numel(go) * wt[1] as f64 * numel(&wt[2..]);
        return Some(Work {
            flops: Some(2.0 * forward),
            bytes: (numel(go) + 2.0 * numel(x) + 2.0 * numel(wt)) * size,
            gemm: None,
        });
    }
    let (x, wt) = (dims.first()?, dims.get(1)?);
    if x.len() < 3 || wt.len() != x.len() {
        return None;
    }
    let out_spatial = numel(&x[2..]);
    let flops = 2.0 * x[0] as f64 * wt[0] as f64 * out_spatial * wt[1] as f64 * numel(&wt[2..]);
    Some(Work {
        flops: Some(flops),
        bytes: (numel(x) + numel(wt) + x[0] as f64 * wt[0] as f64 * out_spatial) * size,
        gemm: None,
    })
}

/// Attention's work from q and k [B, H, S, D] (backward: grad_out first; 2.5× the forward).
fn attention(dims: &[Vec<u64>], size: f64, inputs: f64, backward: bool) -> Option<Work> {
    if backward {
        let (go, q, k) = (dims.first()?, dims.get(1)?, dims.get(2)?);
        if q.len() != 4 || k.len() != 4 || go.len() != 4 {
            return None;
        }
        let forward = 4.0 * q[0] as f64 * q[1] as f64 * q[2] as f64 * k[2] as f64 * q[3] as f64;
        return Some(Work {
            flops: Some(2.5 * forward),
            // grad_out, q, k, v, out read; dq, dk, dv written.
            bytes: (inputs + numel(q) + 2.0 * numel(k)) * size,
            gemm: None,
        });
    }
    let (q, k) = (dims.first()?, dims.get(1)?);
    if q.len() != 4 || k.len() != 4 {
        return None;
    }
    let flops = 4.0 * q[0] as f64 * q[1] as f64 * q[2] as f64 * k[2] as f64 * q[3] as f64;
    Some(Work {
        flops: Some(flops),
        bytes: (inputs + numel(q)) * size,
        gemm: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Vec<Vec<u64>> {
        parse_dims(s).unwrap()
    }

    #[test]
    fn torch_npu_writes_dims_and_types_as_text() {
        assert_eq!(
            d("32,3,224,224;\r\n64,3,11,11;\r\n64;\r\n;\r\n;\r\n"),
            [
                vec![32, 3, 224, 224],
                vec![64, 3, 11, 11],
                vec![64],
                vec![],
                vec![]
            ]
        );
        assert_eq!(d("4096;\n32,9216"), [vec![4096], vec![32, 9216]]);
        assert_eq!(parse_dims("32,x;"), None);
        assert_eq!(
            first_type("Scalar;\r\nfloat;\r\nfloat").as_deref(),
            Some("float")
        );
        assert_eq!(
            first_type(r#"["", "c10::BFloat16"]"#).as_deref(),
            Some("c10::BFloat16")
        );
        assert_eq!(first_type("ScalarList;\r\nScalar"), None);
    }

    /// The family the shipped role table gives an operator name.
    fn f(op: &str) -> OpFamily {
        crate::ingest::roles::RoleTable::embedded()
            .op_family(op.as_bytes())
            .unwrap_or_else(|| panic!("{op} has a family"))
    }

    #[test]
    fn convolution_backward_is_twice_the_forward() {
        // grad_out [2, 8, 4, 4], input [2, 3, 4, 4], weight [8, 3, 3, 3]: the forward is
        // 2·(2·8·16)·3·9 = 13824 FLOPs; input and weight gradients each cost that.
        let w = work(
            f("aten::convolution_backward"),
            &d("[[2, 8, 4, 4], [2, 3, 4, 4], [8, 3, 3, 3], []]"),
            Some("float"),
            None,
        )
        .unwrap();
        assert_eq!(w.flops, Some(27648.0));
        // grad_out 256 + 2 × input 96 + 2 × weight 216, 4 bytes each.
        assert_eq!(w.bytes, (256.0 + 192.0 + 432.0) * 4.0);
    }

    #[test]
    fn gemm_flops_and_bytes() {
        // 8×16 · 16×32: 2·8·16·32 = 8192 FLOPs; (128 + 512 + 256) floats.
        let w = work(
            f("aten::mm"),
            &d("[[8, 16], [16, 32]]"),
            Some("float"),
            None,
        )
        .unwrap();
        assert_eq!(w.flops, Some(8192.0));
        assert_eq!(w.bytes, 896.0 * 4.0);
        assert_eq!(w.gemm, Some((8, 32, 16)));
        // addmm: bias first.
        let w = work(
            f("aten::addmm"),
            &d("[[32], [8, 16], [16, 32]]"),
            Some("float"),
            None,
        )
        .unwrap();
        assert_eq!(w.flops, Some(8192.0));
        assert_eq!(w.bytes, (32.0 + 896.0) * 4.0);
        // linear: [4, 2048, 2048] × weight [6144, 2048]: 2·8192·2048·6144.
        let w = work(
            f("aten::linear"),
            &d("[[4, 2048, 2048], [6144, 2048], [6144]]"),
            Some("c10::BFloat16"),
            None,
        )
        .unwrap();
        assert_eq!(w.flops, Some(2.0 * 8192.0 * 2048.0 * 6144.0));
        assert_eq!(w.gemm, Some((8192, 6144, 2048)));
        // bmm: 2·B·M·K·N.
        let w = work(
            f("aten::bmm"),
            &d("[[3, 4, 5], [3, 5, 6]]"),
            Some("float"),
            None,
        )
        .unwrap();
        assert_eq!(w.flops, Some(2.0 * 3.0 * 4.0 * 5.0 * 6.0));
        // Shapes that do not multiply: no estimate.
        assert_eq!(
            work(f("aten::mm"), &d("[[8, 16], [17, 32]]"), None, None),
            None
        );
    }

    #[test]
    fn attention_conv_and_bytes_only() {
        let w = work(
            f("aten::scaled_dot_product_attention"),
            &d("[[4, 16, 2048, 128], [4, 16, 2048, 128], [4, 16, 2048, 128]]"),
            Some("c10::BFloat16"),
            None,
        )
        .unwrap();
        assert_eq!(w.flops, Some(4.0 * 4.0 * 16.0 * 2048.0 * 2048.0 * 128.0));
        // conv2d: N=2, C_in=3, 8×8, weight [16, 3, 3, 3]: 2·2·16·64·3·9.
        let w = work(
            f("aten::conv2d"),
            &d("[[2, 3, 8, 8], [16, 3, 3, 3], [16]]"),
            Some("float"),
            None,
        )
        .unwrap();
        assert_eq!(w.flops, Some(2.0 * 2.0 * 16.0 * 64.0 * 3.0 * 9.0));
        let w = work(
            f("aten::add"),
            &d("[[1024], [1024], []]"),
            Some("float"),
            None,
        )
        .unwrap();
        assert_eq!((w.flops, w.bytes), (None, 3.0 * 1024.0 * 4.0));
        // The profiler's flops win.
        let w = work(
            f("aten::mm"),
            &d("[[8, 16], [16, 32]]"),
            Some("float"),
            Some(100),
        )
        .unwrap();
        assert_eq!(w.flops, Some(100.0));
        assert!(
            crate::ingest::roles::RoleTable::embedded()
                .op_family(b"aten::unknown_op")
                .is_none()
        );
        assert_eq!(
            first_type(r#"["", "c10::BFloat16"]"#).as_deref(),
            Some("c10::BFloat16")
        );
    }

    #[test]
    fn embeddings_move_the_rows_they_name_not_the_table() {
        let emb = OpFamily {
            family: Family::Embedding,
            form: GemmForm::Plain,
        };
        // A 2000 × 256 fp32 table looked up at 8 × 128 indices: 1024 rows of 256 read and
        // written (2 · 1024 · 256 · 4 = 2 097 152) plus 1024 int64 indices (8192).
        let w = work(
            emb,
            &d("[[2000, 256], [8, 128], [], [], []]"),
            Some("float"),
            None,
        )
        .unwrap();
        assert_eq!((w.flops, w.bytes), (None, 2_097_152.0 + 8_192.0));
        // The backward reads the gradient's rows: the same traffic.
        let b = work(
            emb,
            &d("[[8, 128, 256], [8, 128], [], [], []]"),
            Some("float"),
            None,
        );
        assert_eq!(b.unwrap().bytes, w.bytes);
    }
}
