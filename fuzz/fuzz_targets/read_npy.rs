//! `read_dataset` on arbitrary bytes named `in.npy`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| boltzkit_fuzz::read_data("in.npy", data));
