//! Content checksums of model files: a file written with the metadata key [`CHECKSUM_KEY`]
//! carries the SHA-256 of its tensors and other metadata, and [`super::load_tensors`] refuses
//! it, naming the file, when they no longer match (a flipped bit, a truncated or edited copy).
//! Training checkpoints carry one, so a corrupted checkpoint is never resumed silently.

use super::tensors::NamedTensor;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// The metadata key holding a file's content checksum. A caller asks for one by putting this
/// key (any value) in the metadata given to [`super::save_tensors`], which writes the
/// checksum in its place.
pub const CHECKSUM_KEY: &str = "content_sha256";

/// The hex SHA-256 of `tensors` (name, dtype, shape and little-endian values, in name order)
/// and of every metadata entry but [`CHECKSUM_KEY`] (in key order), each field
/// length-prefixed so no two contents hash alike by shifting bytes between fields.
pub(crate) fn content_checksum<'a>(
    tensors: impl IntoIterator<Item = &'a NamedTensor>,
    metadata: &BTreeMap<String, String>,
) -> String {
    let mut h = Sha256::new();
    let mut field = |bytes: &[u8]| {
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    let mut sorted: Vec<&NamedTensor> = tensors.into_iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    for t in sorted {
        field(t.name.as_bytes());
        field(t.data.dtype_name().as_bytes());
        let shape: Vec<u8> = t
            .shape
            .iter()
            .flat_map(|&d| (d as u64).to_le_bytes())
            .collect();
        field(&shape);
        field(&t.data.to_le_bytes());
    }
    for (k, v) in metadata.iter().filter(|(k, _)| *k != CHECKSUM_KEY) {
        field(k.as_bytes());
        field(v.as_bytes());
    }
    super::hash::to_hex(&h.finalize())
}
