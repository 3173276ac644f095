//! Fuzz target `logs`: the body is `stepscope::fuzz::logs` (docs/testing.md, "Fuzzing").
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| stepscope::fuzz::logs(data));
