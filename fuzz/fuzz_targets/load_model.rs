//! Every model-file loader (rbm, fw-rbm, fsll, fvbm) on arbitrary bytes.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| boltzkit_fuzz::load_model(data));
