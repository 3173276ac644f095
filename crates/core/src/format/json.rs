//! JSON output for terminals: serde_json's own output, with every character that is valid in
//! JSON but unsafe under `cat` ([`json_unsafe`]: C1 controls, bidi overrides, zero-width and
//! byte-order marks) written as a `\uXXXX` escape. A JSON reader gets the same strings back.

use super::json_unsafe;
use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};
use std::io::{self, Write};

/// A formatter that escapes [`json_unsafe`] characters and leaves layout to `F`.
struct Escaping<F>(F);

/// `value` as indented JSON, terminal-safe.
pub fn to_string_pretty<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    write(value, PrettyFormatter::new())
}

/// `value` as one line of JSON (JSON lines), terminal-safe.
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    write(value, CompactFormatter)
}

fn write<T: Serialize + ?Sized, F: Formatter>(value: &T, f: F) -> serde_json::Result<String> {
    let mut out = Vec::with_capacity(256);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Escaping(f));
    value.serialize(&mut ser)?;
    // serde_json writes UTF-8 only, and escapes only replace whole characters.
    Ok(String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into()))
}

impl<F: Formatter> Formatter for Escaping<F> {
    fn write_string_fragment<W: ?Sized + Write>(&mut self, w: &mut W, s: &str) -> io::Result<()> {
        // Every unsafe character but DEL is outside ASCII: most strings are checked in one pass.
        if s.is_ascii() && !s.as_bytes().contains(&0x7f) {
            return w.write_all(s.as_bytes());
        }
        let mut rest = s;
        while let Some(at) = rest.find(json_unsafe) {
            w.write_all(&rest.as_bytes()[..at])?;
            let c = rest[at..].chars().next().unwrap_or_default();
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                write!(w, "\\u{u:04x}")?;
            }
            rest = &rest[at + c.len_utf8()..];
        }
        w.write_all(rest.as_bytes())
    }
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn end_object_key<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_key(w)
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_value(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_characters_are_escaped_and_read_back_unchanged() {
        let name = "evil\u{1b}[2J\u{9b}31m\u{202e}txt\u{200b}\u{feff}\u{e0041}µ步\u{7f}";
        let v = serde_json::json!({ "name": name, "list": [1, "a\u{2028}b"] });
        for s in [to_string(&v).unwrap(), to_string_pretty(&v).unwrap()] {
            let raw = |c: char| c.is_control() && c != '\n' || super::super::invisible(c);
            assert!(!s.contains(raw), "{s}");
            assert!(
                s.contains(r"evil\u001b[2J\u009b31m\u202etxt\u200b\ufeff\udb40\udc41µ步\u007f"),
                "{s}"
            );
            let back: serde_json::Value = serde_json::from_str(&s).unwrap();
            assert_eq!(back, v);
        }
        assert_eq!(to_string(&v).unwrap().lines().count(), 1);
        // An ASCII string whose one unsafe byte is DEL (issue 44: written raw before).
        assert_eq!(to_string(&"a\u{7f}b").unwrap(), r#""a\u007fb""#);
    }
}
