//! Host steps and the step every event belongs to (docs/metrics.md, "Step window": device
//! work belongs to the step of the call that launched it). Format-neutral: step markers are
//! a role, launch links are set by the format's reader before.

use super::roles::RoleTable;
use crate::model::{Events, HostStep, Interner, Kind, LaneSide, NO_STEP, PreWindow, Rank, StepNo};
use crate::time::Ns;
use rayon::prelude::*;

/// Host steps: step-marker annotations (`ProfilerStep#N`) on the CPU lane that has most of
/// them (the main thread); none → one synthetic step over the whole trace. Returns the steps
/// cut where the profiler stopped recording, with the time cut away ([`cut_at`]).
pub(super) fn find_steps(
    rank: &mut Rank,
    strings: &Interner,
    roles: &RoleTable,
) -> Vec<(StepNo, Ns)> {
    // Step number by name id (a table: this is looked up for every event).
    let step_of: Vec<Option<StepNo>> = strings.iter().map(|(_, s)| roles.step_number(s)).collect();
    let ev = &rank.events;
    let is_marker = |i: usize| {
        step_of[ev.name[i] as usize].is_some()
            && matches!(ev.kind[i], Kind::Annotation | Kind::HostOp)
    };
    let best = (0..rank.lanes.len() as u16)
        .filter(|&l| rank.lanes[l as usize].side == LaneSide::Cpu)
        .map(|l| (l, rank.lane_events(l).filter(|&i| is_marker(i)).count()))
        .filter(|&(_, n)| n > 0)
        .max_by_key(|&(lane, n)| (n, std::cmp::Reverse(lane)));
    if let Some((lane, _)) = best {
        rank.stepping_lane = Some(lane);
        // A range the user named is numbered by occurrence, from 1.
        let by_order = roles.step_range().is_some();
        for i in rank.lane_events(lane) {
            if let Some(n) = step_of[ev.name[i] as usize] {
                let n = match by_order {
                    true => StepNo(rank.steps.len() as u32 + 1),
                    false => n,
                };
                rank.steps.push(HostStep {
                    number: n,
                    start: ev.start[i],
                    end: ev.end(i),
                    synthetic: false,
                });
            }
        }
        rank.steps.sort_by_key(|s| (s.start, s.number));
        let Some(stop) = rank.record_end else {
            return Vec::new();
        };
        let host = |i: usize| rank.lanes[ev.lane[i] as usize].side == LaneSide::Cpu;
        return cut_at(&mut rank.steps, ev, stop, |i| host(i) && !is_marker(i));
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
        number: StepNo(0),
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
    Vec::new()
}

/// A step marker that ends after the profiler stopped recording ends, as far as the trace
/// saw, at the stop or at the end of the last host work it recorded in the step, if later:
/// the time after it is unobserved, not idle (HTA's `triton_example`: a 13.3 s step of which
/// 1.8 ms were recorded).
fn cut_at(
    steps: &mut [HostStep],
    ev: &Events,
    stop: Ns,
    host_work: impl Fn(usize) -> bool,
) -> Vec<(StepNo, Ns)> {
    let mut cut = Vec::new();
    // A stop before recorded host work is not where recording stopped (a foreign or
    // shifted clock): trusted only when no host work starts after it.
    if steps.iter().all(|s| s.end <= stop)
        || (0..ev.len()).any(|i| host_work(i) && ev.start[i] > stop)
    {
        return cut;
    }
    for s in steps.iter_mut().filter(|s| s.end > stop) {
        let last_host = (0..ev.len())
            .filter(|&i| host_work(i) && (s.start..stop).contains(&ev.start[i]))
            .map(|i| ev.end(i))
            .max();
        let end = last_host
            .map_or(stop, |e| e.clamp(stop, s.end))
            .max(s.start);
        cut.push((s.number, s.end - end));
        s.end = end;
    }
    cut
}

/// Step of every event: host events by the host step containing their start; device work by
/// the step of the runtime call that launched it (it may run during a later step); unlinked
/// device work by the last host step started before it.
pub(super) fn assign_steps(rank: &mut Rank) {
    let steps = &rank.steps;
    if steps.len() == 1 && steps[0].synthetic {
        rank.events.step.iter_mut().for_each(|s| *s = 0);
        return;
    }
    let starts: Vec<Ns> = steps.iter().map(|s| s.start).collect();
    let host_step = |t: Ns| -> u32 {
        let k = starts.partition_point(|&s| s <= t);
        if k == 0 {
            return NO_STEP;
        }
        if t < steps[k - 1].end {
            (k - 1) as u32
        } else {
            NO_STEP
        }
    };
    let last_started = |t: Ns| -> u32 {
        let k = starts.partition_point(|&s| s <= t);
        if k == 0 { NO_STEP } else { (k - 1) as u32 }
    };
    let ev = &mut rank.events;
    let lanes = &rank.lanes;
    // Host events first (device events read their launching call's step), each pass in
    // parallel: every event's step depends only on read-only data.
    let (start, lane) = (&ev.start, &ev.lane);
    ev.step.par_iter_mut().enumerate().for_each(|(i, s)| {
        if lanes[lane[i] as usize].side == LaneSide::Cpu {
            *s = host_step(start[i]);
        }
    });
    let host_steps = ev.step.clone();
    let link = &ev.link;
    ev.step.par_iter_mut().enumerate().for_each(|(i, s)| {
        if lanes[lane[i] as usize].side == LaneSide::Device {
            // A device event's link, when set, is always its launching runtime call.
            *s = match link[i].get() {
                Some(l) => host_steps[l],
                None => last_started(start[i]),
            };
        }
    });
    rank.pre_window = drop_pre_window(rank);
}

/// Takes device work launched before the trace window out of every step: per device lane,
/// the unlinked device work before the lane's first event whose launch is in the trace.
/// A rank with no linked device work at all (a trace without launch links) keeps its.
fn drop_pre_window(rank: &mut Rank) -> PreWindow {
    let mut out = PreWindow::default();
    let ev = &rank.events;
    let linked = |i: usize| ev.link[i].get().is_some() && ev.kind[i].is_device_work();
    if !(0..ev.len()).any(linked) {
        return out;
    }
    let mut drop = Vec::new();
    for (l, lane) in rank.lanes.iter().enumerate() {
        if lane.side != LaneSide::Device {
            continue;
        }
        for i in rank.lane_events(l as u16) {
            if linked(i) {
                break;
            }
            if ev.kind[i].is_device_work() {
                drop.push(i);
            }
        }
    }
    for i in drop {
        out.events += 1;
        out.busy_ns += rank.events.dur[i];
        let end = rank.events.end(i);
        out.end = Some(out.end.map_or(end, |e: Ns| e.max(end)));
        rank.events.step[i] = NO_STEP;
    }
    out
}
