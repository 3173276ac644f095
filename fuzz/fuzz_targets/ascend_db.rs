//! Fuzz target `ascend_db`: the body is `stepscope::fuzz::ascend_db` (docs/testing.md, "Fuzzing").
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| stepscope::fuzz::ascend_db(data));
