//! How the model's bulky parts are written to bytes (the cache and summary files,
//! docs/cache.md): event columns as little-endian byte runs (a column reads back with one
//! copy, not one call per value), the interner as its strings, a platform by its known name.
//! Every other model type derives serde; these three cannot or must not.

use super::{EventIx, Events, Interner, Kind, Platform, RawSpan};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A value of a column stored as little-endian bytes.
trait Word: bytemuck::Pod {
    /// The value with its bytes in little-endian order (and back: the swap is its own
    /// inverse); nothing on little-endian machines.
    fn le(self) -> Self;
}

macro_rules! word {
    ($($t:ty),*) => {$(
        impl Word for $t {
            fn le(self) -> Self {
                self.to_le()
            }
        }
    )*};
}
word!(i64, u64, u32, u16);

impl Word for EventIx {
    fn le(self) -> Self {
        EventIx(self.0.to_le())
    }
}

/// A column written as one byte run: its memory as it is on little-endian machines.
struct Column<'a, T>(&'a [T]);

impl<T: Word> Serialize for Column<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if cfg!(target_endian = "little") {
            s.serialize_bytes(bytemuck::cast_slice(self.0))
        } else {
            let swapped: Vec<T> = self.0.iter().map(|v| v.le()).collect();
            s.serialize_bytes(bytemuck::cast_slice(&swapped))
        }
    }
}

/// A column of bytes computed per value (kinds, the halves of raw spans).
struct Mapped<'a, T>(&'a [T], fn(&T, &mut Vec<u8>));

impl<T> Serialize for Mapped<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut buf = Vec::with_capacity(self.0.len() * std::mem::size_of::<T>().max(1));
        for v in self.0 {
            (self.1)(v, &mut buf);
        }
        s.serialize_bytes(&buf)
    }
}

/// The values of a byte run; an error when it does not divide into them.
fn values<T: Word, E: serde::de::Error>(bytes: &[u8], what: &str) -> Result<Vec<T>, E> {
    if bytes.len() % std::mem::size_of::<T>() != 0 {
        return Err(E::custom(format!("the {what} column is cut short")));
    }
    let mut v: Vec<T> = bytemuck::pod_collect_to_vec(bytes);
    if cfg!(target_endian = "big") {
        v.iter_mut().for_each(|x| *x = x.le());
    }
    Ok(v)
}

impl Kind {
    /// The kind a stored byte names (`Kind as u8`).
    fn from_byte(b: u8) -> Option<Kind> {
        Kind::ALL.get(b as usize).copied().filter(|k| *k as u8 == b)
    }
}

impl Serialize for Events {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (
            Column(&self.start),
            Column(&self.dur),
            Column(&self.name),
            Column(&self.lane),
            Mapped(&self.kind, |v, b| b.push(*v as u8)),
            Column(&self.step),
            Column(&self.link),
            Column(&self.op),
            Mapped(&self.raw, |v, b| {
                b.extend_from_slice(&v.offset.to_le_bytes())
            }),
            Mapped(&self.raw, |v, b| b.extend_from_slice(&v.len.to_le_bytes())),
        )
            .serialize(s)
    }
}

/// The ten byte runs of [`Events`], borrowed from the input.
type RawColumns<'a> = (
    &'a [u8],
    &'a [u8],
    &'a [u8],
    &'a [u8],
    &'a [u8],
    &'a [u8],
    &'a [u8],
    &'a [u8],
    &'a [u8],
    &'a [u8],
);

impl<'de> Deserialize<'de> for Events {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (start, dur, name, lane, kind, step, link, op, offset, len): RawColumns<'de> =
            Deserialize::deserialize(d)?;
        let kinds = kind
            .iter()
            .map(|&b| Kind::from_byte(b).ok_or_else(|| D::Error::custom("an unknown event kind")))
            .collect::<Result<Vec<Kind>, D::Error>>()?;
        let offsets: Vec<u64> = values(offset, "raw offset")?;
        let lens: Vec<u32> = values(len, "raw length")?;
        if offsets.len() != lens.len() {
            return Err(D::Error::custom("the raw span columns differ in length"));
        }
        // Column lengths are checked with the rest of the model (`modelfile::check`).
        let e = Events {
            start: values(start, "start")?,
            dur: values(dur, "duration")?,
            name: values(name, "name")?,
            lane: values(lane, "lane")?,
            kind: kinds,
            step: values(step, "step")?,
            link: values(link, "link")?,
            op: values(op, "operator")?,
            raw: offsets
                .into_iter()
                .zip(lens)
                .map(|(offset, len)| RawSpan { offset, len })
                .collect(),
        };
        Ok(e)
    }
}

impl Serialize for Interner {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let strings: Vec<&str> = self.iter().map(|(_, s)| s).collect();
        (strings, self.cut_count()).serialize(s)
    }
}

impl<'de> Deserialize<'de> for Interner {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (strings, cut): (Vec<&'de str>, u64) = Deserialize::deserialize(d)?;
        Interner::from_strings(strings, cut)
            .ok_or_else(|| D::Error::custom("a name table with a name twice or one too long"))
    }
}

/// Every platform a reader sets, by name: a stored platform names one of them.
const PLATFORMS: [(&str, Platform); 2] = [
    ("kineto", Platform::KINETO),
    ("ascend", crate::model::Platform::ASCEND),
];

impl Serialize for Platform {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // The links name the platform; the node-devices flag varies within one (nsys).
        let name = PLATFORMS
            .iter()
            .find(|(_, p)| p.default_links == self.default_links && p.fused_apis == self.fused_apis)
            .map(|(n, _)| *n)
            .ok_or_else(|| serde::ser::Error::custom("a platform with no name"))?;
        (name, self.lists_node_devices).serialize(s)
    }
}

impl<'de> Deserialize<'de> for Platform {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (name, lists_node_devices): (&'de str, bool) = Deserialize::deserialize(d)?;
        let (_, p) = PLATFORMS
            .iter()
            .find(|(n, _)| *n == name)
            .ok_or_else(|| D::Error::custom("an unknown platform"))?;
        Ok(Platform {
            lists_node_devices,
            ..*p
        })
    }
}
