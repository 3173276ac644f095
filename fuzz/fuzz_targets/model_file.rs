//! Fuzz target `model_file`: the body is `stepscope::fuzz::model_file` (docs/testing.md, "Fuzzing").
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    stepscope::fuzz::model_file(data);
});
