//! Borrowed serde views of one Chrome-trace event: strings stay slices of the input unless they
//! contain escapes, numbers stay text until converted exactly, and of `args` only the few keys
//! the model needs are read (the rest are skipped, to be parsed on demand later).

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// A JSON string as raw bytes: borrowed when it has no escapes. UTF-8 is not checked here;
/// names are decoded (lossily, with a warning) once per distinct name when interned.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Str<'a>(pub Cow<'a, [u8]>);

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_bytes<E: de::Error>(self, v: &'de [u8]) -> Result<Self::Value, E> {
                Ok(Str(Cow::Borrowed(v)))
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Self::Value, E> {
                Ok(Str(Cow::Owned(v.to_vec())))
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Str(Cow::Borrowed(v.as_bytes())))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Str(Cow::Owned(v.as_bytes().to_vec())))
            }
        }
        d.deserialize_bytes(V)
    }
}

impl Str<'_> {
    /// An owned copy, to outlive the input buffer.
    pub(crate) fn into_owned(self) -> Str<'static> {
        Str(Cow::Owned(self.0.into_owned()))
    }
}

/// A `pid`/`tid`: an integer, or a string (`"Spans"`, `""`, AMD's `"0x0"`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Id<'a> {
    /// Integer id.
    Int(i64),
    /// String id (also integers beyond i64, kept as their text).
    Text(Cow<'a, [u8]>),
}

impl Id<'_> {
    /// An owned copy, to outlive the input buffer.
    pub(crate) fn into_owned(self) -> Id<'static> {
        match self {
            Id::Int(i) => Id::Int(i),
            Id::Text(t) => Id::Text(Cow::Owned(t.into_owned())),
        }
    }

    /// Display text of the id.
    pub(crate) fn text(&self) -> String {
        match self {
            Id::Int(i) => i.to_string(),
            Id::Text(t) => String::from_utf8_lossy(t).into_owned(),
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Id<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Id<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an integer or string id")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(Id::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(match i64::try_from(v) {
                    Ok(i) => Id::Int(i),
                    Err(_) => Id::Text(Cow::Owned(v.to_string().into_bytes())),
                })
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Ok(Id::Text(Cow::Owned(v.to_string().into_bytes())))
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Id::Text(Cow::Borrowed(v.as_bytes())))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Id::Text(Cow::Owned(v.as_bytes().to_vec())))
            }
            fn visit_borrowed_bytes<E: de::Error>(self, v: &'de [u8]) -> Result<Self::Value, E> {
                Ok(Id::Text(Cow::Borrowed(v)))
            }
        }
        d.deserialize_any(V)
    }
}

/// A link id (`correlation`, `External id`): unsigned 64-bit, since real traces carry ids
/// beyond i64. Negative values (HTA writes -1) and non-numeric strings mean "none"; a
/// number beyond u64 is an error, never a silently wrong link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LinkId(pub Option<u64>);

impl<'de> Deserialize<'de> for LinkId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LinkId;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an integer id")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(LinkId(Some(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(LinkId(u64::try_from(v).ok()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                if v.fract() == 0.0 && v >= 0.0 && v < u64::MAX as f64 {
                    Ok(LinkId(Some(v as u64)))
                } else if v < 0.0 {
                    Ok(LinkId(None))
                } else {
                    Err(E::custom(format!("id {v} does not fit in 64 bits")))
                }
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(LinkId(v.trim().parse().ok()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(LinkId(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// The `args` keys the model reads at load time; everything else is skipped.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Args<'a> {
    /// `correlation`: pairs a runtime call with the device activity it launched.
    pub correlation: Option<u64>,
    /// `External id` (or the oldest format's `external id`): ties calls and kernels to a `cpu_op`.
    pub external_id: Option<u64>,
    /// A `Collective name` key is present (collective metadata on a kernel).
    pub collective: bool,
    /// `name` (metadata events: process and thread names).
    pub name: Option<Str<'a>>,
    /// `labels` (metadata `process_labels`: `"CPU"`, `"GPU 0"`).
    pub labels: Option<Str<'a>>,
    /// `Task Type` (Ascend device tasks: `AI_CORE`, `SDMA`, `Notify Wait`, ...) or `task type`
    /// (HCCL plane tasks): what an Ascend device event is.
    pub task_type: Option<Str<'a>>,
    /// Operator args (collective metadata of NCCL kernels and `record_param_comms`, shapes
    /// of operators), boxed: few events carry them.
    pub op: Option<Box<OpArgs<'a>>>,
}

/// The operator args PyTorch profilers write (`torch/csrc/profiler/util.h`; Kineto and
/// torch_npu alike): collective metadata and operator shapes. Which events keep them, and as
/// what, is the dialect's business.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct OpArgs<'a> {
    /// `Collective name` (`allreduce`, `broadcast`, ...).
    pub name: Option<Str<'a>>,
    /// `In msg nelems`.
    pub in_nelems: Option<u64>,
    /// `Out msg nelems`.
    pub out_nelems: Option<u64>,
    /// `dtype` (`Float`, `BFloat16`, ...).
    pub dtype: Option<Str<'a>>,
    /// `Process Group Name` (matches `distributedInfo.pg_config[].pg_name`).
    pub group: Option<Str<'a>>,
    /// `Process Group Ranks`: a string such as `"[0, 1]"`.
    pub group_ranks: Option<Str<'a>>,
    /// `Group size`.
    pub group_size: Option<u64>,
    /// `Seq`: the collective's sequence number in its group (newer PyTorch).
    pub seq: Option<u64>,
    /// `Src Rank` of a point-to-point receive (rank within the group).
    pub src_rank: Option<u64>,
    /// `Dst Rank` of a point-to-point send (rank within the group).
    pub dst_rank: Option<u64>,
    /// `Input Dims` as written (gloo annotations and c10d ops carry their sizes only here):
    /// Kineto's JSON list, or torch_npu's string (`"32,3,224,224;\r\n64;\r\n;"`, unescaped).
    pub input_dims: Option<Str<'a>>,
    /// `Input type` as written (`["float"]`; torch_npu: `"float;\r\nScalar"`).
    pub input_type: Option<Str<'a>>,
    /// `flops` (profiles recorded `with_flops=True`).
    pub flops: Option<u64>,
}

impl OpArgs<'_> {
    /// An owned copy, to outlive the input buffer.
    pub(crate) fn into_owned(self) -> OpArgs<'static> {
        let own = |s: Option<Str<'_>>| s.map(Str::into_owned);
        OpArgs {
            name: own(self.name),
            in_nelems: self.in_nelems,
            out_nelems: self.out_nelems,
            dtype: own(self.dtype),
            group: own(self.group),
            group_ranks: own(self.group_ranks),
            group_size: self.group_size,
            seq: self.seq,
            src_rank: self.src_rank,
            dst_rank: self.dst_rank,
            input_dims: own(self.input_dims),
            input_type: own(self.input_type),
            flops: self.flops,
        }
    }

    /// True when a collective metadata key (not just operator sizes) was read.
    pub(crate) fn has_metadata(&self) -> bool {
        self.name.is_some()
            || self.in_nelems.is_some()
            || self.out_nelems.is_some()
            || self.dtype.is_some()
            || self.group.is_some()
            || self.group_ranks.is_some()
            || self.group_size.is_some()
            || self.seq.is_some()
            || self.src_rank.is_some()
            || self.dst_rank.is_some()
    }
}

/// One operator arg key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ArgKey {
    Name,
    InNelems,
    OutNelems,
    Dtype,
    Group,
    GroupRanks,
    GroupSize,
    Seq,
    SrcRank,
    DstRank,
    InputDims,
    InputType,
    Flops,
}

impl ArgKey {
    /// The operator arg an `args` key names, if any.
    pub(crate) fn of(key: &[u8]) -> Option<ArgKey> {
        Some(match key {
            b"Collective name" => ArgKey::Name,
            b"In msg nelems" => ArgKey::InNelems,
            b"Out msg nelems" => ArgKey::OutNelems,
            b"dtype" => ArgKey::Dtype,
            b"Process Group Name" => ArgKey::Group,
            b"Process Group Ranks" => ArgKey::GroupRanks,
            b"Group size" => ArgKey::GroupSize,
            b"Seq" => ArgKey::Seq,
            b"Src Rank" => ArgKey::SrcRank,
            b"Dst Rank" => ArgKey::DstRank,
            b"Input Dims" => ArgKey::InputDims,
            b"Input type" => ArgKey::InputType,
            b"flops" => ArgKey::Flops,
            _ => return None,
        })
    }
}

/// An operator arg value as both parsers see it: a string's contents, a number's text, or
/// anything else (ignored).
pub(crate) enum Loose<'a> {
    /// A string (unescaped contents).
    Text(Str<'a>),
    /// A number, as written.
    Number(&'a [u8]),
    /// An object, array, boolean or null, as written.
    Other(&'a [u8]),
}

impl<'a> Args<'a> {
    /// Records one operator arg; text keys take numbers as their text, integer keys take
    /// only integers that fit in u64.
    pub(crate) fn set_op_arg(&mut self, key: ArgKey, v: Loose<'a>) {
        if key == ArgKey::Name {
            self.collective = true;
        }
        let c = self.op.get_or_insert_with(Default::default);
        let text = |v: Loose<'a>| match v {
            Loose::Text(s) => Some(s),
            Loose::Number(n) => Some(Str(Cow::Borrowed(n))),
            Loose::Other(_) => None,
        };
        let int = |v: &Loose<'a>| match v {
            Loose::Number(n) => std::str::from_utf8(n).ok()?.parse::<u64>().ok(),
            _ => None,
        };
        match key {
            ArgKey::Name => c.name = text(v),
            ArgKey::Dtype => c.dtype = text(v),
            ArgKey::Group => c.group = text(v),
            ArgKey::GroupRanks => c.group_ranks = text(v),
            ArgKey::InNelems => c.in_nelems = int(&v),
            ArgKey::OutNelems => c.out_nelems = int(&v),
            ArgKey::GroupSize => c.group_size = int(&v),
            ArgKey::Seq => c.seq = int(&v),
            ArgKey::SrcRank => c.src_rank = int(&v),
            ArgKey::DstRank => c.dst_rank = int(&v),
            ArgKey::Flops => c.flops = int(&v),
            ArgKey::InputDims | ArgKey::InputType => {
                let raw = match v {
                    Loose::Other(t) => Some(Str(Cow::Borrowed(t))),
                    Loose::Text(s) => Some(s),
                    Loose::Number(_) => None,
                };
                if key == ArgKey::InputDims {
                    c.input_dims = raw
                } else {
                    c.input_type = raw
                }
            }
        }
    }
}

/// Interprets a raw JSON value for [`Args::set_op_arg`].
fn loose(v: &RawValue) -> Loose<'_> {
    let t = v.get();
    match t.as_bytes().first() {
        Some(b'"') => {
            serde_json::from_str::<Str>(t).map_or(Loose::Other(t.as_bytes()), Loose::Text)
        }
        Some(b'-' | b'0'..=b'9') => Loose::Number(t.as_bytes()),
        _ => Loose::Other(t.as_bytes()),
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Args<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Args<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an args object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> Result<Self::Value, M::Error> {
                let mut a = Args::default();
                while let Some(key) = m.next_key::<Str<'de>>()? {
                    match &*key.0 {
                        // Ascend's `connection_id` plays correlation's part: it pairs a
                        // CANN call with the device tasks it launched.
                        b"correlation" | b"connection_id" => {
                            a.correlation = m.next_value::<LinkId>()?.0
                        }
                        b"Task Type" | b"task type" => {
                            a.task_type = string_only(m.next_value::<&'de RawValue>()?)
                        }
                        b"External id" | b"external id" => {
                            a.external_id = m.next_value::<LinkId>()?.0
                        }
                        b"name" => a.name = string_only(m.next_value::<&'de RawValue>()?),
                        b"labels" => a.labels = string_only(m.next_value::<&'de RawValue>()?),
                        k => match ArgKey::of(k) {
                            Some(ck) => a.set_op_arg(ck, loose(m.next_value::<&'de RawValue>()?)),
                            None => {
                                m.next_value::<IgnoredAny>()?;
                            }
                        },
                    }
                }
                Ok(a)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Args::default())
            }
        }
        d.deserialize_any(V)
    }
}

/// The text of a JSON number (or of a quoted string holding one), converted exactly later.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NumText<'a>(pub &'a [u8]);

impl<'de: 'a, 'a> Deserialize<'de> for NumText<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = <&'de RawValue>::deserialize(d)?;
        Ok(NumText(raw.get().as_bytes()))
    }
}

/// The string inside a raw JSON value, or `None` when the value is not a string.
fn string_only(v: &RawValue) -> Option<Str<'_>> {
    let text = v.get();
    if text.starts_with('"') {
        serde_json::from_str::<Str>(text).ok()
    } else {
        None
    }
}

/// One trace event, borrowed from the input. Unknown keys (`id`, `s`, `bp`, ...) are skipped.
#[derive(Debug, Default, PartialEq, Eq, serde::Deserialize)]
pub(crate) struct RawEvent<'a> {
    /// Phase: `X`, `M`, `i`, `s`, `f`, ...
    #[serde(default, borrow)]
    pub ph: Option<Str<'a>>,
    /// Category (`kernel`, `cpu_op`, ...).
    #[serde(default, borrow)]
    pub cat: Option<Str<'a>>,
    /// Event name.
    #[serde(default, borrow)]
    pub name: Option<Str<'a>>,
    /// Process id (device index on the GPU side).
    #[serde(default, borrow)]
    pub pid: Option<Id<'a>>,
    /// Thread id (stream on the GPU side).
    #[serde(default, borrow)]
    pub tid: Option<Id<'a>>,
    /// Start, decimal µs as text.
    #[serde(default, borrow)]
    pub ts: Option<NumText<'a>>,
    /// Duration, decimal µs as text.
    #[serde(default, borrow)]
    pub dur: Option<NumText<'a>>,
    /// Arguments (only a few keys are read here).
    #[serde(default, borrow)]
    pub args: Option<Args<'a>>,
}
