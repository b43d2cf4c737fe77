//! `rbm couplings`: the effective couplings of a model with categorical visible units
//! (`boltzkit::rbm::units::effective_couplings`, Tubiana et al. 2019) over its data, scored as
//! DCA scores a Potts model's couplings (Frobenius norm, APC) and written as plmc's couplings
//! file, which `potts contacts --couplings` ranks against a structure.

use super::units_data::{is_alignment, sample_weights, state_rows, Source};
use super::units_flags::UnitEvalFlags;
use crate::args::CommonArgs;
use crate::commands::potts::scores::ScoreFiles;
use crate::guard;
use crate::report::Summary;
use boltzkit::data::{read_dataset, ReadOptions};
use boltzkit::potts::scores::write_score_files;
use boltzkit::potts::{read_alignment, AlignmentParams};
use boltzkit::rbm::units::{effective_couplings, load_unit_rbm, CouplingParams};
use clap::Args;
use serde::Serialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub(super) struct CouplingsArgs {
    /// The model file (boltzkit/rbm/v2 with categorical visible units)
    #[arg(long, value_name = "FILE")]
    model: PathBuf,
    /// The rows the couplings average over, as the model was fitted: an alignment
    /// (.fasta/.a2m/.sto, read as `rbm fit` reads it; its positions name the pairs) or codes
    #[arg(long, value_name = "FILE")]
    data: PathBuf,
    #[command(flatten)]
    units: UnitEvalFlags,
    /// Bins of each hidden unit's input over the rows (PGM's nbins); 0 averages over every
    /// row exactly (rows × q² terms per pair and hidden unit)
    #[arg(long, value_name = "N", default_value_t = CouplingParams::default().bins)]
    bins: usize,
    #[command(flatten)]
    files: ScoreFiles,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Serialize)]
struct CouplingsSummary<'a> {
    model: &'a Path,
    data: &'a Path,
    samples: usize,
    sites: usize,
    hidden: usize,
    weighted: bool,
    bins: usize,
    output: Option<&'a Path>,
    /// The best-scored pair `(i, j, score)`.
    top_pair: (i64, i64, f64),
}

/// The rows, each site's position and focus letter, and the gap's code, of `path`.
struct Sites {
    source: Source,
    positions: Vec<i64>,
    letters: Option<Vec<char>>,
    gap: Option<u8>,
}

fn read_sites(path: &Path) -> anyhow::Result<Sites> {
    if is_alignment(path) {
        let ali = read_alignment(path, &AlignmentParams::default())?;
        return Ok(Sites {
            source: Source::Codes(ali.dataset()?),
            positions: ali.positions.clone(),
            letters: ali.focus_letters(),
            gap: ali.alphabet.gap(),
        });
    }
    let data = read_dataset(path, &ReadOptions::default())?;
    data.require_nonempty()?;
    let positions = (1..=data.n_vars() as i64).collect();
    Ok(Sites {
        source: Source::Codes(data),
        positions,
        letters: None,
        gap: None,
    })
}

impl CouplingsArgs {
    /// Loads the model and the rows, computes the couplings and their scores, writes them.
    pub(super) fn run(self) -> anyhow::Result<()> {
        self.common.init_threads()?;
        self.files.require_one()?;
        guard::distinct_files(&[Some(&self.model), Some(&self.data)], &self.files.paths())?;
        let model = load_unit_rbm(&self.model)?.model;
        let sites = read_sites(&self.data)?;
        let rows = state_rows(&self.data, model.visible(), &sites.source)?;
        let weights = sample_weights(
            self.units.weights.as_deref(),
            self.units.reweight,
            &sites.source,
        )?;
        let params = CouplingParams { bins: self.bins };
        let couplings = effective_couplings(&model, &rows, weights.as_deref(), &params)?;
        let matrix = couplings.scores(sites.gap, &self.files.scores.params())?;
        let [output, matrix_file] = self.files.paths();
        let letters = sites.letters.as_deref();
        write_score_files(&matrix, &sites.positions, letters, output, matrix_file)?;
        let l = matrix.nrows();
        let (ti, tj) = (0..l)
            .flat_map(|i| (i + 1..l).map(move |j| (i, j)))
            .max_by(|a, b| matrix[*a].total_cmp(&matrix[*b]))
            .unwrap_or((0, 1));
        let summary = CouplingsSummary {
            model: &self.model,
            data: &self.data,
            samples: sites.source.n_rows(),
            sites: l,
            hidden: model.hidden().n_units(),
            weighted: weights.is_some(),
            bins: self.bins,
            output: self.files.output.as_deref(),
            top_pair: (sites.positions[ti], sites.positions[tj], matrix[(ti, tj)]),
        };
        Summary::new("rbm couplings", None)
            .extend(&summary)?
            .emit(&self.common)
    }
}
