//! The top-level keys of a Kineto trace besides `traceEvents`: `distributedInfo` (rank,
//! world size, process groups), `deviceProperties` (device names) and
//! `baseTimeNanoseconds` (the epoch of relative timestamps); `nodes` marks a PyTorch
//! Execution Trace given in place of the Kineto trace.

use crate::error::Error;
use crate::model::{ProcessGroup, RankId};
use crate::time::{Ns, nanos_text_to_ns};
use serde_json::value::RawValue;

/// What the header says.
#[derive(Debug, Default)]
pub(super) struct Header {
    /// `distributedInfo` as JSON, when present.
    pub distributed: Option<serde_json::Value>,
    /// `deviceProperties[].name`.
    pub device_names: Vec<String>,
    /// `baseTimeNanoseconds`: the time base that relative `ts` values are added to.
    pub base_ns: Option<Ns>,
    /// A `nodes` key: the file is an Execution Trace.
    pub execution_trace: bool,
}

impl Header {
    /// Reads one top-level value (`at`: its byte offset, for errors).
    pub(super) fn read(
        &mut self,
        label: &str,
        key: &str,
        at: usize,
        raw: &RawValue,
    ) -> Result<(), Error> {
        let json = || {
            serde_json::from_str::<serde_json::Value>(raw.get())
                .map_err(|e| Error::input_at(label, at as u64, e.to_string()))
        };
        match key {
            "distributedInfo" => self.distributed = Some(json()?),
            "deviceProperties" => {
                self.device_names = device_names(&json()?).ok_or_else(|| {
                    Error::input_at(label, at as u64, "`deviceProperties` is not a list")
                })?;
            }
            "baseTimeNanoseconds" => {
                let ns = nanos_text_to_ns(raw.get().as_bytes()).map_err(|e| {
                    Error::input_at(label, at as u64, format!("`baseTimeNanoseconds`: {e}"))
                })?;
                self.base_ns = Some(ns);
            }
            "nodes" => self.execution_trace = true,
            _ => {}
        }
        Ok(())
    }

    /// Why a document without `traceEvents` is not a trace.
    pub(super) fn not_a_trace(&self) -> &'static str {
        if self.execution_trace {
            "a PyTorch Execution Trace (`nodes`), not a Kineto trace: give the Kineto trace of the run"
        } else {
            "no `traceEvents` array: not a Kineto/Chrome trace"
        }
    }

    /// A `distributedInfo` integer (`rank`, `world_size`), also when written as a string.
    pub(super) fn distributed_u32(&self, key: &str) -> Option<u32> {
        self.distributed
            .as_ref()
            .and_then(|d| d.get(key))
            .and_then(|v| {
                v.as_u64()
                    .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
            })
            .and_then(|v| u32::try_from(v).ok())
    }

    /// The declared process groups.
    pub(super) fn groups(&self) -> Vec<ProcessGroup> {
        self.distributed
            .as_ref()
            .map(process_groups)
            .unwrap_or_default()
    }
}

fn device_names(props: &serde_json::Value) -> Option<Vec<String>> {
    let list = props.as_array()?;
    Some(
        list.iter()
            .filter_map(|d| d.get("name").and_then(|n| n.as_str()).map(str::to_string))
            .collect(),
    )
}

/// `pg_config` entries; entries without a name or with non-integer ranks are left out.
fn process_groups(dist: &serde_json::Value) -> Vec<ProcessGroup> {
    let Some(list) = dist.get("pg_config").and_then(|v| v.as_array()) else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|pg| {
            let name = match pg.get("pg_name")? {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let ranks = pg
                .get("ranks")?
                .as_array()?
                .iter()
                .map(|r| r.as_u64().and_then(|r| u32::try_from(r).ok()).map(RankId))
                .collect::<Option<Vec<RankId>>>()?;
            let description = pg
                .get("pg_desc")
                .and_then(|d| d.as_str())
                .unwrap_or("")
                .to_string();
            Some(ProcessGroup {
                name,
                description,
                ranks,
            })
        })
        .collect()
}
