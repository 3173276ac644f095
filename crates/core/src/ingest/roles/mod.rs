//! The role tables: vendor vocabulary (CUDA, HIP, NCCL, gloo, PyTorch op names) turned into
//! the [`Role`]s analyses read. The shipped table is `roles.toml` beside this file; the
//! user's `<config dir>/stepscope/roles.toml` adds to it; a new input format adds its own
//! vocabulary to `roles.toml` (or ships a table of its own and appends it with
//! [`RoleTable::extend`]).

mod pattern;

use crate::config::{self, Layer};
use crate::error::Error;
use crate::model::{
    CollOp, Family, GemmForm, GraphCall, HostCollective, Interner, OpFamily, PageableCopy, Role,
    StepNo, SyncCall,
};
use pattern::{Keyed, Patterns};
use rayon::prelude::*;
use serde::Deserialize;

/// The shipped table.
pub(crate) const EMBEDDED: &str = include_str!("roles.toml");

/// Patterns of one role: a list, or a table with `ignore_case`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Entry {
    List(Vec<String>),
    Table {
        patterns: Vec<String>,
        #[serde(default)]
        ignore_case: bool,
    },
}

impl Default for Entry {
    fn default() -> Self {
        Entry::List(Vec::new())
    }
}

impl Entry {
    fn patterns(&self) -> (&[String], bool) {
        match self {
            Entry::List(v) => (v, false),
            Entry::Table {
                patterns,
                ignore_case,
            } => (patterns, *ignore_case),
        }
    }
}

#[derive(Debug, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct SyncFile {
    device: Entry,
    stream: Entry,
    query: Entry,
    implicit: Entry,
}

#[derive(Debug, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct GraphFile {
    begin_capture: Entry,
    end_capture: Entry,
    launch: Entry,
}

#[derive(Debug, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct PageableFile {
    host_to_device: Entry,
    device_to_host: Entry,
}

#[derive(Debug, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct HostCollectiveFile {
    enqueue: Entry,
    transfer: Entry,
    annotation: Entry,
    metadata: Entry,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct OpTokens {
    op: String,
    tokens: Vec<String>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct CollectiveFile {
    kernel_prefixes: Vec<String>,
    call_prefixes: Vec<String>,
    ops: Vec<OpTokens>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct FamilyFile {
    gemm: Entry,
    gemm_bias_first: Entry,
    linear: Entry,
    conv: Entry,
    conv_backward: Entry,
    attention: Entry,
    attention_backward: Entry,
    norm: Entry,
    elementwise: Entry,
    embedding: Entry,
}

/// A role table file as written.
#[derive(Debug, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct File {
    step_marker: Entry,
    comm_kernel: Entry,
    gemm_kernel: Entry,
    allocator: Entry,
    kernel_launch: Entry,
    data_loader: Entry,
    gc: Entry,
    framework_op: Entry,
    online_compile: Entry,
    sync: SyncFile,
    graph: GraphFile,
    pageable_copy: PageableFile,
    host_collective: HostCollectiveFile,
    collective: CollectiveFile,
    op_family: FamilyFile,
}

/// The compiled role tables.
#[derive(Debug, Clone, Default)]
pub struct RoleTable {
    step_prefixes: Vec<Vec<u8>>,
    /// The range the user named the step (`--step-range NAME`): in place of the markers.
    step_range: Option<String>,
    comm_kernel: Patterns,
    gemm_kernel: Patterns,
    allocator: Patterns,
    kernel_launch: Patterns,
    data_loader: Patterns,
    gc: Patterns,
    framework_op: Patterns,
    online_compile: Patterns,
    sync: Keyed<SyncCall>,
    graph: Keyed<GraphCall>,
    pageable: Keyed<PageableCopy>,
    host_collective: Keyed<HostCollective>,
    kernel_prefixes: Vec<String>,
    call_prefixes: Vec<String>,
    ops: Vec<(CollOp, Vec<String>)>,
    op_family: Keyed<OpFamily>,
    /// A checksum of every layer's text and the step range: what a read depended on
    /// (a cached model read with other tables is another model, `modelfile`).
    fingerprint: u32,
}

/// Extends `target` with an entry's patterns (compiled with the entry's case rule).
fn add(target: &mut Patterns, e: &Entry) {
    let (texts, ignore_case) = e.patterns();
    if texts.is_empty() {
        return;
    }
    if target.is_empty() {
        *target = Patterns::new(texts, ignore_case);
    } else {
        target.extend(texts);
    }
}

fn add_keyed<K: PartialEq + Copy>(v: &mut Keyed<K>, key: K, e: &Entry) {
    let (texts, ignore_case) = e.patterns();
    v.add(key, texts, ignore_case);
}

/// The checksum of `tag` and `text` continued from `prev`.
fn crc_after(prev: u32, tag: &[u8], text: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new_with_initial(prev);
    h.update(tag);
    h.update(&(text.len() as u64).to_le_bytes());
    h.update(text);
    h.finalize()
}

/// A collective token as names are compared with it: lowercase letters and digits.
fn normalize(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

impl RoleTable {
    /// The shipped table extended by the user's (`<config dir>/stepscope/roles.toml`).
    pub fn load() -> Result<RoleTable, Error> {
        let mut t = RoleTable::embedded();
        if let Some(layer) = config::user_layer("roles.toml")? {
            t.extend(&layer)?;
        }
        Ok(t)
    }

    /// The table with the step named by a range of this exact name (`--step-range`),
    /// whatever its number, in place of the step markers.
    pub fn with_step_range(mut self, name: &str) -> RoleTable {
        self.step_range = Some(name.to_string());
        self.fingerprint = crc_after(self.fingerprint, b"step-range", name.as_bytes());
        self
    }

    /// A checksum of the tables' layers and step range, equal for equal tables.
    pub fn fingerprint(&self) -> u32 {
        self.fingerprint
    }

    /// The range `--step-range` named, if any.
    pub fn step_range(&self) -> Option<&str> {
        self.step_range.as_deref()
    }

    /// The shipped table alone.
    pub fn embedded() -> RoleTable {
        let mut t = RoleTable::default();
        t.extend(&Layer::embedded("roles.toml", EMBEDDED))
            .expect("the shipped role table is valid");
        t
    }

    /// Adds a table's patterns, prefixes and tokens to these.
    pub fn extend(&mut self, layer: &Layer) -> Result<(), Error> {
        let f: File = toml::from_str(&layer.text).map_err(|e| {
            let line = e.span().map(|s| config::line_of(&layer.text, s.start));
            Error::config(&layer.label, line, e.message().trim())
        })?;
        self.fingerprint = crc_after(self.fingerprint, b"layer", layer.text.as_bytes());
        self.add_step_markers(layer, &f)?;
        add(&mut self.comm_kernel, &f.comm_kernel);
        add(&mut self.gemm_kernel, &f.gemm_kernel);
        add(&mut self.allocator, &f.allocator);
        add(&mut self.kernel_launch, &f.kernel_launch);
        add(&mut self.data_loader, &f.data_loader);
        add(&mut self.gc, &f.gc);
        add(&mut self.framework_op, &f.framework_op);
        add(&mut self.online_compile, &f.online_compile);
        add_keyed(&mut self.sync, SyncCall::Device, &f.sync.device);
        add_keyed(&mut self.sync, SyncCall::Stream, &f.sync.stream);
        add_keyed(&mut self.sync, SyncCall::Query, &f.sync.query);
        add_keyed(&mut self.sync, SyncCall::Implicit, &f.sync.implicit);
        let g = &f.graph;
        for (key, e) in [
            (GraphCall::BeginCapture, &g.begin_capture),
            (GraphCall::EndCapture, &g.end_capture),
            (GraphCall::Launch, &g.launch),
        ] {
            add_keyed(&mut self.graph, key, e);
        }
        let p = &f.pageable_copy;
        for (key, e) in [
            (PageableCopy::HostToDevice, &p.host_to_device),
            (PageableCopy::DeviceToHost, &p.device_to_host),
        ] {
            add_keyed(&mut self.pageable, key, e);
        }
        let h = &f.host_collective;
        for (key, e) in [
            (HostCollective::Enqueue, &h.enqueue),
            (HostCollective::Transfer, &h.transfer),
            (HostCollective::Annotation, &h.annotation),
            (HostCollective::Metadata, &h.metadata),
        ] {
            add_keyed(&mut self.host_collective, key, e);
        }
        self.add_op_families(&f);
        self.add_collectives(layer, f.collective)
    }

    /// Step markers: `PREFIX*` patterns, the step number following the prefix.
    fn add_step_markers(&mut self, layer: &Layer, f: &File) -> Result<(), Error> {
        for p in f.step_marker.patterns().0 {
            let g = pattern::Glob::new(p);
            match g.prefix_only().filter(|_| p.contains('*')) {
                Some(prefix) => self.step_prefixes.push(prefix.to_vec()),
                None => {
                    return Err(config::key_error(
                        layer,
                        "step_marker",
                        format!(
                            "{}: a step marker is `PREFIX*` (the number follows)",
                            crate::format::echo(p)
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Collective kernel and call prefixes, and the tokens naming each operation.
    fn add_collectives(&mut self, layer: &Layer, c: CollectiveFile) -> Result<(), Error> {
        self.kernel_prefixes.extend(c.kernel_prefixes);
        self.call_prefixes.extend(c.call_prefixes);
        for o in c.ops {
            let Some(op) = CollOp::ALL.into_iter().find(|x| x.as_str() == o.op) else {
                return Err(config::key_error(
                    layer,
                    "ops",
                    format!("unknown collective `{}`", o.op),
                ));
            };
            let tokens = o.tokens.iter().map(|t| normalize(t)).collect();
            self.ops.push((op, tokens));
        }
        Ok(())
    }

    /// The roofline's operator families.
    fn add_op_families(&mut self, f: &File) {
        let fam = |family, form| OpFamily { family, form };
        let o = &f.op_family;
        for (key, e) in [
            (fam(Family::Gemm, GemmForm::Plain), &o.gemm),
            (fam(Family::Gemm, GemmForm::BiasFirst), &o.gemm_bias_first),
            (fam(Family::Gemm, GemmForm::Linear), &o.linear),
            (fam(Family::Conv, GemmForm::Plain), &o.conv),
            (fam(Family::Conv, GemmForm::Backward), &o.conv_backward),
            (fam(Family::Attention, GemmForm::Plain), &o.attention),
            (
                fam(Family::Attention, GemmForm::Backward),
                &o.attention_backward,
            ),
            (fam(Family::Norm, GemmForm::Plain), &o.norm),
            (fam(Family::Elementwise, GemmForm::Plain), &o.elementwise),
            (fam(Family::Embedding, GemmForm::Plain), &o.embedding),
        ] {
            add_keyed(&mut self.op_family, key, e);
        }
    }

    /// The step number of a step marker name.
    pub fn step_number(&self, name: &str) -> Option<StepNo> {
        if let Some(r) = &self.step_range {
            // Numbered by occurrence where the steps are found (`steps::find_steps`).
            return (name == r).then_some(StepNo(0));
        }
        self.step_prefixes
            .iter()
            .find_map(|p| name.as_bytes().strip_prefix(p.as_slice()))
            .and_then(|rest| std::str::from_utf8(rest).ok()?.parse().ok())
            .map(StepNo)
    }

    /// True for a communication kernel name.
    pub fn is_comm_kernel(&self, name: &[u8]) -> bool {
        self.comm_kernel.matches(name)
    }

    /// The host-side collective call a name is.
    pub fn host_collective(&self, name: &[u8]) -> Option<HostCollective> {
        self.host_collective.first(name)
    }

    /// The roofline family of an operator name.
    pub fn op_family(&self, name: &[u8]) -> Option<OpFamily> {
        self.op_family.first(name)
    }

    /// The collective a name performs (`Other` when none).
    pub fn collective(&self, name: &str) -> CollOp {
        let token = self
            .kernel_prefixes
            .iter()
            .find_map(|p| name.strip_prefix(p.as_str()))
            .map(|rest| rest.split(['_', '(']).next().unwrap_or(""))
            .or_else(|| {
                self.call_prefixes
                    .iter()
                    .find_map(|p| name.strip_prefix(p.as_str()))
            })
            .unwrap_or(name);
        let s = normalize(token);
        self.ops
            .iter()
            .find(|(_, tokens)| tokens.iter().any(|t| s.contains(t.as_str())))
            .map_or(CollOp::Other, |x| x.0)
    }

    /// Everything one name means.
    pub fn role(&self, name: &str) -> Role {
        let b = name.as_bytes();
        Role {
            step: self.step_number(name),
            sync: self.sync.first(b),
            host_collective: self.host_collective(b),
            comm_kernel: self.is_comm_kernel(b),
            gemm_kernel: self.gemm_kernel.matches(b),
            collective: self.collective(name),
            op_family: self.op_family(b),
            allocator: self.allocator.matches(b),
            pageable: self.pageable.first(b),
            data_loader: self.data_loader.matches(b),
            graph: self.graph.first(b),
            kernel_launch: self.kernel_launch.matches(b),
            gc: self.gc.matches(b),
            framework_op: self.framework_op.matches(b),
            online_compile: self.online_compile.matches(b),
        }
    }

    /// The roles of every interned name, indexed by its symbol.
    pub fn assign(&self, strings: &Interner) -> Vec<Role> {
        let names: Vec<&str> = strings.iter().map(|(_, s)| s).collect();
        names.par_iter().map(|s| self.role(s)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn communication_that_is_not_nccl_is_communication() {
        let t = RoleTable::embedded();
        for (name, op) in [
            (
                "void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*)",
                CollOp::AllToAll,
            ),
            (
                "void deep_ep::internode::combine<true>(int4*)",
                CollOp::AllToAll,
            ),
            (
                "void dpsk::ep::notify_dispatch(int const*)",
                CollOp::AllToAll,
            ),
            (
                "void c10d::symmetric_memory::one_shot_all_reduce_kernel<float, 8>(float**)",
                CollOp::AllReduce,
            ),
            (
                "void multimem_all_reduce_kernel<bf16>(bf16*)",
                CollOp::AllReduce,
            ),
            (
                "void vllm::cross_device_reduce_1stage<half, 8>(vllm::RankData*)",
                CollOp::AllReduce,
            ),
            (
                "void tensorrt_llm::kernels::oneShotAllReduceKernel<half, 8>(AllReduceParams)",
                CollOp::AllReduce,
            ),
            ("nvshmemi_transfer_rma_kernel", CollOp::Other),
        ] {
            let r = t.role(name);
            assert!(r.comm_kernel, "{name}");
            assert_eq!(r.collective, op, "{name}");
        }
        // Ordinary kernels stay compute.
        assert!(
            !t.role("void at::native::dispatch_kernel(float*)")
                .comm_kernel
        );
    }

    #[test]
    fn the_shipped_table_names_vendor_vocabulary() {
        let t = RoleTable::embedded();
        let r = |s: &str| t.role(s);
        assert_eq!(r("ProfilerStep#13").step, Some(StepNo(13)));
        assert_eq!(r("ProfilerStep#x").step, None);
        assert_eq!(r("cudaDeviceSynchronize").sync, Some(SyncCall::Device));
        assert_eq!(r("hipMemcpy").sync, Some(SyncCall::Stream));
        assert_eq!(r("cudaEventQuery").sync, Some(SyncCall::Query));
        assert_eq!(
            r("aten::_local_scalar_dense").sync,
            Some(SyncCall::Implicit)
        );
        assert!(r("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(x)").comm_kernel);
        assert!(r("void foo<ncclKernel_bar>").comm_kernel);
        for g in [
            "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n",
            "nvjet_sm90_tst_128x64_64x8_1x2_h_bz_NNT",
            "void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nt_align1>(x)",
            "Cijk_Ailk_Bljk_HHS_BH",
            "volta_sgemm_128x128_tn",
        ] {
            assert!(r(g).gemm_kernel, "{g}");
        }
        assert!(!r("void at::native::reduce_kernel<128, 4>(x)").gemm_kernel);
        assert!(!r("sm90_xmma_gemm").comm_kernel);
        assert_eq!(
            r("c10d::allreduce_").host_collective,
            Some(HostCollective::Enqueue)
        );
        assert_eq!(
            r("gloo:all_reduce").host_collective,
            Some(HostCollective::Transfer)
        );
        assert_eq!(
            r("record_param_comms").host_collective,
            Some(HostCollective::Metadata)
        );
        assert_eq!(
            r("Memcpy DtoH (Device -> Pageable)").pageable,
            Some(PageableCopy::DeviceToHost)
        );
        assert!(r("GC: gen 2").gc && r("enumerate(DataLoader)#x").data_loader);
        assert!(r("cudaFree").allocator && r("aten::item").framework_op);
        let f = r("aten::addmm").op_family.unwrap();
        assert_eq!((f.family, f.form), (Family::Gemm, GemmForm::BiasFirst));
        assert_eq!(r("aten::mmx").op_family, None);
    }

    #[test]
    fn collectives_from_kernel_call_and_arg_names() {
        let t = RoleTable::embedded();
        for (n, op) in [
            ("allreduce", CollOp::AllReduce),
            ("_allgather_base", CollOp::AllGather),
            ("allgather_into_tensor_coalesced", CollOp::AllGather),
            ("reduce_scatter_tensor", CollOp::ReduceScatter),
            ("all_to_all", CollOp::AllToAll),
            ("alltoall_base", CollOp::AllToAll),
            ("broadcast", CollOp::Broadcast),
            ("send", CollOp::Send),
            ("recv", CollOp::Recv),
            ("reduce", CollOp::Reduce),
            ("barrier", CollOp::Barrier),
            ("scatter", CollOp::Gather),
            ("mystery", CollOp::Other),
            (
                "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
                CollOp::AllReduce,
            ),
            (
                "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*)",
                CollOp::SendRecv,
            ),
            (
                "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)",
                CollOp::SendRecv,
            ),
            (
                "ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclWorkElem)",
                CollOp::Broadcast,
            ),
            (
                "ncclKernel_ReduceScatter_RING_LL_Sum_bf16",
                CollOp::ReduceScatter,
            ),
            ("nccl:all_to_all", CollOp::AllToAll),
            ("gloo:all_reduce", CollOp::AllReduce),
            ("c10d::allreduce_", CollOp::AllReduce),
            ("hcom_allReduce__123_0_1", CollOp::AllReduce),
        ] {
            assert_eq!(t.collective(n), op, "{n}");
        }
    }

    #[test]
    fn a_user_table_adds_to_the_shipped_one_and_bad_ones_name_the_line() {
        let mut t = RoleTable::embedded();
        let user = Layer::embedded(
            "u.toml",
            "comm_kernel = [\"my_allreduce*\"]\n[sync]\nstream = [\"mySync\"]\n",
        );
        t.extend(&user).unwrap();
        assert!(t.role("my_allreduce_kernel").comm_kernel);
        assert!(
            t.role("ncclKernel_x").comm_kernel,
            "the shipped patterns stay"
        );
        assert_eq!(t.role("mySync").sync, Some(SyncCall::Stream));
        let bad = |text: &str| {
            RoleTable::embedded()
                .extend(&Layer::embedded("u.toml", text))
                .unwrap_err()
                .to_string()
        };
        assert!(bad("\n\nsyncc = []\n").starts_with("embedded:u.toml: line 3: "));
        assert!(bad("step_marker = [\"*Step\"]\n").contains("PREFIX*"));
        let e = bad("[collective]\nops = [{ op = \"allreduce\", tokens = [] }]\n");
        assert!(e.contains("unknown collective `allreduce`"), "{e}");
    }
}
