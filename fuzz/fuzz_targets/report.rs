//! Fuzz target `report`: the body is `stepscope::fuzz::report` (docs/testing.md, "Fuzzing").
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    stepscope::fuzz::report(data);
});
