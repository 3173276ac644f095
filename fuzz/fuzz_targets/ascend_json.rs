//! Fuzz target `ascend_json`: the body is `stepscope::fuzz::ascend_json` (docs/testing.md, "Fuzzing").
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| stepscope::fuzz::ascend_json(data));
