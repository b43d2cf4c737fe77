//! The divergence watch of the training loop ([`TrainParams::divergence_tol`]): after every
//! epoch a figure that costs almost nothing, the mean conditional log-probability
//! `ln p(v_i | v_{−i})` of [`WATCH_PAIRS`] fixed (row, unit) pairs of the training data
//! ([`monitor::unit_pseudo_log_likelihood`], a pseudo-likelihood per unit), and the exact or
//! AIS average log-likelihood of the training data when an observer recorded one under
//! [`TRAIN_LL`] at that epoch; when either falls more than the tolerance (nats per visible
//! unit) below its best, the run stops as diverged and the best model is kept. The parameter
//! guard ([`super::guard`]) catches what overflows within an update; this catches a model that
//! stays finite but has left the data (PCD on binarized MNIST at rate 100 ended "all epochs
//! done" at a test log-likelihood of −3,102 nats where the uniform model scores −543).
//!
//! The starting model is the first best, and the base-rate initialization is the
//! independent-units model, so "below its best" covers "below the independent-units model".
//! Data that is not 0/1 is not watched (the figure is defined for binary rows).
//!
//! [`TrainParams::divergence_tol`]: super::TrainParams::divergence_tol

use crate::data::Dataset;
use crate::error::Result;
use crate::rbm::file::Offsets;
use crate::rbm::model::Rbm;
use crate::rbm::monitor;

/// Pairs (row, unit) the watch scores each epoch: rows spread evenly over the data, each
/// with one unit, rows revisited with other units when the data has fewer.
pub const WATCH_PAIRS: usize = 256;

/// The metric name under which an observer's training log-likelihood is watched too (the
/// CLI's and Python's monitors use it).
pub const TRAIN_LL: &str = "train_ll";

/// The (row, unit) pairs the watch scores on `n` rows of `nv` units: pair `j` is row `j·n/k`
/// (each row once before any twice), its unit by a stride coprime with most sizes, so
/// revisited rows get other units.
pub(crate) fn watch_pairs(n: usize, nv: usize) -> Vec<(usize, usize)> {
    let k = WATCH_PAIRS.min(n.saturating_mul(nv));
    (0..k)
        .map(|j| ((j * n / k) % n, (j * 7919 + 13) % nv))
        .collect()
}

/// A model the watch keeps: the best so far by one figure, and when.
#[derive(Debug, Clone)]
pub(crate) struct Best {
    pub(crate) rbm: Rbm,
    pub(crate) offsets: Option<Offsets>,
    pub(crate) epoch: usize,
    /// Its figure (the pseudo-likelihood per unit, or the training log-likelihood).
    figure: f64,
}

impl Best {
    fn new(rbm: &Rbm, offsets: Option<Offsets>, epoch: usize, figure: f64) -> Self {
        Best {
            rbm: rbm.clone(),
            offsets,
            epoch,
            figure,
        }
    }
}

/// The watch of one run.
#[derive(Debug)]
pub(crate) struct DivergenceWatch {
    pairs: Vec<(usize, usize)>,
    tol: f64,
    /// The best model by the pseudo-likelihood of the pairs.
    best: Best,
    /// The best model by the training log-likelihood, once an observer recorded one: the
    /// model kept when there is one (the better figure of the two).
    best_ll: Option<Best>,
}

impl DivergenceWatch {
    /// A watch over `data` starting from `rbm` (centering `offsets`) after `epoch` epochs,
    /// with tolerance `tol` nats per unit; `None` when `tol` is 0 (off) or the data is not
    /// binary or empty.
    pub(crate) fn start(
        data: &Dataset,
        rbm: &Rbm,
        offsets: Option<Offsets>,
        tol: f32,
        epoch: usize,
    ) -> Result<Option<Self>> {
        let (n, nv) = (data.n_samples(), rbm.n_visible());
        if tol == 0.0 || n == 0 || nv == 0 || !data.is_binary() {
            return Ok(None);
        }
        let pairs = watch_pairs(n, nv);
        let figure = monitor::unit_pseudo_log_likelihood(rbm, data, &pairs)?;
        Ok(Some(DivergenceWatch {
            pairs,
            tol: f64::from(tol),
            best: Best::new(rbm, offsets, epoch, figure),
            best_ll: None,
        }))
    }

    /// Scores `rbm` (centering `offsets`) on `data` after `epoch` epochs (`ll`: the training
    /// log-likelihood an observer computed at this epoch, if any): `Some(why)` when it
    /// diverged, else `None` (and the best models updated).
    pub(crate) fn after_epoch(
        &mut self,
        rbm: &Rbm,
        offsets: Option<Offsets>,
        data: &Dataset,
        epoch: usize,
        ll: Option<f64>,
    ) -> Result<Option<String>> {
        let nv = rbm.n_visible() as f64;
        let figure = monitor::unit_pseudo_log_likelihood(rbm, data, &self.pairs)?;
        if figure.is_nan() || figure < self.best.figure - self.tol {
            return Ok(Some(format!(
                "the pseudo-likelihood of {} training (row, unit) pairs fell to {figure:.3} \
                 nats per unit from {:.3} at epoch {}, more than the divergence tolerance \
                 ({} per unit) below its best",
                self.pairs.len(),
                self.best.figure,
                self.best.epoch,
                self.tol
            )));
        }
        if let (Some(ll), Some(best)) = (ll, &self.best_ll) {
            if ll.is_nan() || ll < best.figure - self.tol * nv {
                return Ok(Some(format!(
                    "the training log-likelihood fell to {ll:.3} from {:.3} at epoch {}, \
                     more than the divergence tolerance ({} per unit, {:.1} here) below its best",
                    best.figure,
                    best.epoch,
                    self.tol,
                    self.tol * nv
                )));
            }
        }
        if figure >= self.best.figure {
            self.best = Best::new(rbm, offsets.clone(), epoch, figure);
        }
        if let Some(ll) = ll {
            self.record_ll(rbm, offsets, epoch, ll);
        }
        Ok(None)
    }

    /// Notes the training log-likelihood `ll` of `rbm` after `epoch` epochs (the starting
    /// model's, at the run's first observation; each later one through
    /// [`DivergenceWatch::after_epoch`]): the best by that figure when it is.
    pub(crate) fn record_ll(&mut self, rbm: &Rbm, offsets: Option<Offsets>, epoch: usize, ll: f64) {
        if self.best_ll.as_ref().is_none_or(|b| ll >= b.figure) {
            self.best_ll = Some(Best::new(rbm, offsets, epoch, ll));
        }
    }

    /// The model a diverged run keeps: the best by the training log-likelihood when one was
    /// recorded, else by the pseudo-likelihood.
    pub(crate) fn into_best(self) -> Best {
        self.best_ll.unwrap_or(self.best)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::synth::BarsAndStripes;
    use crate::fit::{Control, StopReason};
    use crate::rbm::train::{Algorithm, Progress, TrainParams, Trainer};
    use crate::rng::rng_from_seed;

    /// A rate far too large: the watch stops the run, and the model kept is bit for bit the
    /// one of the epoch whose figure was the best up to the stop (every epoch's model recorded
    /// by an observer and scored here), the stop's figure more than the tolerance below it.
    fn stops_with_the_best_epoch(algorithm: Algorithm, batch: usize, lr: f32) -> usize {
        let data = BarsAndStripes::new(3, false).unwrap().dataset().unwrap();
        let rbm0 = Rbm::init_from_data(&data, 8, 0.01, &mut rng_from_seed(3)).unwrap();
        let params = TrainParams::new()
            .algorithm(algorithm)
            .learning_rate(lr)
            .batch_size(batch)
            .epochs(300)
            .seed(1)
            .max_abs_param(f32::INFINITY);
        let mut seen: Vec<(Rbm, Option<Offsets>)> = Vec::new();
        let out = Trainer::new(rbm0, &data, params)
            .unwrap()
            .add_observer(
                |p: &mut Progress| {
                    seen.push((p.rbm.clone(), p.offsets.cloned()));
                    Ok(Control::Continue)
                },
                1,
            )
            .run()
            .unwrap();
        let StopReason::Diverged {
            epoch, ref detail, ..
        } = out.record.stop
        else {
            panic!("expected divergence, got {:?}", out.record.stop);
        };
        assert_eq!(seen.len(), epoch + 1, "one model per epoch and the start");
        let pairs = watch_pairs(data.n_samples(), 9);
        let figure = |r: &Rbm| monitor::unit_pseudo_log_likelihood(r, &data, &pairs).unwrap();
        let figures: Vec<f64> = seen.iter().map(|(r, _)| figure(r)).collect();
        // the best before the stop (the last of equals), and no earlier fall below it
        let mut kept = 0;
        for (e, &f) in figures[..epoch].iter().enumerate() {
            assert!(
                f >= figures[kept] - 1.0,
                "epoch {e} fell and was not caught"
            );
            if f >= figures[kept] {
                kept = e;
            }
        }
        assert!(figures[epoch] < figures[kept] - 1.0, "{figures:?}");
        assert!(
            detail.ends_with(&format!("kept the model of epoch {kept}, its best")),
            "{detail}"
        );
        assert_eq!(out.model, seen[kept].0);
        assert_eq!(out.record.offsets, seen[kept].1);
        assert_eq!(out.record.epochs, epoch);
        kept
    }

    #[test]
    fn a_huge_rate_stops_with_the_best_model_pcd() {
        // PCD in batches of 4 at rate 5 learns for a while, then leaves the data
        let kept = stops_with_the_best_epoch(Algorithm::Pcd { k: 1 }, 4, 5.0);
        assert!(kept >= 1);
    }

    #[test]
    fn a_huge_rate_stops_with_the_best_model_and_offsets_centered() {
        // CG on the full batch at rate 10 falls within a few epochs: the starting model and
        // its offsets are put back
        stops_with_the_best_epoch(Algorithm::Cg { k: 1 }, 16, 10.0);
    }

    #[test]
    fn off_at_zero_and_checked() {
        let data = BarsAndStripes::new(3, false).unwrap().dataset().unwrap();
        let rbm = Rbm::init_from_data(&data, 4, 0.01, &mut rng_from_seed(1)).unwrap();
        assert!(DivergenceWatch::start(&data, &rbm, None, 0.0, 0)
            .unwrap()
            .is_none());
        let w = DivergenceWatch::start(&data, &rbm, None, 1.0, 0)
            .unwrap()
            .unwrap();
        assert_eq!(w.pairs.len(), WATCH_PAIRS.min(data.n_samples() * 9));
        assert!(TrainParams::new().divergence_tol(-1.0).check().is_err());
        assert!(TrainParams::new().divergence_tol(f32::NAN).check().is_err());
    }

    #[test]
    fn the_training_log_likelihood_is_watched_too_and_its_best_kept() {
        let data = BarsAndStripes::new(3, false).unwrap().dataset().unwrap();
        let m: Vec<Rbm> = (1..5)
            .map(|s| Rbm::init_from_data(&data, 4, 0.01, &mut rng_from_seed(s)).unwrap())
            .collect();
        let mut w = DivergenceWatch::start(&data, &m[0], None, 0.5, 0)
            .unwrap()
            .unwrap();
        w.record_ll(&m[0], None, 0, -11.0);
        let mut after = |i: usize, ll: f64| w.after_epoch(&m[i], None, &data, i, Some(ll));
        assert_eq!(after(1, -10.0).unwrap(), None);
        // 9 units × 0.5: a fall of 4 nats is within, of 5 not
        assert_eq!(after(2, -14.0).unwrap(), None);
        let why = after(3, -15.0).unwrap().unwrap();
        assert!(
            why.contains("training log-likelihood fell to -15.000 from -10.000 at epoch 1"),
            "{why}"
        );
        let kept = w.into_best();
        assert_eq!((kept.epoch, &kept.rbm), (1, &m[1]));
    }
}
