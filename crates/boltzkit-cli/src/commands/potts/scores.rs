//! `boltzkit potts scores`: a model's coupling scores as plmc's couplings file and a matrix.

use super::input::load_model;
use crate::args::CommonArgs;
use crate::guard;
use crate::report::Summary;
use boltzkit::potts::dca::{scored_pairs, DcaInfo};
use boltzkit::potts::scores::{write_couplings, write_matrix, PairScore, ScoreParams};
use boltzkit::potts::Potts;
use clap::Args;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// How scores are computed (`--no-apc`, `--exclude-gap`).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Scores")]
pub(crate) struct ScoreFlags {
    /// Raw Frobenius norms, without the average product correction
    #[arg(long)]
    no_apc: bool,
    /// Leave the gap's row and column out of each norm (after the zero-sum gauge; PlmDCA)
    #[arg(long)]
    exclude_gap: bool,
}

impl ScoreFlags {
    /// The library's settings.
    pub(crate) fn params(&self) -> ScoreParams {
        ScoreParams {
            apc: !self.no_apc,
            exclude_gap: self.exclude_gap,
        }
    }
}

/// Writes the couplings file and the matrix asked for; returns the scored pairs.
pub(super) fn write_scores(
    model: &Potts,
    info: Option<&DcaInfo>,
    flags: &ScoreFlags,
    couplings: Option<&Path>,
    matrix: Option<&Path>,
) -> anyhow::Result<Vec<PairScore>> {
    let s = scored_pairs(model, info, &flags.params())?;
    if let Some(path) = couplings {
        write_couplings(path, &s.matrix, &s.positions, s.letters.as_deref())?;
    }
    if let Some(path) = matrix {
        write_matrix(path, &s.matrix)?;
    }
    Ok(s.pairs)
}

#[derive(Debug, Args)]
pub(super) struct ScoresArgs {
    /// The model file (safetensors, boltzkit/potts/v1)
    #[arg(long, value_name = "FILE")]
    model: PathBuf,
    /// Where to write plmc's couplings file (`i A_i j A_j 0 score`)
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Where to write the L × L score matrix (.npy, else text)
    #[arg(long, value_name = "FILE")]
    matrix: Option<PathBuf>,
    #[command(flatten)]
    scores: ScoreFlags,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Serialize)]
struct ScoresSummary<'a> {
    model: &'a Path,
    sites: usize,
    pairs: usize,
    apc: bool,
    top_pair: Option<(i64, i64, f64)>,
    output: Option<&'a Path>,
    matrix: Option<&'a Path>,
}

impl ScoresArgs {
    pub(super) fn run(self) -> anyhow::Result<()> {
        self.common.init_threads()?;
        if self.output.is_none() && self.matrix.is_none() {
            return Err(crate::exit::UsageError::new(
                "nothing to write: give -o COUPLINGS and/or --matrix FILE",
            )
            .into());
        }
        guard::distinct_files(
            &[Some(&self.model)],
            &[self.output.as_deref(), self.matrix.as_deref()],
        )?;
        let (model, info) = load_model(&self.model)?;
        let pairs = write_scores(
            &model,
            info.as_ref(),
            &self.scores,
            self.output.as_deref(),
            self.matrix.as_deref(),
        )?;
        let top = pairs
            .iter()
            .max_by(|a, b| a.score.total_cmp(&b.score))
            .map(|p| (p.i, p.j, p.score));
        let summary = ScoresSummary {
            model: &self.model,
            sites: model.n_sites(),
            pairs: pairs.len(),
            apc: !self.scores.no_apc,
            top_pair: top,
            output: self.output.as_deref(),
            matrix: self.matrix.as_deref(),
        };
        Summary::new("potts scores", None)
            .extend(&summary)?
            .emit(&self.common)
    }
}
