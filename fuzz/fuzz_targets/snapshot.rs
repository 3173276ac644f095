//! Fuzz target `snapshot`: the body is `stepscope::fuzz::snapshot` (docs/testing.md, "Fuzzing").
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    stepscope::fuzz::snapshot(data);
});
