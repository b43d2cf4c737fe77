//! FVBM model files: safetensors with tensors `b` (f64, `d`) and `M` (f64, `d × d`), metadata
//! `format = boltzkit/fvbm/v1` and `convention` (`spin` or `binary`), plus whatever the caller
//! records (settings, seed, algorithm, data hash, summary).

use super::convention::Convention;
use super::model::Fvbm;
use crate::error::{Error, Result};
use crate::io::{load_tensors, save_model, NamedTensor, TensorData};
use std::collections::BTreeMap;
use std::path::Path;

/// The `format` metadata value of FVBM model files.
pub const FORMAT: &str = "boltzkit/fvbm/v1";

impl Fvbm {
    /// Writes the model atomically, with `extra` metadata (keys `format` and `convention` are
    /// set by this function).
    pub fn save(&self, path: &Path, extra: &BTreeMap<String, String>) -> Result<()> {
        let d = self.d();
        let tensors = [
            NamedTensor::new("b", vec![d], TensorData::F64(self.b().to_vec()))?,
            NamedTensor::new("M", vec![d, d], TensorData::F64(self.m().to_vec()))?,
        ];
        let convention = self.convention().name().to_string();
        save_model(path, FORMAT, &tensors, extra, &[("convention", convention)])
    }

    /// Reads a model written by [`Fvbm::save`] (or any file following the format), checked
    /// as by [`Fvbm::new`].
    pub fn load(path: &Path) -> Result<Self> {
        let file = load_tensors(path)?;
        file.require_format(FORMAT)?;
        let bad = |reason: String| file.invalid(reason);
        let convention: Convention = file
            .meta("convention")?
            .parse()
            .map_err(|e: Error| bad(format!("metadata `convention`: {e}")))?;
        let (bshape, b) = file.f64("b")?;
        let (mshape, m) = file.f64("M")?;
        let d = b.len();
        if bshape.len() != 1 || mshape != [d, d] {
            return Err(bad(format!(
                "`b` must have shape [d] and `M` shape [d, d], found {bshape:?} and {mshape:?}"
            )));
        }
        Fvbm::new(b.to_vec(), m.to_vec(), convention).map_err(|e| bad(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::save_tensors;
    use crate::rng::rng_from_seed;

    #[test]
    fn round_trip_and_validation() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.safetensors");
        for conv in [Convention::Spin, Convention::Binary] {
            let m = Fvbm::random(5, 0.5, conv, &mut rng_from_seed(1)).unwrap();
            let mut extra = BTreeMap::new();
            extra.insert("seed".to_string(), "1".to_string());
            m.save(&p, &extra).unwrap();
            assert_eq!(Fvbm::load(&p).unwrap(), m);
            assert_eq!(load_tensors(&p).unwrap().meta("seed").unwrap(), "1");
        }
        // An asymmetric M is rejected with the file named.
        let tensors = [
            NamedTensor::new("b", vec![2], TensorData::F64(vec![0.0, 0.0])).unwrap(),
            NamedTensor::new("M", vec![2, 2], TensorData::F64(vec![0.0, 1.0, 2.0, 0.0])).unwrap(),
        ];
        let mut meta = BTreeMap::new();
        meta.insert("format".to_string(), FORMAT.to_string());
        meta.insert("convention".to_string(), "spin".to_string());
        save_tensors(&p, &tensors, &meta).unwrap();
        let e = Fvbm::load(&p).unwrap_err().to_string();
        assert!(
            e.contains("symmetric") && e.contains("m.safetensors"),
            "{e}"
        );
        meta.insert("convention".to_string(), "ising".to_string());
        save_tensors(&p, &tensors, &meta).unwrap();
        assert!(Fvbm::load(&p)
            .unwrap_err()
            .to_string()
            .contains("convention"));
    }
}
