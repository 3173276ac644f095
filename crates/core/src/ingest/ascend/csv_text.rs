//! Positions in the profiler's CSV files for error messages. Lines are counted from the
//! text itself: the csv crate's own line numbers run one short per record in CRLF files
//! (which Ascend exports write), and an error must name the line an editor shows.

use crate::error::{Error, Position};

/// Line numbers of byte offsets in one text, counted forward incrementally (records are
/// visited in order).
pub(crate) struct Lines<'a> {
    text: &'a [u8],
    at: usize,
    line: u32,
}

impl<'a> Lines<'a> {
    /// Counting from the start of `text`.
    pub(crate) fn new(text: &'a [u8]) -> Lines<'a> {
        Lines {
            text,
            at: 0,
            line: 1,
        }
    }

    /// The line of the record the csv crate places at `byte`: in a CRLF file it places a
    /// record at the `\n` ending the line before, so line ends there are skipped.
    pub(crate) fn record(&mut self, byte: u64) -> u32 {
        let ends = self.text[(byte as usize).min(self.text.len())..]
            .iter()
            .take_while(|&&b| b == b'\r' || b == b'\n')
            .count();
        self.at(byte + ends as u64)
    }

    /// The 1-based line of byte offset `byte`.
    pub(crate) fn at(&mut self, byte: u64) -> u32 {
        let byte = (byte as usize).min(self.text.len());
        if byte < self.at {
            (self.at, self.line) = (0, 1);
        }
        let newlines = self.text[self.at..byte].iter().filter(|&&b| b == b'\n');
        self.line += newlines.count() as u32;
        self.at = byte;
        self.line
    }
}

/// A CSV reader over `bytes` and its header names, trimmed (torch_npu's files are read by
/// header name: columns move between versions).
pub(crate) fn with_header<'a>(
    label: &str,
    bytes: &'a [u8],
) -> Result<(csv::Reader<&'a [u8]>, Vec<String>), Error> {
    let mut r = csv::ReaderBuilder::new().from_reader(bytes);
    let header = r
        .headers()
        .map_err(|e| csv_error(label, bytes, &e))?
        .iter()
        .map(|h| h.trim().to_string())
        .collect();
    Ok((r, header))
}

/// A CSV error of the file `label` (whose text is `text`) as a one-line input error at its
/// line.
pub(crate) fn csv_error(label: &str, text: &[u8], e: &csv::Error) -> Error {
    let msg = match e.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!("{len} fields where the header has {expected_len} (a truncated file?)"),
        csv::ErrorKind::Utf8 { .. } => "not UTF-8 text".to_string(),
        _ => e.to_string(),
    };
    match e.position() {
        Some(p) => Error::input_pos(
            label,
            Position::Line(Lines::new(text).record(p.byte())),
            msg,
        ),
        None => Error::input(label, msg),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_count_newlines_whatever_the_line_end() {
        let t = b"a,b\r\n1,2\r\n3,4\n5,6";
        let mut l = Lines::new(t);
        assert_eq!((l.at(0), l.at(5), l.at(10), l.at(14)), (1, 2, 3, 4));
        // Going back starts over.
        assert_eq!(l.at(5), 2);
        let mut r = csv::ReaderBuilder::new().from_reader(&t[..]);
        let lines: Vec<u32> = r
            .records()
            .map(|x| Lines::new(t).record(x.unwrap().position().unwrap().byte()))
            .collect();
        assert_eq!(lines, [2, 3, 4]);
    }
}
