//! Fuzz target `nsys`: the body is `stepscope::fuzz::nsys` (docs/testing.md, "Fuzzing").
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| stepscope::fuzz::nsys(data));
