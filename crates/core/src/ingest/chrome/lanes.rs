//! Lanes: which (pid, tid) pairs are device streams and which are host threads, and their
//! display names.

use super::chunk::{LaneDraft, Meta, MetaKind};
use super::raw::Id;
use crate::model::LaneSide;

/// Decides each lane's side from the categories seen on it and the process labels.
pub(crate) fn lane_sides(drafts: &[LaneDraft<'static>], meta: &[Meta]) -> Vec<LaneSide> {
    let label_of = |pid: &Id<'static>| {
        meta.iter()
            .rev()
            .find(|m| m.what == MetaKind::ProcessLabels && &m.pid == pid)
            .map(|m| m.value.as_str())
    };
    let direct: Vec<Option<LaneSide>> = drafts
        .iter()
        .map(|d| {
            if d.device_events > 0 && d.device_events >= d.cpu_events {
                Some(LaneSide::Device)
            } else if d.cpu_events > 0 {
                Some(LaneSide::Cpu)
            } else {
                match label_of(&d.pid) {
                    Some(l) if l.starts_with("GPU") || l.starts_with("NPU") => {
                        Some(LaneSide::Device)
                    }
                    Some(l) if l.starts_with("CPU") => Some(LaneSide::Cpu),
                    _ => None,
                }
            }
        })
        .collect();
    drafts
        .iter()
        .enumerate()
        .map(|(i, d)| {
            direct[i].unwrap_or_else(|| {
                if matches!(d.pid, Id::Text(_)) {
                    return LaneSide::Other;
                }
                // Same process as a known lane: same side (e.g. MTIA device streams).
                drafts
                    .iter()
                    .zip(&direct)
                    .find(|(o, s)| o.pid == d.pid && s.is_some())
                    .and_then(|(_, s)| *s)
                    .unwrap_or(LaneSide::Other)
            })
        })
        .collect()
}

/// Display name of a lane: its `thread_name` metadata, else one made from its ids.
pub(crate) fn lane_name(d: &LaneDraft<'static>, side: LaneSide, meta: &[Meta]) -> String {
    let named = meta.iter().rev().find(|m| {
        m.what == MetaKind::ThreadName && m.pid == d.pid && m.tid.as_ref() == Some(&d.tid)
    });
    match (side, named) {
        (LaneSide::Device, Some(m)) => format!("device {} {}", d.pid.text(), m.value),
        (_, Some(m)) => m.value.clone(),
        (LaneSide::Device, None) => format!("device {} stream {}", d.pid.text(), d.tid.text()),
        (LaneSide::Cpu, None) => format!("thread {}", d.tid.text()),
        (LaneSide::Other, None) => format!("{} {}", d.pid.text(), d.tid.text())
            .trim()
            .to_string(),
    }
}
