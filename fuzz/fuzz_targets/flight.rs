//! Fuzz target `flight`: the body is `stepscope::fuzz::flight` (docs/testing.md, "Fuzzing").
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    stepscope::fuzz::flight(data);
});
