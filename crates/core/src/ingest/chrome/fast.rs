//! The fast path for the common shape of a Chrome-trace event: a flat object of known keys
//! whose strings have no escapes. It produces exactly what the serde path ([`RawEvent`]'s
//! `Deserialize`) produces, or gives up (`None`) on anything else — escapes, duplicate keys,
//! unexpected types, malformed input — and the caller re-parses that event with serde_json,
//! which then either accepts it or reports the precise error. Values of keys the model does
//! not read are skipped structurally (strings, nesting, literals), not validated in detail.

use super::Dialect;
use super::chunk::RECORD_WINDOW_END;
use super::raw::{ArgKey, Args, RawEvent, Str};
use super::scan::{close_object, id, link_id, loose_value, num, plain_string, skip_value, ws};
use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::cell::RefCell;

/// The `args` object at `i`. With `external_id_only` (cpu ops and annotations, whose other
/// args the model does not read at load time) the rest is skipped once `External id` is read.
fn args(b: &[u8], mut i: usize, external_id_only: bool) -> Option<(Args<'_>, usize)> {
    if b.get(i) == Some(&b'n') {
        return (b.get(i..i + 4) == Some(b"null")).then(|| (Args::default(), i + 4));
    }
    if b.get(i) != Some(&b'{') {
        return None;
    }
    let mut a = Args::default();
    i = ws(b, i + 1);
    if b.get(i) == Some(&b'}') {
        return Some((a, i + 1));
    }
    loop {
        let (key, k) = plain_string(b, i)?;
        i = ws(b, k);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = ws(b, i + 1);
        i = match key {
            // Ascend's `connection_id` plays correlation's part (CANN call ↔ device tasks).
            b"correlation" | b"connection_id" => {
                let (v, e) = link_id(b, i)?;
                a.correlation = v;
                e
            }
            b"External id" | b"external id" => {
                let (v, e) = link_id(b, i)?;
                a.external_id = v;
                if external_id_only {
                    return Some((a, close_object(b, e, 1)?));
                }
                e
            }
            b"name" | b"labels" | b"Task Type" | b"task type" => {
                let v = if b.get(i) == Some(&b'"') {
                    let (s, e) = plain_string(b, i)?;
                    (Some(Str(Cow::Borrowed(s))), e)
                } else {
                    (None, skip_value(b, i)?)
                };
                match key {
                    b"name" => a.name = v.0,
                    b"labels" => a.labels = v.0,
                    _ => a.task_type = v.0,
                }
                v.1
            }
            k => match ArgKey::of(k) {
                // Shapes are read for the roofline's operators, which are never `ids_only`.
                Some(ArgKey::InputDims | ArgKey::InputType | ArgKey::Flops) if external_id_only => {
                    skip_value(b, i)?
                }
                Some(ck) => {
                    let (v, e) = loose_value(b, i)?;
                    a.set_op_arg(ck, v);
                    e
                }
                None => skip_value(b, i)?,
            },
        };
        i = ws(b, i);
        match b.get(i)? {
            b',' => i = ws(b, i + 1),
            b'}' => return Some((a, i + 1)),
            _ => return None,
        }
    }
}

/// The event keys the model reads, as codes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum EventKey {
    Ph = 0,
    Cat,
    Name,
    Pid,
    Tid,
    Ts,
    Dur,
    Args,
    Other,
}

/// A key and its closing quote as a little-endian word with the mask of its length, so that
/// a key is recognized by one load and one compare instead of a string comparison.
const fn key_word(k: &[u8]) -> (u64, u64) {
    let mut v = 0u64;
    let mut i = 0;
    while i < k.len() {
        v |= (k[i] as u64) << (8 * i);
        i += 1;
    }
    v |= (b'"' as u64) << (8 * k.len());
    let mask = if k.len() + 1 == 8 {
        u64::MAX
    } else {
        (1u64 << (8 * (k.len() + 1))) - 1
    };
    (v, mask)
}

const EVENT_KEYS: [(u64, u64, EventKey, usize); 8] = {
    const fn entry(k: &[u8], code: EventKey) -> (u64, u64, EventKey, usize) {
        let (v, m) = key_word(k);
        (v, m, code, k.len())
    }
    [
        entry(b"ph", EventKey::Ph),
        entry(b"cat", EventKey::Cat),
        entry(b"name", EventKey::Name),
        entry(b"pid", EventKey::Pid),
        entry(b"tid", EventKey::Tid),
        entry(b"ts", EventKey::Ts),
        entry(b"dur", EventKey::Dur),
        entry(b"args", EventKey::Args),
    ]
};

/// The key string at `i` (its `"`): which event key it is, and the index after it.
#[inline(always)]
fn event_key(b: &[u8], i: usize) -> Option<(EventKey, usize)> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    if let Some(w) = b.get(i + 1..i + 9) {
        let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
        for &(v, m, code, len) in &EVENT_KEYS {
            if w & m == v {
                return Some((code, i + len + 2));
            }
        }
    }
    let (key, end) = plain_string(b, i)?;
    let code = EVENT_KEYS
        .iter()
        .find(|e| key.len() == e.3 && key_word(key).0 == e.0)
        .map_or(EventKey::Other, |e| e.2);
    Some((code, end))
}

/// An event that is only counted keeps the fields that say why (`ph`, `cat`) and what it is
/// (`name`, when read before the phase: a dialect may keep it to read again).
fn counted_only(ev: RawEvent<'_>) -> RawEvent<'_> {
    RawEvent {
        ph: ev.ph,
        cat: ev.cat,
        name: ev.name,
        ..RawEvent::default()
    }
}

/// What the fast path needs from the dialect while it reads the events of one chunk.
pub(crate) struct Reading<'d, 'a> {
    /// The dialect.
    pub dialect: &'d dyn Dialect,
    /// Keep reading stack frames (`python_function`) instead of skipping them.
    pub stack_frames: bool,
    /// The dialect's `link_ids_only` answer per (category, name) of this chunk's buffer: a
    /// chunk repeats a few hundred names a million times, and the answer takes role-table
    /// lookups.
    ids_only: RefCell<FxHashMap<CatName<'a>, bool>>,
}

/// An event's (category, name), borrowed from the buffer.
type CatName<'a> = (&'a [u8], &'a [u8]);

impl<'d, 'a> Reading<'d, 'a> {
    /// A reading of events with `dialect`.
    pub(crate) fn new(dialect: &'d dyn Dialect, stack_frames: bool) -> Self {
        Reading {
            dialect,
            stack_frames,
            ids_only: RefCell::default(),
        }
    }

    /// True when the args of an event of `cat` named `name` need only their link ids.
    fn link_ids_only(&self, cat: &Str<'a>, name: &Str<'a>) -> bool {
        let (Cow::Borrowed(c), Cow::Borrowed(n)) = (&cat.0, &name.0) else {
            return self.dialect.link_ids_only(&cat.0, &name.0);
        };
        *self
            .ids_only
            .borrow_mut()
            .entry((c, n))
            .or_insert_with(|| self.dialect.link_ids_only(c, n))
    }
}

/// Parses the event object starting at `b[i] == '{'`; returns it and its length in bytes.
pub(crate) fn event<'a>(
    b: &'a [u8],
    start: usize,
    r: &Reading<'_, 'a>,
) -> Option<(RawEvent<'a>, usize)> {
    let mut ev = RawEvent::default();
    let mut seen = 0u16;
    let mut i = ws(b, start + 1);
    if b.get(i) == Some(&b'}') {
        return Some((ev, i + 1 - start));
    }
    loop {
        let (key, k) = event_key(b, i)?;
        i = ws(b, k);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = ws(b, i + 1);
        if key != EventKey::Other {
            let bit = 1u16 << key as u16;
            if seen & bit != 0 {
                return None; // duplicate key: serde_json reports it
            }
            seen |= bit;
        }
        let null = b.get(i..i + 4) == Some(b"null");
        i = match key {
            EventKey::Ph | EventKey::Cat | EventKey::Name if null => i + 4,
            EventKey::Ph | EventKey::Cat | EventKey::Name => {
                match text_field(b, (start, i), key, &mut ev, r)? {
                    Ok(e) => e,
                    Err(end) => return Some((counted_only(ev), end - start)),
                }
            }
            EventKey::Pid | EventKey::Tid if null => i + 4,
            EventKey::Pid | EventKey::Tid => {
                let (v, e) = id(b, i)?;
                if key == EventKey::Pid {
                    ev.pid = Some(v)
                } else {
                    ev.tid = Some(v)
                }
                e
            }
            EventKey::Ts | EventKey::Dur if null => i + 4,
            EventKey::Ts | EventKey::Dur => {
                let (v, e) = num(b, i)?;
                if key == EventKey::Ts {
                    ev.ts = Some(v)
                } else {
                    ev.dur = Some(v)
                }
                e
            }
            EventKey::Args => {
                // Most host ops need only their link ids; the dialect says which need more.
                let ids_only = match (&ev.cat, &ev.name) {
                    (Some(c), Some(n)) => r.link_ids_only(c, n),
                    _ => false,
                };
                let (a, e) = args(b, i, ids_only)?;
                ev.args = if null { None } else { Some(a) };
                e
            }
            EventKey::Other => skip_value(b, i)?,
        };
        i = ws(b, i);
        match b.get(i)? {
            b',' => i = ws(b, i + 1),
            b'}' => return Some((ev, i + 1 - start)),
            _ => return None,
        }
    }
}

/// Reads the phase, category or name at `b[i]` into `ev`: `Ok` with the value's end, or
/// `Err` with the object's end when the event is only counted (flows, instants, counters,
/// python stack frames: the rest of the object is skipped unread).
#[inline]
fn text_field<'a>(
    b: &'a [u8],
    (start, i): (usize, usize),
    key: EventKey,
    ev: &mut RawEvent<'a>,
    r: &Reading<'_, 'a>,
) -> Option<Result<usize, usize>> {
    let (s, e) = plain_string(b, i)?;
    let dropped = match key {
        EventKey::Ph => matches!(s, b"s" | b"f" | b"t" | b"i" | b"I" | b"n" | b"C"),
        EventKey::Cat => {
            !r.stack_frames
                && s == r.dialect.stack_frame_category()
                && ev.ph.as_ref().is_some_and(|p| &*p.0 == b"X")
        }
        _ => false,
    };
    let v = Some(Str(Cow::Borrowed(s)));
    match key {
        EventKey::Ph => ev.ph = v,
        EventKey::Cat => ev.cat = v,
        _ => ev.name = v,
    }
    if dropped {
        // The rest of the object only: torch_npu writes a counter's phase last.
        let end = close_object(b, e, 1)?;
        // Kineto's `Record Window End` instant is read whole: its `ts` ends what the trace
        // observed.
        let instant = ev.ph.as_ref().is_some_and(|p| matches!(&*p.0, b"i" | b"I"));
        if !instant || memchr::memmem::find(&b[start..end], RECORD_WINDOW_END).is_none() {
            return Some(Err(end));
        }
    }
    Some(Ok(e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::chrome::raw::NumText;
    use serde::Deserialize;

    /// The Kineto dialect with the shipped role table, as the loader reads traces.
    fn reading() -> Reading<'static, 'static> {
        let roles = Box::leak(Box::new(crate::ingest::roles::RoleTable::embedded()));
        Reading::new(
            Box::leak(Box::new(crate::ingest::kineto::Kineto::new(roles))),
            false,
        )
    }

    fn serde_event(text: &str) -> Option<RawEvent<'_>> {
        let mut de = serde_json::Deserializer::from_str(text);
        RawEvent::deserialize(&mut de).ok()
    }

    #[test]
    fn agrees_with_serde_on_common_shapes() {
        let cases = [
            r#"{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 4458676416788.066, "dur": 2.5, "args": {"External id": 12, "correlation": 60047, "stream": 7, "grid": [1, 2, 3], "Collective name": "allreduce", "x": {"y": [{"z": "a\"b"}]}}}"#,
            r#"{"name": "thread_name", "ph": "M", "ts": 0, "pid": 2910249, "tid": 2919752, "args": {"name": "thread 1 (pt_main_thread)"}}"#,
            r#"{"name": "process_labels", "ph": "M", "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}}"#,
            r#"{"ph": "i", "s": "g", "pid": "Traces", "tid": "", "ts": "12.5", "name": "Iteration Start: PyTorch Profiler"}"#,
            r#"{"ph": "X", "name": "aten::mm", "pid": 1, "tid": 1, "ts": "10.5", "dur": 2, "cat": "cpu_op", "args": {"Sequence number": -1, "Input Dims": "[2, 3];\r\n[3, 4]", "Input type": "float;\r\nfloat", "External id": 3}}"#,
            r#"{"name": "AI Core Freq", "ts": "1736408883573887.920", "pid": 3170820544, "tid": 0, "args": {"MHz": 1800}, "ph": "C"}"#,
            r#"{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1e3, "dur": 3, "args": {"correlation": -1, "External id": 0, "flag": true, "n": null}}"#,
            r#"{}"#,
            r#"{"ph":"X","args":null,"ts":null}"#,
            r#"{"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", "pid": 0, "tid": 40, "ts": 4458677009853.422, "dur": 2636.669, "args": {"External id": 12945, "queued": 0, "device": 0, "context": 1, "stream": 40, "correlation": 60047, "registers per thread": 96, "shared memory": 87568, "blocks per SM": 0.074074, "warps per SM": 1.259259, "grid": [8, 1, 1], "block": [544, 1, 1], "est. achieved occupancy %": 0, "Collective name": "allreduce", "In msg nelems": 6637568, "Out msg nelems": 6637568, "Group size": 2, "dtype": "Float", "In split size": "[]", "Out split size": "[]", "Process Group Name": "0", "Process Group Description": "default_pg", "Process Group Ranks": "[0, 1]", "Seq": 18446744073709551615}}"#,
            r#"{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 2910249, "tid": 2919752, "ts": 4458676524648.797, "dur": 189.626, "args": {"External id": 2099, "Record function id": 1959, "Process Group Name": 0, "Global rank stride": 1, "Out msg nelems": 2049000, "Process Group Ranks": "[0, 1]", "Group size": 2.5, "Global rank start": 0, "Ev Idx": 50, "In msg nelems": -1, "In split size": "[]", "Out split size": "[]", "dtype": null, "Process Group Description": "default_pg", "Collective name": "allreduce"}}"#,
        ];
        for c in cases {
            let fast = event(c.as_bytes(), 0, &reading()).map(|(e, len)| {
                assert_eq!(len, c.len());
                e
            });
            let slow = serde_event(c).map(|e| match e.ph.as_ref().map(|p| &*p.0) {
                // Its name comes after its phase, where the fast path stops.
                Some(b"i") => RawEvent {
                    name: None,
                    ..counted_only(e)
                },
                Some(b"C") => counted_only(e),
                _ => e,
            });
            assert_eq!(fast, slow, "{c}");
        }
    }

    #[test]
    fn collective_metadata_is_read() {
        let c = r#"{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": 1, "dur": 2, "args": {"External id": 9, "Collective name": "broadcast", "In msg nelems": 10, "dtype": "Long", "Process Group Name": "0", "Process Group Ranks": "[0, 1]", "Seq": 4}}"#;
        let (ev, _) = event(c.as_bytes(), 0, &reading()).unwrap();
        let a = ev.args.unwrap();
        assert!(a.collective);
        let m = a.op.unwrap();
        assert_eq!(
            m.name.map(|s| s.0.into_owned()),
            Some(b"broadcast".to_vec())
        );
        assert_eq!(
            (m.in_nelems, m.seq, m.group_size),
            (Some(10), Some(4), None)
        );
        assert_eq!(
            m.group_ranks.map(|s| s.0.into_owned()),
            Some(b"[0, 1]".to_vec())
        );
    }

    #[test]
    fn host_op_args_stop_after_the_external_id() {
        let c = r#"{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 2, "args": {"External id": 7, "Input Dims": [[8, 16], [16, 32]], "Input type": ["float", "float"], "x": {"y": "}"}}, "id": 3}"#;
        let (ev, len) = event(c.as_bytes(), 0, &reading()).unwrap();
        assert_eq!(len, c.len());
        assert_eq!(ev.args.unwrap().external_id, Some(7));
        assert_eq!(ev.dur, Some(NumText(b"2")));
    }

    #[test]
    fn gives_up_where_serde_must_decide() {
        for c in [
            r#"{"ph": "X", "name": "a\"b"}"#,
            r#"{"ph": "X", "ph": "M"}"#,
            r#"{"ph": "X", "ts": tru}"#,
            r#"{"ph": "X", "ts": 1,}"#,
            r#"{"ph": "X", "args": {"correlation": 99999999999999999999999}}"#,
            r#"{"ph": "X", "pid": 1.5}"#,
            r#"{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "args": {"Input Dims": "\q"}}"#,
            r#"{"ph": "X""#,
        ] {
            assert!(event(c.as_bytes(), 0, &reading()).is_none(), "{c}");
        }
    }
}
