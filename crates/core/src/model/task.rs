//! What an accelerator's own kernel table says of a device task (Ascend `kernel_details.csv`
//! or the db's `COMPUTE_TASK_INFO` and `TASK_PMU_INFO`): the unit it ran on, the operator
//! type, whether it was compiled for dynamic shapes, and the PMU's pipe utilization.

use super::{EventIx, Sym};

/// One device task's details, attached to its event.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TaskDetail {
    /// The device event (a compute task on an NPU stream).
    pub event: EventIx,
    /// The operator type (`MatMulV2`, `TransData`).
    pub op_type: Option<Sym>,
    /// The unit that ran it; `None` when not recorded (Level0 writes `N/A`).
    pub core: Option<Core>,
    /// Compiled for dynamic shapes (`OP State` = `dynamic`); `None` when not recorded.
    pub dynamic: Option<bool>,
    /// Cores it was spread over (`Block Dim`).
    pub block_dim: Option<u32>,
    /// `Input Shapes` as written (`32,3,224,224;64`), interned.
    pub input_shapes: Option<Sym>,
    /// `Input Data Types` as written (`DT_BF16;DT_BF16`), interned.
    pub input_types: Option<Sym>,
    /// Pipe utilization of the cube unit (`aic_*_ratio`), when it ran there.
    pub cube: Option<Pipes>,
    /// Pipe utilization of the vector unit (`aiv_*_ratio`), when it ran there.
    pub vector: Option<Pipes>,
}

/// The accelerator unit a task ran on (`Accelerator Core` / `taskType`).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
pub enum Core {
    /// `AI_CORE`: the cube (matrix) unit.
    AiCore,
    /// `AI_VECTOR_CORE`.
    AiVector,
    /// `MIX_AIC`: a fused cube + vector task led by the cube.
    MixAic,
    /// `MIX_AIV`: a fused task led by the vector unit.
    MixAiv,
    /// `AI_CPU`: the device's general-purpose cores (slow: a fallback).
    AiCpu,
    /// `HCCL` / `COMMUNICATION`.
    Communication,
    /// `DSA_SQE`, `SDMA_SQE` and other engines.
    #[default]
    Other,
}

impl Core {
    /// The unit of an `Accelerator Core` / `taskType` value.
    pub fn parse(s: &str) -> Core {
        match s {
            "AI_CORE" => Core::AiCore,
            "AI_VECTOR_CORE" => Core::AiVector,
            "MIX_AIC" => Core::MixAic,
            "MIX_AIV" => Core::MixAiv,
            "AI_CPU" => Core::AiCpu,
            "HCCL" | "COMMUNICATION" => Core::Communication,
            _ => Core::Other,
        }
    }

    /// A short name for narrow tables (`AIC`, `AIV`, `MIX_AIV` …).
    pub fn short(self) -> &'static str {
        match self {
            Core::AiCore => "AIC",
            Core::AiVector => "AIV",
            other => other.as_str(),
        }
    }

    /// The profiler's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Core::AiCore => "AI_CORE",
            Core::AiVector => "AI_VECTOR_CORE",
            Core::MixAic => "MIX_AIC",
            Core::MixAiv => "MIX_AIV",
            Core::AiCpu => "AI_CPU",
            Core::Communication => "HCCL",
            Core::Other => "other",
        }
    }
}

/// A pipe of an AI Core unit, as the PMU's `*_ratio` columns name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Pipe {
    /// Cube multiply-accumulate (`mac`).
    Mac,
    /// Vector arithmetic (`vec`).
    Vec,
    /// Scalar control flow and address arithmetic.
    Scalar,
    /// MTE1: L1 → L0A/L0B (on-chip).
    Mte1,
    /// MTE2: global memory → L1/UB (HBM reads).
    Mte2,
    /// MTE3: UB → global memory (HBM writes).
    Mte3,
    /// Fixpipe: L0C → global memory / L1 (results out of the cube).
    Fixpipe,
}

impl Pipe {
    /// Every pipe, in column order.
    pub const ALL: [Pipe; 7] = [
        Pipe::Mac,
        Pipe::Vec,
        Pipe::Scalar,
        Pipe::Mte1,
        Pipe::Mte2,
        Pipe::Mte3,
        Pipe::Fixpipe,
    ];

    /// The column stem (`aic_<stem>_ratio`).
    pub fn as_str(self) -> &'static str {
        match self {
            Pipe::Mac => "mac",
            Pipe::Vec => "vec",
            Pipe::Scalar => "scalar",
            Pipe::Mte1 => "mte1",
            Pipe::Mte2 => "mte2",
            Pipe::Mte3 => "mte3",
            Pipe::Fixpipe => "fixpipe",
        }
    }

    /// Arithmetic pipes (the rest move data, or are scalar control).
    pub fn is_compute(self) -> bool {
        matches!(self, Pipe::Mac | Pipe::Vec)
    }

    /// Data-movement pipes.
    pub fn is_memory(self) -> bool {
        matches!(self, Pipe::Mte1 | Pipe::Mte2 | Pipe::Mte3 | Pipe::Fixpipe)
    }
}

/// The busy share of each pipe of one unit over the task (0–1; absent pipes 0).
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Pipes(pub [f32; 7]);

impl Pipes {
    /// One pipe's ratio.
    pub fn get(&self, p: Pipe) -> f32 {
        self.0[p as usize]
    }

    /// Sets one pipe's ratio.
    pub fn set(&mut self, p: Pipe, ratio: f32) {
        self.0[p as usize] = ratio;
    }

    /// The busiest pipe and its ratio (ties: the earlier pipe).
    pub fn busiest(&self) -> (Pipe, f32) {
        Pipe::ALL
            .iter()
            .map(|&p| (p, self.get(p)))
            .fold((Pipe::Mac, f32::MIN), |b, x| if x.1 > b.1 { x } else { b })
    }
}
