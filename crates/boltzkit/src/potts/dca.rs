//! The direct-coupling-analysis pipeline that the command line and the Python package share:
//! an [`Alignment`] and its sequence weights ([`Weighting`]) → the pseudo-likelihood fit →
//! a [`Potts`] model that knows its alphabet and alignment columns, with the [`DcaInfo`] its
//! model file keeps (plmc's positions, the focus letters, how it was weighted) → coupling
//! scores named by those positions ([`scored_pairs`]).

use super::alignment::{unfittable, Alignment};
use super::alphabet::Alphabet;
use super::model::Potts;
use super::plm::{CheckedPlmParams, PlmParams, PlmRecord};
use super::scores::{model_scores, pair_scores, PairScore, ScoreParams};
use super::weights::{read_weights, sequence_weights};
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::fit::{Fit, Run};
use crate::model::Metadata;
use ndarray::Array2;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The pipeline's L-BFGS budget (`max_iterations` of [`pipeline_params`]): on PF00014 the
/// precision of the top L pairs is 0.943 after 12 iterations and 1.000 after 25, as plmc's
/// after 100 (BENCHMARKS.md); 2000 (the engine's default) runs to plmc's convergence test.
pub const DEFAULT_ITERATIONS: usize = 30;

/// The settings of the pipeline's fit (CLI `potts fit` and Python `Potts` defaults): plmc's
/// objective and penalty ([`PlmParams::plmc`]) with [`DEFAULT_ITERATIONS`].
pub fn pipeline_params() -> PlmParams {
    PlmParams {
        max_iterations: DEFAULT_ITERATIONS,
        ..PlmParams::plmc()
    }
}

/// The metadata key of a model file holding its [`DcaInfo`] (JSON).
pub const INFO_KEY: &str = "dca";

/// How the sequences of an alignment are weighted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Weighting {
    /// `1 / (neighbours at identity ≥ θ)` ([`super::weights`]); plmc's default θ = 0.8.
    Identity(f64),
    /// Every sequence weighs 1 (plmc's `-t -1`).
    Uniform,
    /// A weights file in plmc's format, one line per sequence of the alignment file.
    File(PathBuf),
}

impl Default for Weighting {
    fn default() -> Self {
        Weighting::Identity(super::weights::DEFAULT_IDENTITY)
    }
}

impl Weighting {
    /// The weights of the kept sequences of `ali`.
    pub fn weights(&self, ali: &Alignment) -> Result<Vec<f64>> {
        match self {
            Weighting::Identity(t) => sequence_weights(ali.codes.view(), *t),
            Weighting::Uniform => Ok(vec![1.0; ali.n_sequences()]),
            Weighting::File(path) => ali.gather(&read_weights(path, Some(ali.n_read))?),
        }
    }
}

/// What a DCA model file records beyond the model (metadata key [`INFO_KEY`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DcaInfo {
    /// Each site's position as plmc reports it ([`Alignment::positions`]).
    pub positions: Vec<i64>,
    /// The focus sequence's letter at each site, when the alignment had a focus.
    pub focus_letters: Option<String>,
    /// The alphabet the alignment was read with (the model's own lacks an ignored gap).
    pub alignment_alphabet: String,
    /// The code treated as missing by the fit (the gap, plmc's `-g`), if any.
    pub ignored_state: Option<u8>,
    /// How the sequences were weighted.
    pub weighting: Weighting,
    /// The number of sequences fitted and their effective number (sum of weights).
    pub n_sequences: usize,
    /// The sum of the weights.
    pub n_eff: f64,
}

impl DcaInfo {
    /// The metadata entry.
    pub fn to_metadata(&self, meta: &mut Metadata) -> Result<()> {
        let text = serde_json::to_string(self)
            .map_err(|e| Error::Internal(format!("DcaInfo as JSON: {e}")))?;
        meta.insert(INFO_KEY.to_string(), text);
        Ok(())
    }

    /// Everything a DCA model file records: this info and [`fit_metadata`].
    pub fn metadata(&self, learner: &CheckedPlmParams, record: &PlmRecord) -> Result<Metadata> {
        let mut meta = fit_metadata(learner, record)?;
        self.to_metadata(&mut meta)?;
        Ok(meta)
    }

    /// The info a model file records, if it has any (a model not fitted to an alignment has
    /// none).
    pub fn read(path: &Path) -> Result<Option<DcaInfo>> {
        let file = crate::io::load_tensors(path)?;
        let Ok(text) = file.meta(INFO_KEY) else {
            return Ok(None);
        };
        serde_json::from_str(text)
            .map(Some)
            .map_err(|e| file.invalid(format!("metadata `{INFO_KEY}`: {e}")))
    }
}

/// What a Potts model file records of its fit (CLI and Python alike): the algorithm
/// (`plm-symmetric` or `plm-asymmetric`), the settings (JSON) and the stop reason.
pub fn fit_metadata(learner: &CheckedPlmParams, record: &PlmRecord) -> Result<Metadata> {
    let mut meta = Metadata::new();
    let p = learner.params();
    let mode = serde_json::to_value(p.mode)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    meta.insert("algorithm".into(), format!("plm-{mode}"));
    let settings =
        serde_json::to_string(p).map_err(|e| Error::Internal(format!("PlmParams as JSON: {e}")))?;
    meta.insert("settings".into(), settings);
    meta.insert("stop_reason".into(), record.stop.to_string());
    Ok(meta)
}

/// Fits a Potts model to coded sequences (`data`, codes of `alphabet` when given) with
/// per-row `weights` (default 1): the engine's fit, the model's alphabet the given one less the
/// state the fit ignores ([`super::plm::PlmParams::gap_state`]). Data no model can be fitted
/// to (one row, a column of the alphabet's gap only: [`unfittable`]) is refused first.
pub fn fit_codes(
    data: &Dataset,
    weights: Option<&[f64]>,
    alphabet: Option<&Alphabet>,
    learner: &CheckedPlmParams,
    run: Run<'_, CheckedPlmParams>,
) -> Result<Fit<Potts, PlmRecord>> {
    let column = |c: usize| format!("column {}", c + 1);
    if let Some((expected, found)) = unfittable(
        data.values().view(),
        alphabet.and_then(Alphabet::gap),
        column,
    ) {
        return Err(Error::InvalidData(format!(
            "expected {expected}, found {found}"
        )));
    }
    let ignored = learner.params().gap_state;
    if let (Some(g), Some(a)) = (ignored, alphabet) {
        if usize::from(g) >= a.len() {
            return Err(Error::param(
                "gap_state",
                format!("{g} is not a code of {a} (codes 0..{})", a.len()),
            ));
        }
    }
    let fit = learner.fit_weighted(data, weights, run)?;
    let model = match alphabet {
        Some(a) => {
            let letters: String = a
                .letters()
                .chars()
                .enumerate()
                .filter(|&(k, _)| Some(k as u8) != ignored)
                .map(|(_, c)| c)
                .collect();
            fit.model.with_alphabet(&letters)?
        }
        None => fit.model,
    };
    Ok(Fit {
        model,
        record: fit.record,
    })
}

/// Fits a Potts model to the kept sequences of `ali` with `weights` (one per kept sequence)
/// ([`fit_codes`]); the model's sites are the alignment's columns.
pub fn fit_alignment(
    ali: &Alignment,
    weights: &[f64],
    weighting: &Weighting,
    learner: &CheckedPlmParams,
    run: Run<'_, CheckedPlmParams>,
) -> Result<(Fit<Potts, PlmRecord>, DcaInfo)> {
    let fit = fit_codes(
        &ali.dataset()?,
        Some(weights),
        Some(&ali.alphabet),
        learner,
        run,
    )?;
    let model = fit.model.with_sites(ali.columns.clone())?;
    let info = DcaInfo {
        positions: ali.positions.clone(),
        focus_letters: ali.focus_letters().map(|v| v.into_iter().collect()),
        alignment_alphabet: ali.alphabet.spec().to_string(),
        ignored_state: learner.params().gap_state,
        weighting: weighting.clone(),
        n_sequences: ali.n_sequences(),
        n_eff: fit.record.n_eff,
    };
    Ok((
        Fit {
            model,
            record: fit.record,
        },
        info,
    ))
}

/// The pseudo-log-likelihood `Σ_i ln p(s_i | s_{−i})` of every row of `data` (codes of the
/// model's states), rows in parallel.
pub fn pseudo_log_likelihoods(model: &Potts, data: &Dataset) -> Result<Vec<f64>> {
    use rayon::prelude::*;
    model.log_potentials(data)?;
    let q = model.states();
    let values = data.values();
    Ok((0..data.n_samples())
        .into_par_iter()
        .map(|r| {
            let s = values.row(r);
            let mut total = 0.0;
            let mut f = Vec::with_capacity(model.max_states());
            for i in 0..q.len() {
                f.clear();
                f.extend((0..q[i]).map(|a| {
                    model.field(i)[a]
                        + (0..q.len())
                            .filter(|&j| j != i)
                            .map(|j| model.coupling_value(i, j, a, usize::from(s[j])))
                            .sum::<f64>()
                }));
                total += f[usize::from(s[i])] - crate::linalg::log_sum_exp(&f);
            }
            total
        })
        .collect())
}

/// A model's coupling scores ([`scored_pairs`]).
#[derive(Debug, Clone)]
pub struct ScoredPairs {
    /// The `L × L` score matrix.
    pub matrix: Array2<f64>,
    /// The pairs `i < j`, named by `positions`.
    pub pairs: Vec<PairScore>,
    /// Each site's position (plmc's, else 1..L).
    pub positions: Vec<i64>,
    /// The focus sequence's letter at each site, when known.
    pub letters: Option<Vec<char>>,
}

/// The scores of `model` as an `L × L` matrix and as pairs named by the positions of `info`
/// (else 1..L), with the focus letters when known.
pub fn scored_pairs(
    model: &Potts,
    info: Option<&DcaInfo>,
    params: &ScoreParams,
) -> Result<ScoredPairs> {
    let matrix = model_scores(model, params)?;
    let positions = match info {
        Some(i) if i.positions.len() == model.n_sites() => i.positions.clone(),
        _ => (1..=model.n_sites() as i64).collect(),
    };
    let letters = info
        .and_then(|i| i.focus_letters.as_ref())
        .map(|s| s.chars().collect::<Vec<char>>())
        .filter(|v| v.len() == model.n_sites());
    let pairs = pair_scores(&matrix, &positions)?;
    Ok(ScoredPairs {
        matrix,
        pairs,
        positions,
        letters,
    })
}

/// The energies `E(s) = −Σ_i h_i(s_i) − Σ_{i<j} J_ij(s_i, s_j)` of the sequences of `data`
/// (codes of the alignment alphabet): when the model ignores a state (`ignored`, plmc's
/// `-g`), sites holding it add nothing and codes above it shift down by one.
pub fn energies(model: &Potts, data: &Dataset, ignored: Option<u8>) -> Result<Vec<f64>> {
    let Some(g) = ignored else {
        return model.energies(data);
    };
    if data.n_vars() != model.n_sites() {
        return Err(Error::Shape {
            op: "potts::dca::energies".into(),
            expected: format!("{} sites", model.n_sites()),
            found: format!("{}", data.n_vars()),
        });
    }
    let q = model.states();
    let mut out = Vec::with_capacity(data.n_samples());
    for row in data.values().outer_iter() {
        let code = |i: usize| -> Result<Option<usize>> {
            let c = row[i];
            if c == g {
                return Ok(None);
            }
            let k = usize::from(c) - usize::from(c > g);
            if k >= q[i] {
                return Err(Error::InvalidData(format!(
                    "state {c} at site {i}, which has {} states besides the ignored {g}",
                    q[i]
                )));
            }
            Ok(Some(k))
        };
        let codes: Vec<Option<usize>> = (0..q.len()).map(code).collect::<Result<_>>()?;
        let mut v = 0.0;
        for (i, a) in codes.iter().enumerate() {
            let Some(a) = *a else { continue };
            v += model.field(i)[a];
            for (j, b) in codes.iter().enumerate().skip(i + 1) {
                if let Some(b) = *b {
                    v += model.coupling(i, j)[a * q[j] + b];
                }
            }
        }
        out.push(-v);
    }
    Ok(out)
}

/// The alphabet a DCA model reads sequences with: the alignment's ([`DcaInfo`]), else the
/// model's own.
pub fn reading_alphabet(model: &Potts, info: Option<&DcaInfo>) -> Result<Alphabet> {
    match (info, model.alphabet()) {
        (Some(i), _) => Alphabet::parse(&i.alignment_alphabet),
        (None, Some(a)) => Alphabet::parse(&a),
        (None, None) => Err(Error::param(
            "alphabet",
            "the model names no alphabet; give one to read sequences",
        )),
    }
}

#[cfg(test)]
mod tests;
