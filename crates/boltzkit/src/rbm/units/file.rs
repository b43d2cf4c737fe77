//! Model files of a [`UnitRbm`]: safetensors with metadata `format` = [`UNIT_RBM_FORMAT`]
//! (`boltzkit/rbm/v2`), `visible_units` and `hidden_units` ([`UnitKind`] names), the tensor
//! `W` (`F32`, `width_v × width_h`) and each layer's parameters under its prefix `v.` or `h.`,
//! named as the type names them: `bias` (Bernoulli, Gaussian), `fields` and `q` (`U64`, the
//! states per site: categorical), `variance` and `variance_bounds` (`F64` `[lo, hi]`:
//! Gaussian), `gamma`, `theta` (ReLU), `gamma_plus`, `gamma_minus`, `theta_plus`,
//! `theta_minus` (dReLU). The binary pair keeps `boltzkit/rbm/v1` ([`crate::rbm::file`]), byte
//! for byte; a v1 reader refuses a v2 file by its `format` instead of misreading it.
//!
//! ```
//! use boltzkit::rbm::units::{load_unit_rbm, save_unit_rbm, Categorical, DRelu, UnitRbm, Units};
//! use std::collections::BTreeMap;
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("potts-drelu.safetensors");
//! let v = Units::Categorical(Categorical::new(vec![3, 2], vec![0.1, 0.0, -0.2, 0.3, 0.0])?);
//! let h = Units::DRelu(DRelu::new(vec![1.0], vec![2.0], vec![0.5], vec![-0.5])?);
//! let m = UnitRbm::new(v, h, vec![0.5, -0.5, 0.0, 1.0, -1.0])?;
//! save_unit_rbm(&path, &m, &BTreeMap::new())?;
//! assert_eq!(load_unit_rbm(&path)?.model, m);
//! # Ok::<(), boltzkit::Error>(())
//! ```

use super::bounded::Bounded;
use super::layer::{UnitKind, Units};
use super::model::UnitRbm;
use super::{Bernoulli, Categorical, DRelu, Gaussian, Relu};
use crate::error::{Error, Result};
use crate::io::{load_tensors, save_tensors, NamedTensor, TensorData, TensorFile};
use std::collections::BTreeMap;
use std::path::Path;

/// The `format` metadata value of model files of RBMs with unit types other than 0/1 on
/// both layers.
pub const UNIT_RBM_FORMAT: &str = "boltzkit/rbm/v2";

/// A [`UnitRbm`] model file read back: the model and every metadata key.
#[derive(Debug, Clone, PartialEq)]
pub struct UnitRbmFile {
    /// The model.
    pub model: UnitRbm,
    /// Every metadata key, `format` and the layers' kinds included.
    pub metadata: BTreeMap<String, String>,
}

/// Whether `path` is a safetensors file whose `format` is [`UNIT_RBM_FORMAT`], read from its
/// header alone (any failure says no, and the binary reader then reports it).
pub fn is_unit_model_file(path: &Path) -> bool {
    use std::io::Read;
    let header = || -> Option<serde_json::Value> {
        let mut f = std::fs::File::open(path).ok()?;
        let mut len = [0u8; 8];
        f.read_exact(&mut len).ok()?;
        let len = u64::from_le_bytes(len);
        if len > 100 << 20 {
            return None;
        }
        let mut buf = vec![0u8; len as usize];
        f.read_exact(&mut buf).ok()?;
        serde_json::from_slice(&buf).ok()
    };
    header().is_some_and(|h| h["__metadata__"]["format"] == UNIT_RBM_FORMAT)
}

/// The reserved metadata keys (the writer sets them).
const RESERVED: [&str; 3] = ["format", "visible_units", "hidden_units"];

/// Writes `model` to `path` atomically, with `metadata` plus the reserved keys
/// (`format`, `visible_units`, `hidden_units`), which `metadata` must not hold.
pub fn save_unit_rbm(
    path: &Path,
    model: &UnitRbm,
    metadata: &BTreeMap<String, String>,
) -> Result<()> {
    if let Some(k) = RESERVED.iter().find(|k| metadata.contains_key(**k)) {
        return Err(Error::param(
            "metadata",
            format!("key `{k}` is reserved (the writer sets it)"),
        ));
    }
    let tensors = unit_rbm_tensors(model)?;
    let mut meta = metadata.clone();
    meta.insert("format".into(), UNIT_RBM_FORMAT.into());
    meta.insert("visible_units".into(), model.visible().kind().to_string());
    meta.insert("hidden_units".into(), model.hidden().kind().to_string());
    save_tensors(path, &tensors, &meta)
}

/// The tensors a model file holds, by their names in the file: `W` (`width_v × width_h`),
/// then each layer's parameters under `v.` and `h.` (the module's header lists them).
pub fn unit_rbm_tensors(model: &UnitRbm) -> Result<Vec<NamedTensor>> {
    let (wv, wh) = (model.visible().width(), model.hidden().width());
    let mut tensors = vec![NamedTensor::new(
        "W",
        vec![wv, wh],
        TensorData::F32(model.w().to_vec()),
    )?];
    layer_tensors("v", model.visible(), &mut tensors)?;
    layer_tensors("h", model.hidden(), &mut tensors)?;
    Ok(tensors)
}

/// The tensors of one layer under `prefix.`.
fn layer_tensors(prefix: &str, layer: &Units, out: &mut Vec<NamedTensor>) -> Result<()> {
    let mut f32t = |name: &str, v: &[f32]| -> Result<()> {
        out.push(NamedTensor::new(
            format!("{prefix}.{name}"),
            vec![v.len()],
            TensorData::F32(v.to_vec()),
        )?);
        Ok(())
    };
    let mut extra = Vec::new();
    match layer {
        Units::Bernoulli(u) => f32t("bias", u.bias())?,
        Units::Categorical(u) => {
            f32t("fields", u.fields())?;
            let q = u.q().iter().map(|&q| q as u64).collect::<Vec<_>>();
            extra.push(("q", vec![q.len()], TensorData::U64(q)));
        }
        Units::Gaussian(u) => {
            f32t("bias", u.bias())?;
            f32t("variance", u.variance())?;
            let b = u.bounds();
            extra.push((
                "variance_bounds",
                vec![2],
                TensorData::F64(vec![b.lo, b.hi]),
            ));
        }
        Units::Relu(u) => {
            f32t("gamma", u.gamma())?;
            f32t("theta", u.theta())?;
        }
        Units::DRelu(u) => {
            let [gp, gm, tp, tm] = u.sides();
            f32t("gamma_plus", gp)?;
            f32t("gamma_minus", gm)?;
            f32t("theta_plus", tp)?;
            f32t("theta_minus", tm)?;
        }
    }
    for (name, shape, data) in extra {
        out.push(NamedTensor::new(format!("{prefix}.{name}"), shape, data)?);
    }
    Ok(())
}

/// Reads a model file written by [`save_unit_rbm`]: an [`Error::Model`] naming the file on
/// another `format` (a `boltzkit/rbm/v1` file is the binary [`crate::rbm::Rbm`]'s, read by
/// [`crate::rbm::file::load_rbm`]), an unknown unit kind, a missing or mistyped tensor, or
/// parameters the types refuse.
pub fn load_unit_rbm(path: &Path) -> Result<UnitRbmFile> {
    let file = load_tensors(path)?;
    if file.metadata.get("format").map(String::as_str) == Some(crate::rbm::file::RBM_FORMAT) {
        return Err(file.invalid(format!(
            "it is a binary RBM ({}); read it with load_rbm",
            crate::rbm::file::RBM_FORMAT
        )));
    }
    file.require_format(UNIT_RBM_FORMAT)?;
    let visible = read_layer(&file, "v", "visible_units")?;
    let hidden = read_layer(&file, "h", "hidden_units")?;
    let (shape, w) = file.f32("W")?;
    if shape != [visible.width(), hidden.width()] {
        return Err(file.invalid(format!(
            "tensor `W` should have shape [{}, {}] (the layers' widths), found {shape:?}",
            visible.width(),
            hidden.width()
        )));
    }
    let model =
        UnitRbm::new(visible, hidden, w.to_vec()).map_err(|e| file.invalid(e.to_string()))?;
    Ok(UnitRbmFile {
        model,
        metadata: file.metadata.clone(),
    })
}

/// The layer under `prefix.` of the kind named by metadata `key`.
fn read_layer(file: &TensorFile, prefix: &str, key: &str) -> Result<Units> {
    let kind: UnitKind = file
        .meta(key)?
        .parse()
        .map_err(|e: Error| file.invalid(format!("metadata `{key}`: {e}")))?;
    let get = |name: &str| -> Result<Vec<f32>> {
        let full = format!("{prefix}.{name}");
        let (s, v) = file.f32(&full)?;
        if s.len() != 1 {
            return Err(file.invalid(format!("tensor `{full}` should be 1-D, found {s:?}")));
        }
        Ok(v.to_vec())
    };
    let layer = match kind {
        UnitKind::Bernoulli => Bernoulli::new(get("bias")?).map(Units::Bernoulli),
        UnitKind::Categorical => {
            let (_, q) = file.u64(&format!("{prefix}.q"))?;
            let q = q.iter().map(|&q| q as usize).collect();
            Categorical::new(q, get("fields")?).map(Units::Categorical)
        }
        UnitKind::Gaussian => {
            let name = format!("{prefix}.variance_bounds");
            let (_, b) = file.f64(&name)?;
            let [lo, hi] = b[..] else {
                return Err(file.invalid(format!("tensor `{name}` should hold [lo, hi]")));
            };
            Bounded::new(lo, hi)
                .and_then(|b| Gaussian::new(get("bias")?, get("variance")?, b))
                .map(Units::Gaussian)
        }
        UnitKind::Relu => Relu::new(get("gamma")?, get("theta")?).map(Units::Relu),
        UnitKind::Drelu => DRelu::new(
            get("gamma_plus")?,
            get("gamma_minus")?,
            get("theta_plus")?,
            get("theta_minus")?,
        )
        .map(Units::DRelu),
    };
    layer.map_err(|e| file.invalid(format!("{} layer: {e}", &key[..key.len() - 6])))
}

#[cfg(test)]
mod tests {
    use super::super::twins::normal_weights;
    use super::*;

    fn models() -> Vec<UnitRbm> {
        let (lo, hi) = super::super::VARIANCE_BOUNDS;
        let layers = [
            Units::Bernoulli(Bernoulli::new(vec![0.3, -0.1]).unwrap()),
            Units::Categorical(Categorical::new(vec![3, 1, 2], normal_weights(6, 1.0, 1)).unwrap()),
            Units::Gaussian(
                Gaussian::new(
                    vec![0.2, 0.1],
                    vec![0.5, 3.0],
                    Bounded::new(lo, hi).unwrap(),
                )
                .unwrap(),
            ),
            Units::Relu(Relu::new(vec![1.0, 0.7], vec![0.1, -0.2]).unwrap()),
            Units::DRelu(
                DRelu::new(
                    vec![1.0, 2.0],
                    vec![0.5, 1.5],
                    vec![0.1, 0.2],
                    vec![-0.3, 0.4],
                )
                .unwrap(),
            ),
        ];
        let mut out = Vec::new();
        for v in &layers[..3] {
            for h in [&layers[0], &layers[3], &layers[4]] {
                let n = v.width() * h.width();
                out.push(UnitRbm::new(v.clone(), h.clone(), normal_weights(n, 0.5, 2)).unwrap());
            }
        }
        out
    }

    #[test]
    fn every_pair_loads_back_bit_equal() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.safetensors");
        let meta = BTreeMap::from([("seed".to_string(), "3".to_string())]);
        for m in models() {
            save_unit_rbm(&p, &m, &meta).unwrap();
            let back = load_unit_rbm(&p).unwrap();
            assert_eq!(back.model, m);
            assert_eq!(back.model.visible().trainable(), m.visible().trainable());
            assert_eq!(back.metadata["seed"], "3");
            assert_eq!(back.metadata["format"], UNIT_RBM_FORMAT);
            assert_eq!(back.metadata["hidden_units"], m.hidden().kind().name());
            // the binary reader refuses it by its format
            let e = crate::rbm::file::load_rbm(&p).unwrap_err().to_string();
            assert!(e.contains(UNIT_RBM_FORMAT), "{e}");
        }
        let e = save_unit_rbm(
            &p,
            &models()[0],
            &BTreeMap::from([("format".into(), "x".into())]),
        );
        assert!(e.is_err());
    }

    #[test]
    fn damaged_files_are_refused_with_the_file_named() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.safetensors");
        let m = &models()[4]; // categorical visible, ReLU hidden
        save_unit_rbm(&p, m, &BTreeMap::new()).unwrap();
        let raw = load_tensors(&p).unwrap();
        let rewrite = |drop: &str, meta: &[(&str, &str)]| {
            let tensors: Vec<_> = raw
                .tensors
                .values()
                .filter(|t| t.name != drop)
                .cloned()
                .collect();
            let mut md = raw.metadata.clone();
            for (k, v) in meta {
                md.insert(k.to_string(), v.to_string());
            }
            save_tensors(&p, &tensors, &md).unwrap();
            load_unit_rbm(&p).unwrap_err().to_string()
        };
        let e = rewrite("v.q", &[]);
        assert!(e.contains("m.safetensors") && e.contains("v.q"), "{e}");
        let e = rewrite("", &[("hidden_units", "sigmoid")]);
        assert!(e.contains("hidden_units") && e.contains("sigmoid"), "{e}");
        let e = rewrite("", &[("hidden_units", "drelu")]);
        assert!(e.contains("h.gamma_plus"), "{e}");
        let e = rewrite("", &[("format", "boltzkit/rbm/v1")]);
        assert!(e.contains("load_rbm"), "{e}");
    }
}
