//! RBM model files (DESIGN.md, "File formats"): safetensors with tensors `W` (`F32`,
//! `n_visible × n_hidden`), `b` (`F32`, `n_visible`), `c` (`F32`, `n_hidden`), always in the
//! standard energy `E(v, h) = −vᵀWh − bᵀv − cᵀh` (Eq. 1 of the S-DCP paper), metadata
//! `format` = [`RBM_FORMAT`] plus the caller's keys (settings, seed, algorithm, data digest).
//! Centered trainers (Melchior et al. 2016; CS-DCP, Alg. 4 of the S-DCP paper) may add their
//! offsets `mu` (`n_visible`) and `lambda` (`n_hidden`) so a run can resume; the parameters
//! stored are still the standard ones.
//!
//! ```
//! use boltzkit::rbm::file::{load_rbm, save_rbm};
//! use boltzkit::rbm::Rbm;
//! use std::collections::BTreeMap;
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("rbm.safetensors");
//! let rbm = Rbm::random(6, 3, 0.5, &mut boltzkit::rng::rng_from_seed(1))?;
//! let meta = BTreeMap::from([("seed".to_string(), "1".to_string())]);
//! save_rbm(&path, &rbm, None, &meta)?;
//! let back = load_rbm(&path)?;
//! assert_eq!(back.rbm, rbm);
//! assert_eq!(back.metadata["seed"], "1");
//! # Ok::<(), boltzkit::Error>(())
//! ```

use super::model::Rbm;
use crate::error::{Error, Result};
use crate::io::{load_tensors, save_tensors, NamedTensor, TensorData, TensorFile};
use std::collections::BTreeMap;
use std::path::Path;

/// The `format` metadata value of RBM model files.
pub const RBM_FORMAT: &str = "boltzkit/rbm/v1";

/// The offsets of a centered RBM (Melchior et al. 2016, Alg. 1; Alg. 4 of the S-DCP paper):
/// `mu` for the visible layer, `lambda` for the hidden one.
#[derive(Debug, Clone, PartialEq)]
pub struct Offsets {
    /// Visible offsets `μ` (`n_visible` entries).
    pub mu: Vec<f32>,
    /// Hidden offsets `λ` (`n_hidden` entries).
    pub lambda: Vec<f32>,
}

/// An RBM model file read back: the model, the centering offsets when stored, and the
/// metadata (caller keys plus `format`).
#[derive(Debug, Clone, PartialEq)]
pub struct RbmFile {
    /// The model (standard energy).
    pub rbm: Rbm,
    /// The offsets `mu`, `lambda`, when the file holds them.
    pub offsets: Option<Offsets>,
    /// Every metadata key of the file, `format` included.
    pub metadata: BTreeMap<String, String>,
}

/// Writes `rbm` (and `offsets`, when given) to `path` atomically, with `metadata` plus
/// `format` = [`RBM_FORMAT`].
///
/// Fails with [`Error::InvalidParam`] when `metadata` holds `format` (the writer sets it), with
/// [`Error::Shape`] when the offsets do not fit the model, and with [`Error::Io`] when the file
/// cannot be written.
pub fn save_rbm(
    path: &Path,
    rbm: &Rbm,
    offsets: Option<&Offsets>,
    metadata: &BTreeMap<String, String>,
) -> Result<()> {
    if metadata.contains_key("format") {
        return Err(Error::param(
            "metadata",
            format!("key `format` is reserved (the writer sets it to `{RBM_FORMAT}`)"),
        ));
    }
    let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
    let f32t = |name: &str, shape: Vec<usize>, v: &[f32]| {
        NamedTensor::new(name, shape, TensorData::F32(v.to_vec()))
    };
    let mut tensors = vec![
        f32t("W", vec![nv, nh], rbm.w())?,
        f32t("b", vec![nv], rbm.b())?,
        f32t("c", vec![nh], rbm.c())?,
    ];
    if let Some(o) = offsets {
        for (name, v, n) in [("mu", &o.mu, nv), ("lambda", &o.lambda, nh)] {
            if v.len() != n {
                return Err(Error::Shape {
                    op: "save_rbm".into(),
                    expected: format!("offsets `{name}` with {n} entries"),
                    found: format!("{}", v.len()),
                });
            }
            tensors.push(f32t(name, vec![n], v)?);
        }
    }
    let mut meta = metadata.clone();
    meta.insert("format".into(), RBM_FORMAT.into());
    save_tensors(path, &tensors, &meta)
}

/// Reads an RBM model file written by [`save_rbm`] (or by any tool following the format).
///
/// Fails with [`Error::Io`] when the file cannot be read and with [`Error::Model`] (naming the
/// file and what is wrong) on another `format`, a missing or mistyped tensor, shapes that do
/// not fit together, a non-finite parameter, or only one of `mu` / `lambda`.
pub fn load_rbm(path: &Path) -> Result<RbmFile> {
    let file = load_tensors(path)?;
    file.require_format(RBM_FORMAT)?;
    let bad = |reason: String| Error::Model {
        path: path.to_path_buf(),
        reason,
    };
    let (ws, w) = file.f32("W")?;
    let [nv, nh] = ws[..] else {
        return Err(bad(format!(
            "tensor `W` should be 2-D (n_visible × n_hidden), found shape {ws:?}"
        )));
    };
    let vector = |f: &TensorFile, name: &str, n: usize, what: &str| -> Result<Vec<f32>> {
        let (s, v) = f.f32(name)?;
        if s != [n] {
            return Err(bad(format!(
                "tensor `{name}` should have shape [{n}] ({what}), found {s:?}"
            )));
        }
        Ok(v.to_vec())
    };
    // a W saved as n_hidden × n_visible (PyTorch's Linear layout) matches b and c crossed:
    // say so rather than blame `b`
    if let (Ok((bs, _)), Ok((cs, _))) = (file.f32("b"), file.f32("c")) {
        if nv != nh && bs == [nh] && cs == [nv] {
            return Err(bad(format!(
                "tensor `W` has shape [{nv}, {nh}], but `b` has {nh} entries and `c` {nv}: W \
                 is stored transposed; boltzkit's W is n_visible × n_hidden, [{nh}, {nv}] \
                 here (transpose it before saving)"
            )));
        }
    }
    let b = vector(&file, "b", nv, "n_visible")?;
    let c = vector(&file, "c", nh, "n_hidden")?;
    let rbm = Rbm::new(nv, nh, w.to_vec(), b, c).map_err(|e| bad(e.to_string()))?;
    let offsets = match (
        file.tensors.contains_key("mu"),
        file.tensors.contains_key("lambda"),
    ) {
        (false, false) => None,
        (true, true) => Some(Offsets {
            mu: vector(&file, "mu", nv, "n_visible")?,
            lambda: vector(&file, "lambda", nh, "n_hidden")?,
        }),
        (has_mu, _) => {
            return Err(bad(format!(
                "centering offsets come in pairs: found `{}` without `{}`",
                if has_mu { "mu" } else { "lambda" },
                if has_mu { "lambda" } else { "mu" }
            )))
        }
    };
    Ok(RbmFile {
        rbm,
        offsets,
        metadata: file.metadata,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::rng_from_seed;

    fn meta() -> BTreeMap<String, String> {
        BTreeMap::from([
            ("algorithm".to_string(), "cd".to_string()),
            ("seed".to_string(), "42".to_string()),
        ])
    }

    #[test]
    fn round_trip_with_and_without_offsets() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.safetensors");
        let rbm = Rbm::random(5, 3, 0.7, &mut rng_from_seed(2)).unwrap();
        save_rbm(&p, &rbm, None, &meta()).unwrap();
        let back = load_rbm(&p).unwrap();
        assert_eq!(back.rbm, rbm);
        assert_eq!(back.offsets, None);
        assert_eq!(back.metadata["format"], RBM_FORMAT);
        assert_eq!(back.metadata["algorithm"], "cd");
        // the tensors are laid out as DESIGN.md says
        let raw = load_tensors(&p).unwrap();
        let (s, w) = raw.f32("W").unwrap();
        assert_eq!((s, w), (&[5usize, 3][..], rbm.w()));

        let off = Offsets {
            mu: vec![0.1, 0.2, 0.3, 0.4, 0.5],
            lambda: vec![0.5, 0.25, 0.75],
        };
        save_rbm(&p, &rbm, Some(&off), &meta()).unwrap();
        let back = load_rbm(&p).unwrap();
        assert_eq!(back.rbm, rbm);
        assert_eq!(back.offsets, Some(off.clone()));

        let short = Offsets {
            mu: vec![0.0; 4],
            lambda: off.lambda,
        };
        assert!(matches!(
            save_rbm(&p, &rbm, Some(&short), &meta()),
            Err(Error::Shape { .. })
        ));
        let mut m = meta();
        m.insert("format".into(), "x".into());
        assert!(matches!(
            save_rbm(&p, &rbm, None, &m),
            Err(Error::InvalidParam { .. })
        ));
    }

    #[test]
    fn load_names_the_fault() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bad.safetensors");
        let t = |name: &str, shape: Vec<usize>, v: Vec<f32>| {
            NamedTensor::new(name, shape, TensorData::F32(v)).unwrap()
        };
        let fmt = BTreeMap::from([("format".to_string(), RBM_FORMAT.to_string())]);
        let err = |tensors: &[NamedTensor], meta: &BTreeMap<String, String>| {
            save_tensors(&p, tensors, meta).unwrap();
            load_rbm(&p).unwrap_err().to_string()
        };
        let good = [
            t("W", vec![2, 1], vec![0.0, 1.0]),
            t("b", vec![2], vec![0.0; 2]),
            t("c", vec![1], vec![0.0]),
        ];
        let other = BTreeMap::from([("format".to_string(), "boltzkit/fvbm/v1".to_string())]);
        let e = err(&good, &other);
        assert!(
            e.contains("bad.safetensors") && e.contains(RBM_FORMAT),
            "{e}"
        );
        let e = err(&good[..2], &fmt);
        assert!(e.contains("missing tensor `c`"), "{e}");
        let e = err(&[t("W", vec![2], vec![0.0; 2]), good[1].clone()], &fmt);
        assert!(e.contains("2-D"), "{e}");
        let e = err(
            &[
                good[0].clone(),
                t("b", vec![3], vec![0.0; 3]),
                good[2].clone(),
            ],
            &fmt,
        );
        assert!(e.contains("`b` should have shape [2]"), "{e}");
        // W saved as n_hidden × n_visible (PyTorch's layout) is named, not blamed on b
        let e = err(
            &[
                t("W", vec![1, 2], vec![0.0, 1.0]),
                good[1].clone(),
                good[2].clone(),
            ],
            &fmt,
        );
        assert!(
            e.contains("bad.safetensors") && e.contains("W is stored transposed"),
            "{e}"
        );
        let e = err(
            &[
                t("W", vec![2, 1], vec![0.0, f32::NAN]),
                good[1].clone(),
                good[2].clone(),
            ],
            &fmt,
        );
        assert!(e.contains("not finite"), "{e}");
        let mut with_mu = good.to_vec();
        with_mu.push(t("mu", vec![2], vec![0.5; 2]));
        let e = err(&with_mu, &fmt);
        assert!(e.contains("without `lambda`"), "{e}");
        let missing = load_rbm(&dir.path().join("none.safetensors")).unwrap_err();
        assert!(matches!(missing, Error::Io { .. }));
    }
}
