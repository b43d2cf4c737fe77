//! Files: atomic writes, model files (safetensors), metric logs (JSONL).

mod atomic;

pub use atomic::{write_atomic, write_atomic_with};
