//! Trace Event Format text: a JSON object whose `traceEvents` array is written one event at a
//! time (a 1 000-rank job does not fit a `serde_json::Value` comfortably). Times are exact:
//! integer nanoseconds written as decimal microseconds with three decimals.

use crate::time::Ns;
use std::io::{self, Write};

/// Writes events into an open `traceEvents` array.
pub struct Writer<'a> {
    out: &'a mut dyn Write,
    first: bool,
}

/// `s` as a JSON string (escaped: names are untrusted; control, bidi and invisible
/// characters as `\uXXXX`, as in the JSON report, so the file is safe under `cat`).
pub fn string(s: &str) -> String {
    crate::format::json::to_string(s).expect("a string serializes")
}

/// Nanoseconds as exact decimal microseconds (`-1500` → `-1.500`).
pub fn micros(ns: Ns) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:03}", a / 1000, a % 1000)
}

impl<'a> Writer<'a> {
    /// A writer over `out`.
    pub fn new(out: &'a mut dyn Write) -> Self {
        Writer { out, first: true }
    }

    /// The object's opening, `fields` (top-level `"key": value` lines) and the array's start.
    pub fn open(&mut self, fields: &str) -> io::Result<()> {
        write!(self.out, "{{\n{fields},\n\"traceEvents\": [\n")
    }

    /// A writer of a fragment of the array (written apart, then [`Writer::splice`]d in):
    /// every event of it, the first too, follows a separator.
    pub fn fragment(out: &'a mut dyn Write) -> Self {
        Writer { out, first: false }
    }

    /// Writes a fragment made by a [`Writer::fragment`] writer into this array.
    pub fn splice(&mut self, frag: &[u8]) -> io::Result<()> {
        match frag.strip_prefix(b",\n") {
            Some(rest) if self.first => {
                self.first = false;
                self.out.write_all(rest)
            }
            _ => self.out.write_all(frag),
        }
    }

    /// The array's and the object's end.
    pub fn close(&mut self) -> io::Result<()> {
        self.out.write_all(b"\n]\n}\n")
    }

    fn event(&mut self, body: &str) -> io::Result<()> {
        if !self.first {
            self.out.write_all(b",\n")?;
        }
        self.first = false;
        write!(self.out, "{{{body}}}")
    }

    /// A process's name and sort position.
    pub fn process(&mut self, pid: u64, name: &str, sort: u64) -> io::Result<()> {
        let name = string(name);
        self.event(&format!(
            "\"ph\": \"M\", \"name\": \"process_name\", \"pid\": {pid}, \"tid\": 0, \"args\": {{\"name\": {name}}}"
        ))?;
        self.event(&format!(
            "\"ph\": \"M\", \"name\": \"process_sort_index\", \"pid\": {pid}, \"tid\": 0, \"args\": {{\"sort_index\": {sort}}}"
        ))
    }

    /// A thread's (track's) name and sort position.
    pub fn thread(&mut self, pid: u64, tid: u64, name: &str, sort: u64) -> io::Result<()> {
        let name = string(name);
        self.event(&format!(
            "\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": {pid}, \"tid\": {tid}, \"args\": {{\"name\": {name}}}"
        ))?;
        self.event(&format!(
            "\"ph\": \"M\", \"name\": \"thread_sort_index\", \"pid\": {pid}, \"tid\": {tid}, \"args\": {{\"sort_index\": {sort}}}"
        ))
    }

    /// A complete slice (`ph: X`); `args` is the inside of the args object.
    #[allow(clippy::too_many_arguments)]
    pub fn slice(
        &mut self,
        pid: u64,
        tid: u64,
        name: &str,
        cat: &str,
        start: Ns,
        dur: Ns,
        args: &str,
    ) -> io::Result<()> {
        self.event(&format!(
            "\"ph\": \"X\", \"cat\": \"{cat}\", \"name\": {}, \"pid\": {pid}, \"tid\": {tid}, \"ts\": {}, \"dur\": {}, \"args\": {{{args}}}",
            string(name),
            micros(start),
            micros(dur.max(0))
        ))
    }

    /// A flow arrow of `kind` from (pid, tid, at `from`) to (pid2, tid2, at `to`): `s`
    /// then `f`, each binding to the slice enclosing it.
    pub fn flow(
        &mut self,
        kind: Flow,
        id: u64,
        from: (u64, u64, Ns),
        to: (u64, u64, Ns),
    ) -> io::Result<()> {
        let (cat, name) = kind.names();
        self.event(&format!(
            "\"ph\": \"s\", \"cat\": \"{cat}\", \"name\": \"{name}\", \"id\": {id}, \"pid\": {}, \"tid\": {}, \"ts\": {}",
            from.0,
            from.1,
            micros(from.2)
        ))?;
        self.event(&format!(
            "\"ph\": \"f\", \"bp\": \"e\", \"cat\": \"{cat}\", \"name\": \"{name}\", \"id\": {id}, \"pid\": {}, \"tid\": {}, \"ts\": {}",
            to.0,
            to.1,
            micros(to.2)
        ))
    }
}

/// What a flow arrow joins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// A kernel launch to the device work it launched (Kineto's own `ac2g` arrows).
    Launch,
    /// The critical path passing from one rank to another.
    CriticalPath,
}

impl Flow {
    /// Its category and name, as viewers group arrows by them.
    fn names(self) -> (&'static str, &'static str) {
        match self {
            Flow::Launch => ("ac2g", "ac2g"),
            Flow::CriticalPath => ("stepscope", "critical path"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn micros_are_exact_decimals_of_integer_nanoseconds() {
        assert_eq!(micros(1_234_567), "1234.567");
        assert_eq!(micros(-1500), "-1.500");
        assert_eq!(micros(7), "0.007");
        assert_eq!(micros(i64::MIN), "-9223372036854775.808");
    }
}
