//! Frank-Wolfe model files. A standard model (every `α q_i = 1`) is written as the RBM it
//! equals ([`crate::rbm::file::save_rbm`], `boltzkit/rbm/v1`): `W[:, i] = w_i[..n_visible]`,
//! `c_i = w_i[n_visible]`, `b`. A fractional model (Eq. 11) is written with format
//! [`FW_FORMAT`]: tensors `W` (`F64`, `n_visible × n_units`, atom `i` in column `i`), `c`
//! (`F64`, the constant unit's weights), `b` (`F64`) and `coef` (`F64`, `α q_i`); RBM tools
//! refuse such a file by its format. [`save_fw_exact`] writes any model, standard or not, in
//! that format with `q` and `alpha` (`F64`) besides, so reading it back gives the model bit for
//! bit (Python's pickles of a `FrankWolfeRBM`).
//!
//! ```
//! use boltzkit::rbm::frank_wolfe::{file, FwModel};
//! use std::collections::BTreeMap;
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("fw.safetensors");
//! let m = FwModel::new(2, vec![1.0, -1.0, 0.5, 0.0, 2.0, 0.1], vec![0.25, 0.75], 1.5, vec![0.1, 0.2])?;
//! file::save_fw_model(&path, &m, &BTreeMap::new())?;
//! let back = file::load_fw_model(&path)?;
//! assert!((back.alpha() - 1.5).abs() < 1e-12 && (back.q()[1] - 0.75).abs() < 1e-12);
//! // a standard model (every α q_i = 1): save_fw_model writes the f32 RBM it equals,
//! // save_fw_exact the model itself
//! let std = FwModel::new(2, vec![0.1, -0.3, 0.7, 0.2, 0.4, -0.9], vec![0.5, 0.5], 2.0, vec![0.1, 0.2])?;
//! assert!(std.is_standard());
//! file::save_fw_exact(&path, &std, &BTreeMap::new())?;
//! assert_eq!(file::load_fw_model(&path)?, std);
//! # Ok::<(), boltzkit::Error>(())
//! ```

use super::model::FwModel;
use crate::error::Result;
use crate::io::{load_tensors, save_model, NamedTensor, TensorData};
use crate::rbm::file::{load_rbm, save_rbm, RBM_FORMAT};
use std::collections::BTreeMap;
use std::path::Path;

/// The `format` of fractional Frank-Wolfe model files.
pub const FW_FORMAT: &str = "boltzkit/fw-rbm/v1";

/// Writes `model` to `path` atomically (see the module docs for the layout).
pub fn save_fw_model(
    path: &Path,
    model: &FwModel,
    metadata: &BTreeMap<String, String>,
) -> Result<()> {
    if model.is_standard() {
        return save_rbm(path, &model.to_rbm()?, None, metadata);
    }
    save_fw_tensors(path, model, metadata, false)
}

/// Writes `model` to `path` atomically in the [`FW_FORMAT`] layout even when it is standard,
/// with its `q` and `alpha` besides `coef`: [`load_fw_model`] gives back the same model, bit
/// for bit, where [`save_fw_model`] keeps a standard model as the `f32` RBM it equals.
pub fn save_fw_exact(
    path: &Path,
    model: &FwModel,
    metadata: &BTreeMap<String, String>,
) -> Result<()> {
    save_fw_tensors(path, model, metadata, true)
}

/// The [`FW_FORMAT`] tensors of `model` (with `q` and `alpha` when `exact`), written to `path`.
fn save_fw_tensors(
    path: &Path,
    model: &FwModel,
    metadata: &BTreeMap<String, String>,
    exact: bool,
) -> Result<()> {
    let (nv, nh) = (model.n_visible(), model.n_units());
    let mut w = vec![0.0; nv * nh];
    let mut c = vec![0.0; nh];
    for i in 0..nh {
        let atom = model.atom(i);
        for j in 0..nv {
            w[j * nh + i] = atom[j];
        }
        c[i] = atom[nv];
    }
    let t = |name: &str, shape: Vec<usize>, v: Vec<f64>| {
        NamedTensor::new(name, shape, TensorData::F64(v))
    };
    let mut tensors = vec![
        t("W", vec![nv, nh], w)?,
        t("c", vec![nh], c)?,
        t("b", vec![nv], model.b().to_vec())?,
        t("coef", vec![nh], model.coefficients())?,
    ];
    if exact {
        tensors.push(t("q", vec![nh], model.q().to_vec())?);
        tensors.push(t("alpha", vec![1], vec![model.alpha()])?);
    }
    save_model(path, FW_FORMAT, &tensors, metadata, &[])
}

/// Reads a model written by [`save_fw_model`]; an RBM file (`boltzkit/rbm/v1`) loads as the
/// standard model of Prop. 3.1 (`q` uniform, `α = |h|`).
pub fn load_fw_model(path: &Path) -> Result<FwModel> {
    let file = load_tensors(path)?;
    if file.metadata.get("format").map(String::as_str) == Some(RBM_FORMAT) {
        return Ok(FwModel::from_rbm(&load_rbm(path)?.rbm));
    }
    file.require_format(FW_FORMAT)?;
    let (ws, w) = file.f64("W")?;
    let [nv, nh] = ws[..] else {
        return Err(file.invalid(format!("tensor `W` should be 2-D, found shape {ws:?}")));
    };
    let vector = |name: &str, n: usize| -> Result<Vec<f64>> {
        let (s, v) = file.f64(name)?;
        if s != [n] {
            return Err(file.invalid(format!(
                "tensor `{name}` should have shape [{n}], found {s:?}"
            )));
        }
        Ok(v.to_vec())
    };
    let c = vector("c", nh)?;
    let b = vector("b", nv)?;
    let coef = vector("coef", nh)?;
    let mut atoms = Vec::with_capacity(nh * (nv + 1));
    for i in 0..nh {
        atoms.extend((0..nv).map(|j| w[j * nh + i]));
        atoms.push(c[i]);
    }
    // an exact file keeps q and α themselves; else α q_i = coef_i with α = Σ coef_i
    let (q, alpha) = if file.tensors.contains_key("q") {
        (vector("q", nh)?, vector("alpha", 1)?[0])
    } else {
        let alpha: f64 = coef.iter().sum();
        (coef.iter().map(|&x| x / alpha).collect(), alpha)
    };
    FwModel::new(nv, atoms, q, alpha, b).map_err(|e| file.invalid(e.to_string()))
}
