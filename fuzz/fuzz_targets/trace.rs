//! Fuzz target `trace`: the body is `stepscope::fuzz::trace` (docs/testing.md, "Fuzzing").
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    stepscope::fuzz::trace(data);
});
