//! A rank's top-level operators in step order, what each costs, and the kernels under each:
//! what the operator diff lines up. A top-level operator is a `cpu_op` no other `cpu_op` on
//! its thread encloses (the step marker aside); its time is the device time of the work it
//! launched (kernels, copies, sets, through any nested operator), or on a CPU-only rank its
//! own duration.

use super::names::{NO_NAME, id};
use crate::analysis::ops::OpBasis;
use crate::model::{Kind, LaneSide, Rank, Role};
use crate::time::Ns;

/// One top-level operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Top {
    /// Its event.
    pub event: u32,
    /// Its step (index into `Rank::steps`).
    pub step: u32,
    /// Its name's id.
    pub name: u32,
    /// Its input shapes' id ([`NO_NAME`] when unrecorded).
    pub dims: u32,
    /// What it costs (device time launched, or host duration).
    pub time: Ns,
}

/// One device event and the top-level operator it runs for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kernel {
    /// Its step (index into `Rank::steps`).
    pub step: u32,
    /// Its name's id.
    pub name: u32,
    /// Its duration.
    pub dur: Ns,
    /// Its operator's position in the tops, when it has one.
    pub top: Option<u32>,
    /// A matrix-multiply kernel (its name's role).
    pub gemm: bool,
}

/// A rank's top-level operators in start order, and its device work in start order.
pub struct Sequence {
    /// The tops.
    pub tops: Vec<Top>,
    /// The kernels (empty on a CPU-only basis).
    pub kernels: Vec<Kernel>,
}

/// The sequence of `rank`, names mapped through `ids`.
pub fn sequence(rank: &Rank, roles: &[Role], ids: &[u32], basis: OpBasis) -> Sequence {
    let ev = &rank.events;
    // top_of[i]: the position (in `tops`) of the top-level operator enclosing host op i.
    let mut top_of = vec![u32::MAX; ev.len()];
    let mut tops: Vec<Top> = Vec::new();
    for (li, lane) in rank.lanes.iter().enumerate() {
        if lane.side != LaneSide::Cpu {
            continue;
        }
        let mut stack: Vec<usize> = Vec::new();
        for i in rank.lane_events(li as u16) {
            let op = ev.kind[i] == Kind::HostOp && !roles[ev.name[i] as usize].is_step_marker();
            if !op && ev.kind[i] != Kind::Launch {
                continue;
            }
            while stack.last().is_some_and(|&p| ev.end(p) <= ev.start[i]) {
                stack.pop();
            }
            if !op {
                // A launch charges its device work to the operator it runs in.
                if let Some(&root) = stack.first() {
                    top_of[i] = top_of[root];
                }
                continue;
            }
            top_of[i] = match stack.first() {
                Some(&root) => top_of[root],
                None => {
                    tops.push(Top {
                        event: i as u32,
                        step: ev.step[i],
                        name: id(ids, Some(ev.name[i])),
                        dims: NO_NAME,
                        time: if basis == OpBasis::HostSelf {
                            ev.dur[i]
                        } else {
                            0
                        },
                    });
                    (tops.len() - 1) as u32
                }
            };
            stack.push(i);
        }
    }
    // Tops of several threads interleave in time; sorting renumbers them, so remap.
    let mut order: Vec<u32> = (0..tops.len() as u32).collect();
    order.sort_by_key(|&k| {
        (
            ev.start[tops[k as usize].event as usize],
            tops[k as usize].event,
        )
    });
    let mut pos = vec![0u32; tops.len()];
    for (new, &old) in order.iter().enumerate() {
        pos[old as usize] = new as u32;
    }
    let mut tops: Vec<Top> = order.iter().map(|&k| tops[k as usize]).collect();
    for s in &rank.shapes {
        let t = top_of[s.event.index()];
        if t != u32::MAX && tops[pos[t as usize] as usize].event as usize == s.event.index() {
            tops[pos[t as usize] as usize].dims = id(ids, s.dims);
        }
    }
    let kernels = if basis == OpBasis::Device {
        device_work(rank, roles, ids, &top_of, &pos, &mut tops)
    } else {
        Vec::new()
    };
    Sequence { tops, kernels }
}

/// The rank's device work in start order, each charged to its top-level operator.
fn device_work(
    rank: &Rank,
    roles: &[Role],
    ids: &[u32],
    top_of: &[u32],
    pos: &[u32],
    tops: &mut [Top],
) -> Vec<Kernel> {
    let ev = &rank.events;
    let mut out: Vec<(Ns, Kernel)> = Vec::new();
    for i in 0..ev.len() {
        if !ev.kind[i].is_device_work() || ev.step[i] == crate::model::NO_STEP {
            continue;
        }
        // Through the launch call, else through the operator its External id names.
        let via = |x: crate::model::EventIx| x.get().map(|k| top_of[k]).filter(|&t| t != u32::MAX);
        let top = via(ev.link[i])
            .or_else(|| via(ev.op[i]))
            .map(|t| pos[t as usize]);
        if let Some(t) = top {
            tops[t as usize].time += ev.dur[i];
        }
        out.push((
            ev.start[i],
            Kernel {
                step: ev.step[i],
                name: id(ids, Some(ev.name[i])),
                dur: ev.dur[i],
                top,
                gemm: roles[ev.name[i] as usize].gemm_kernel,
            },
        ));
    }
    out.sort_by_key(|(s, _)| *s);
    out.into_iter().map(|(_, k)| k).collect()
}
