//! Host steps and the step every event belongs to (DESIGN §4: device work belongs to the step
//! of the call that launched it).

use crate::model::{HostStep, Interner, Kind, LaneSide, NONE, Rank, Sym, profiler_step_number};
use crate::time::Ns;
use rustc_hash::FxHashMap;

/// Host steps: `ProfilerStep#N` annotations on the CPU lane that has most of them (the main
/// thread); none → one synthetic step over the whole trace.
pub fn find_steps(rank: &mut Rank, strings: &Interner) {
    let step_syms: FxHashMap<Sym, u32> = strings
        .iter()
        .filter_map(|(id, s)| profiler_step_number(s).map(|n| (id, n)))
        .collect();
    let ev = &rank.events;
    let mut per_lane: FxHashMap<u16, u32> = FxHashMap::default();
    if !step_syms.is_empty() {
        for i in 0..ev.len() {
            if step_syms.contains_key(&ev.name[i])
                && matches!(ev.kind[i], Kind::Annotation | Kind::HostOp)
                && rank.lanes[ev.lane[i] as usize].side == LaneSide::Cpu
            {
                *per_lane.entry(ev.lane[i]).or_default() += 1;
            }
        }
    }
    let best = per_lane
        .into_iter()
        .max_by_key(|&(lane, n)| (n, std::cmp::Reverse(lane)));
    if let Some((lane, _)) = best {
        rank.stepping_lane = Some(lane);
        for i in rank.lane_events(lane) {
            if let Some(&n) = step_syms.get(&ev.name[i]) {
                rank.steps.push(HostStep {
                    number: n,
                    start: ev.start[i],
                    end: ev.end(i),
                    synthetic: false,
                });
            }
        }
        rank.steps.sort_by_key(|s| (s.start, s.number));
        return;
    }
    // No markers: the whole trace is one step, bounded by host and device work.
    let mut lo = Ns::MAX;
    let mut hi = Ns::MIN;
    for i in 0..ev.len() {
        if rank.lanes[ev.lane[i] as usize].side != LaneSide::Other {
            lo = lo.min(ev.start[i]);
            hi = hi.max(ev.end(i));
        }
    }
    if lo > hi {
        lo = ev.start.iter().copied().min().unwrap_or(0);
        hi = (0..ev.len()).map(|i| ev.end(i)).max().unwrap_or(0);
    }
    rank.steps.push(HostStep {
        number: 0,
        start: lo,
        end: hi,
        synthetic: true,
    });
    rank.stepping_lane = rank
        .lanes
        .iter()
        .enumerate()
        .filter(|(_, l)| l.side == LaneSide::Cpu)
        .max_by_key(|(i, l)| (l.count, std::cmp::Reverse(*i)))
        .map(|(i, _)| i as u16);
}

/// Step of every event: host events by the host step containing their start; device work by
/// the step of the runtime call that launched it (it may run during a later step); unlinked
/// device work by the last host step started before it.
pub fn assign_steps(rank: &mut Rank) {
    let steps = &rank.steps;
    if steps.len() == 1 && steps[0].synthetic {
        rank.events.step.iter_mut().for_each(|s| *s = 0);
        return;
    }
    let starts: Vec<Ns> = steps.iter().map(|s| s.start).collect();
    let host_step = |t: Ns| -> u32 {
        let k = starts.partition_point(|&s| s <= t);
        if k == 0 {
            return NONE;
        }
        if t < steps[k - 1].end {
            (k - 1) as u32
        } else {
            NONE
        }
    };
    let last_started = |t: Ns| -> u32 {
        let k = starts.partition_point(|&s| s <= t);
        if k == 0 { NONE } else { (k - 1) as u32 }
    };
    let ev = &mut rank.events;
    let lanes = &rank.lanes;
    for i in 0..ev.len() {
        if lanes[ev.lane[i] as usize].side == LaneSide::Cpu {
            ev.step[i] = host_step(ev.start[i]);
        }
    }
    for i in 0..ev.len() {
        if lanes[ev.lane[i] as usize].side == LaneSide::Device {
            // A device event's link, when set, is always its launching runtime call.
            let l = ev.link[i];
            ev.step[i] = if l != NONE {
                ev.step[l as usize]
            } else {
                last_started(ev.start[i])
            };
        }
    }
}
