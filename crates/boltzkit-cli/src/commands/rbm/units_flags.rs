//! The unit-type flags of `rbm fit` and `rbm eval` (issue 34) with their parsers, apart from
//! the commands that use them so `fit.rs` / `eval.rs` and `units.rs` / `units_eval.rs` do not
//! import each other (ARCHITECTURE.md, "Import rules").

use crate::exit::UsageError;
use boltzkit::rbm::units::{StandardizeParams, UnitKind, UnitOptimizer, UnitTrainParams};
use clap::Args;
use std::path::PathBuf;

/// `--visible-units`: a type, with `categorical:Q` for Q states at every site.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct VisibleSpec {
    pub(super) kind: UnitKind,
    pub(super) q: Option<u32>,
}

/// Parses `bernoulli`, `categorical`, `categorical:Q` or `gaussian`.
fn parse_visible(s: &str) -> Result<VisibleSpec, String> {
    let (name, q) = match s.split_once(':') {
        Some((name, q)) => {
            let q: u32 = q
                .parse()
                .ok()
                .filter(|q| (2..=256).contains(q))
                .ok_or_else(|| format!("{s:?}: Q in categorical:Q is 2 to 256"))?;
            (name, Some(q))
        }
        None => (s, None),
    };
    let kind: UnitKind = name.parse().map_err(|e: boltzkit::Error| e.to_string())?;
    if !matches!(
        kind,
        UnitKind::Bernoulli | UnitKind::Categorical | UnitKind::Gaussian
    ) {
        return Err(format!(
            "{s:?}: visible units are bernoulli, categorical[:Q] or gaussian"
        ));
    }
    if q.is_some() && kind != UnitKind::Categorical {
        return Err(format!("{s:?}: only categorical units take :Q"));
    }
    Ok(VisibleSpec { kind, q })
}

/// Parses `bernoulli`, `relu`, `drelu` or `gaussian`.
fn parse_hidden(s: &str) -> Result<UnitKind, String> {
    let kind: UnitKind = s.parse().map_err(|e: boltzkit::Error| e.to_string())?;
    if kind == UnitKind::Categorical {
        return Err("hidden units are bernoulli, relu, drelu or gaussian".into());
    }
    Ok(kind)
}

/// The unit-type flags of `rbm fit` (each setting's default is its struct's).
#[derive(Debug, Args)]
pub(super) struct UnitFlags {
    /// Visible unit type: bernoulli (the binary RBM), categorical or categorical:Q (integer
    /// codes, or an alignment .fasta/.a2m/.sto over the protein alphabet; Q states per site,
    /// default each column's), gaussian (real values from .npy or text, best standardized)
    #[arg(long = "visible-units", visible_alias = "visible", value_name = "TYPE",
          value_parser = parse_visible)]
    pub(super) visible_units: Option<VisibleSpec>,
    /// Hidden unit type: bernoulli, relu, drelu (PGM's double-sided ReLU) or gaussian
    #[arg(long, value_name = "TYPE", value_parser = parse_hidden)]
    pub(super) hidden_units: Option<UnitKind>,
    /// PGM's L1² penalty on each hidden unit's weights (unit types other than 0/1 only)
    #[arg(long, value_name = "X", default_value_t = UnitTrainParams::default().l1_squared)]
    pub(super) l1_squared: f64,
    /// Clip each mini-batch gradient to this norm (Liao et al. 2022, for Gaussian layers;
    /// 0: off; unit types other than 0/1 only)
    #[arg(long, value_name = "X", default_value_t = UnitTrainParams::default().clip_norm)]
    pub(super) clip_norm: f64,
    /// Train gaussian visible units on the raw columns instead of standardized ones (the
    /// default standardizes and writes the model back in the data's units)
    #[arg(long)]
    pub(super) no_standardize: bool,
    /// Floor of each column's standard deviation when standardizing, as a fraction of the
    /// largest column's
    #[arg(long, value_name = "F", default_value_t = StandardizeParams::default().sd_floor)]
    pub(super) sd_floor: f64,
    /// Update rule of unit-type RBMs: sgd (with --momentum) or adam (PGM's ADAM)
    #[arg(long, value_name = "RULE", default_value_t = UnitTrainParams::default().optimizer,
          value_parser = |s: &str| s.parse::<UnitOptimizer>().map_err(|e| e.to_string()))]
    pub(super) optimizer: UnitOptimizer,
    /// ADAM's first-moment decay β₁ (0: none, as PGM's W and field updates)
    #[arg(long, value_name = "X", default_value_t = UnitTrainParams::default().adam_beta1)]
    pub(super) adam_beta1: f64,
    /// ADAM's second-moment decay β₂
    #[arg(long, value_name = "X", default_value_t = UnitTrainParams::default().adam_beta2)]
    pub(super) adam_beta2: f64,
    /// ADAM's ε added to √v̂
    #[arg(long, value_name = "X", default_value_t = UnitTrainParams::default().adam_epsilon)]
    pub(super) adam_epsilon: f64,
    /// PGM's rate decay: constant for this fraction of the epochs, then geometric to
    /// --lr-end (default 1 % of --lr) at the last epoch
    #[arg(long, value_name = "FRACTION")]
    pub(super) decay_after: Option<f64>,
    /// PGM's gradient saturation: each gradient coordinate clipped to [-C, C]
    #[arg(long, value_name = "C")]
    pub(super) saturate: Option<f64>,
    /// PGM's zero-sum gauge of categorical visible units after every update
    #[arg(long)]
    pub(super) zero_sum_gauge: bool,
    /// Sample weights, one per data row (.npy or text; unit types other than 0/1 only)
    #[arg(long, value_name = "FILE")]
    pub(super) weights: Option<PathBuf>,
    /// Sequence weights 1 / (rows at least X identical), as DCA (unit types other than 0/1)
    #[arg(long, value_name = "X")]
    pub(super) reweight: Option<f64>,
}

impl UnitFlags {
    /// The pair's types (bernoulli for a flag not given).
    pub(super) fn kinds(&self) -> (UnitKind, UnitKind) {
        (
            self.visible_units.map_or(UnitKind::Bernoulli, |v| v.kind),
            self.hidden_units.unwrap_or(UnitKind::Bernoulli),
        )
    }

    /// Whether the run is a unit-type RBM's (any layer not 0/1).
    pub(super) fn is_unit_pair(&self) -> bool {
        self.kinds() != (UnitKind::Bernoulli, UnitKind::Bernoulli)
    }

    /// The standardization settings of the flags.
    pub(super) fn scaling(&self) -> StandardizeParams {
        StandardizeParams {
            standardize: !self.no_standardize,
            sd_floor: self.sd_floor,
        }
    }

    /// The unit trainer's settings: `train` and these flags.
    pub(super) fn train_params(&self, train: boltzkit::rbm::train::TrainParams) -> UnitTrainParams {
        UnitTrainParams {
            train,
            l1_squared: self.l1_squared,
            clip_norm: self.clip_norm,
            optimizer: self.optimizer,
            adam_beta1: self.adam_beta1,
            adam_beta2: self.adam_beta2,
            adam_epsilon: self.adam_epsilon,
            decay_after: self.decay_after,
            saturate: self.saturate,
            zero_sum_gauge: self.zero_sum_gauge,
        }
    }

    /// Refuses the unit-type settings on a binary run (they would be ignored).
    pub(super) fn refuse_on_binary(&self) -> anyhow::Result<()> {
        let given = [
            (
                "--l1-squared",
                self.l1_squared != UnitTrainParams::default().l1_squared,
            ),
            (
                "--clip-norm",
                self.clip_norm != UnitTrainParams::default().clip_norm,
            ),
            ("--no-standardize", self.no_standardize),
            (
                "--sd-floor",
                self.sd_floor != StandardizeParams::default().sd_floor,
            ),
            ("--weights", self.weights.is_some()),
            ("--reweight", self.reweight.is_some()),
            (
                "--optimizer",
                self.optimizer != UnitTrainParams::default().optimizer,
            ),
            (
                "--adam-beta1",
                self.adam_beta1 != UnitTrainParams::default().adam_beta1,
            ),
            (
                "--adam-beta2",
                self.adam_beta2 != UnitTrainParams::default().adam_beta2,
            ),
            (
                "--adam-epsilon",
                self.adam_epsilon != UnitTrainParams::default().adam_epsilon,
            ),
            ("--decay-after", self.decay_after.is_some()),
            ("--saturate", self.saturate.is_some()),
            ("--zero-sum-gauge", self.zero_sum_gauge),
        ];
        match given.iter().find(|(_, g)| *g) {
            Some((flag, _)) => Err(UsageError::new(format!(
                "{flag} applies to --visible-units/--hidden-units other than bernoulli/bernoulli"
            ))
            .into()),
            None => Ok(()),
        }
    }
}

/// The unit-type flags of `rbm eval` (models of `rbm fit --visible-units/--hidden-units`).
#[derive(Debug, Args)]
pub(super) struct UnitEvalFlags {
    /// Sample weights of the data rows (unit-type models): the average is weighted
    #[arg(long, value_name = "FILE")]
    pub(super) weights: Option<PathBuf>,
    /// Sequence weights 1 / (rows at least X identical) of the data (unit-type models)
    #[arg(long, value_name = "X")]
    pub(super) reweight: Option<f64>,
}

impl UnitEvalFlags {
    /// Refuses these flags on a binary model (they would be ignored).
    pub(super) fn refuse_on_binary(&self) -> anyhow::Result<()> {
        if self.weights.is_some() || self.reweight.is_some() {
            return Err(UsageError::new(
                "--weights and --reweight apply to unit-type models (boltzkit/rbm/v2)",
            )
            .into());
        }
        Ok(())
    }
}
