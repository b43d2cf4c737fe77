//! `boltzkit potts fit`: alignment → weights → pseudo-likelihood fit → model, couplings file.

use super::input::{AlignmentFlags, WeightFlags};
use super::scores::{write_scores, ScoreFlags};
use crate::args::CommonArgs;
use crate::exit::UsageError;
use crate::guard;
use crate::interrupt::{self, interrupted_after};
use crate::progress;
use crate::report::Summary;
use boltzkit::fit::{Control, Run};
use boltzkit::potts::dca::{fit_alignment, pipeline_params, DcaInfo};
use boltzkit::potts::plm::{PlmMode, PlmParams, PlmProgress};
use boltzkit::potts::weights::write_weights;
use boltzkit::settings;
use clap::{Args, ValueEnum};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Instant;

pub(super) const LONG_ABOUT: &str = "Fit a Potts model to a multiple sequence alignment by \
pseudo-likelihood: plmc's symmetric PLM with its DCA penalty (λ_J = 16, λ_h = 0.01) by \
default, sequences weighted by 1 / (neighbours at identity ≥ 0.8), 30 L-BFGS iterations \
(--max-iterations 2000 runs to convergence). --penalty evcouplings \
(λ_J = 0.01 (q − 1)(L − 1), also GREMLIN's) or ccmpred (0.2 (L − 1)); --mode asymmetric is \
PlmDCA's. --ignore-gaps models only the non-gap letters (plmc's -g). Writes the model (-o, \
safetensors), plmc's couplings file (--couplings: APC-corrected Frobenius scores, `i A_i j \
A_j 0 score`) and the score matrix (--matrix); Ctrl-C stops after the current iteration and \
writes what it has.\n\n\
Examples:\n  boltzkit potts fit --data PF00014_mgap6.fasta.gz -o pf14.safetensors --couplings \
pf14.couplings\n  boltzkit potts fit --data DHFR.a2m --focus DYR_ECOLI --skip-unknown \
--ignore-gaps -o dhfr.safetensors --couplings dhfr.couplings";

/// The penalty presets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum PenaltyArg {
    /// λ_J = 16, λ_h = 0.01 (plmc's -le 16 -lh 0.01)
    Plmc,
    /// λ_J = 0.01 (q − 1)(L − 1), λ_h = 0.01 (EVcouplings, GREMLIN)
    Evcouplings,
    /// λ_J = 0.2 (L − 1), λ_h = 0.01 (CCMpred)
    Ccmpred,
}

/// Which pseudo-likelihood (serialized as the schema's `mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
enum ModeArg {
    /// One joint objective (plmc; the library's default)
    Symmetric,
    /// Each site's conditional on its own, couplings averaged (PlmDCA)
    Asymmetric,
}

/// The engine's flags, serialized under the schema's names ([`PlmParams`]) and put over the
/// preset's settings (`settings::overlay`): a flag left out is left out of the object, and
/// each default shown is read from the library ([`pipeline_params`]).
#[derive(Debug, Args, Serialize)]
struct PlmFlags {
    /// Symmetric or asymmetric pseudo-likelihood [default: the library's, symmetric]
    #[arg(long, value_enum)]
    #[serde(skip_serializing_if = "Option::is_none")]
    mode: Option<ModeArg>,
    /// λ_J of the couplings, replacing the preset's (scaled as the preset scales it)
    #[arg(long, value_name = "λ")]
    #[serde(skip_serializing_if = "Option::is_none")]
    lambda_j: Option<f64>,
    /// λ_h of the fields, replacing the preset's
    #[arg(long, value_name = "λ")]
    #[serde(skip_serializing_if = "Option::is_none")]
    lambda_h: Option<f64>,
    /// Group-L1 weight of each pair's couplings (plmc's -lg)
    #[arg(long, value_name = "λ", default_value_t = pipeline_params().lambda_group)]
    lambda_group: f64,
    /// Most L-BFGS iterations (plmc's -m): the pipeline's budget (contact precision has
    /// settled by then); 2000 to run to plmc's convergence test
    #[arg(long, value_name = "N", default_value_t = pipeline_params().max_iterations)]
    max_iterations: usize,
    /// Stop when ‖∇f‖ ≤ this × max(1, ‖x‖) (plmc's test)
    #[arg(long, value_name = "X", default_value_t = pipeline_params().grad_tol)]
    grad_tol: f64,
}

#[derive(Debug, Args)]
pub(super) struct FitArgs {
    /// The alignment (FASTA, A2M, Stockholm; .gz read transparently)
    #[arg(long, value_name = "FILE")]
    data: PathBuf,
    #[command(flatten)]
    alignment: AlignmentFlags,
    #[command(flatten)]
    weights: WeightFlags,
    /// The L2 penalty users know by its program
    #[arg(long, value_enum, default_value_t = PenaltyArg::Plmc)]
    penalty: PenaltyArg,
    #[command(flatten)]
    engine: PlmFlags,
    /// Model only the non-gap letters: gaps are missing data (plmc's -g)
    #[arg(long)]
    ignore_gaps: bool,
    /// Where to write the model (safetensors)
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Where to write plmc's couplings file (APC-corrected scores)
    #[arg(long, value_name = "FILE")]
    couplings: Option<PathBuf>,
    /// Where to write the L × L score matrix (.npy, else text)
    #[arg(long, value_name = "FILE")]
    matrix: Option<PathBuf>,
    /// Where to write the sequence weights (plmc's format)
    #[arg(long, value_name = "FILE")]
    save_weights: Option<PathBuf>,
    #[command(flatten)]
    scores: ScoreFlags,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Serialize)]
struct FitSummary<'a> {
    data: &'a Path,
    sequences: usize,
    sites: usize,
    states: usize,
    n_eff: f64,
    mode: PlmMode,
    lambda_j: f64,
    lambda_h: f64,
    stop_reason: String,
    iterations: usize,
    objective: f64,
    weights_s: f64,
    fit_s: f64,
    output: Option<&'a Path>,
    couplings: Option<&'a Path>,
}

impl FitArgs {
    /// The engine's settings: the flags over the penalty preset's.
    fn plm_params(&self) -> anyhow::Result<PlmParams> {
        let preset = match self.penalty {
            PenaltyArg::Plmc => PlmParams::plmc(),
            PenaltyArg::Evcouplings => PlmParams::evcouplings(),
            PenaltyArg::Ccmpred => PlmParams::ccmpred(),
        };
        let mut p = settings::overlay(&preset, &self.engine)?;
        if self.ignore_gaps {
            let alphabet = self.alignment.params()?.alphabet;
            p.gap_state = Some(alphabet.gap().ok_or_else(|| {
                UsageError::new(format!(
                    "--ignore-gaps: {alphabet} has no gap (a first letter '-' or '.')"
                ))
            })?);
        }
        Ok(p)
    }

    /// Refuses bad outputs before any work: nothing to write, a model not named
    /// `*.safetensors`, an output that is an input or another output.
    fn check_outputs(&self) -> anyhow::Result<()> {
        if self.output.is_none() && self.couplings.is_none() && self.matrix.is_none() {
            return Err(UsageError::new(
                "nothing to write: give -o MODEL.safetensors, --couplings FILE or --matrix FILE",
            )
            .into());
        }
        guard::model_files(
            &[Some(&self.data), self.weights.file()],
            &[("-o", self.output.as_deref())],
            &[
                self.couplings.as_deref(),
                self.matrix.as_deref(),
                self.save_weights.as_deref(),
            ],
        )
    }

    pub(super) fn run(self) -> anyhow::Result<()> {
        self.common.init_threads()?;
        let params = self.plm_params()?;
        let learner = params.check()?;
        self.check_outputs()?;
        let ali = self.alignment.read_fittable(&self.data)?;
        let q_model = ali.alphabet.len() - usize::from(params.gap_state.is_some());
        guard::memory(
            &format!("potts fit of {} × {}", ali.n_sequences(), ali.n_sites()),
            params.memory_estimate(ali.n_sequences() as u64, &vec![q_model; ali.n_sites()]),
        )?;
        let weighting = self.weights.weighting();
        let start = Instant::now();
        let weights = weighting.weights(&ali)?;
        let weights_s = start.elapsed().as_secs_f64();
        if let Some(path) = &self.save_weights {
            write_weights(path, &ali.spread(&weights, 0.0)?)?;
        }
        let bar = progress::spinner("pseudo-likelihood fit", self.common.quiet);
        let run = Run::new()
            .observe(|p: &mut PlmProgress| {
                bar.set_message(format!(
                    "iteration {}: objective {:.6e}, |grad| {:.3e}",
                    p.iteration, p.objective, p.grad_norm
                ));
                Ok(Control::Continue)
            })
            .interrupt(interrupt::flag());
        let start = Instant::now();
        let (fit, info) = fit_alignment(&ali, &weights, &weighting, &learner, run)?;
        bar.finish_and_clear();
        let fit_s = start.elapsed().as_secs_f64();
        self.write(&fit.model, &info, &learner, &fit.record)?;
        let summary = FitSummary {
            data: &self.data,
            sequences: ali.n_sequences(),
            sites: ali.n_sites(),
            states: q_model,
            n_eff: fit.record.n_eff,
            mode: params.mode,
            lambda_j: fit.record.lambda_j,
            lambda_h: params.lambda_h,
            stop_reason: fit.record.stop.to_string(),
            iterations: fit.record.iterations,
            objective: fit.record.objective,
            weights_s,
            fit_s,
            output: self.output.as_deref(),
            couplings: self.couplings.as_deref(),
        };
        Summary::new("potts fit", None)
            .extend(&summary)?
            .emit(&self.common)?;
        interrupted_after(&fit.record.stop, self.output.as_deref())?;
        Ok(())
    }

    /// Writes the model and the scores asked for.
    fn write(
        &self,
        model: &boltzkit::potts::Potts,
        info: &DcaInfo,
        learner: &boltzkit::potts::plm::CheckedPlmParams,
        record: &boltzkit::potts::plm::PlmRecord,
    ) -> anyhow::Result<()> {
        if let Some(path) = &self.output {
            let mut meta = info.metadata(learner, record)?;
            boltzkit::provenance::DataFile::of(&self.data)?.record(&mut meta);
            model.save(path, &meta)?;
        }
        if self.couplings.is_some() || self.matrix.is_some() {
            write_scores(
                model,
                Some(info),
                &self.scores,
                self.couplings.as_deref(),
                self.matrix.as_deref(),
            )?;
        }
        Ok(())
    }
}
