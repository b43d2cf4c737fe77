//! Files: atomic writes, model files (safetensors), metric logs (JSONL), file digests.
//!
//! | item | what it does |
//! |---|---|
//! | [`write_atomic`], [`write_atomic_with`] | write a file so readers never see half of it, never over a device or FIFO |
//! | [`check_output`], [`check_output_dir`] | before any work: can this file (folder of files) be written? |
//! | [`save_tensors`], [`load_tensors`], [`TensorFile`] | model files in safetensors format |
//! | [`MetricLog`], [`MetricRecord`] | JSONL metric logs, one record per evaluation |
//! | [`CHECKSUM_KEY`] | a file's content checksum: asked for on save, checked on load |
//! | [`sha256_file`], [`sha256_bytes`] | the hex SHA-256 of a file (data provenance in model metadata) or of bytes (the data registry's checksums) |

mod atomic;
mod hash;
mod log;
mod tensors;

pub use atomic::{check_output, check_output_dir, write_atomic, write_atomic_with, NAME_MAX};
pub use hash::{sha256_bytes, sha256_file};
pub use log::{MetricLog, MetricRecord, RESERVED_KEYS};
pub use tensors::{
    load_tensors, save_model, save_tensors, NamedTensor, TensorData, TensorFile, CHECKSUM_KEY,
};
