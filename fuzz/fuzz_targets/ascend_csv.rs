//! Fuzz target `ascend_csv`: the body is `stepscope::fuzz::ascend_csv` (docs/testing.md, "Fuzzing").
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| stepscope::fuzz::ascend_csv(data));
