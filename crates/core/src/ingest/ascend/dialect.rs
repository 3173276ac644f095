//! `trace_view.json` as a Chrome-JSON dialect. Host events carry Kineto's categories, but the
//! device, CANN, HCCL and `Overlap Analysis` events carry none: what they are follows from
//! their process and, on a device stream, from their `Task Type`. The `process_name`
//! metadata is interleaved with the events, so those events are classified once the parse
//! has seen all of it ([`settle`]).

use crate::ingest::chrome::chunk::{Chunk, MetaKind};
use crate::ingest::chrome::raw::{Args, Id, OpArgs, RawEvent, Str};
use crate::ingest::chrome::{Class, Dialect, NameFacts, SideTable, Uncategorised};
use crate::ingest::kineto::Kineto;
use crate::ingest::roles::RoleTable;
use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// The name of the AI Core clock counter (`ph: "C"`, MHz).
pub(crate) const CLOCK_COUNTER: &[u8] = b"AI Core Freq";

/// The category of the flows from a framework operator to its device tasks.
pub(crate) const OPERATOR_FLOWS: &[u8] = b"async_npu";

/// An Ascend trace process, by its `process_name`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Process {
    /// `Python`: framework operators, steps, the task queue.
    Host,
    /// `CANN`: AscendCL and runtime calls, each with the `connection_id` of what it launched.
    Cann,
    /// `Ascend Hardware`: device tasks, one thread per stream.
    Hardware,
    /// `HCCL` (older: `Communication`): collective ops and their per-plane transfer tasks.
    Hccl,
    /// `Overlap Analysis`: the profiler's own compute/communication/free tracks.
    Overlap,
    /// Counters and anything else.
    Other,
}

impl Process {
    /// The process a `process_name` names.
    pub(crate) fn of(name: &str) -> Process {
        match name {
            "Python" => Process::Host,
            "CANN" => Process::Cann,
            "Ascend Hardware" => Process::Hardware,
            "HCCL" | "Communication" => Process::Hccl,
            "Overlap Analysis" => Process::Overlap,
            _ => Process::Other,
        }
    }
}

/// The processes of a trace by pid, with their names.
pub(crate) type Processes = FxHashMap<Id<'static>, (Process, String)>;

/// The processes the parsed chunks' `process_name` metadata names.
pub(crate) fn processes(chunks: &[Chunk<'_>]) -> Processes {
    chunks
        .iter()
        .flat_map(|c| &c.meta)
        .filter(|m| m.what == MetaKind::ProcessName)
        .map(|m| (m.pid.clone(), (Process::of(&m.value), m.value.clone())))
        .collect()
}

/// True when a trace names one of Ascend's own processes (device, CANN, HCCL, overlap), found
/// without parsing the rest: a substring search for `process_name`, then the enclosing
/// object. The key can follow a nested `args` object, so up to a few opening braces back
/// are tried.
pub(crate) fn names_ascend_process(buf: &[u8]) -> bool {
    memchr::memmem::find_iter(buf, b"\"process_name\"").any(|hit| {
        let mut end = hit;
        for _ in 0..3 {
            let Some(open) = memchr::memrchr(b'{', &buf[..end]) else {
                break;
            };
            if let Some((_, name)) = meta_at(buf, open) {
                return !matches!(Process::of(&name), Process::Host | Process::Other);
            }
            end = open;
        }
        false
    })
}

/// The (pid, process name) of the `process_name` event starting at `buf[at]`, if it is one.
fn meta_at(buf: &[u8], at: usize) -> Option<(Id<'static>, String)> {
    let mut it = serde_json::Deserializer::from_slice(&buf[at..]).into_iter::<RawEvent>();
    let ev = it.next()?.ok()?;
    let is_meta = ev.ph.as_ref().is_some_and(|p| &*p.0 == b"M")
        && ev.name.as_ref().is_some_and(|n| &*n.0 == b"process_name");
    if !is_meta {
        return None;
    }
    let name = ev.args?.name?;
    Some((
        ev.pid?.into_owned(),
        String::from_utf8_lossy(&name.0).trim().to_string(),
    ))
}

/// The Ascend dialect: Kineto's for categorised host events, processes and task types for the
/// rest.
pub(crate) struct Ascend<'r> {
    kineto: Kineto<'r>,
}

impl<'r> Ascend<'r> {
    /// The dialect with these role tables.
    pub(crate) fn new(roles: &'r RoleTable) -> Self {
        Ascend {
            kineto: Kineto::new(roles),
        }
    }
}

/// Classifies the uncategorised events of parsed chunks by their process, once `processes`
/// holds all of the trace's.
pub(crate) fn settle(chunks: &mut [Chunk<'_>], processes: &Processes) {
    // With an HCCL process, its ops are the collectives, and the HCCL tasks on compute
    // streams are their parts (kept, but not counted twice).
    let hccl_ops = processes.values().any(|p| p.0 == Process::Hccl);
    let process_of = |pid: &Id<'_>| {
        processes
            .get(&pid.clone().into_owned())
            .map_or(Process::Other, |p| p.0)
    };
    chunks
        .par_iter_mut()
        .for_each(|c| c.settle(process_of, |p, task| class_in(p, task, hccl_ops)));
}

/// The class of an uncategorised event of `process` whose `Task Type` has class `task`.
fn class_in(process: Process, task: Option<Class>, hccl_ops: bool) -> Class {
    match process {
        Process::Hardware => match task.unwrap_or(Class::Kernel) {
            Class::CommKernel if hccl_ops => Class::Trace,
            c => c,
        },
        // Plane tasks carry a `task type`; the collective ops themselves do not.
        Process::Hccl if task.is_some() => Class::Trace,
        Process::Hccl => Class::CommKernel,
        Process::Cann => Class::Runtime,
        Process::Overlap => Class::Derived,
        Process::Host | Process::Other => Class::Unknown,
    }
}

/// What a device task is, by its `Task Type`: HCCL's tasks on a compute stream are
/// communication, copies are memory, event records and waits are synchronisation, and every
/// other type (`AI_CORE`, `AI_VECTOR_CORE`, `MIX_AIC`, `AI_CPU`, `DSA_SQE`, the 2024 `Other`) is
/// a kernel.
pub(crate) fn task_class(task_type: &[u8]) -> Class {
    match task_type {
        b"Notify Wait" | b"Notify Record" | b"Write Value" | b"SDMA" | b"RDMA"
        | b"Reduce_Inline" | b"HCCL" | b"COMMUNICATION" => Class::CommKernel,
        b"PCIE_DMA_SQE" | b"SDMA_SQE" | b"MEMCPY_ASYNC" | b"MEMCPY" => Class::Memcpy,
        b"EVENT_RECORD_SQE" | b"EVENT_WAIT_SQE" | b"PLACE_HOLDER_SQE" | b"EVENT_RECORD"
        | b"EVENT_WAIT" | b"STARS_COMMON" => Class::Sync,
        // The profiler's own start and stop markers: not work.
        b"PROFILING_ENABLE" | b"PROFILING_DISABLE" => Class::Trace,
        _ => Class::Kernel,
    }
}

impl Dialect for Ascend<'_> {
    fn class(&self, cat: &[u8]) -> Class {
        match cat {
            // The task queue: `Enqueue` on the operator's thread hands the work to the
            // `Dequeue` thread, which makes the CANN calls.
            b"enqueue" | b"dequeue" => Class::Runtime,
            b"gc" => Class::Trace,
            _ => self.kineto.class(cat),
        }
    }

    fn uncategorised(&self, args: Option<&Args<'_>>) -> Uncategorised {
        let task = args.and_then(|a| a.task_type.as_ref());
        Uncategorised::ByProcess(task.map(|t| task_class(&t.0)))
    }

    fn stack_frame_category(&self) -> &'static [u8] {
        self.kineto.stack_frame_category()
    }

    fn link_ids_only(&self, cat: &[u8], name: &[u8]) -> bool {
        self.kineto.link_ids_only(cat, name)
    }

    fn name_facts(&self, name: &[u8]) -> NameFacts {
        self.kineto.name_facts(name)
    }

    fn side_table(&self, class: Class, name: NameFacts, args: &OpArgs<'_>) -> Option<SideTable> {
        self.kineto.side_table(class, name, args)
    }

    /// The device clock counter and the flows that link operators to their device tasks:
    /// read again by [`super::counters`] and [`super::flows`]. Most counters are PMU and
    /// bandwidth samples; torch_npu writes a counter's name before its phase, a flow's
    /// category after it.
    fn reread(&self, ev: &RawEvent<'_>) -> bool {
        let is =
            |field: &Option<Str<'_>>, want: &[u8]| field.as_ref().is_none_or(|f| *f.0 == *want);
        match ev.ph.as_ref().map_or(&b""[..], |p| &*p.0) {
            b"C" => is(&ev.name, CLOCK_COUNTER),
            b"s" | b"f" => is(&ev.cat, OPERATOR_FLOWS),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascend_processes_are_found_whatever_the_key_order() {
        let hardware = br#"[{"name": "process_name", "pid": 7, "tid": 0, "args": {"name": "Python"}, "ph": "M"},
            {"args": {"name": "Ascend Hardware"}, "ph": "M", "pid": "800", "name": "process_name"}]"#;
        assert!(names_ascend_process(hardware));
        let host_only = br#"[{"name": "process_name", "pid": 7, "tid": 0, "args": {"name": "Python"}, "ph": "M"},
            {"ph": "X", "name": "process_name", "pid": 9, "ts": 1, "dur": 1, "args": {"name": "CANN"}}]"#;
        assert!(!names_ascend_process(host_only));
    }

    #[test]
    fn task_types() {
        assert_eq!(task_class(b"AI_CORE"), Class::Kernel);
        assert_eq!(task_class(b"Other"), Class::Kernel);
        assert_eq!(task_class(b"Notify Wait"), Class::CommKernel);
        assert_eq!(task_class(b"PCIE_DMA_SQE"), Class::Memcpy);
        assert_eq!(task_class(b"EVENT_WAIT_SQE"), Class::Sync);
    }
}
