//! The average log-likelihood of an RBM on a data set, by a named [`Method`]: the one place
//! that turns `mean −F(v)` and a log-partition estimate (or RAISE's per-vector estimates) into
//! a figure with its standard error.
//!
//! | method | what it reports |
//! |---|---|
//! | `exact` | `mean −F(v) − ln Z`, `ln Z` by enumerating the smaller layer (≤ [`MAX_ENUM_UNITS`] units) |
//! | `ais` | `mean −F(v) − ln Ẑ`, forward AIS ([`ais_log_partition`](super::ais::ais_log_partition)): optimistic in expectation (`E[ln Ẑ] ≤ ln Z`) |
//! | `raise` | the mean of RAISE's per-vector `ln p̂(v)` ([`super::raise`]): conservative in expectation for the annealing model |
//! | `bracket` | both: the interval [RAISE, forward AIS] with a [`Diagnosis`] |
//! | `reverse-ais-from-data` | reverse AIS from data rows pooled into one `ln Ẑ`: neither a bound nor consistent; kept to show why RAISE replaced it |
//!
//! Forward AIS and RAISE walk the same kernel with the same schedule and base-rate model, so
//! the bracket's ends are estimates of the same annealing path: in expectation the upper end
//! is at or above the RBM's average log-likelihood and the lower end at or below the
//! annealing model's, which approaches the RBM's as the steps grow. An interval inverted
//! beyond noise means at least one end is not yet trustworthy; a wide one means the compute
//! spent cannot place the figure more precisely.
//!
//! ```
//! use boltzkit::data::Dataset;
//! use boltzkit::estimate::Method;
//! use boltzkit::rbm::ais::AisSchedule;
//! use boltzkit::rbm::loglik::{average_log_likelihood, LogLikParams, LogLikelihood};
//! use boltzkit::rbm::{exact, Rbm};
//! use boltzkit::rng::rng_from_seed;
//! let rbm = Rbm::random(16, 6, 0.3, &mut rng_from_seed(1))?;
//! let bits: Vec<u8> = exact::sample(&rbm, 40, &mut rng_from_seed(2))?
//!     .iter().map(|&x| x as u8).collect();
//! let data = Dataset::from_flat(bits, 16, vec![2; 16])?;
//! let params = LogLikParams::new(Method::Bracket)
//!     .schedule(AisSchedule::linear(300)?).chains(50).seed(5);
//! let LogLikelihood::Bracket(b) = average_log_likelihood(&rbm, &data, &params)? else {
//!     unreachable!()
//! };
//! let truth = exact::average_log_likelihood(&rbm, &data)?;
//! assert!(b.raise.value - 3.0 * b.raise.stderr < truth + 0.05);
//! assert!(b.ais.value + 3.0 * b.ais.stderr > truth - 0.05);
//! println!("{}", b.diagnosis);
//! # Ok::<(), boltzkit::Error>(())
//! ```

use super::ais::{
    check_annealing, data_starts, forward_ais, reverse_ais, AisEstimate, AisSchedule,
};
use super::eval_settings::EvalParams;
use super::exact::{self, MAX_ENUM_UNITS};
use super::model::{base_rate_biases, mean_neg_free_energy, Rbm};
use super::raise::{raise_rows, raise_run};
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::estimate::{Estimate, Method};
use crate::fit::Interrupt;
use crate::rng::derive_seed;
use serde::Serialize;
use std::fmt;

/// Settings of [`average_log_likelihood`]; [`LogLikParams::new`] documents the defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct LogLikParams {
    method: Method,
    schedule: AisSchedule,
    chains: usize,
    raise_chains: usize,
    raise_vectors: Option<usize>,
    base: Option<Vec<f32>>,
    max_width: f64,
    seed: u64,
    interrupt: Option<Interrupt>,
}

impl LogLikParams {
    /// Settings for `method`: the defaults of [`EvalParams`] (the standard 14,500-step
    /// schedule, 100 forward chains, one RAISE chain per vector on every vector, a 1-nat
    /// width threshold, seed 0) and the base-rate model of the evaluated data.
    pub fn new(method: Method) -> Self {
        let d = EvalParams::default();
        LogLikParams {
            method,
            schedule: AisSchedule::standard(),
            chains: d.ais_chains,
            raise_chains: d.raise_chains,
            raise_vectors: d.raise_vectors,
            base: None,
            max_width: d.max_width,
            seed: d.seed,
            interrupt: None,
        }
    }

    /// Settings for `method` from the settings object `s` (checked).
    pub fn from_settings(method: Method, s: &EvalParams) -> Result<Self> {
        s.check()?;
        let params = LogLikParams::new(method)
            .schedule(s.schedule()?)
            .chains(s.ais_chains)
            .raise_chains(s.raise_chains)
            .raise_vectors(s.raise_vectors)
            .max_width(s.max_width)
            .seed(s.seed);
        params.check()?;
        Ok(params)
    }

    /// The method.
    pub fn method(mut self, method: Method) -> Self {
        self.method = method;
        self
    }

    /// The annealing schedule of forward AIS, RAISE and reverse AIS.
    pub fn schedule(mut self, schedule: AisSchedule) -> Self {
        self.schedule = schedule;
        self
    }

    /// Forward AIS chains (also the data rows of `reverse-ais-from-data`), ≥ 1.
    pub fn chains(mut self, n: usize) -> Self {
        self.chains = n;
        self
    }

    /// RAISE chains per test vector `M ≥ 1` (`ln p̂(v)` is the log-mean-exp of their weights).
    pub fn raise_chains(mut self, m: usize) -> Self {
        self.raise_chains = m;
        self
    }

    /// RAISE on a seeded random subset of `n ≥ 1` test vectors (`None`: all of them); the
    /// subsampling error then counts in the standard error.
    pub fn raise_vectors(mut self, n: Option<usize>) -> Self {
        self.raise_vectors = n;
        self
    }

    /// The visible biases of the base-rate model (default: [`base_rate_biases`] of the
    /// evaluated data).
    pub fn base(mut self, base_b: Vec<f32>) -> Self {
        self.base = Some(base_b);
        self
    }

    /// Width (nats) above which a bracket is diagnosed as too wide, > 0.
    pub fn max_width(mut self, x: f64) -> Self {
        self.max_width = x;
        self
    }

    /// The seed: forward AIS uses it as is (the same chains as [`ais_log_partition`](super::ais::ais_log_partition) with
    /// it); RAISE, its subset and the data-start estimator use seeds derived from it.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// A flag that stops the estimate (e.g. on Ctrl-C): once it is set, every annealing walk
    /// (forward AIS, RAISE, reverse AIS) stops at its next temperature and
    /// [`average_log_likelihood`] fails with [`Error::Interrupted`], never returning a partial
    /// figure. Default: none (the estimate runs to the end). The figures do not depend on it.
    pub fn interrupt(mut self, flag: Interrupt) -> Self {
        self.interrupt = Some(flag);
        self
    }

    /// The schedule.
    pub fn get_schedule(&self) -> &AisSchedule {
        &self.schedule
    }

    /// Fails with the field at fault unless the settings are usable.
    pub fn check(&self) -> Result<()> {
        if self.chains == 0 {
            return Err(Error::param("chains", "AIS needs at least one chain"));
        }
        if self.raise_chains == 0 {
            return Err(Error::param(
                "raise_chains",
                "RAISE needs at least one chain per vector",
            ));
        }
        if self.raise_vectors == Some(0) {
            return Err(Error::param(
                "raise_vectors",
                "RAISE needs at least one test vector",
            ));
        }
        if self.max_width.is_nan() || self.max_width <= 0.0 {
            return Err(Error::param(
                "max_width",
                format!("must be positive, got {}", self.max_width),
            ));
        }
        Ok(())
    }
}

/// What the bracket says, in one plain line ([`fmt::Display`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum Diagnosis {
    /// RAISE ≤ forward AIS within noise and the interval no wider than the threshold.
    Consistent,
    /// RAISE above forward AIS by more than 3 standard errors of the difference.
    ///
    /// In expectation RAISE is at or below the annealing model's log-likelihood and forward
    /// AIS at or above the RBM's, so an inversion beyond noise says the two differ: the
    /// annealing chain has not reached the RBM. More steps help while the chain is still
    /// mixing; an inversion that persists when the steps double ([`bracket_convergence`]
    /// marks it `persistent`) says it is not mixing (RAISE then bounds the annealing model,
    /// not the RBM), and what helps is exact enumeration (a layer of at most
    /// [`MAX_ENUM_UNITS`] units), more chains, or a tempered transition.
    Inverted {
        /// RAISE − forward AIS (nats).
        by: f64,
        /// That gap in standard errors of the difference.
        sigmas: f64,
        /// The bracket at half the steps was inverted too.
        persistent: bool,
        /// Units of the model's smaller layer (exact enumeration needs at most
        /// [`MAX_ENUM_UNITS`]).
        smaller_layer: usize,
    },
    /// Forward AIS − RAISE above the threshold.
    ///
    /// While the chain mixes, doubling the steps narrows the interval (both ends' biases
    /// shrink); one that stays about as wide when the steps double ([`bracket_convergence`]
    /// sets `at_half`) says the chain is not mixing, and more steps will not place the figure:
    /// what helps is exact enumeration (a layer of at most [`MAX_ENUM_UNITS`] units), more
    /// chains, or a tempered transition.
    Wide {
        /// The width (nats).
        width: f64,
        /// The threshold.
        max_width: f64,
        /// The width at half the steps, when doubling them narrowed the interval by less
        /// than a quarter ([`WIDTH_STAYS`]); `None` otherwise or when unknown.
        at_half: Option<f64>,
        /// Units of the model's smaller layer.
        smaller_layer: usize,
    },
}

impl Diagnosis {
    /// The diagnosis of the ends `raise` ≤? `ais` with the width threshold `max_width`, for a
    /// model whose smaller layer has `smaller_layer` units.
    pub fn of(raise: &Estimate, ais: &Estimate, max_width: f64, smaller_layer: usize) -> Self {
        let gap = raise.value - ais.value;
        let se = raise.stderr.hypot(ais.stderr);
        if gap > 3.0 * se {
            Diagnosis::Inverted {
                by: gap,
                sigmas: gap / se,
                persistent: false,
                smaller_layer,
            }
        } else if -gap > max_width {
            Diagnosis::Wide {
                width: -gap,
                max_width,
                at_half: None,
                smaller_layer,
            }
        } else {
            Diagnosis::Consistent
        }
    }

    /// Whether the interval is inverted beyond noise.
    pub fn is_inverted(&self) -> bool {
        matches!(self, Diagnosis::Inverted { .. })
    }
}

/// A wide interval that keeps more than this share of its width when the steps double
/// "stays" ([`Diagnosis::Wide`]'s `at_half`): a mixing chain's biases shrink about as `1/K`.
pub const WIDTH_STAYS: f64 = 0.75;

/// The advice for a chain that is not mixing: exact enumeration when the smaller layer
/// allows it, else more chains or a tempered transition.
fn not_mixing_advice(smaller_layer: usize) -> String {
    let exact = if smaller_layer <= MAX_ENUM_UNITS {
        format!(
            "the smaller layer has {smaller_layer} units, so compute it exactly (method \
             exact); else "
        )
    } else {
        String::new()
    };
    format!("{exact}use more chains or a tempered transition")
}

impl fmt::Display for Diagnosis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Diagnosis::Consistent => f.write_str(
                "consistent: RAISE at or below forward AIS, the interval within the threshold",
            ),
            Diagnosis::Inverted {
                by,
                sigmas,
                persistent,
                smaller_layer,
            } => {
                write!(
                    f,
                    "inverted: RAISE is {by:.3} nats above forward AIS ({sigmas:.1} standard errors)"
                )?;
                let advice = not_mixing_advice(smaller_layer);
                if persistent {
                    write!(
                        f,
                        ": it persists when the steps double, so the annealing chain is not \
                         mixing (RAISE then bounds the annealing model, not the RBM) and more \
                         steps will not help: {advice}"
                    )
                } else {
                    write!(
                        f,
                        ": the annealing chain has not reached the RBM; double the steps to see \
                         whether it persists (convergence levels), and if it does the chain is \
                         not mixing: {advice}"
                    )
                }
            }
            Diagnosis::Wide {
                width,
                max_width,
                at_half: Some(was),
                smaller_layer,
            } => write!(
                f,
                "wide: the interval is {width:.3} nats wide (threshold {max_width}) and was \
                 {was:.3} at half the steps: doubling the steps does not narrow it, so the \
                 annealing chain is not mixing and more steps will not place the figure: {}",
                not_mixing_advice(smaller_layer)
            ),
            Diagnosis::Wide {
                width,
                max_width,
                at_half: None,
                smaller_layer,
            } => write!(
                f,
                "wide: the interval is {width:.3} nats wide (threshold {max_width}): double the \
                 steps to see whether it narrows (convergence levels); if it stays, the \
                 annealing chain is not mixing: {}",
                not_mixing_advice(smaller_layer)
            ),
        }
    }
}

/// The average log-likelihood as an interval: [RAISE, forward AIS].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bracket {
    /// The conservative end (RAISE).
    pub raise: Estimate,
    /// The optimistic end (forward AIS).
    pub ais: Estimate,
    /// Forward AIS's `ln Ẑ`.
    pub log_z: Estimate,
    /// Annealing steps `K` of both ends.
    pub steps: usize,
    /// Test vectors RAISE scored.
    pub raise_vectors: usize,
    /// What the interval says.
    pub diagnosis: Diagnosis,
}

impl Bracket {
    /// Forward AIS − RAISE (negative when inverted).
    pub fn width(&self) -> f64 {
        self.ais.value - self.raise.value
    }
}

/// The result of [`average_log_likelihood`]: one variant per [`Method`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "method", rename_all = "kebab-case")]
pub enum LogLikelihood {
    /// Exact enumeration.
    Exact {
        /// The average log-likelihood.
        ll: Estimate,
        /// `ln Z`.
        log_z: Estimate,
    },
    /// Forward AIS.
    Ais {
        /// The average log-likelihood (interval: `ln Ẑ`'s ±3σ interval mapped).
        ll: Estimate,
        /// `ln Ẑ`.
        log_z: Estimate,
    },
    /// RAISE.
    Raise {
        /// The average of the per-vector estimates (interval: ±3 standard errors).
        ll: Estimate,
        /// Test vectors scored.
        raise_vectors: usize,
    },
    /// [RAISE, forward AIS].
    Bracket(Bracket),
    /// Reverse AIS from data rows, pooled.
    ReverseAisFromData {
        /// `mean −F(v) − ln Ẑ` with the pooled reverse `ln Ẑ`.
        ll: Estimate,
        /// The pooled reverse `ln Ẑ`.
        log_z: Estimate,
    },
}

impl LogLikelihood {
    /// The method that produced it.
    pub fn method(&self) -> Method {
        match self {
            LogLikelihood::Exact { .. } => Method::Exact,
            LogLikelihood::Ais { .. } => Method::Ais,
            LogLikelihood::Raise { .. } => Method::Raise,
            LogLikelihood::Bracket(_) => Method::Bracket,
            LogLikelihood::ReverseAisFromData { .. } => Method::ReverseAisFromData,
        }
    }

    /// The lower end: the figure itself, or the bracket's RAISE end.
    pub fn lower(&self) -> Estimate {
        match self {
            LogLikelihood::Exact { ll, .. }
            | LogLikelihood::Ais { ll, .. }
            | LogLikelihood::Raise { ll, .. }
            | LogLikelihood::ReverseAisFromData { ll, .. } => *ll,
            LogLikelihood::Bracket(b) => b.raise,
        }
    }

    /// The upper end: the figure itself, or the bracket's forward-AIS end.
    pub fn upper(&self) -> Estimate {
        match self {
            LogLikelihood::Bracket(b) => b.ais,
            _ => self.lower(),
        }
    }

    /// `ln Z` (or its estimate) when the method computes one (all but `raise`).
    pub fn log_z(&self) -> Option<Estimate> {
        match self {
            LogLikelihood::Exact { log_z, .. }
            | LogLikelihood::Ais { log_z, .. }
            | LogLikelihood::ReverseAisFromData { log_z, .. } => Some(*log_z),
            LogLikelihood::Bracket(b) => Some(b.log_z),
            LogLikelihood::Raise { .. } => None,
        }
    }
}

/// The average log-likelihood (nats per row) of the binary `data` under `rbm` by
/// `params`' method (module docs).
pub fn average_log_likelihood(
    rbm: &Rbm,
    data: &Dataset,
    params: &LogLikParams,
) -> Result<LogLikelihood> {
    params.check()?;
    exact::check_data_for(rbm, data, "average_log_likelihood")?;
    let nfe = mean_neg_free_energy(rbm, data)?;
    if params.method == Method::Exact {
        let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
        if nv.min(nh) > MAX_ENUM_UNITS {
            return Err(Error::param(
                "method",
                format!(
                    "exact needs a layer of at most {MAX_ENUM_UNITS} units, the model is {nv} × {nh}"
                ),
            ));
        }
        let log_z = exact::log_partition(rbm)?;
        return Ok(LogLikelihood::Exact {
            ll: Estimate::exact(nfe - log_z),
            log_z: Estimate::exact(log_z),
        });
    }
    let base = match &params.base {
        Some(b) => b.clone(),
        None => base_rate_biases(data)?,
    };
    let seed = params.seed;
    // the whole job refused up front (a bracket's RAISE would otherwise be refused only after
    // its forward AIS ran)
    let raise_count = params
        .raise_vectors
        .unwrap_or(data.n_samples())
        .min(data.n_samples())
        .saturating_mul(params.raise_chains);
    let chains = match params.method {
        Method::Raise => raise_count,
        Method::Bracket => params.chains.saturating_add(raise_count),
        _ => params.chains,
    };
    check_annealing(
        &format!("the {} log-likelihood", params.method.name()),
        rbm,
        params.schedule.steps(),
        chains,
    )?;
    let stop = params.interrupt.as_ref();
    let forward = || -> Result<(Estimate, Estimate)> {
        let est = forward_ais(rbm, &base, &params.schedule, params.chains, seed, stop)?;
        Ok(ll_from_log_z(&est, Method::Ais, nfe))
    };
    let raise_avg = || -> Result<(Estimate, usize)> {
        let rows = raise_rows(data.n_samples(), params.raise_vectors, derive_seed(seed, 3))?;
        let run = raise_run(
            rbm,
            &base,
            &params.schedule,
            data,
            &rows,
            params.raise_chains,
            derive_seed(seed, 4),
            stop,
        )?;
        Ok((run.average(nfe), rows.len()))
    };
    Ok(match params.method {
        Method::Exact => unreachable!("handled above"),
        Method::Ais => {
            let (ll, log_z) = forward()?;
            LogLikelihood::Ais { ll, log_z }
        }
        Method::Raise => {
            let (ll, raise_vectors) = raise_avg()?;
            LogLikelihood::Raise { ll, raise_vectors }
        }
        Method::Bracket => {
            let (ais, log_z) = forward()?;
            let (raise, raise_vectors) = raise_avg()?;
            LogLikelihood::Bracket(Bracket {
                diagnosis: Diagnosis::of(
                    &raise,
                    &ais,
                    params.max_width,
                    rbm.n_visible().min(rbm.n_hidden()),
                ),
                raise,
                ais,
                log_z,
                steps: params.schedule.steps(),
                raise_vectors,
            })
        }
        Method::ReverseAisFromData => {
            let starts = data_starts(data, params.chains, derive_seed(seed, 1))?;
            let est = reverse_ais(
                rbm,
                &base,
                &params.schedule,
                &starts,
                derive_seed(seed, 2),
                stop,
            )?;
            let (ll, log_z) = ll_from_log_z(&est, Method::ReverseAisFromData, nfe);
            LogLikelihood::ReverseAisFromData { ll, log_z }
        }
    })
}

/// `(mean −F − ln Ẑ, ln Ẑ)` as estimates of `method`.
fn ll_from_log_z(est: &AisEstimate, method: Method, nfe: f64) -> (Estimate, Estimate) {
    let log_z = est.to_estimate(method);
    (log_z.negated().shifted(nfe), log_z)
}

/// The bracket at each of `schedules` (e.g. `K, 2K, 4K, …` steps from
/// [`convergence_steps`]), so a user sees whether the ends meet; `params`' method is
/// ignored. A level inverted after an inverted level is marked `persistent`
/// ([`Diagnosis::Inverted`]), a wide level after a wide level at least [`WIDTH_STAYS`] of
/// its width gets `at_half` ([`Diagnosis::Wide`]): the chain is not mixing, and the advice is
/// not more steps.
pub fn bracket_convergence(
    rbm: &Rbm,
    data: &Dataset,
    params: &LogLikParams,
    schedules: &[AisSchedule],
) -> Result<Vec<Bracket>> {
    let mut brackets = brackets_at(rbm, data, params, schedules)?;
    mark_persistent(&mut brackets);
    Ok(brackets)
}

/// Marks each inverted bracket whose predecessor (fewer steps) was inverted too, and each
/// wide one whose predecessor was wide and not much wider ([`WIDTH_STAYS`]).
fn mark_persistent(brackets: &mut [Bracket]) {
    for i in 1..brackets.len() {
        let before = brackets[i - 1].diagnosis;
        match (&mut brackets[i].diagnosis, before) {
            (Diagnosis::Inverted { persistent, .. }, before) => {
                *persistent = before.is_inverted();
            }
            (Diagnosis::Wide { width, at_half, .. }, Diagnosis::Wide { width: was, .. })
                if *width > WIDTH_STAYS * was =>
            {
                *at_half = Some(was);
            }
            _ => {}
        }
    }
}

/// The bracket at each of `schedules`.
fn brackets_at(
    rbm: &Rbm,
    data: &Dataset,
    params: &LogLikParams,
    schedules: &[AisSchedule],
) -> Result<Vec<Bracket>> {
    schedules
        .iter()
        .map(|s| {
            let p = params.clone().method(Method::Bracket).schedule(s.clone());
            match average_log_likelihood(rbm, data, &p)? {
                LogLikelihood::Bracket(b) => Ok(b),
                other => Err(Error::Internal(format!(
                    "bracket_convergence got {}",
                    other.method()
                ))),
            }
        })
        .collect()
}

/// `first, 2·first, 4·first, …` below `last`, then `last` (just `[last]` when
/// `first ≥ last`); `first ≥ 1`.
pub fn convergence_steps(first: usize, last: usize) -> Result<Vec<usize>> {
    if first == 0 {
        return Err(Error::param(
            "convergence",
            "the first level needs ≥ 1 step",
        ));
    }
    let mut out = Vec::new();
    let mut k = first;
    while k < last {
        out.push(k);
        k = k.saturating_mul(2);
    }
    out.push(last);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::rng_from_seed;

    fn est(value: f64, stderr: f64, method: Method) -> Estimate {
        Estimate {
            value,
            stderr,
            lower: value - 3.0 * stderr,
            upper: value + 3.0 * stderr,
            method,
        }
    }

    #[test]
    fn diagnosis_lines() {
        let a = est(-10.0, 0.1, Method::Ais);
        let ok = Diagnosis::of(&est(-10.5, 0.1, Method::Raise), &a, 1.0, 40);
        assert_eq!(ok, Diagnosis::Consistent);
        // above AIS but within 3 standard errors of the difference: not inverted
        let close = Diagnosis::of(&est(-9.7, 0.1, Method::Raise), &a, 1.0, 40);
        assert_eq!(close, Diagnosis::Consistent);
        let inv = Diagnosis::of(&est(-9.5, 0.1, Method::Raise), &a, 1.0, 40);
        let Diagnosis::Inverted { by, sigmas, .. } = inv else {
            panic!("{inv:?}")
        };
        assert!((by - 0.5).abs() < 1e-12 && (sigmas - 0.5 / 0.02f64.sqrt()).abs() < 1e-9);
        let once = inv.to_string();
        assert!(
            once.contains("double the steps to see whether it persists"),
            "{once}"
        );
        assert!(
            !once.contains("exactly"),
            "40 units cannot be enumerated: {once}"
        );
        // persisting across a doubling: the chain is not mixing, and more steps will not help
        let b = |steps, raise: f64| Bracket {
            raise: est(raise, 0.1, Method::Raise),
            ais: a,
            log_z: a,
            steps,
            raise_vectors: 10,
            diagnosis: Diagnosis::of(&est(raise, 0.1, Method::Raise), &a, 1.0, 18),
        };
        let mut levels = vec![b(100, -10.8), b(200, -9.5), b(400, -9.5), b(800, -10.2)];
        mark_persistent(&mut levels);
        let shown: Vec<String> = levels.iter().map(|l| l.diagnosis.to_string()).collect();
        assert!(shown[1].contains("double the steps"), "{}", shown[1]);
        assert!(
            shown[2].contains("persists when the steps double"),
            "{}",
            shown[2]
        );
        assert!(shown[2].contains("not mixing") && !shown[2].contains("more steps needed"));
        assert!(
            shown[2].contains("18 units, so compute it exactly"),
            "{}",
            shown[2]
        );
        assert!(shown[2].contains("more chains or a tempered transition"));
        assert!(!shown[3].contains("inverted"), "{}", shown[3]);
        let wide = Diagnosis::of(&est(-12.0, 0.1, Method::Raise), &a, 1.0, 40);
        assert_eq!(
            wide,
            Diagnosis::Wide {
                width: 2.0,
                max_width: 1.0,
                at_half: None,
                smaller_layer: 40
            }
        );
        assert!(wide.to_string().starts_with("wide"));
        assert!(!wide.to_string().contains('\n'));
        assert!(wide
            .to_string()
            .contains("double the steps to see whether it narrows"));
        // wide at every level: 2.4 → 2.3 nats when the steps double stays (not mixing, not
        // "more steps"); 2.3 → 1.5 narrows (no verdict); the first level has nothing before it
        let w = |steps, raise: f64| Bracket {
            diagnosis: Diagnosis::of(&est(raise, 0.1, Method::Raise), &a, 1.0, 18),
            ..b(steps, raise)
        };
        let mut levels = vec![w(100, -12.4), w(200, -12.3), w(400, -11.5)];
        mark_persistent(&mut levels);
        let shown: Vec<String> = levels.iter().map(|l| l.diagnosis.to_string()).collect();
        assert!(shown[0].contains("double the steps to see"), "{}", shown[0]);
        let Diagnosis::Wide { at_half, .. } = levels[1].diagnosis else {
            panic!("{:?}", levels[1].diagnosis)
        };
        assert!((at_half.unwrap() - 2.4).abs() < 1e-9, "{at_half:?}");
        assert!(
            shown[1].contains("was 2.400 at half the steps")
                && shown[1].contains("not mixing")
                && shown[1].contains("18 units, so compute it exactly")
                && !shown[1].contains("more steps (or chains) needed"),
            "{}",
            shown[1]
        );
        assert!(shown[2].contains("double the steps to see"), "{}", shown[2]);
        // an unknown standard error never reads as inverted
        let unknown = Diagnosis::of(&est(-9.0, f64::INFINITY, Method::Raise), &a, 1.0, 40);
        assert_eq!(unknown, Diagnosis::Consistent);
    }

    /// A set interrupt stops every annealing method with `Error::Interrupted` (no figure);
    /// an unset one changes no bit; exact ignores it (nothing to anneal).
    #[test]
    fn interrupt_stops_every_annealing_method_and_changes_no_bit() {
        let rbm = Rbm::random(10, 4, 0.4, &mut rng_from_seed(3)).unwrap();
        let bits: Vec<u8> = (0..60).map(|i| ((i * 7 + i / 10) % 3 == 0) as u8).collect();
        let data = Dataset::from_flat(bits, 10, vec![2; 10]).unwrap();
        let base = LogLikParams::new(Method::Ais)
            .schedule(AisSchedule::linear(50).unwrap())
            .chains(8)
            .seed(9);
        let set = Interrupt::new();
        set.set();
        for m in [
            Method::Ais,
            Method::Raise,
            Method::Bracket,
            Method::ReverseAisFromData,
        ] {
            let p = base.clone().method(m);
            let plain = average_log_likelihood(&rbm, &data, &p).unwrap();
            let unset = p.clone().interrupt(Interrupt::new());
            assert_eq!(average_log_likelihood(&rbm, &data, &unset).unwrap(), plain);
            let e = average_log_likelihood(&rbm, &data, &p.clone().interrupt(set.clone()));
            assert!(matches!(e, Err(Error::Interrupted { .. })), "{m}: {e:?}");
        }
        let exact = base.clone().method(Method::Exact).interrupt(set);
        assert!(average_log_likelihood(&rbm, &data, &exact).is_ok());
    }

    #[test]
    fn convergence_levels() {
        assert_eq!(
            convergence_steps(100, 1000).unwrap(),
            vec![100, 200, 400, 800, 1000]
        );
        assert_eq!(convergence_steps(100, 400).unwrap(), vec![100, 200, 400]);
        assert_eq!(convergence_steps(500, 400).unwrap(), vec![400]);
        assert!(convergence_steps(0, 400).is_err());
        let s = AisSchedule::standard_shaped(14_500).unwrap();
        assert_eq!(s, AisSchedule::standard());
        let s = AisSchedule::standard_shaped(1_450).unwrap();
        assert_eq!(s.steps(), 1_450);
        assert_eq!((s.betas()[50], s.betas()[450]), (0.5, 0.9));
        assert!(s.betas().windows(2).all(|w| w[0] < w[1]));
        assert!(AisSchedule::standard_shaped(28).is_err());
    }

    #[test]
    fn methods_and_settings() {
        let rbm = Rbm::random(10, 4, 0.5, &mut rng_from_seed(1)).unwrap();
        let bits: Vec<u8> = exact::sample(&rbm, 20, &mut rng_from_seed(2))
            .unwrap()
            .iter()
            .map(|&x| x as u8)
            .collect();
        let data = Dataset::from_flat(bits, 10, vec![2; 10]).unwrap();
        let truth = exact::average_log_likelihood(&rbm, &data).unwrap();
        let base = LogLikParams::new(Method::Exact)
            .schedule(AisSchedule::linear(200).unwrap())
            .chains(30)
            .raise_chains(2)
            .raise_vectors(Some(15))
            .seed(3);
        for m in [
            Method::Exact,
            Method::Ais,
            Method::Raise,
            Method::Bracket,
            Method::ReverseAisFromData,
        ] {
            let r = average_log_likelihood(&rbm, &data, &base.clone().method(m)).unwrap();
            assert_eq!(r.method(), m);
            for e in [r.lower(), r.upper()] {
                assert!(
                    (e.value - truth).abs() < 0.1 + 3.0 * e.stderr,
                    "{m}: {e} vs {truth}"
                );
            }
            assert_eq!(r.log_z().is_none(), m == Method::Raise);
            let json = serde_json::to_value(&r).unwrap();
            assert_eq!(json["method"], m.name());
        }
        let levels = [
            AisSchedule::linear(20).unwrap(),
            AisSchedule::linear(40).unwrap(),
        ];
        let conv = bracket_convergence(&rbm, &data, &base, &levels).unwrap();
        assert_eq!(conv.iter().map(|b| b.steps).collect::<Vec<_>>(), [20, 40]);
        assert_eq!(conv[0].raise_vectors, 15);
        for bad in [
            base.clone().method(Method::Ais).chains(0),
            base.clone().raise_chains(0),
            base.clone().raise_vectors(Some(0)),
            base.clone().max_width(0.0),
            base.clone().max_width(f64::NAN),
        ] {
            assert!(average_log_likelihood(&rbm, &data, &bad).is_err());
        }
    }
}
