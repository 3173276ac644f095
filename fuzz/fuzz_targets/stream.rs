//! Fuzz target `stream`: the body is `stepscope::fuzz::stream` (docs/testing.md, "Fuzzing").
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    stepscope::fuzz::stream(data);
});
