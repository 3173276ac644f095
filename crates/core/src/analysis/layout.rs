//! The job's parallel layout (docs/metrics.md, "Layout"): how the world is split into
//! tensor (TP), context (CP), expert (EP), data (DP) and pipeline (PP) parallel groups, each
//! axis declared (Megatron's `distributed_args`, process-group names such as `tp` or
//! `TENSOR_MODEL_PARALLEL_GROUP`) or inferred (the groups the collectives ran in, the
//! pipeline's send/receive stages, the rest of the world as data parallel), and each rank's
//! position in it (`pp1·dp0·tp3`).

use crate::analysis::cluster::Stage;
use crate::analysis::comm::Comm;
use crate::model::{CollOp, Job, ParallelSizes, RankId};
use serde::Serialize;

/// The largest world a layout is made for (a declared world beyond it is a hostile input's).
pub const MAX_WORLD: u32 = 1 << 20;

/// A parallel dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Dim {
    /// Pipeline stages.
    Pp,
    /// Data-parallel replicas.
    Dp,
    /// Expert parallel.
    Ep,
    /// Context (sequence) parallel.
    Cp,
    /// Tensor parallel.
    Tp,
}

impl Dim {
    /// Every dimension, in label order (outermost first).
    pub const ALL: [Dim; 5] = [Dim::Pp, Dim::Dp, Dim::Ep, Dim::Cp, Dim::Tp];

    /// Stable short name (`pp`).
    pub fn as_str(self) -> &'static str {
        match self {
            Dim::Pp => "pp",
            Dim::Dp => "dp",
            Dim::Ep => "ep",
            Dim::Cp => "cp",
            Dim::Tp => "tp",
        }
    }

    /// The dimension a process group's name stands for: `tp`, `mesh_tp`, `tensor`,
    /// `TENSOR_MODEL_PARALLEL_GROUP`, ...; `None` for combined or other groups (`tp_dp`,
    /// `embd`, `default_pg`).
    pub fn of_group_name(name: &str) -> Option<Dim> {
        let mut n = name.trim().to_ascii_lowercase();
        for prefix in ["mesh_", "_"] {
            if let Some(rest) = n.strip_prefix(prefix) {
                n = rest.to_string();
            }
        }
        for suffix in ["_group", "_parallel", "_model", "_pg"] {
            if let Some(rest) = n.strip_suffix(suffix) {
                n = rest.to_string();
            }
        }
        Some(match n.as_str() {
            "tp" | "tensor" => Dim::Tp,
            "pp" | "pipeline" => Dim::Pp,
            "dp" | "data" => Dim::Dp,
            "cp" | "context" => Dim::Cp,
            "ep" | "exp" | "expert" => Dim::Ep,
            _ => return None,
        })
    }
}

/// Where an axis came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Declared sizes (`distributed_args`).
    DeclaredSize,
    /// A declared process group named for the dimension.
    DeclaredGroup,
    /// The pipeline's send/receive stages.
    InferredStages,
    /// Collective groups that tile the world.
    InferredGroups,
    /// What the other axes leave of the world: data parallel.
    InferredRest,
}

/// One axis: `size` groups' worth of ranks `stride` apart (rank r's coordinate is
/// `(r / stride) % size`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Axis {
    /// The dimension.
    pub dim: Dim,
    /// Ranks per group along it.
    pub size: u32,
    /// Rank distance between neighbours along it.
    pub stride: u32,
    /// Where it came from.
    pub source: Source,
}

/// The layout: its axes (size > 1, label order) over `world` ranks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Layout {
    /// World size.
    pub world: u32,
    /// The axes, outermost (pp) first.
    pub axes: Vec<Axis>,
    /// The axes place every rank of the world exactly once (Π sizes = world, each stride
    /// the product of the sizes inside it; an expert axis may overlay data parallel).
    pub tiles: bool,
}

impl Layout {
    /// `rank`'s coordinate along `dim`, when the layout has that axis.
    pub fn coord(&self, rank: RankId, dim: Dim) -> Option<u32> {
        let a = self.axes.iter().find(|a| a.dim == dim)?;
        Some((rank.0 / a.stride.max(1)) % a.size.max(1))
    }

    /// `rank`'s position, `pp1·dp0·tp3` (empty without axes).
    pub fn label(&self, rank: RankId) -> String {
        self.axes
            .iter()
            .map(|a| format!("{}{}", a.dim.as_str(), (rank.0 / a.stride.max(1)) % a.size))
            .collect::<Vec<_>>()
            .join("·")
    }

    /// `TP 2 × PP 2 × DP 2`: the axes' sizes, innermost first.
    pub fn shape(&self) -> String {
        self.axes
            .iter()
            .rev()
            .map(|a| format!("{} {}", a.dim.as_str().to_ascii_uppercase(), a.size))
            .collect::<Vec<_>>()
            .join(" × ")
    }
}

/// The layout of `job` from its declarations, else from its collectives' groups (`comm`)
/// and the pipeline `stages`; `None` for a single rank or a world beyond [`MAX_WORLD`].
pub fn layout(job: &Job, comm: Option<&Comm>, stages: Option<&[Stage]>) -> Option<Layout> {
    // The world: as declared, else every rank loaded or named by a group a collective ran
    // in (a group no call used may be a size estimate: HCCL's matrix indexes).
    let loaded = job.ranks.iter().map(|r| r.id.0.saturating_add(1)).max();
    let named = comm.and_then(|c| {
        let used: std::collections::BTreeSet<u32> = c.instances().map(|(i, _)| i.group).collect();
        used.iter()
            .filter_map(|&g| c.calls.groups.get(g as usize))
            .flat_map(|g| g.members.iter().map(|r| r.0.saturating_add(1)))
            .max()
    });
    // One rank and nothing declared: any split would be a guess.
    let declared = job.world_size.is_some() || job.parallel.is_some() || !job.groups.is_empty();
    if job.ranks.len() < 2 && !declared {
        return None;
    }
    let world = job
        .world_size
        .unwrap_or(0)
        .max(loaded.unwrap_or(0))
        .max(named.unwrap_or(0));
    // A world beyond any real job is a hostile input's: no layout (and no grid to draw).
    if !(2..=MAX_WORLD).contains(&world) {
        return None;
    }
    let mut axes: Vec<Axis> = Vec::new();
    let add = |a: Axis, axes: &mut Vec<Axis>| {
        if a.size > 1 && a.stride > 0 && !axes.iter().any(|x| x.dim == a.dim) {
            axes.push(a);
        }
    };
    for a in named_groups(job) {
        add(a, &mut axes);
    }
    // Declared sizes settle every dimension, those of size 1 included: no group is then
    // inferred to be one of them.
    let mut settled: Vec<Dim> = axes.iter().map(|a| a.dim).collect();
    if let Some(sizes) = job.parallel {
        for a in declared_sizes(sizes, &axes) {
            settled.push(a.dim);
            add(a, &mut axes);
        }
    }
    if let Some(a) = stages
        .and_then(pipeline)
        .filter(|a| !settled.contains(&a.dim))
    {
        add(a, &mut axes);
    }
    for a in comm.map_or_else(Vec::new, |c| collective_groups(c, world, &axes)) {
        if !settled.contains(&a.dim) {
            add(a, &mut axes);
        }
    }
    let inner: u32 = axes
        .iter()
        .filter(|a| a.dim != Dim::Ep)
        .fold(1u32, |p, a| p.saturating_mul(a.size));
    if !axes.iter().any(|a| a.dim == Dim::Dp) && inner > 0 && world % inner == 0 {
        let stride = free_stride(&axes, world);
        add(
            Axis {
                dim: Dim::Dp,
                size: world / inner,
                stride,
                source: Source::InferredRest,
            },
            &mut axes,
        );
    }
    axes.sort_by_key(|a| a.dim);
    let tiles = tiles(&axes, world);
    Some(Layout { world, axes, tiles })
}

/// Axes from declared groups named for a dimension, each an arithmetic run of ranks.
fn named_groups(job: &Job) -> Vec<Axis> {
    let mut out = Vec::new();
    for g in &job.groups {
        let Some(dim) = Dim::of_group_name(&g.description).or_else(|| Dim::of_group_name(&g.name))
        else {
            continue;
        };
        if let Some((size, stride)) = run(&g.ranks) {
            out.push(Axis {
                dim,
                size,
                stride,
                source: Source::DeclaredGroup,
            });
        }
    }
    out
}

/// Declared sizes on Megatron's default order (tp innermost, then cp, dp, pp; experts over
/// data parallel), for the dimensions no named group placed.
fn declared_sizes(s: ParallelSizes, have: &[Axis]) -> Vec<Axis> {
    let stride_of = |dim: Dim, default: u32| {
        have.iter()
            .find(|a| a.dim == dim)
            .map_or(default, |a| a.stride)
    };
    let tp_cp = s.tp.saturating_mul(s.cp);
    let tp = stride_of(Dim::Tp, 1);
    let cp = stride_of(Dim::Cp, s.tp);
    let dp = stride_of(Dim::Dp, tp_cp);
    let pp = stride_of(Dim::Pp, tp_cp.saturating_mul(s.dp));
    let ep = stride_of(Dim::Ep, tp_cp);
    [
        (Dim::Tp, s.tp, tp),
        (Dim::Cp, s.cp, cp),
        (Dim::Dp, s.dp, dp),
        (Dim::Pp, s.pp, pp),
        (Dim::Ep, s.ep, ep),
    ]
    .into_iter()
    .map(|(dim, size, stride)| Axis {
        dim,
        size,
        stride,
        source: Source::DeclaredSize,
    })
    .collect()
}

/// The pipeline axis from the stages the send/receive traffic shows: stage k holds the
/// ranks whose `(r / stride) % stages` is k.
fn pipeline(stages: &[Stage]) -> Option<Axis> {
    let size = u32::try_from(stages.len()).ok()?;
    let first = |k: usize| stages.get(k)?.ranks.iter().map(|r| r.0).min();
    let stride = first(1)?.checked_sub(first(0)?)?;
    let fits = stages.iter().enumerate().all(|(k, s)| {
        s.ranks
            .iter()
            .all(|r| stride > 0 && (r.0 / stride) % size == k as u32)
    });
    fits.then_some(Axis {
        dim: Dim::Pp,
        size,
        stride,
        source: Source::InferredStages,
    })
}

/// Axes from the collectives' groups (not the world, not one rank): per (size, stride) of
/// the arithmetic runs that tile the world, all-to-all groups are expert parallel; of the
/// others the innermost (stride 1, when another run is wider) is tensor parallel, the rest
/// data parallel.
fn collective_groups(comm: &Comm, world: u32, have: &[Axis]) -> Vec<Axis> {
    // Per group: whether it ran any collective, only point-to-point, any all-to-all.
    let mut kinds = vec![(false, true, false); comm.calls.groups.len()];
    for (i, _) in comm.instances() {
        if let Some(k) = kinds.get_mut(i.group as usize) {
            *k = (true, k.1 && i.op.is_p2p(), k.2 || i.op == CollOp::AllToAll);
        }
    }
    let mut runs: Vec<(u32, u32, bool)> = Vec::new();
    for (g, &(used, p2p, a2a)) in comm.calls.groups.iter().zip(&kinds) {
        let n = g.members.len() as u32;
        if !used || p2p || n < 2 || n >= world {
            continue;
        }
        let Some((size, stride)) = run(&g.members) else {
            continue;
        };
        // Groups an axis already stands for are that axis, not another.
        let placed = have.iter().any(|a| (a.size, a.stride) == (size, stride));
        if !placed && !runs.iter().any(|r| (r.0, r.1) == (size, stride)) {
            runs.push((size, stride, a2a));
        }
    }
    runs.sort_by_key(|r| r.1);
    let widest = runs.iter().filter(|r| !r.2).map(|r| r.1).max();
    let taken = |d: Dim| have.iter().any(|a| a.dim == d);
    let mut out = Vec::new();
    for (size, stride, a2a) in runs {
        let dim = if a2a {
            Dim::Ep
        } else if stride == 1 && widest.is_some_and(|w| w > 1) {
            Dim::Tp
        } else {
            Dim::Dp
        };
        if !taken(dim) && !out.iter().any(|a: &Axis| a.dim == dim) {
            out.push(Axis {
                dim,
                size,
                stride,
                source: Source::InferredGroups,
            });
        }
    }
    out
}

/// `ranks` as an arithmetic run: (count, step) when sorted they are evenly spaced.
pub(crate) fn run(ranks: &[RankId]) -> Option<(u32, u32)> {
    let mut v: Vec<u32> = ranks.iter().map(|r| r.0).collect();
    v.sort_unstable();
    v.dedup();
    let step = v.get(1)?.checked_sub(v[0])?;
    let even = v.windows(2).all(|w| w[1] - w[0] == step);
    (even && step > 0).then_some((v.len() as u32, step))
}

/// The stride a new outer axis takes: the product of the sizes of the axes placed so far
/// (their ranks fill the world's inner positions), when that stays inside the world.
fn free_stride(axes: &[Axis], world: u32) -> u32 {
    let mut placed: Vec<&Axis> = axes.iter().filter(|a| a.dim != Dim::Ep).collect();
    placed.sort_by_key(|a| a.stride);
    // The smallest stride no placed axis covers: walk the axes innermost first.
    let mut next = 1u32;
    for a in placed {
        if a.stride == next {
            next = next.saturating_mul(a.size);
        }
    }
    next.min(world)
}

/// Whether the non-expert axes place every rank once: sorted by stride, each stride is the
/// product of the sizes inside it, and the sizes multiply to the world.
fn tiles(axes: &[Axis], world: u32) -> bool {
    let mut v: Vec<&Axis> = axes.iter().filter(|a| a.dim != Dim::Ep).collect();
    v.sort_by_key(|a| a.stride);
    let mut inner = 1u32;
    for a in v {
        if a.stride != inner {
            return false;
        }
        inner = inner.saturating_mul(a.size);
    }
    inner == world
}

pub mod health;
pub mod metric;
pub mod topology;

#[cfg(test)]
mod tests;
