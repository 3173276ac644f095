//! Fuzz target `gzip`: the body is `stepscope::fuzz::gzip` (docs/testing.md, "Fuzzing").
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    stepscope::fuzz::gzip(data);
});
