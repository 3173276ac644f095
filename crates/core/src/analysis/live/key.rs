//! Which series a step record belongs to: its source, its rank, its host (a pdsh or DeepSpeed
//! launcher's `worker-3: ` when lines carry no rank: hosts interleaved in one stream are
//! separate series, not one series whose steps go back and forth), and its format.

/// The key of one series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct SeriesKey {
    /// The source (file or stdin) index.
    pub source: usize,
    /// The rank a prefix or file name gave.
    pub rank: Option<u32>,
    /// The host a prefix gave, as an index into [`Hosts`].
    pub host: Option<u32>,
    /// The recogniser.
    pub format: &'static str,
}

/// Hosts seen, interned (bounded: a stream naming more is read without them).
#[derive(Debug, Default)]
pub(super) struct Hosts {
    names: Vec<String>,
}

/// The most hosts kept apart.
pub(super) const MAX_HOSTS: usize = 4096;

impl Hosts {
    /// The index of `name`, interned on first sight (`None` past [`MAX_HOSTS`]).
    pub(super) fn id(&mut self, name: Option<&str>) -> Option<u32> {
        let name = name?;
        if let Some(i) = self.names.iter().position(|n| n == name) {
            return u32::try_from(i).ok();
        }
        if self.names.len() >= MAX_HOSTS {
            return None;
        }
        self.names.push(name.to_string());
        u32::try_from(self.names.len() - 1).ok()
    }

    /// The name of host `id`.
    pub(super) fn name(&self, id: Option<u32>) -> Option<&str> {
        self.names.get(id? as usize).map(String::as_str)
    }

    /// Puts host `id`'s name on `alerts` (none for a series without a host).
    pub(super) fn name_on(&self, id: Option<u32>, alerts: &mut [super::Alert]) {
        if let Some(h) = self.name(id) {
            for a in alerts {
                a.hosts = vec![h.to_string()];
            }
        }
    }
}
