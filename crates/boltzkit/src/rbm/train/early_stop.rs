//! Early stopping by the train/validation gap (Hinton 2010, *A practical guide to training
//! RBMs*, Sec. 6; the protocol of Sec. 4 of the Frank-Wolfe paper for CD and FW alike): the
//! average log-likelihoods of the training and the validation data differ by the difference
//! of their average `−F(v)`, because `ln Z` cancels, so the gap can be watched at the cost of
//! two passes over the data. [`crate::rbm::frank_wolfe`] applies the same rule to model sizes.

use super::progress::Progress;
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::fit::{Control, Count};
use crate::fit::{Observer, StopReason};
use crate::rbm::model::{check_len, mean_neg_free_energy};
use crate::rbm::Rbm;

/// Puts the gap `train − valid` of the average log-likelihoods in the metric `gap` (and the
/// two averages of `−F(v)` in `train_nfe`, `valid_nfe`) at every observation, and ends
/// training ([`super::StopReason::EarlyStopped`]) at the first observation where the gap
/// exceeds its smallest value so far by more than `tol` nats. The model returned is the one of
/// that observation.
///
/// ```
/// use boltzkit::data::synth::BarsAndStripes;
/// use boltzkit::rbm::train::{Algorithm, GapEarlyStop, StopReason, TrainParams, Trainer};
/// use boltzkit::rbm::Rbm;
/// use boltzkit::rng::rng_from_seed;
/// let all = BarsAndStripes::new(3, false)?.dataset()?;
/// let (train, valid) = (all.select(&(0..10).collect::<Vec<_>>())?, all.select(&[10, 11, 12, 13])?);
/// let rbm = Rbm::init_from_data(&train, 16, 0.01, &mut rng_from_seed(1))?;
/// let params = TrainParams::new().algorithm(Algorithm::Cd { k: 5 }).learning_rate(0.5).epochs(3000).seed(2);
/// let out = Trainer::new(rbm, &train, params)?
///     .add_observer(GapEarlyStop::new(train.clone(), valid, 1.0)?, 10)
///     .run()?;
/// // ten patterns learnt by sixteen units: the held-out four fall behind, and training stops
/// assert!(matches!(out.record.stop, StopReason::EarlyStopped { .. }));
/// # Ok::<(), boltzkit::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct GapEarlyStop {
    train: Dataset,
    valid: Dataset,
    rule: GapRule,
}

/// The growth rule of the train − validation gap, shared by [`GapEarlyStop`] and Frank-Wolfe's
/// size selection: a gap has grown when it exceeds the minimum of the earlier gaps by more
/// than `tol` nats.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GapRule {
    tol: f64,
    min: Option<f64>,
}

impl GapRule {
    /// A rule with tolerance `tol` nats and no gap seen.
    pub fn new(tol: f64) -> Self {
        GapRule { tol, min: None }
    }

    /// Records `gap`; true when it rose more than `tol` above the minimum so far (which then
    /// stays as it was).
    pub fn grown(&mut self, gap: f64) -> bool {
        match self.min {
            Some(m) if gap > m + self.tol => true,
            Some(m) if gap >= m => false,
            _ => {
                self.min = Some(gap);
                false
            }
        }
    }

    /// The smallest gap seen so far.
    pub fn min(&self) -> Option<f64> {
        self.min
    }
}

impl GapEarlyStop {
    /// Watches `train` (the training data, or a sample of it) against `valid`; `tol` ≥ 0 nats.
    pub fn new(train: Dataset, valid: Dataset, tol: f64) -> Result<Self> {
        if !(tol.is_finite() && tol >= 0.0) {
            return Err(Error::param(
                "gap_tol",
                format!("must be finite and ≥ 0, got {tol}"),
            ));
        }
        check_len(
            "GapEarlyStop::new",
            "validation columns",
            valid.n_vars(),
            train.n_vars(),
        )?;
        Ok(GapEarlyStop {
            train,
            valid,
            rule: GapRule::new(tol),
        })
    }

    /// The smallest gap seen so far.
    pub fn min_gap(&self) -> Option<f64> {
        self.rule.min()
    }
}

/// `(train − valid gap, train average −F, valid average −F)` of `rbm`.
pub fn likelihood_gap(rbm: &Rbm, train: &Dataset, valid: &Dataset) -> Result<(f64, f64, f64)> {
    let t = mean_neg_free_energy(rbm, train)?;
    let v = mean_neg_free_energy(rbm, valid)?;
    Ok((t - v, t, v))
}

impl<'a> Observer<Progress<'a>> for GapEarlyStop {
    fn start(&mut self, p: &mut Progress<'a>) -> Result<()> {
        let rbm = p.rbm;
        check_len(
            "GapEarlyStop",
            "data columns",
            self.train.n_vars(),
            rbm.n_visible(),
        )?;
        self.rule = GapRule::new(self.rule.tol);
        // a resumed run replays the gaps it recorded, so the running minimum continues
        for gap in p.history.iter().filter_map(|r| r.metrics.get("gap")) {
            self.rule.grown(*gap);
        }
        Ok(())
    }

    fn observe(&mut self, p: &mut Progress<'a>) -> Result<Control> {
        let (gap, t, v) = likelihood_gap(p.rbm, &self.train, &self.valid)?;
        p.metrics.insert("gap".into(), gap);
        p.metrics.insert("train_nfe".into(), t);
        p.metrics.insert("valid_nfe".into(), v);
        if self.rule.grown(gap) {
            let m = self.rule.min().unwrap_or(gap);
            return Ok(Control::Stop(StopReason::EarlyStopped {
                after: Count::epochs(p.epoch),
                detail: format!(
                    "the train − validation gap {gap:.3} nats rose more than {} above its \
                     minimum {m:.3}",
                    self.rule.tol
                ),
            }));
        }
        Ok(Control::Continue)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::synth::BarsAndStripes;
    use crate::rbm::exact;
    use crate::rbm::train::{Algorithm, StopReason, TrainParams, Trainer};
    use crate::rng::rng_from_seed;

    fn split() -> (Dataset, Dataset) {
        let all = BarsAndStripes::new(3, false).unwrap().dataset().unwrap();
        let train = all.select(&(0..10).collect::<Vec<_>>()).unwrap();
        let valid = all.select(&[10, 11, 12, 13]).unwrap();
        (train, valid)
    }

    /// The gap equals the difference of the exact average log-likelihoods (ln Z cancels).
    #[test]
    fn gap_is_the_difference_of_exact_log_likelihoods() {
        let (train, valid) = split();
        let rbm = Rbm::random(9, 5, 1.0, &mut rng_from_seed(4)).unwrap();
        let (gap, _, _) = likelihood_gap(&rbm, &train, &valid).unwrap();
        let exact_gap = exact::average_log_likelihood(&rbm, &train).unwrap()
            - exact::average_log_likelihood(&rbm, &valid).unwrap();
        assert!((gap - exact_gap).abs() < 1e-4, "{gap} vs {exact_gap}");
    }

    /// Overfitting ten patterns stops the run early, the recorded gaps show the rise, and the
    /// model returned is the one whose gap triggered the stop; the largest tolerance never
    /// stops.
    #[test]
    fn stops_when_the_gap_grows_and_never_with_infinite_tolerance() {
        let (train, valid) = split();
        let run = |tol: f64| {
            let rbm = Rbm::init_from_data(&train, 16, 0.01, &mut rng_from_seed(1)).unwrap();
            let params = TrainParams::new()
                .algorithm(Algorithm::Cd { k: 5 })
                .learning_rate(0.5)
                .epochs(3000)
                .seed(2);
            let obs = GapEarlyStop::new(train.clone(), valid.clone(), tol).unwrap();
            Trainer::new(rbm, &train, params)
                .unwrap()
                .add_observer(obs, 10)
                .run()
                .unwrap()
        };
        let out = run(1.0);
        let StopReason::EarlyStopped { after, .. } = out.record.stop else {
            panic!("expected an early stop, got {:?}", out.record.stop);
        };
        let epoch = after.count;
        assert!(epoch < 3000 && epoch % 10 == 0);
        assert_eq!(out.record.epochs, epoch);
        let gaps: Vec<f64> = out
            .record
            .history
            .iter()
            .map(|r| r.metrics["gap"])
            .collect();
        let last = *gaps.last().unwrap();
        let min = gaps[..gaps.len() - 1]
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
        assert!(last > min + 1.0, "last gap {last}, minimum before {min}");
        // no earlier observation met the rule (against the minimum of its own time)
        let mut running = f64::INFINITY;
        for &g in &gaps[..gaps.len() - 1] {
            assert!(
                g <= running + 1.0,
                "gap {g} should have stopped (minimum {running})"
            );
            running = running.min(g);
        }
        let (g, _, _) = likelihood_gap(&out.model, &train, &valid).unwrap();
        assert_eq!(g, last);
        let never = run(f64::MAX);
        assert_eq!(never.record.stop, StopReason::MaxEpochs);
    }

    #[test]
    fn bad_settings_are_refused() {
        let (train, valid) = split();
        assert!(GapEarlyStop::new(train.clone(), valid.clone(), -1.0).is_err());
        assert!(GapEarlyStop::new(train.clone(), valid, f64::NAN).is_err());
        let narrow = Dataset::binary(ndarray::Array2::zeros((3, 2))).unwrap();
        assert!(GapEarlyStop::new(train, narrow, 1.0).is_err());
    }
}
