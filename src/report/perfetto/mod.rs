//! `stepscope export --perfetto`: the whole job as one Chrome / Perfetto trace (Trace Event
//! Format) on the aligned clocks — a process per rank, a thread per lane — with what only
//! stepscope knows as extra tracks of each rank ([`diagnosis`]): the findings, the critical
//! path with flow arrows across ranks, each collective's wait and transit, and the ideal
//! (every fix replayed) timeline of the slowest step. Events keep the Kineto categories and
//! link args, so a one-rank export reads back through stepscope to the same breakdown.

mod diagnosis;
mod nest;
mod writer;

use crate::analysis::Analysis;
use crate::model::{Job, Kind, LaneSide, Rank};
use crate::time::Ns;
use rayon::prelude::*;
use std::io::{self, Write};
pub use writer::{Flow, Writer};

/// Thread ids of the extra tracks in each rank's process (lanes are 1..=lanes).
pub mod track {
    /// The findings on this rank.
    pub const FINDINGS: u64 = 1_000_000;
    /// The critical path's stretches on this rank.
    pub const CRITICAL_PATH: u64 = 1_000_001;
    /// Each collective's wait on this rank.
    pub const WAIT: u64 = 1_000_002;
    /// Each collective's transit on this rank.
    pub const TRANSIT: u64 = 1_000_003;
    /// The slowest step replayed with every fix.
    pub const IDEAL: u64 = 1_000_004;
}

/// What was written.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    /// Slices of the job's own events.
    pub events: u64,
    /// Slices of the diagnosis tracks.
    pub diagnosis: u64,
    /// Flow arrows of the critical path (pairs).
    pub flows: u64,
    /// Launch → device work arrows (pairs), as the input's own flows.
    pub launches: u64,
}

/// One rank formatted: its bytes, and its (events, launch arrows).
type Part = (Vec<u8>, (u64, u64));

/// Writes the job and its diagnosis to `out`.
pub fn write(job: &Job, a: &Analysis, out: &mut dyn Write) -> io::Result<Written> {
    let mut w = Writer::new(out);
    w.open(&header(job))?;
    let mut n = Written::default();
    // Ranks are formatted in parallel, a few at a time (bounded memory), written in order.
    const AT_ONCE: usize = 8;
    for (c, chunk) in job.ranks.chunks(AT_ONCE).enumerate() {
        let parts: Vec<io::Result<Part>> = chunk
            .par_iter()
            .enumerate()
            .map(|(k, rank)| {
                let off = a
                    .comm
                    .offsets
                    .get(c * AT_ONCE + k)
                    .map_or(0, |o| o.offset_ns);
                let mut buf = Vec::new();
                let events = rank_events(&mut Writer::fragment(&mut buf), job, rank, off)?;
                Ok((buf, events))
            })
            .collect();
        for part in parts {
            let (buf, (events, launches)) = part?;
            w.splice(&buf)?;
            n.events += events;
            n.launches += launches;
        }
    }
    let d = diagnosis::write(&mut w, job, a)?;
    n.diagnosis = d.0;
    n.flows = d.1;
    w.close()?;
    Ok(n)
}

/// The top-level fields before `traceEvents`: a one-rank job keeps its rank id, world size
/// and device, so it reads back as that rank.
fn header(job: &Job) -> String {
    let mut h =
        String::from("\"displayTimeUnit\": \"ns\",\n\"otherData\": {\"exporter\": \"stepscope\"}");
    if let [rank] = job.ranks.as_slice() {
        let world = job
            .world_size
            .map_or(String::new(), |w| format!(", \"world_size\": {w}"));
        h.push_str(&format!(
            ",\n\"distributedInfo\": {{\"rank\": {}{world}}}",
            rank.id
        ));
        let devices: Vec<String> = rank
            .devices
            .iter()
            .enumerate()
            .map(|(i, &d)| {
                format!(
                    "{{\"id\": {i}, \"name\": {}}}",
                    writer::string(job.strings.resolve(d))
                )
            })
            .collect();
        if !devices.is_empty() {
            h.push_str(&format!(
                ",\n\"deviceProperties\": [{}]",
                devices.join(", ")
            ));
        }
    }
    h
}

/// The Kineto category a kind is read back as.
fn category(kind: Kind, device_lane: bool) -> &'static str {
    match kind {
        Kind::Compute | Kind::Comm => "kernel",
        Kind::Memcpy => "gpu_memcpy",
        Kind::Memset => "gpu_memset",
        Kind::Sync => "cuda_sync",
        Kind::HostOp => "cpu_op",
        Kind::Launch => "cuda_runtime",
        Kind::Annotation if device_lane => "gpu_user_annotation",
        Kind::Annotation => "user_annotation",
        Kind::Other => "stepscope_other",
    }
}

/// Each event's sub-track of its lane ([`nest`]), and each lane's sub-tracks beyond the
/// first.
fn sub_tracks(rank: &Rank) -> (Vec<u32>, Vec<u32>) {
    let ev = &rank.events;
    let mut by_lane: Vec<Vec<u32>> = vec![Vec::new(); rank.lanes.len()];
    for i in 0..ev.len() {
        by_lane[ev.lane[i] as usize].push(i as u32);
    }
    let mut sub = vec![0; ev.len()];
    let extra = by_lane
        .iter()
        .map(|ix| {
            let spans: Vec<(Ns, Ns)> = ix
                .iter()
                .map(|&i| (ev.start[i as usize], ev.dur[i as usize]))
                .collect();
            let (s, extra) = nest::place_all(&spans);
            for (&i, k) in ix.iter().zip(s) {
                sub[i as usize] = k;
            }
            extra
        })
        .collect();
    (sub, extra)
}

/// One rank: its process and lane names (a lane whose events overlap without nesting gets
/// sub-tracks), then every event shifted by `off`, then the launch → device work arrows;
/// returns (events, arrows).
fn rank_events(w: &mut Writer, job: &Job, rank: &Rank, off: Ns) -> io::Result<(u64, u64)> {
    let pid = u64::from(rank.id.0);
    w.process(pid, &format!("rank {}", rank.id), pid)?;
    let (sub, extra) = sub_tracks(rank);
    for (l, lane) in rank.lanes.iter().enumerate() {
        let name = job.strings.resolve(lane.name);
        let tid = l as u64 + 1;
        w.thread(pid, tid, name, l as u64)?;
        for k in 1..=extra[l] {
            w.thread(
                pid,
                nest::sub_tid(tid, k),
                &nest::sub_name(name, k),
                l as u64,
            )?;
        }
    }
    let ev = &rank.events;
    let tid = |i: usize| nest::sub_tid(u64::from(ev.lane[i]) + 1, sub[i]);
    let colls: rustc_hash::FxHashMap<u32, &crate::model::Collective> =
        rank.collectives.iter().map(|c| (c.event.0, c)).collect();
    let shapes: rustc_hash::FxHashMap<u32, &crate::model::OpShape> =
        rank.shapes.iter().map(|s| (s.event.0, s)).collect();
    for i in 0..ev.len() {
        let device = rank.lanes[ev.lane[i] as usize].side == LaneSide::Device;
        let mut args = Vec::new();
        // Links as the reader pairs them: a launch and its device work share a correlation
        // (the launch's index); an operator's External id is its index.
        match ev.kind[i] {
            Kind::HostOp => args.push(format!("\"External id\": {i}")),
            Kind::Launch => args.push(format!("\"correlation\": {i}")),
            _ => {}
        }
        if let Some(l) = ev.link[i].get().filter(|_| ev.kind[i] != Kind::Launch) {
            args.push(format!("\"correlation\": {l}"));
        }
        if let Some(op) = ev.op[i].get().filter(|_| ev.kind[i] != Kind::HostOp) {
            args.push(format!("\"External id\": {op}"));
        }
        if let Some(c) = colls.get(&(i as u32)) {
            collective_args(job, c, &mut args);
        }
        if let Some(s) = shapes.get(&(i as u32)) {
            for (k, v) in [("Input Dims", s.dims), ("Input type", s.types)] {
                if let Some(v) = v {
                    args.push(format!("\"{k}\": {}", json_value(job.strings.resolve(v))));
                }
            }
        }
        w.slice(
            pid,
            tid(i),
            job.strings.resolve(ev.name[i]),
            category(ev.kind[i], device),
            ev.start[i].saturating_add(off),
            ev.dur[i],
            &args.join(", "),
        )?;
    }
    let mut arrows = 0;
    for i in 0..ev.len() {
        // From the host call's side (a launch, a copy, a stream wait or sync) to the device
        // work or record it made, as Kineto draws them.
        let side = |k: usize| rank.lanes[ev.lane[k] as usize].side;
        let Some(j) = ev.link[i]
            .get()
            .filter(|&j| side(i) != LaneSide::Device && side(j) == LaneSide::Device)
        else {
            continue;
        };
        // Unique in the file: the rank above the event index; the critical path's arrows
        // are numbered below 2^32.
        let id = ((pid + 1) << 32) | i as u64;
        let at = |k: usize| (pid, tid(k), ev.start[k].saturating_add(off));
        w.flow(Flow::Launch, id, at(i), at(j))?;
        arrows += 1;
    }
    Ok((ev.len() as u64, arrows))
}

/// A collective's args as the PyTorch profiler writes them.
fn collective_args(job: &Job, c: &crate::model::Collective, args: &mut Vec<String>) {
    let s = |x: Option<crate::model::Sym>| x.map(|x| writer::string(job.strings.resolve(x)));
    let fields: [(&str, Option<String>); 10] = [
        ("Collective name", s(c.name)),
        ("In msg nelems", c.in_nelems.map(|x| x.to_string())),
        ("Out msg nelems", c.out_nelems.map(|x| x.to_string())),
        ("dtype", s(c.dtype)),
        ("Process Group Name", s(c.group)),
        ("Process Group Ranks", s(c.group_ranks)),
        ("Group size", c.group_size.map(|x| x.to_string())),
        ("Seq", c.seq.map(|x| x.to_string())),
        ("Src Rank", c.src_rank.map(|x| x.to_string())),
        ("Dst Rank", c.dst_rank.map(|x| x.to_string())),
    ];
    for (k, v) in fields {
        if let Some(v) = v {
            args.push(format!("\"{k}\": {v}"));
        }
    }
}

/// Text kept as written (`[[8, 16], [16, 32]]`): the JSON value it is, written again by the
/// escaping serializer (a string inside it may hold DEL or a bidi control, which JSON allows
/// raw), else the text as a JSON string.
fn json_value(text: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(v) => crate::format::json::to_string(&v).unwrap_or_else(|_| writer::string(text)),
        Err(_) => writer::string(text),
    }
}

/// Writes `s` as one Perfetto / Chrome trace to `out` (gzip when it ends in `.gz`; `-`:
/// stdout) through the one writer ([`crate::output`]), never beside the job's `inputs`.
pub fn export(
    s: &crate::session::Session,
    out: &std::path::Path,
    inputs: &[std::path::PathBuf],
) -> Result<Written, crate::output::Refused> {
    crate::output::write(out, inputs, |w| {
        if out.extension().is_some_and(|e| e == "gz") {
            let mut gz = flate2::write::GzEncoder::new(w, flate2::Compression::fast());
            let n = write(&s.loaded.job, &s.analysis, &mut gz)?;
            gz.finish()?;
            Ok(n)
        } else {
            write(&s.loaded.job, &s.analysis, w)
        }
    })
}
