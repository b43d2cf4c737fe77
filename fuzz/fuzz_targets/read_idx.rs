//! `read_dataset` on arbitrary bytes named `in-idx1-ubyte`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| boltzkit_fuzz::read_data("in-idx1-ubyte", data));
