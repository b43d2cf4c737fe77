//! FSLL model files: safetensors with tensors `basis` (u64 mixed-radix indices, variable 0 least
//! significant) and `theta` (f64), metadata `format = boltzkit/fsll/v1` and `cardinalities`
//! (a JSON list), plus whatever the caller records (settings, seed, data hash, summary).

use super::model::FsllModel;
use crate::error::Result;
use crate::io::{load_tensors, save_model, NamedTensor, TensorData};
use std::collections::BTreeMap;
use std::path::Path;

/// The `format` metadata value of FSLL model files.
pub const FORMAT: &str = "boltzkit/fsll/v1";

impl FsllModel {
    /// Writes the model atomically, with `extra` metadata (keys `format` and `cardinalities`
    /// are set by this function).
    pub fn save(&self, path: &Path, extra: &BTreeMap<String, String>) -> Result<()> {
        let k = self.n_basis();
        let tensors = [
            NamedTensor::new(
                "basis",
                vec![k],
                TensorData::U64(self.basis().iter().map(|&y| y as u64).collect()),
            )?,
            NamedTensor::new("theta", vec![k], TensorData::F64(self.theta().to_vec()))?,
        ];
        let cards =
            serde_json::to_string(self.cardinalities()).expect("a list of integers serializes");
        save_model(path, FORMAT, &tensors, extra, &[("cardinalities", cards)])
    }

    /// Reads a model written by [`FsllModel::save`] (or any file following the format).
    pub fn load(path: &Path) -> Result<Self> {
        let file = load_tensors(path)?;
        file.require_format(FORMAT)?;
        let bad = |reason: String| file.invalid(reason);
        let cards: Vec<u32> = serde_json::from_str(file.meta("cardinalities")?).map_err(|e| {
            bad(format!(
                "metadata `cardinalities` is not a list of integers: {e}"
            ))
        })?;
        let (bshape, basis) = file.u64("basis")?;
        let (tshape, theta) = file.f64("theta")?;
        if bshape.len() != 1 || bshape != tshape {
            return Err(bad(format!(
                "`basis` and `theta` must be 1-D of equal length, found shapes {bshape:?} and {tshape:?}"
            )));
        }
        let terms = basis
            .iter()
            .zip(theta)
            .map(|(&y, &t)| (y as usize, t))
            .collect();
        FsllModel::new(&cards, terms).map_err(|e| bad(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::save_tensors;

    #[test]
    fn round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.safetensors");
        let m = FsllModel::new(&[2, 3, 2], vec![(1, 0.5), (7, -1.25)]).unwrap();
        let mut extra = BTreeMap::new();
        extra.insert("seed".to_string(), "7".to_string());
        m.save(&p, &extra).unwrap();
        assert_eq!(FsllModel::load(&p).unwrap(), m);
        let empty = FsllModel::uniform(&[2, 2]).unwrap();
        empty.save(&p, &BTreeMap::new()).unwrap();
        assert_eq!(FsllModel::load(&p).unwrap(), empty);
    }

    #[test]
    fn rejects_index_out_of_range() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.safetensors");
        let tensors = [
            NamedTensor::new("basis", vec![1], TensorData::U64(vec![99])).unwrap(),
            NamedTensor::new("theta", vec![1], TensorData::F64(vec![1.0])).unwrap(),
        ];
        let mut meta = BTreeMap::new();
        meta.insert("format".to_string(), FORMAT.to_string());
        meta.insert("cardinalities".to_string(), "[2,2]".to_string());
        save_tensors(&p, &tensors, &meta).unwrap();
        let e = FsllModel::load(&p).unwrap_err().to_string();
        assert!(e.contains("index 99"), "{e}");
    }
}
