//! `trace_view.json` as a Chrome-JSON dialect. Host events carry Kineto's categories, but the
//! device, CANN, HCCL and `Overlap Analysis` events carry none: what they are follows from
//! their process (`process_name` metadata, resolved before the parallel parse because the
//! metadata is interleaved with the events) and, on a device stream, from their `Task Type`.

use crate::ingest::chrome::raw::{Args, Id, OpArgs, RawEvent};
use crate::ingest::chrome::{Class, Dialect, NameFacts, SideTable};
use crate::ingest::kineto::Kineto;
use crate::ingest::roles::RoleTable;
use rustc_hash::FxHashMap;

/// An Ascend trace process, by its `process_name`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Process {
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
    pub fn of(name: &str) -> Process {
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
pub type Processes = FxHashMap<Id<'static>, (Process, String)>;

/// Finds every `process_name` metadata event without parsing the rest: a substring search,
/// then the enclosing object. The key can follow a nested `args` object, so up to a few
/// opening braces back are tried.
pub fn scan_processes(buf: &[u8]) -> Processes {
    let mut out = Processes::default();
    for hit in memchr::memmem::find_iter(buf, b"\"process_name\"") {
        let mut end = hit;
        for _ in 0..3 {
            let Some(open) = memchr::memrchr(b'{', &buf[..end]) else {
                break;
            };
            if let Some((pid, name)) = meta_at(buf, open) {
                out.insert(pid, (Process::of(&name), name));
                break;
            }
            end = open;
        }
    }
    out
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
pub struct Ascend<'r> {
    kineto: Kineto<'r>,
    processes: &'r Processes,
    /// The trace has an HCCL process: its ops are the collectives, and the HCCL tasks on
    /// compute streams are their parts (kept, but not counted twice).
    hccl_ops: bool,
}

impl<'r> Ascend<'r> {
    /// The dialect for a trace with these processes.
    pub fn new(roles: &'r RoleTable, processes: &'r Processes) -> Self {
        Ascend {
            kineto: Kineto::new(roles),
            processes,
            hccl_ops: processes.values().any(|p| p.0 == Process::Hccl),
        }
    }
}

/// What a device task is, by its `Task Type`: HCCL's tasks on a compute stream are
/// communication, copies are memory, event records and waits are synchronisation, and every
/// other type (`AI_CORE`, `AI_VECTOR_CORE`, `MIX_AIC`, `AI_CPU`, `DSA_SQE`, the 2024 `Other`) is
/// a kernel.
pub fn task_class(task_type: &[u8]) -> Class {
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

    fn uncategorised(&self, pid: Option<&Id<'_>>, args: Option<&Args<'_>>) -> Class {
        let process = pid
            .and_then(|p| self.processes.get(&p.clone().into_owned()))
            .map_or(Process::Other, |p| p.0);
        let task_type = args.and_then(|a| a.task_type.as_ref());
        match process {
            Process::Hardware => match task_type.map_or(Class::Kernel, |t| task_class(&t.0)) {
                Class::CommKernel if self.hccl_ops => Class::Trace,
                c => c,
            },
            // Plane tasks carry a `task type`; the collective ops themselves do not.
            Process::Hccl if task_type.is_some() => Class::Trace,
            Process::Hccl => Class::CommKernel,
            Process::Cann => Class::Runtime,
            Process::Overlap => Class::Derived,
            Process::Host | Process::Other => Class::Unknown,
        }
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

    /// Counters (the device clock is one of them) and flows (the `async_npu` ones link
    /// operators to their device tasks): read again by [`super::counters`] and
    /// [`super::flows`], which pick theirs by their text.
    fn reread(&self, ph: &[u8]) -> bool {
        matches!(ph, b"C" | b"s" | b"f")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processes_are_found_whatever_the_key_order() {
        let buf = br#"[{"name": "process_name", "pid": 7, "tid": 0, "args": {"name": "Ascend Hardware"}, "ph": "M"},
            {"args": {"name": "CANN"}, "ph": "M", "pid": "800", "name": "process_name"},
            {"ph": "X", "name": "process_name", "pid": 9, "ts": 1, "dur": 1}]"#;
        let p = scan_processes(buf);
        assert_eq!(p.len(), 2);
        assert_eq!(p[&Id::Int(7)].0, Process::Hardware);
        assert_eq!(
            p[&Id::Text(std::borrow::Cow::Borrowed(b"800"))].0,
            Process::Cann
        );
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
