//! The few small JSON objects of a large trace text that hold a given text (a category, a
//! counter's name): what the Ascend reader reads again beside the Chrome reader, which only
//! counts flows and counters. Each object is found from its match: back to the nearest `{`,
//! then forward to its matching `}`.

use memchr::memmem;

/// The innermost objects around each occurrence of `needle`, in text order.
pub fn holding<'a>(text: &'a [u8], needle: &'a [u8]) -> impl Iterator<Item = &'a [u8]> + 'a {
    memmem::find_iter(text, needle).filter_map(move |at| {
        let open = memchr::memrchr(b'{', &text[..at])?;
        Some(&text[open..object_end(text, open)?])
    })
}

/// The end (one past the `}`) of the JSON object starting at `open`, strings respected.
fn object_end(text: &[u8], open: usize) -> Option<usize> {
    let (mut depth, mut in_string, mut escaped) = (0u32, false, false);
    for (i, &b) in text.iter().enumerate().skip(open) {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' => depth += 1,
            b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_end_at_their_own_brace() {
        assert_eq!(
            object_end(br#"{"a": "}", "b": {"c": 1}} tail"#, 0),
            Some(25)
        );
        assert_eq!(object_end(br#"{"a": "\"}"#, 0), None);
        let text = br#"[{"cat": "x", "id": 1}, {"id": 2, "cat": "x"}]"#;
        let found: Vec<&[u8]> = holding(text, b"\"x\"").collect();
        assert_eq!(
            found,
            [
                &br#"{"cat": "x", "id": 1}"#[..],
                &br#"{"id": 2, "cat": "x"}"#[..]
            ]
        );
    }
}
