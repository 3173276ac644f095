//! Accumulates the events of one chunk of a `traceEvents` array into columns, with chunk-local
//! name and lane tables (merged per rank afterwards, so chunks never contend on shared maps).

use super::raw::{Id, NumText, OpArgs, RawEvent, Str};
use super::{Class, Dialect, NameFacts, SideTable, Uncategorised};
use crate::model::{Dropped, Kind, RawSpan};
use crate::time::{Ns, micros_text_to_ns};
use rustc_hash::FxHashMap;
use std::borrow::Cow;

/// "No id" in the `corr`/`ext` columns.
pub(crate) const NO_ID: u64 = u64::MAX;

/// A name as a hash key that hashes only its length and its first and last 16 bytes: kernel
/// names run to hundreds of bytes, and hashing all of them for every event is the cost that
/// matters. Equality still compares every byte.
#[derive(Debug, PartialEq, Eq)]
struct NameKey<'a>(Cow<'a, [u8]>);

impl std::hash::Hash for NameKey<'_> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        let b = &*self.0;
        h.write_usize(b.len());
        h.write(&b[..b.len().min(16)]);
        h.write(&b[b.len().saturating_sub(16)..]);
    }
}

/// A lane as seen in one chunk.
#[derive(Debug, Clone)]
pub(crate) struct LaneDraft<'a> {
    pub pid: Id<'a>,
    pub tid: Id<'a>,
    /// Events of device-only categories seen on the lane.
    pub device_events: u32,
    /// Events of host-only categories seen on the lane.
    pub cpu_events: u32,
}

/// A metadata record (`process_name`, `process_labels`, `thread_name`).
#[derive(Debug, Clone)]
pub(crate) struct Meta {
    pub what: MetaKind,
    pub pid: Id<'static>,
    pub tid: Option<Id<'static>>,
    pub value: String,
}

/// Which metadata record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MetaKind {
    ProcessName,
    ProcessLabels,
    ThreadName,
}

/// Event columns of a chunk (names and lanes chunk-local).
#[derive(Debug, Default)]
pub(crate) struct Columns {
    pub start: Vec<Ns>,
    pub dur: Vec<Ns>,
    pub name: Vec<u32>,
    pub lane: Vec<u32>,
    pub kind: Vec<Kind>,
    pub corr: Vec<u64>,
    pub ext: Vec<u64>,
    pub raw: Vec<RawSpan>,
}

/// Everything one chunk produced.
#[derive(Debug, Default)]
pub(crate) struct Chunk<'a> {
    pub cols: Columns,
    pub names: Vec<Cow<'a, [u8]>>,
    name_ids: FxHashMap<NameKey<'a>, u32>,
    /// Per chunk-local name: the dialect's facts, once asked.
    facts: Vec<Option<NameFacts>>,
    pub lanes: Vec<LaneDraft<'a>>,
    lane_ids: FxHashMap<(Id<'a>, Id<'a>), u32>,
    pub meta: Vec<Meta>,
    pub dropped: Dropped,
    /// Timed events of unknown categories, by category.
    pub unknown_cats: FxHashMap<Vec<u8>, u64>,
    /// Collective metadata of stored events: (index in this chunk's columns, args).
    pub coll: Vec<(u32, OpArgs<'a>)>,
    /// Shapes and FLOPs of the operators the roofline reads: (index, args).
    pub shapes: Vec<(u32, OpArgs<'a>)>,
    /// Keep stack frames (`python_function`, kind other) rather than only counting them.
    pub stack_frames: bool,
    /// Events whose negative duration was clamped to 0: count and the first offset.
    pub negative_dur: (u64, u64),
    /// Byte spans of the untimed events the dialect reads again itself ([`Dialect::reread`]).
    pub reread: Vec<RawSpan>,
    /// Stored events whose process decides their class ([`Uncategorised::ByProcess`]).
    pending: Vec<Pending>,
    /// The latest `ts` of a `Record Window End` instant: where the profiler stopped.
    pub record_end: Option<Ns>,
}

/// The name of the instant Kineto writes where its recording window ends.
pub(crate) const RECORD_WINDOW_END: &[u8] = b"Record Window End";

/// A stored event classified once the trace's processes are known.
#[derive(Debug)]
struct Pending {
    /// Its index in the columns.
    at: u32,
    /// The class its args suggest.
    hint: Option<Class>,
    /// Whether it would be communication as a kernel (see [`Chunk::kind_of`]).
    comm_named: bool,
}

/// A problem with one event: where it starts and what is wrong.
pub(crate) type EventError = (u64, String);

/// Bytes per timed event assumed when presizing columns (typical Kineto events with their
/// flows are 150–300 bytes); a wrong guess costs a reallocation, nothing more.
const BYTES_PER_EVENT_GUESS: usize = 256;

impl<'a> Chunk<'a> {
    /// A chunk with columns presized for about `bytes` of JSON.
    pub(crate) fn with_capacity(bytes: usize) -> Self {
        let n = bytes / BYTES_PER_EVENT_GUESS;
        let mut c = Chunk::default();
        let cols = &mut c.cols;
        cols.start.reserve(n);
        cols.dur.reserve(n);
        cols.name.reserve(n);
        cols.lane.reserve(n);
        cols.kind.reserve(n);
        cols.corr.reserve(n);
        cols.ext.reserve(n);
        cols.raw.reserve(n);
        c
    }

    /// True when the chunk saw no event of any phase.
    pub(crate) fn is_empty(&self) -> bool {
        self.cols.start.is_empty() && self.meta.is_empty() && self.dropped == Dropped::default()
    }

    /// The chunk with nothing borrowed from the input text (its names, lanes and operator
    /// args copied), so that the text's pages can be given back while the other chunks are
    /// parsed (`document::ParseOptions::release`).
    pub(crate) fn detach(self) -> Chunk<'static> {
        let names: Vec<Cow<'static, [u8]>> = self
            .names
            .into_iter()
            .map(|n| Cow::Owned(n.into_owned()))
            .collect();
        let name_ids = names
            .iter()
            .enumerate()
            .map(|(i, n)| (NameKey(n.clone()), i as u32))
            .collect();
        let lanes: Vec<LaneDraft<'static>> = self
            .lanes
            .into_iter()
            .map(|l| LaneDraft {
                pid: l.pid.into_owned(),
                tid: l.tid.into_owned(),
                device_events: l.device_events,
                cpu_events: l.cpu_events,
            })
            .collect();
        let lane_ids = lanes
            .iter()
            .enumerate()
            .map(|(i, l)| ((l.pid.clone(), l.tid.clone()), i as u32))
            .collect();
        let own = |side: Vec<(u32, OpArgs<'_>)>| -> Vec<(u32, OpArgs<'static>)> {
            side.into_iter().map(|(i, a)| (i, a.into_owned())).collect()
        };
        Chunk {
            cols: self.cols,
            names,
            name_ids,
            facts: self.facts,
            lanes,
            lane_ids,
            meta: self.meta,
            dropped: self.dropped,
            unknown_cats: self.unknown_cats,
            coll: own(self.coll),
            shapes: own(self.shapes),
            stack_frames: self.stack_frames,
            negative_dur: self.negative_dur,
            reread: self.reread,
            pending: self.pending,
            record_end: self.record_end,
        }
    }

    fn name_id(&mut self, name: Cow<'a, [u8]>) -> u32 {
        let key = NameKey(name);
        if let Some(&id) = self.name_ids.get(&key) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(key.0.clone());
        self.facts.push(None);
        self.name_ids.insert(key, id);
        id
    }

    fn lane_id(&mut self, pid: Id<'a>, tid: Id<'a>) -> u32 {
        // Runs of events on one lane are common (a kernel stream, a thread's op stack).
        if let Some(&last) = self.cols.lane.last() {
            let l = &self.lanes[last as usize];
            if l.pid == pid && l.tid == tid {
                return last;
            }
        }
        let key = (pid, tid);
        if let Some(&id) = self.lane_ids.get(&key) {
            return id;
        }
        let id = self.lanes.len() as u32;
        self.lanes.push(LaneDraft {
            pid: key.0.clone(),
            tid: key.1.clone(),
            device_events: 0,
            cpu_events: 0,
        });
        self.lane_ids.insert(key, id);
        id
    }

    /// The dialect's facts of name `id`, asked once per name.
    fn facts(&mut self, id: u32, d: &dyn Dialect) -> NameFacts {
        let names = &self.names;
        *self.facts[id as usize].get_or_insert_with(|| d.name_facts(&names[id as usize]))
    }

    /// Adds one parsed event that starts at byte `offset` and spans `len` bytes.
    pub(crate) fn push(
        &mut self,
        ev: RawEvent<'a>,
        offset: u64,
        len: usize,
        d: &dyn Dialect,
    ) -> Result<(), EventError> {
        let ph = ev.ph.as_ref().map_or(&b""[..], |p| &*p.0);
        if ph != b"X" {
            if d.reread(&ev) {
                self.reread.push(RawSpan {
                    offset,
                    len: u32::try_from(len).unwrap_or(u32::MAX),
                });
            }
            self.drop_phase(ev);
            return Ok(());
        }
        let (class, by_process) = match &ev.cat {
            Some(c) => (d.class(&c.0), None),
            None => match d.uncategorised(ev.args.as_ref()) {
                Uncategorised::Known(c) => (c, None),
                // Kind other, no lane side, until settled.
                Uncategorised::ByProcess(hint) => (Class::Trace, Some(hint)),
            },
        };
        if class == Class::StackFrame && !self.stack_frames {
            self.dropped.python_function += 1;
            return Ok(());
        }
        if class == Class::Derived {
            self.dropped.derived += 1;
            return Ok(());
        }
        let (start, dur) = self.times(ev.ts, ev.dur, offset)?;
        let name = self.name_id(ev.name.map(|n| n.0).unwrap_or(Cow::Borrowed(b"")));
        let pid = ev.pid.unwrap_or(Id::Text(Cow::Borrowed(b"")));
        let tid = ev.tid.unwrap_or(Id::Text(Cow::Borrowed(b"")));
        let lane = self.lane_id(pid, tid);
        let mut args = ev.args.unwrap_or_default();
        let comm_named = (class == Class::Kernel || by_process.is_some())
            && (args.collective || self.facts(name, d).comm_kernel);
        let kind = self.kind_of(class, comm_named, ev.cat);
        if let Some(hint) = by_process {
            self.pending.push(Pending {
                at: self.cols.start.len() as u32,
                hint,
                comm_named,
            });
        }
        self.count_side(lane as usize, class);
        let c = &mut self.cols;
        c.start.push(start);
        c.dur.push(dur);
        c.name.push(name);
        c.lane.push(lane);
        c.kind.push(kind);
        c.corr.push(args.correlation.unwrap_or(NO_ID));
        c.ext.push(args.external_id.unwrap_or(NO_ID));
        c.raw.push(RawSpan {
            offset,
            len: u32::try_from(len).unwrap_or(u32::MAX),
        });
        if let Some(meta) = args.op.take() {
            let at = self.cols.start.len() as u32 - 1;
            match d.side_table(class, self.facts(name, d), &meta) {
                Some(SideTable::Collective) => self.coll.push((at, *meta)),
                Some(SideTable::Shape) => self.shapes.push((at, *meta)),
                None => {}
            }
        }
        Ok(())
    }

    /// Counts an event of `class` on `lane` towards the lane's side (device stream or host
    /// thread).
    fn count_side(&mut self, lane: usize, class: Class) {
        let l = &mut self.lanes[lane];
        if class.is_device() {
            l.device_events += 1;
        } else if class.is_cpu() {
            l.cpu_events += 1;
        }
    }

    /// Classifies the events whose process decides their class, once the trace's processes
    /// are known (all chunks parsed): `process_of` a lane's pid, asked once per lane, and
    /// `class_of` that process and an event's hint. `Derived` events are removed, and so are
    /// the lanes they leave empty.
    pub(crate) fn settle<P: Copy>(
        &mut self,
        process_of: impl Fn(&Id<'_>) -> P,
        class_of: impl Fn(P, Option<Class>) -> Class,
    ) {
        if self.pending.is_empty() {
            return;
        }
        let process: Vec<P> = self.lanes.iter().map(|l| process_of(&l.pid)).collect();
        let mut gone = Vec::new();
        for p in std::mem::take(&mut self.pending) {
            let at = p.at as usize;
            let lane = self.cols.lane[at] as usize;
            let class = class_of(process[lane], p.hint);
            if class == Class::Derived {
                self.dropped.derived += 1;
                gone.push(p.at);
                continue;
            }
            self.cols.kind[at] = self.kind_of(class, p.comm_named, None);
            self.count_side(lane, class);
        }
        if !gone.is_empty() {
            self.remove(&gone);
        }
    }

    /// Removes the events at the indices `gone`, and the lanes left without events.
    fn remove(&mut self, gone: &[u32]) {
        let n = self.cols.start.len();
        let mut keep = vec![true; n];
        for &g in gone {
            keep[g as usize] = false;
        }
        let mut new_at = vec![u32::MAX; n];
        let kept = keep.iter().enumerate().filter(|(_, k)| **k);
        for (next, (i, _)) in kept.enumerate() {
            new_at[i] = next as u32;
        }
        let c = &mut self.cols;
        retain(&mut c.start, &keep);
        retain(&mut c.dur, &keep);
        retain(&mut c.name, &keep);
        retain(&mut c.lane, &keep);
        retain(&mut c.kind, &keep);
        retain(&mut c.corr, &keep);
        retain(&mut c.ext, &keep);
        retain(&mut c.raw, &keep);
        for side in [&mut self.coll, &mut self.shapes] {
            side.retain_mut(|(at, _)| {
                *at = new_at[*at as usize];
                *at != u32::MAX
            });
        }
        self.drop_empty_lanes();
    }

    /// Drops the lanes no stored event is on, renumbering the rest.
    fn drop_empty_lanes(&mut self) {
        let mut count = vec![0u32; self.lanes.len()];
        for &l in &self.cols.lane {
            count[l as usize] += 1;
        }
        if count.iter().all(|&c| c > 0) {
            return;
        }
        let mut renumber = vec![u32::MAX; count.len()];
        let mut lanes = Vec::with_capacity(count.len());
        for (i, l) in std::mem::take(&mut self.lanes).into_iter().enumerate() {
            if count[i] > 0 {
                renumber[i] = lanes.len() as u32;
                lanes.push(l);
            }
        }
        for l in &mut self.cols.lane {
            *l = renumber[*l as usize];
        }
        self.lane_ids = lanes
            .iter()
            .enumerate()
            .map(|(i, l)| ((l.pid.clone(), l.tid.clone()), i as u32))
            .collect();
        self.lanes = lanes;
    }

    /// Counts an event that is not a complete event (`ph` other than `X`); metadata events
    /// are read for lane names.
    #[inline]
    fn drop_phase(&mut self, ev: RawEvent<'a>) {
        let d = &mut self.dropped;
        let metadata = match ev.ph.as_ref().map_or(&b""[..], |p| &*p.0) {
            b"M" => {
                d.metadata += 1;
                true
            }
            b"i" | b"I" | b"n" => {
                d.instant += 1;
                if ev.name.as_ref().is_some_and(|n| &*n.0 == RECORD_WINDOW_END) {
                    // A window end with an unreadable `ts` says nothing: ignored.
                    let ts = ev.ts.as_ref().and_then(|t| micros_text_to_ns(t.0).ok());
                    self.record_end = self.record_end.max(ts);
                }
                false
            }
            b"s" | b"t" | b"f" => {
                d.flow += 1;
                false
            }
            _ => {
                d.other_phase += 1;
                false
            }
        };
        if metadata {
            self.push_meta(ev);
        }
    }

    /// Start and duration in integer ns from their decimal µs text; a negative duration is
    /// counted and clamped to 0; an event outside the range of [`crate::time::event_end`]
    /// is an error at its position.
    #[inline]
    fn times(
        &mut self,
        ts: Option<NumText<'_>>,
        dur: Option<NumText<'_>>,
        offset: u64,
    ) -> Result<(Ns, Ns), EventError> {
        let ts = ts.ok_or_else(|| (offset, "complete event (ph X) without `ts`".to_string()))?;
        let dur = dur.ok_or_else(|| (offset, "complete event (ph X) without `dur`".to_string()))?;
        let start =
            micros_text_to_ns(ts.0).map_err(|e| (offset, format!("`ts` {}: {e}", clip(ts.0))))?;
        let dur_text = dur.0;
        let mut dur = micros_text_to_ns(dur.0)
            .map_err(|e| (offset, format!("`dur` {}: {e}", clip(dur.0))))?;
        if dur < 0 {
            if self.negative_dur.0 == 0 {
                self.negative_dur.1 = offset;
            }
            self.negative_dur.0 += 1;
            dur = 0;
        }
        crate::time::event_end(start, dur).map_err(|e| {
            let what = match crate::time::event_end(start, 0) {
                Err(_) => format!("`ts` {}", clip(ts.0)),
                Ok(_) => format!("`ts` {} + `dur` {}", clip(ts.0), clip(dur_text)),
            };
            (offset, format!("{what}: {e}"))
        })?;
        Ok((start, dur))
    }

    /// The model's kind of an event of `class`: kernels are communication when they carry
    /// collective metadata or have a communication kernel's name (`comm_named`); unknown
    /// categories are counted by name.
    #[inline]
    fn kind_of(&mut self, class: Class, comm_named: bool, cat: Option<Str<'_>>) -> Kind {
        match class {
            Class::HostOp => Kind::HostOp,
            Class::Annotation | Class::DeviceAnnotation => Kind::Annotation,
            Class::Runtime => Kind::Launch,
            Class::Kernel if comm_named => Kind::Comm,
            Class::Kernel => Kind::Compute,
            Class::CommKernel => Kind::Comm,
            Class::Memcpy => Kind::Memcpy,
            Class::Memset => Kind::Memset,
            Class::Sync => Kind::Sync,
            Class::Trace | Class::StackFrame | Class::Derived => Kind::Other,
            Class::Unknown => {
                let key = match cat {
                    // Cut before the copy: a category is counted by name, never held whole.
                    Some(c) if !c.0.is_empty() => crate::model::cut_bytes(&c.0).to_vec(),
                    _ => b"(no category)".to_vec(),
                };
                *self.unknown_cats.entry(key).or_default() += 1;
                Kind::Other
            }
        }
    }

    fn push_meta(&mut self, ev: RawEvent<'a>) {
        let what = match ev.name.as_ref().map(|n| &*n.0) {
            Some(b"process_name") => MetaKind::ProcessName,
            Some(b"process_labels") => MetaKind::ProcessLabels,
            Some(b"thread_name") => MetaKind::ThreadName,
            _ => return,
        };
        let Some(args) = ev.args else { return };
        let value = match what {
            MetaKind::ProcessLabels => args.labels,
            _ => args.name,
        };
        let (Some(value), Some(pid)) = (value, ev.pid) else {
            return;
        };
        self.meta.push(Meta {
            what,
            pid: pid.into_owned(),
            tid: ev.tid.map(Id::into_owned),
            value: String::from_utf8_lossy(crate::model::cut_bytes(&value.0))
                .trim()
                .to_string(),
        });
    }
}

/// Keeps the items of `v` whose flag in `keep` is set.
fn retain<T>(v: &mut Vec<T>, keep: &[bool]) {
    let mut flags = keep.iter();
    v.retain(|_| flags.next().copied().unwrap_or(true));
}

/// Shortens a value quoted in an error message.
fn clip(s: &[u8]) -> String {
    let s = String::from_utf8_lossy(s);
    if s.chars().count() <= 40 {
        s.into_owned()
    } else {
        format!("{}…", s.chars().take(40).collect::<String>())
    }
}
