//! PyTorch profiler (Kineto) traces: a Chrome-JSON dialect (`reference/kineto.md` in the
//! shared folder). This module holds what is Kineto's — its event categories, its header keys
//! ([`header`]), what its operator args become ([`args`]), launch and operator links by
//! correlation and External id ([`link`]), `ProfilerStep#N` steps ([`steps`]) — and reuses
//! the Chrome-JSON machinery (`super::chrome`) for everything else. Vendor names (CUDA, NCCL)
//! come from the role tables.

pub(crate) mod args;
mod header;

use super::RankDraft;
use super::chrome::document::{self, ParseOptions};
use super::chrome::raw::OpArgs;
use super::chrome::{Class, Dialect, NameFacts, SideTable, merge};
use super::reader::{ReadContext, Reader, first_byte};
use super::roles::RoleTable;
use super::source::Source;
use crate::error::Error;
use crate::model::{HostCollective, Platform, Rank, RankFrom, RankId, SourceFormat, SourceInfo};

/// The Kineto dialect: categories by name, vocabulary from the role tables.
pub(crate) struct Kineto<'r> {
    roles: &'r RoleTable,
}

impl<'r> Kineto<'r> {
    /// The dialect with these role tables.
    pub(crate) fn new(roles: &'r RoleTable) -> Self {
        Kineto { roles }
    }

    /// Host ops whose args describe a collective (its metadata, or sizes of gloo transfers
    /// and c10d enqueues): everything but annotations of GPU collectives.
    fn collective_call(&self, name: &[u8]) -> bool {
        matches!(
            self.roles.host_collective(name),
            Some(HostCollective::Enqueue | HostCollective::Transfer | HostCollective::Metadata)
        )
    }
}

impl Dialect for Kineto<'_> {
    fn class(&self, cat: &[u8]) -> Class {
        match cat {
            b"cpu_op" | b"Operator" => Class::HostOp,
            b"user_annotation" => Class::Annotation,
            b"gpu_user_annotation" => Class::DeviceAnnotation,
            b"python_function" => Class::StackFrame,
            b"cuda_runtime" | b"cuda_driver" | b"Runtime" | b"Driver" => Class::Runtime,
            b"kernel" | b"Kernel" => Class::Kernel,
            b"gpu_memcpy" | b"Memcpy" => Class::Memcpy,
            b"gpu_memset" | b"Memset" => Class::Memset,
            b"cuda_sync" => Class::Sync,
            b"Trace" => Class::Trace,
            _ => Class::Unknown,
        }
    }

    fn stack_frame_category(&self) -> &'static [u8] {
        b"python_function"
    }

    fn link_ids_only(&self, cat: &[u8], name: &[u8]) -> bool {
        // Collective calls carry their metadata or sizes in args, roofline operators their
        // shapes: read all of theirs.
        matches!(cat, b"cpu_op" | b"user_annotation")
            && !self.collective_call(name)
            && self.roles.op_family(name).is_none()
    }

    fn name_facts(&self, name: &[u8]) -> NameFacts {
        NameFacts {
            comm_kernel: self.roles.is_comm_kernel(name),
            collective_call: self.collective_call(name),
            shape_op: self.roles.op_family(name).is_some(),
        }
    }

    fn side_table(&self, class: Class, name: NameFacts, args: &OpArgs<'_>) -> Option<SideTable> {
        // Sizes alone (`Input Dims`) describe a collective only on collective calls.
        if name.collective_call || args.has_metadata() {
            Some(SideTable::Collective)
        } else if class == Class::HostOp
            && name.shape_op
            && (args.input_dims.is_some() || args.flops.is_some())
        {
            Some(SideTable::Shape)
        } else {
            None
        }
    }
}

/// The reader of PyTorch profiler (Kineto) Chrome-trace JSON, any generation, CUDA and ROCm:
/// the reader table's default (it says what a trace would need).
pub(crate) struct KinetoReader;

impl Reader for KinetoReader {
    fn reads(&self) -> &'static str {
        "PyTorch profiler (Kineto) JSON traces (.json, .json.gz)"
    }

    fn sniff(&self, head: &[u8]) -> bool {
        matches!(first_byte(head), Some(b'{' | b'['))
    }

    fn read(
        &self,
        src: &Source,
        _: Option<&std::path::Path>,
        cx: &ReadContext,
    ) -> Result<Vec<RankDraft>, Error> {
        read(src, cx).map(|d| vec![d])
    }
}

/// Parses one rank's Kineto trace into a [`RankDraft`].
pub(crate) fn read(src: &Source, opts: &ReadContext<'_>) -> Result<RankDraft, Error> {
    let label = &src.label;
    let dialect = Kineto::new(opts.roles);
    let pages = src.pages(true);
    let parse = ParseOptions {
        dialect: &dialect,
        bytes_done: opts.bytes_done,
        stack_frames: opts.python_stacks,
        events: opts.events,
        pages: pages.as_ref().map(|p| p as &dyn document::TextPages),
    };
    let mut head = header::Header::default();
    let chunks = document::parse(label, &src.text, &parse, &mut |key, at, raw| {
        head.read(label, key, at, raw)
    })?
    .ok_or_else(|| Error::input_at(label, 0, head.not_a_trace()))?;
    let m = merge::merge(label, &chunks, head.base_ns)?;
    let mut strings = m.strings;
    let mut rank = Rank {
        id: RankId(0),
        source: SourceInfo {
            path: label.clone(),
            input: 0,
            file_bytes: src.file_bytes,
            json_bytes: src.text.len() as u64,
            rank_from: RankFrom::DistributedInfo,
            format: SourceFormat::Kineto,
            platform: Platform::KINETO,
            summary: None,
        },
        lanes: m.lanes,
        events: m.events,
        devices: head
            .device_names
            .iter()
            .map(|n| strings.intern(n))
            .collect(),
        dropped: m.dropped,
        record_end: m.record_end,
        ..Rank::default()
    };
    rank.collectives = args::collectives(&chunks, &m.final_index, &mut strings);
    rank.shapes = args::shapes(&chunks, &m.final_index, &mut strings);
    rank.unknown_categories = merge::intern_categories(&mut strings, m.unknown_categories);
    super::link::link(&mut rank, &m.corr, &m.ext);
    let mut warnings = m.warnings;
    for (step, unseen) in super::steps::find_steps(&mut rank, &strings, opts.roles) {
        warnings.push(format!(
            "{label}: step {} ends {} after the profiler stopped recording \
             (`Record Window End`): cut there, the rest is unobserved",
            step.0,
            crate::format::human(unseen)
        ));
    }
    super::steps::assign_steps(&mut rank);
    Ok(RankDraft {
        groups: head.groups(),
        declared_rank: head.distributed_u32("rank").map(RankId),
        world_size: head.distributed_u32("world_size"),
        parallel: None,
        memberships: Vec::new(),
        rank,
        strings,
        warnings,
        typical_dur: None,
        busy_ns: 0,
    })
}

#[cfg(test)]
mod pages_tests {
    use super::*;
    use crate::ingest::source;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn a_mapped_trace_given_back_as_it_is_parsed_reads_as_the_same_text_held_whole() {
        // A 76 MB demo rank (big enough to be mapped, not read whole: many chunks), read from
        // a mapped file whose chunks are given back as they are parsed, and from the same
        // bytes held in memory: the same draft.
        let spec = crate::ingest::demo::DemoSpec {
            ranks: 1,
            scale: 40,
            ..Default::default()
        };
        let text = crate::ingest::demo::DemoJob::new(spec)
            .rank_text(0)
            .into_bytes();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rank-0.json");
        std::fs::write(&path, &text).unwrap();
        let mapped = source::open(&path).unwrap();
        assert!(mapped.pages(true).is_some());
        let held = source::from_memory(path.display().to_string(), text).unwrap();
        assert!(held.pages(true).is_none());
        let roles = crate::ingest::roles::RoleTable::embedded();
        let done = AtomicU64::new(0);
        let cx = ReadContext {
            roles: &roles,
            bytes_done: &done,
            python_stacks: false,
            events: Default::default(),
        };
        let encoded = |src: &Source| postcard::to_allocvec(&read(src, &cx).unwrap()).unwrap();
        assert_eq!(encoded(&mapped), encoded(&held));
    }
}
