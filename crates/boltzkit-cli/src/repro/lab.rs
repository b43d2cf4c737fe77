//! `boltzkit lab`: experiments on the estimators themselves (the gradient lab of
//! [`boltzkit_repro::lab`]).

use super::binarize::BinarizeArgs;
use super::common::{f32_value, Common, Outcome};
use crate::guard::{self, UsageError};
use anyhow::Context;
use boltzkit::data::{read_binary as load_binary, Dataset};
use boltzkit::io::write_atomic;
use boltzkit::rbm::exact::{self, MAX_ENUM_UNITS};
use boltzkit::rbm::file::{load_rbm, save_rbm};
use boltzkit::rbm::lab::{cd1_reference_model, LabParams};
use boltzkit::rbm::Rbm;
use boltzkit::rng::derive_seed;
use boltzkit_repro::lab::{lab_markdown, parse_estimators, run_lab};
use boltzkit_repro::Progress;
use clap::{Args, Subcommand};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// `boltzkit lab <verb>`, with the command line's common flags `C`.
#[derive(Debug, Subcommand)]
pub enum Lab<C: Common> {
    /// Squared bias and variance of gradient estimators against the exact gradient
    #[command(
        long_about = "Squared bias and variance of RBM gradient estimators (CD-k, PCD-k, \
        pop-CD-k, S-DCP, PT) against the exact log-likelihood gradient, computed by \
        enumerating the smaller layer (≤ 30 units), each divided by the number of parameters \
        (Table 1 of the pop-CD paper, which estimated the truth by parallel tempering instead). \
        The model is --model, or trained here by CD-1 (Sec. 4.1 of the pop-CD paper: \
        --hidden 16, --train-lr 0.1, --train-iterations updates). Each estimate uses a \
        mini-batch of --batch-size rows drawn without replacement; --estimates are kept after \
        --burn-in (persistent chains need it). 95% intervals: Student-t over 20 groups of \
        consecutive estimates for the variance, the group jackknife for the squared bias \
        (which is also bias-corrected by it). Estimator names: cd-K, pcd-K, popcd-K, \
        popcd-K-loo, sdcp-D-K, pt-M, pt-M-K (the notation of rbm fit --algo).\n\n\
        Example:\n  boltzkit lab gradient --data bas4.csv --batch-size 0 \
        --estimators cd-1,popcd-1 --estimates 50000 --seed 1"
    )]
    Gradient(GradientArgs<C>),
}

#[doc(hidden)]
#[derive(Debug, Args)]
pub struct GradientArgs<C: Common> {
    /// Data (0/1; .npy, .csv, .tsv, IDX, .amat, optionally .gz)
    #[arg(long, value_name = "FILE")]
    data: PathBuf,
    #[command(flatten)]
    binarize: BinarizeArgs,
    /// The model to study (else one is trained by CD-1)
    #[arg(long, value_name = "FILE")]
    model: Option<PathBuf>,
    /// Hidden units of the model trained by CD-1
    #[arg(long, value_name = "N", default_value_t = 16)]
    hidden: usize,
    /// CD-1 updates for the trained model
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    train_iterations: usize,
    /// CD-1 learning rate for the trained model
    #[arg(long, value_name = "X", default_value_t = 0.1)]
    train_lr: f32,
    /// Mini-batch rows per estimate, and of the CD-1 training (0 = the full data)
    #[arg(long, value_name = "N", default_value_t = 0)]
    batch_size: usize,
    /// Estimators, comma-separated
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "cd-1,cd-10,pcd-1,popcd-1,popcd-10,sdcp-3-4,pt-10"
    )]
    estimators: Vec<String>,
    /// Estimates kept per estimator (the paper: 50,000)
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    estimates: usize,
    /// Estimates drawn and discarded first
    #[arg(long, value_name = "N", default_value_t = 1_000)]
    burn_in: usize,
    /// S-DCP's learning rate (its direction is Δθ / (η d))
    #[arg(long, value_name = "X", default_value_t = 0.01)]
    sdcp_lr: f32,
    /// Write the model studied (e.g. the one trained here) to this file
    #[arg(long, value_name = "FILE")]
    save_model: Option<PathBuf>,
    /// Write the results (all estimators, settings, seed) as JSON
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    #[command(flatten)]
    common: C,
}

impl<C: Common> Lab<C> {
    /// The common flags.
    pub fn common(&self) -> &C {
        match self {
            Lab::Gradient(a) => &a.common,
        }
    }

    /// Runs the chosen verb and writes its files; the table goes to `show`, or with `json`
    /// the results into the outcome.
    pub fn run(
        self,
        progress: &dyn Progress,
        json: bool,
        show: &mut dyn FnMut(&str),
    ) -> anyhow::Result<Outcome> {
        match self {
            Lab::Gradient(a) => a.run(progress, json, show),
        }
    }
}

impl<C: Common> GradientArgs<C> {
    fn run(
        self,
        progress: &dyn Progress,
        json: bool,
        show: &mut dyn FnMut(&str),
    ) -> anyhow::Result<Outcome> {
        let specs = parse_estimators("--estimators", &self.estimators)?;
        if specs.is_empty() {
            return Err(UsageError::new("--estimators: give at least one").into());
        }
        if self.model.is_none() && self.hidden == 0 {
            return Err(UsageError::new("--hidden must be at least 1").into());
        }
        let seed = self.common.init()?;
        guard::model_files(
            &[Some(&self.data), self.model.as_deref()],
            &[("--save-model", self.save_model.as_deref())],
            &[self.output.as_deref()],
        )?;
        let binarize = self.binarize.resolve(derive_seed(seed, 2));
        let data = load_binary(&self.data, binarize)?;
        let batch = (self.batch_size > 0).then_some(self.batch_size);
        if let Some(b) = batch.filter(|&b| b > data.n_samples()) {
            return Err(UsageError::new(format!(
                "--batch-size {b} is more than the {} samples",
                data.n_samples()
            ))
            .into());
        }
        let mut summary = Outcome::new("lab gradient", Some(seed));
        let (rbm, trained) = self.reference_model(&data, batch, seed, progress)?;
        let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
        let params = LabParams {
            estimates: self.estimates,
            batch_size: batch,
            burn_in: self.burn_in,
            sdcp_lr: self.sdcp_lr,
            seed: derive_seed(seed, 1),
            ..LabParams::default()
        };
        // the time it will take, said up front when long (the bar moves only as an estimator
        // ends)
        let rows = batch.unwrap_or(data.n_samples());
        let work: f64 = specs
            .iter()
            .map(|s| boltzkit::rbm::lab::operations(s, &params, rows, nv, nh))
            .sum();
        let label = match boltzkit::budget::duration_note(work) {
            Some(note) => format!("estimators ({note})"),
            None => "estimators".to_string(),
        };
        progress.stage(&label, Some(specs.len() as u64));
        let results = run_lab(&rbm, &data, &specs, &params, progress)?;
        progress.finish();
        let ll = exact::average_log_likelihood(&rbm, &data)?;
        let table = lab_markdown(&results);
        summary
            .set("data", self.data.display().to_string())
            .set("visible", nv)
            .set("hidden", nh)
            .set("model_avg_log_likelihood", ll)
            .set("trained_updates", trained)
            .set("batch_size", self.batch_size)
            .set("estimates", results.first().map_or(0, |r| r.estimates))
            .set("burn_in", self.burn_in);
        if json {
            summary.set("results", serde_json::to_value(&results)?);
        } else {
            show(&table);
        }
        if let Some(out) = &self.output {
            let body = serde_json::to_string_pretty(&serde_json::json!({
                "seed": seed,
                "data": self.data.display().to_string(),
                "model": self.model.as_ref().map(|p| p.display().to_string()),
                "visible": nv, "hidden": nh,
                "train_iterations": trained, "train_lr": f32_value(self.train_lr),
                "batch_size": self.batch_size,
                "model_avg_log_likelihood": ll,
                "results": results,
            }))?;
            write_atomic(out, body.as_bytes())?;
            summary.set("output", out.display().to_string());
        }
        Ok(summary)
    }

    /// The model whose gradient is estimated: `--model`, or one trained by CD-1 on `data`
    /// (saved with `--save-model`); refused when its width differs from the data's or its
    /// smaller layer is too wide to enumerate. Returns it with the CD-1 updates made.
    fn reference_model(
        &self,
        data: &Dataset,
        batch: Option<usize>,
        seed: u64,
        progress: &dyn Progress,
    ) -> anyhow::Result<(Rbm, Option<u64>)> {
        let (rbm, trained) = match &self.model {
            Some(path) => (load_rbm(path)?.rbm, None),
            None => {
                progress.stage("training by CD-1", None);
                let (rbm, steps) = cd1_reference_model(
                    data,
                    self.hidden,
                    self.train_iterations,
                    self.train_lr,
                    batch,
                    derive_seed(seed, 0),
                )?;
                progress.finish();
                (rbm, Some(steps))
            }
        };
        let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
        if data.n_vars() != nv {
            anyhow::bail!(
                "{}: {} variables, the model has {nv} visible units",
                self.data.display(),
                data.n_vars()
            );
        }
        if nv.min(nh) > MAX_ENUM_UNITS {
            return Err(UsageError::new(format!(
                "the exact gradient enumerates the smaller layer: it needs at most \
                 {MAX_ENUM_UNITS} units, the model is {nv} × {nh}"
            ))
            .into());
        }
        if let Some(path) = &self.save_model {
            let mut meta = BTreeMap::new();
            meta.insert("purpose".to_string(), "lab gradient reference model".into());
            meta.insert("seed".into(), seed.to_string());
            save_rbm(path, &rbm, None, &meta)
                .with_context(|| format!("writing the model to {}", path.display()))?;
        }
        Ok((rbm, trained))
    }
}
