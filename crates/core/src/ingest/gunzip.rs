//! Whole-buffer gzip inflate with libdeflate: about 1.7× flate2's zlib-rs on traces
//! (BENCHMARKS.md, "gzip"). It needs the output's room up front, which the trailer's ISIZE
//! gives for one member under 4 GiB; it grows the room for the rest. Where it cannot finish
//! (a corrupt or cut stream, bytes after the last member, more than the cap) it says so, and
//! the caller inflates with flate2, which streams and places the error.

use libdeflate_sys as sys;

/// One libdeflate decompressor (freed on drop).
struct Decompressor(std::ptr::NonNull<sys::libdeflate_decompressor>);

impl Decompressor {
    fn new() -> Option<Decompressor> {
        // SAFETY: allocates a fresh decompressor; null on allocation failure.
        std::ptr::NonNull::new(unsafe { sys::libdeflate_alloc_decompressor() }).map(Decompressor)
    }
}

impl Drop for Decompressor {
    fn drop(&mut self) {
        // SAFETY: allocated by `libdeflate_alloc_decompressor`, freed once.
        unsafe { sys::libdeflate_free_decompressor(self.0.as_ptr()) }
    }
}

/// How one member went.
enum Member {
    /// Inflated: the compressed bytes it read (its text appended).
    Done(usize),
    /// The text does not fit the room left.
    NoRoom,
    /// Not a whole, valid gzip member.
    Bad,
}

impl Decompressor {
    /// Inflates the first member of `gz` into the spare capacity of `out` (appended).
    fn member(&mut self, gz: &[u8], out: &mut Vec<u8>) -> Member {
        let spare = out.spare_capacity_mut();
        let (mut read, mut wrote) = (0usize, 0usize);
        // SAFETY: `gz` is readable for its length; `spare` is writable for its length (libdeflate
        // writes at most that many bytes and reports how many); the out-pointers are valid.
        let r = unsafe {
            sys::libdeflate_gzip_decompress_ex(
                self.0.as_ptr(),
                gz.as_ptr().cast(),
                gz.len(),
                spare.as_mut_ptr().cast(),
                spare.len(),
                &mut read,
                &mut wrote,
            )
        };
        match r {
            sys::libdeflate_result_LIBDEFLATE_SUCCESS if read > 0 && wrote <= spare.len() => {
                // SAFETY: libdeflate initialized the first `wrote` spare bytes.
                unsafe { out.set_len(out.len() + wrote) };
                Member::Done(read)
            }
            sys::libdeflate_result_LIBDEFLATE_INSUFFICIENT_SPACE => Member::NoRoom,
            _ => Member::Bad,
        }
    }
}

/// The text of every member of `gz`, in a buffer first `room` bytes long, grown (doubling) to
/// at most `cap`; `None` where libdeflate cannot give it (the caller's flate2 path then does,
/// or says why not).
pub(super) fn inflate(gz: &[u8], room: usize, cap: usize) -> Option<Vec<u8>> {
    if gz.is_empty() {
        // No member at all is no gzip stream (flate2 says why).
        return None;
    }
    let mut d = Decompressor::new()?;
    let mut out: Vec<u8> = Vec::new();
    // Reserved, not zeroed: the pages are touched only as the text reaches them.
    out.try_reserve_exact(room.clamp(1, cap.max(1))).ok()?;
    let mut at = 0;
    while at < gz.len() {
        match d.member(&gz[at..], &mut out) {
            Member::Done(read) => at += read,
            Member::NoRoom if out.capacity() < cap => {
                let room = out.capacity().saturating_mul(2).min(cap);
                out.try_reserve_exact(room - out.len()).ok()?;
            }
            Member::NoRoom | Member::Bad => return None,
        }
    }
    (out.len() <= cap).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::inflate;
    use flate2::Compression;
    use flate2::write::GzEncoder;
    use std::io::Write;

    fn gz(text: &[u8]) -> Vec<u8> {
        let mut e = GzEncoder::new(Vec::new(), Compression::fast());
        e.write_all(text).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn members_are_inflated_in_order_and_the_room_grows() {
        let (a, b) = (b"{\"traceEvents\": [".repeat(500), b"]}".repeat(3));
        let two = [gz(&a), gz(&b)].concat();
        let whole = [a.clone(), b.clone()].concat();
        // The trailer's hint is the last member's size: too small, so the room grows.
        assert_eq!(inflate(&two, b.len(), 1 << 20).as_deref(), Some(&whole[..]));
        assert_eq!(inflate(&two, 1, 1 << 20).as_deref(), Some(&whole[..]));
        // Exactly the cap fits; one byte less does not.
        assert_eq!(
            inflate(&two, 1, whole.len()).map(|v| v.len()),
            Some(whole.len())
        );
        assert_eq!(inflate(&two, 1, whole.len() - 1), None);
    }

    #[test]
    fn what_it_cannot_inflate_is_left_to_the_caller() {
        let one = gz(b"[{\"ph\": \"X\"}]");
        assert!(inflate(&one, 13, 1 << 20).is_some());
        // Cut, corrupt, trailing bytes, nothing.
        assert_eq!(inflate(&one[..one.len() - 3], 13, 1 << 20), None);
        let mut bad = one.clone();
        bad[12] ^= 0xff;
        assert_eq!(inflate(&bad, 13, 1 << 20), None);
        assert_eq!(
            inflate(&[one.clone(), b"xx".to_vec()].concat(), 13, 1 << 20),
            None
        );
        assert_eq!(inflate(b"", 0, 1 << 20), None);
    }
}

#[cfg(test)]
mod props {
    use super::inflate;
    use flate2::Compression;
    use flate2::bufread::MultiGzDecoder;
    use flate2::write::GzEncoder;
    use proptest::prelude::*;
    use std::io::{Read, Write};

    proptest! {
        // Cheap cases (a few hundred bytes each): many of them.
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// Any text in any members, with any room and cap, and any byte of it flipped or cut:
        /// either the same text flate2 reads (within the cap), or `None`; never another text.
        #[test]
        fn agrees_with_flate2(
            parts in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..300), 1..4),
            room in 0usize..2000,
            cap in 1usize..2000,
            flip in proptest::option::of((any::<usize>(), any::<u8>())),
            cut in proptest::option::of(any::<usize>()),
        ) {
            let mut gz: Vec<u8> = parts
                .iter()
                .flat_map(|p| {
                    let mut e = GzEncoder::new(Vec::new(), Compression::fast());
                    e.write_all(p).unwrap();
                    e.finish().unwrap()
                })
                .collect();
            if let Some((at, x)) = flip {
                let n = gz.len();
                gz[at % n] ^= x;
            }
            if let Some(at) = cut {
                gz.truncate(at % (gz.len() + 1));
            }
            let mut want = Vec::new();
            let flate = MultiGzDecoder::new(&gz[..]).read_to_end(&mut want);
            if let Some(got) = inflate(&gz, room, cap) {
                prop_assert!(flate.is_ok() && got == want && got.len() <= cap);
            }
        }
    }
}
