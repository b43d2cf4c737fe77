//! Potts model files (`format = boltzkit/potts/v1`): safetensors that
//! `safetensors.numpy.load_file` reads as
//!
//! | tensor | dtype, shape | what |
//! |---|---|---|
//! | `h` | F64, `L × q` | fields `h_i(a)`; `q = max_i q_i`, entries `a ≥ q_i` are 0 |
//! | `J` | F64, `L × L × q × q` | couplings `J[i, j, a, b] = J_ij(a, b)`, symmetric (`J[j, i] = J[i, j]ᵀ`), zero diagonal blocks and padding |
//! | `states` | U64, `L` | `q_i` |
//! | `sites` | U64, `L` (optional) | the source alignment's column of each site (0-based) |
//!
//! and metadata `alphabet` (optional: one character per state) beside whatever the caller
//! records (the fit's settings as JSON, the weights' settings, the data's hash, ...).

use super::model::Potts;
use crate::error::Result;
use crate::io::{load_tensors, save_model, NamedTensor, TensorData};
use std::collections::BTreeMap;
use std::path::Path;

/// The `format` metadata value of Potts model files.
pub const FORMAT: &str = "boltzkit/potts/v1";

impl Potts {
    /// The couplings as a dense `L × L × q × q` array (C order, `q = max_i q_i`): symmetric,
    /// zero on the diagonal blocks and in the padding of sites with fewer states.
    pub fn couplings_dense(&self) -> Vec<f64> {
        let (l, q) = (self.n_sites(), self.max_states());
        let mut out = vec![0.0; l * l * q * q];
        for i in 0..l {
            for j in i + 1..l {
                let (qi, qj) = (self.states()[i], self.states()[j]);
                let block = self.coupling(i, j);
                for a in 0..qi {
                    for b in 0..qj {
                        let v = block[a * qj + b];
                        out[((i * l + j) * q + a) * q + b] = v;
                        out[((j * l + i) * q + b) * q + a] = v;
                    }
                }
            }
        }
        out
    }

    /// The fields as a dense `L × q` array (C order, padding 0).
    pub fn fields_dense(&self) -> Vec<f64> {
        let (l, q) = (self.n_sites(), self.max_states());
        let mut out = vec![0.0; l * q];
        for i in 0..l {
            out[i * q..i * q + self.states()[i]].copy_from_slice(self.field(i));
        }
        out
    }

    /// `max_i q_i`.
    pub fn max_states(&self) -> usize {
        self.states().iter().copied().max().unwrap_or(0)
    }

    /// Writes the model atomically with `extra` metadata (`format` and `alphabet` are set
    /// here).
    pub fn save(&self, path: &Path, extra: &BTreeMap<String, String>) -> Result<()> {
        let (l, q) = (self.n_sites(), self.max_states());
        let states: Vec<u64> = self.states().iter().map(|&k| k as u64).collect();
        let mut tensors = vec![
            NamedTensor::new("h", vec![l, q], TensorData::F64(self.fields_dense()))?,
            NamedTensor::new(
                "J",
                vec![l, l, q, q],
                TensorData::F64(self.couplings_dense()),
            )?,
            NamedTensor::new("states", vec![l], TensorData::U64(states))?,
        ];
        if let Some(sites) = self.sites() {
            let s = sites.iter().map(|&c| c as u64).collect();
            tensors.push(NamedTensor::new("sites", vec![l], TensorData::U64(s))?);
        }
        let mut fields = Vec::new();
        if let Some(a) = self.alphabet() {
            fields.push(("alphabet", a));
        }
        save_model(path, FORMAT, &tensors, extra, &fields)
    }

    /// Reads a model written by [`Potts::save`], checking shapes, symmetry and padding.
    pub fn load(path: &Path) -> Result<Self> {
        let file = load_tensors(path)?;
        file.require_format(FORMAT)?;
        let (sshape, states) = file.u64("states")?;
        let l = states.len();
        if sshape.len() != 1 || l == 0 {
            return Err(file.invalid(format!(
                "`states` must have shape [L], L ≥ 1, found {sshape:?}"
            )));
        }
        let q_of: Vec<usize> = states.iter().map(|&k| k as usize).collect();
        let q = q_of.iter().copied().max().unwrap_or(0);
        let (hshape, h) = file.f64("h")?;
        let (jshape, j) = file.f64("J")?;
        if hshape != [l, q] || jshape != [l, l, q, q] {
            return Err(file.invalid(format!(
                "with L = {l} sites and at most q = {q} states, `h` must have shape [{l}, {q}] \
                 and `J` [{l}, {l}, {q}, {q}]; found {hshape:?} and {jshape:?}"
            )));
        }
        let mut m = Potts::zeros(q_of.clone()).map_err(|e| file.invalid(e.to_string()))?;
        for i in 0..l {
            let row = &h[i * q..(i + 1) * q];
            if row[q_of[i]..].iter().any(|&v| v != 0.0) {
                return Err(file.invalid(format!(
                    "`h` is nonzero beyond site {i}'s {} states",
                    q_of[i]
                )));
            }
            m.field_mut(i).copy_from_slice(&row[..q_of[i]]);
        }
        for i in 0..l {
            for jj in 0..l {
                for a in 0..q {
                    for b in 0..q {
                        let v = j[((i * l + jj) * q + a) * q + b];
                        let inside = i != jj && a < q_of[i] && b < q_of[jj];
                        if !inside && v != 0.0 {
                            return Err(file.invalid(format!(
                                "`J[{i}, {jj}, {a}, {b}]` = {v} must be 0 (diagonal block or padding)"
                            )));
                        }
                        if inside && v != j[((jj * l + i) * q + b) * q + a] {
                            return Err(file.invalid(format!(
                                "`J` is not symmetric: J[{i}, {jj}, {a}, {b}] ≠ J[{jj}, {i}, {b}, {a}]"
                            )));
                        }
                    }
                }
            }
        }
        for i in 0..l {
            for jj in i + 1..l {
                let qj = q_of[jj];
                let block = m.coupling_mut(i, jj);
                for a in 0..q_of[i] {
                    for b in 0..qj {
                        block[a * qj + b] = j[((i * l + jj) * q + a) * q + b];
                    }
                }
            }
        }
        if let Some((k, _)) = m
            .fields_flat()
            .iter()
            .chain(m.couplings_flat())
            .enumerate()
            .find(|(_, v)| !v.is_finite())
        {
            return Err(file.invalid(format!("parameter {k} is not finite")));
        }
        if file.tensors.contains_key("sites") {
            let (shape, sites) = file.u64("sites")?;
            if shape != [l] {
                return Err(file.invalid(format!("`sites` must have shape [{l}], found {shape:?}")));
            }
            m = m
                .with_sites(sites.iter().map(|&c| c as usize).collect())
                .map_err(|e| file.invalid(e.to_string()))?;
        }
        if let Some(a) = file.metadata.get("alphabet") {
            m = m
                .with_alphabet(a)
                .map_err(|e| file.invalid(format!("metadata `alphabet`: {e}")))?;
        }
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::{save_tensors, TensorData};

    #[test]
    fn round_trip_with_mixed_states_alphabet_and_sites() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.safetensors");
        let mut m = Potts::zeros(vec![3, 2, 3]).unwrap();
        let (h, j) = m.parameters_mut();
        h.iter_mut()
            .enumerate()
            .for_each(|(k, v)| *v = k as f64 * 0.1 - 0.3);
        j.iter_mut()
            .enumerate()
            .for_each(|(k, v)| *v = (k % 7) as f64 - 3.0);
        let extra = BTreeMap::from([("settings".to_string(), "{}".to_string())]);
        m.save(&p, &extra).unwrap();
        let back = Potts::load(&p).unwrap();
        assert_eq!(back, m);
        let file = load_tensors(&p).unwrap();
        assert_eq!(file.meta("settings").unwrap(), "{}");
        assert_eq!(file.f64("J").unwrap().0, &[3, 3, 3, 3]);

        let m = Potts::zeros(vec![3, 3])
            .unwrap()
            .with_alphabet("_*^")
            .unwrap()
            .with_sites(vec![1, 4])
            .unwrap();
        m.save(&p, &BTreeMap::new()).unwrap();
        assert_eq!(Potts::load(&p).unwrap(), m);

        // An asymmetric J is refused with the file named.
        let mut file = load_tensors(&p).unwrap();
        let t = file.tensors.get_mut("J").unwrap();
        if let TensorData::F64(v) = &mut t.data {
            v[9] = 1.0; // J[0, 1, 0, 0]
        }
        let tensors: Vec<_> = file.tensors.values().cloned().collect();
        save_tensors(&p, &tensors, &file.metadata).unwrap();
        let e = Potts::load(&p).unwrap_err().to_string();
        assert!(
            e.contains("symmetric") && e.contains("m.safetensors"),
            "{e}"
        );
    }
}
