//! Kineto's operator args into the model's side tables: collective metadata
//! (`model::Collective`, from NCCL kernels, `record_param_comms`, gloo annotations and c10d
//! ops) and operator shapes (`model::OpShape`, what the roofline estimates FLOPs and bytes
//! from), at the events' final indices.

use crate::ingest::chrome::chunk::Chunk;
use crate::ingest::chrome::raw::Str;
use crate::model::{Collective, EventIx, Interner, OpShape};

/// Collective metadata of the chunks, at final event indices, names interned.
pub(crate) fn collectives(
    chunks: &[Chunk<'_>],
    final_index: &[Vec<u32>],
    strings: &mut Interner,
) -> Vec<Collective> {
    let mut out = Vec::new();
    for (k, c) in chunks.iter().enumerate() {
        for (local, m) in &c.coll {
            let mut sym = |s: &Option<Str<'_>>| {
                s.as_ref()
                    .map(|s| strings.intern(&String::from_utf8_lossy(&s.0)))
            };
            let input_type = m
                .input_type
                .as_ref()
                .and_then(|t| first_input_type(&t.0))
                .map(|t| Str(t.into_bytes().into()));
            out.push(Collective {
                event: EventIx(final_index[k][*local as usize]),
                name: sym(&m.name),
                in_nelems: m
                    .in_nelems
                    .or_else(|| m.input_dims.as_ref().and_then(|d| first_input_elems(&d.0))),
                out_nelems: m.out_nelems,
                dtype: sym(&m.dtype).or_else(|| sym(&input_type)),
                group: sym(&m.group),
                group_ranks: sym(&m.group_ranks),
                group_size: m.group_size,
                seq: m.seq,
                src_rank: m.src_rank,
                dst_rank: m.dst_rank,
            });
        }
    }
    out.sort_by_key(|c| c.event);
    out
}

/// Operator shapes of the chunks, at final event indices, texts interned.
pub(crate) fn shapes(
    chunks: &[Chunk<'_>],
    final_index: &[Vec<u32>],
    strings: &mut Interner,
) -> Vec<OpShape> {
    let mut out = Vec::new();
    for (k, c) in chunks.iter().enumerate() {
        for (local, m) in &c.shapes {
            let mut text =
                |b: Option<&[u8]>| b.map(|b| strings.intern(&String::from_utf8_lossy(b)));
            out.push(OpShape {
                event: EventIx(final_index[k][*local as usize]),
                dims: text(m.input_dims.as_ref().map(|d| &*d.0)),
                types: text(m.input_type.as_ref().map(|t| &*t.0)),
                flops: m.flops,
            });
        }
    }
    out.sort_by_key(|s| s.event);
    out
}

/// Elements of the first input in an `Input Dims` value: `[[8, 16], ...]` → 128; a tensor
/// list `[[[4], [6]], ...]` → 10. `None` when it is not such a list or overflows.
fn first_input_elems(dims: &[u8]) -> Option<u64> {
    use serde_json::Value;
    let product = |d: &Value| -> Option<u64> {
        d.as_array()?
            .iter()
            .try_fold(1u64, |p, n| p.checked_mul(n.as_u64()?))
    };
    let v: Value = serde_json::from_slice(dims).ok()?;
    let first = v.as_array()?.first()?;
    match first.as_array()?.first() {
        Some(Value::Array(_)) => first
            .as_array()?
            .iter()
            .try_fold(0u64, |s, t| s.checked_add(product(t)?)),
        _ => product(first),
    }
}

/// The first input's type in an `Input type` value (`["float", ""]` → `float`), unless it is
/// not a tensor element type (`TensorList`, `Scalar`, empty).
fn first_input_type(types: &[u8]) -> Option<String> {
    let v: Vec<serde_json::Value> = serde_json::from_slice(types).ok()?;
    let t = v.first()?.as_str()?;
    (!t.is_empty() && t != "TensorList" && t != "Scalar").then(|| t.to_string())
}
