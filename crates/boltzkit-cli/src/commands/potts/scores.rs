//! `boltzkit potts scores`: a model's coupling scores as plmc's couplings file and a matrix.

use super::input::load_model;
use crate::args::CommonArgs;
use crate::guard;
use crate::report::Summary;
use boltzkit::potts::dca::{scored_pairs, DcaInfo};
use boltzkit::potts::scores::{write_score_files, PairScore, ScoreParams};
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
    write_score_files(
        &s.matrix,
        &s.positions,
        s.letters.as_deref(),
        couplings,
        matrix,
    )?;
    Ok(s.pairs)
}

/// Where `potts scores` and `rbm couplings` write scores, and how they compute them.
#[derive(Debug, Clone, Args)]
pub(crate) struct ScoreFiles {
    /// Where to write plmc's couplings file (`i A_i j A_j 0 score`)
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
    /// Where to write the L × L score matrix (.npy, else text)
    #[arg(long, value_name = "FILE")]
    pub(crate) matrix: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) scores: ScoreFlags,
}

impl ScoreFiles {
    /// Fails (usage, exit 2) when neither file is asked for.
    pub(crate) fn require_one(&self) -> anyhow::Result<()> {
        if self.output.is_none() && self.matrix.is_none() {
            return Err(crate::exit::UsageError::new(
                "nothing to write: give -o COUPLINGS and/or --matrix FILE",
            )
            .into());
        }
        Ok(())
    }

    /// The files asked for (for the input/output distinctness check).
    pub(crate) fn paths(&self) -> [Option<&Path>; 2] {
        [self.output.as_deref(), self.matrix.as_deref()]
    }
}

#[derive(Debug, Args)]
pub(super) struct ScoresArgs {
    /// The model file (safetensors, boltzkit/potts/v1)
    #[arg(long, value_name = "FILE")]
    model: PathBuf,
    #[command(flatten)]
    files: ScoreFiles,
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
        self.files.require_one()?;
        guard::distinct_files(&[Some(&self.model)], &self.files.paths())?;
        let (model, info) = load_model(&self.model)?;
        let pairs = write_scores(
            &model,
            info.as_ref(),
            &self.files.scores,
            self.files.output.as_deref(),
            self.files.matrix.as_deref(),
        )?;
        let top = pairs
            .iter()
            .max_by(|a, b| a.score.total_cmp(&b.score))
            .map(|p| (p.i, p.j, p.score));
        let summary = ScoresSummary {
            model: &self.model,
            sites: model.n_sites(),
            pairs: pairs.len(),
            apc: !self.files.scores.no_apc,
            top_pair: top,
            output: self.files.output.as_deref(),
            matrix: self.files.matrix.as_deref(),
        };
        Summary::new("potts scores", None)
            .extend(&summary)?
            .emit(&self.common)
    }
}
