//! Fuzz target `trace_serde`: the body is `stepscope::fuzz::trace_serde` (docs/testing.md, "Fuzzing").
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    stepscope::fuzz::trace_serde(data);
});
