//! Chrome-trace JSON (`{"traceEvents": [...]}` or a bare array): the machinery every dialect
//! shares — the top-level walk and the parallel split of `traceEvents` into chunks
//! ([`document`]), the fast scanner with its serde fallback ([`fast`], [`scan`], [`raw`]),
//! per-chunk columns and name/lane tables ([`chunk`]), and the merge into one rank's columns
//! sorted by lane ([`merge`], [`lanes`]).
//!
//! What the events *mean* is a [`Dialect`]'s: which categories are kernels or host ops, which
//! names are communication kernels, which operator args to keep. Kineto is one dialect
//! (`super::kineto`); Ascend's `trace_view.json` is another Chrome-JSON dialect that reuses
//! all of this.

pub(crate) mod chunk;
pub mod document;
pub(crate) mod fast;
pub(crate) mod lanes;
pub(crate) mod merge;
pub(crate) mod raw;
pub(crate) mod scan;

use raw::{Args, OpArgs, RawEvent};

/// What events of a category are, as far as the model cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// A framework operator on a host thread.
    HostOp,
    /// A user annotation (`record_function` range) on a host thread.
    Annotation,
    /// A user annotation projected onto a device stream.
    DeviceAnnotation,
    /// A Python stack frame (`with_stack=True`): counted, kept only when asked for.
    StackFrame,
    /// A runtime or driver API call (kernel launches, copies, synchronizations).
    Runtime,
    /// A device kernel.
    Kernel,
    /// A device communication task (Ascend's HCCL ops and their `Notify Wait`/`SDMA` tasks,
    /// told by process and task type rather than by name).
    CommKernel,
    /// A device memory copy.
    Memcpy,
    /// A device memory set.
    Memset,
    /// A device synchronization record.
    Sync,
    /// A profiler span.
    Trace,
    /// A track the profiler derived from other events (Ascend's `Overlap Analysis`): counted,
    /// never stored, since storing it would count the same device time twice.
    Derived,
    /// A category the dialect does not know (counted by name, kept as `other`).
    Unknown,
}

impl Class {
    /// Classes that only occur on device lanes.
    pub(crate) fn is_device(self) -> bool {
        matches!(
            self,
            Class::Kernel
                | Class::CommKernel
                | Class::Memcpy
                | Class::Memset
                | Class::Sync
                | Class::DeviceAnnotation
        )
    }

    /// Classes that only occur on host threads.
    pub(crate) fn is_cpu(self) -> bool {
        matches!(
            self,
            Class::HostOp | Class::Annotation | Class::Runtime | Class::StackFrame
        )
    }
}

/// What a dialect makes of an event without a category.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Uncategorised {
    /// Its class.
    Known(Class),
    /// Its process decides, with the class its args suggest, if any (an Ascend device task's
    /// `Task Type`). A process is named by metadata events anywhere in the trace, so such
    /// events are classified after the parse ([`chunk::Chunk::settle`]); until then they are
    /// stored as kind other.
    ByProcess(Option<Class>),
}

/// Which side table an event's operator args go to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SideTable {
    /// Collective metadata (`model::Collective`).
    Collective,
    /// Operator shapes for the roofline (`model::OpShape`).
    Shape,
}

/// What a dialect knows of an event name: asked once per distinct name of a chunk (names
/// repeat millions of times), and handed back with each event of that name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct NameFacts {
    /// A communication kernel's name (its kernels are `Comm`).
    pub comm_kernel: bool,
    /// A host call that performs or describes a collective (its args describe the call).
    pub collective_call: bool,
    /// An operator whose shapes the dialect keeps (the roofline estimates it).
    pub shape_op: bool,
}

/// The semantics of one Chrome-JSON dialect. Called from parallel chunks, per event or per
/// distinct name, so the answers must be cheap (a `match`, a role-table lookup).
pub(crate) trait Dialect: Sync {
    /// What events of category `cat` are.
    fn class(&self, cat: &[u8]) -> Class;

    /// What an event without a category is, as far as its args tell (Ascend's device, CANN
    /// and HCCL events carry none; Kineto writes a category on every timed event).
    fn uncategorised(&self, _args: Option<&Args<'_>>) -> Uncategorised {
        Uncategorised::Known(Class::Unknown)
    }

    /// The category of stack-frame events, skipped by the fast path unless they are kept.
    fn stack_frame_category(&self) -> &'static [u8];

    /// True when an event of category `cat` named `name` needs only the link ids of its args
    /// (most host ops): the fast path then skips the rest of the object unread.
    fn link_ids_only(&self, cat: &[u8], name: &[u8]) -> bool;

    /// What the dialect knows of a name.
    fn name_facts(&self, name: &[u8]) -> NameFacts;

    /// Where an event's operator args are kept, if anywhere (`name`: its name's facts).
    fn side_table(&self, class: Class, name: NameFacts, args: &OpArgs<'_>) -> Option<SideTable>;

    /// True for the untimed events (`ph` other than `X`) whose text the dialect reads again
    /// after the parse (Ascend: its clock counter and operator flows): their byte spans are
    /// kept, so the reader need not search the text for them. The fast path stops reading a
    /// counted event at its phase, so a name or category that came after it is absent: such
    /// an event must be kept when the phase alone may be one of them.
    fn reread(&self, _ev: &RawEvent<'_>) -> bool {
        false
    }
}
