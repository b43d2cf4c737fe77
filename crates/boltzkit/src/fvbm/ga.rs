//! MPLE by gradient ascent with step `μ` (Hyvärinen's algorithm as written in Eqs. 4.1-4.2
//! of Nguyen & Wood): `b_j ← b_j + (μ/n) ∂P_n/∂b_j`, then `m_jk ← m_jk + (μ/2n) ∂P_n/∂m_jk`
//! in lexicographic order.
//!
//! This is the BSLM sweep of [`super::bslm`] with every update multiplied by `μ`; `μ = 1` *is*
//! BSLM. For `μ ≤ 1` the log-pseudo-likelihood never decreases and the iterates converge to the
//! maximizer (Sec. 4); for `μ > 1` there is no such guarantee, the record carries a warning and
//! the fit stops at the first decrease.

use super::bslm::fit_prepared;
use super::model::Fvbm;
use super::mple::{prepare, Algorithm, FvbmFit, MpleParams, MpleRecord, Progress};
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::fit::{Learner, Run};
use std::time::Instant;

/// Settings of gradient ascent (serialized flat: `step` beside the MPLE settings).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GaParams {
    /// The step `μ > 0`; 1 gives BSLM, above 1 monotonicity is not guaranteed. Default 1.
    pub step: f64,
    /// The settings shared with the other MPLE solvers.
    #[serde(flatten)]
    pub mple: MpleParams,
}

impl Default for GaParams {
    fn default() -> Self {
        GaParams {
            step: 1.0,
            mple: MpleParams::paper(),
        }
    }
}

/// [`GaParams`] checked by [`GaParams::check`]: the gradient-ascent MPLE learner.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedGaParams(GaParams);

impl CheckedGaParams {
    /// The settings.
    pub fn get(&self) -> &GaParams {
        &self.0
    }
}

impl GaParams {
    /// Checks every setting (the error names the field at fault) and returns the learner.
    pub fn check(&self) -> Result<CheckedGaParams> {
        if !(self.step.is_finite() && self.step > 0.0) {
            return Err(Error::param(
                "step",
                format!("must be a finite number > 0, got {}", self.step),
            ));
        }
        self.mple.validate()?;
        Ok(CheckedGaParams(self.clone()))
    }
}

impl Learner for CheckedGaParams {
    type Model = Fvbm;
    type Record = MpleRecord;
    type Progress<'p> = Progress;

    /// Fits an FVBM by gradient ascent with step `μ` (MPLE); observers see every sweep.
    ///
    /// ```
    /// use boltzkit::fit::Learner;
    /// use boltzkit::fvbm::{exact, ga, Convention, Fvbm};
    /// use boltzkit::rng::rng_from_seed;
    /// let truth = Fvbm::random(4, 0.5, Convention::Spin, &mut rng_from_seed(0))?;
    /// let data = exact::sample(&truth, 2000, &mut rng_from_seed(1))?;
    /// let fit = ga::GaParams { step: 0.5, ..Default::default() }.check()?.fit(&data)?;
    /// assert!(fit.record.is_monotone() && fit.record.warnings.is_empty());
    /// # Ok::<(), boltzkit::Error>(())
    /// ```
    fn fit_with(&self, data: &Dataset, mut run: Run<'_, Self>) -> Result<FvbmFit> {
        let start = Instant::now();
        let params = &self.0;
        let (pl, init) = prepare(data, &params.mple)?;
        let mut fit = fit_prepared(
            &pl,
            &init,
            &params.mple,
            params.step,
            Algorithm::Ga,
            start,
            &mut run,
        )?;
        if params.step > 1.0 {
            fit.record.warnings.insert(
                0,
                format!(
                    "gradient ascent with step μ = {} > 1 is not guaranteed to increase the \
                     pseudo-likelihood (Sec. 4 of Nguyen & Wood); μ ≤ 1 is",
                    params.step
                ),
            );
        }
        Ok(fit)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil;
    use super::super::{exact, Convention, Fvbm, StopReason};
    use super::*;
    use crate::rng::rng_from_seed;

    #[test]
    fn step_one_is_bslm_and_large_steps_warn() {
        let truth = Fvbm::random(4, 0.5, Convention::Spin, &mut rng_from_seed(3)).unwrap();
        let data = exact::sample(&truth, 800, &mut rng_from_seed(4)).unwrap();
        let mple = MpleParams::paper();
        let a = testutil::bslm(&data, &mple).unwrap();
        let b = testutil::ga(
            &data,
            &GaParams {
                step: 1.0,
                mple: mple.clone(),
            },
        )
        .unwrap();
        assert_eq!(a.model, b.model);
        assert_eq!(a.record.objective, b.record.objective);
        assert_eq!(b.record.algorithm, Algorithm::Ga);
        // A smaller step is slower but still monotone.
        let c = testutil::ga(
            &data,
            &GaParams {
                step: 0.3,
                mple: mple.clone(),
            },
        )
        .unwrap();
        assert!(c.record.is_monotone());
        assert!(c.record.iterations > a.record.iterations);
        // μ = 3 overshoots: warned, and it stops at the first decrease.
        let d = testutil::ga(
            &data,
            &GaParams {
                step: 3.0,
                mple: mple.clone(),
            },
        )
        .unwrap();
        assert!(
            d.record.warnings[0].contains("μ = 3"),
            "{:?}",
            d.record.warnings
        );
        assert!(!d.record.is_monotone(), "μ = 3 overshoots on this problem");
        assert_eq!(d.record.stop, StopReason::Decreased);
        // The returned model is the iterate before the decrease.
        let pl = crate::fvbm::pseudo::PlData::new(&data, Convention::Spin).unwrap();
        let at = crate::fvbm::pseudo::log_pl(&d.model, &pl).unwrap();
        let t = &d.record.objective;
        assert!((at - t[t.len() - 2]).abs() < 1e-9 * at.abs());
        let e = testutil::ga(&data, &GaParams { step: 0.0, mple }).unwrap_err();
        assert!(e.to_string().contains("step"));
    }
}
