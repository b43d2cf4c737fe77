//! The divergence watch of the training loop ([`TrainParams::divergence_tol`]): after every
//! epoch a figure that costs almost nothing, the mean conditional log-probability
//! `ln p(v_i | v_{−i})` of [`WATCH_PAIRS`] fixed (row, unit) pairs of the training data
//! ([`monitor::unit_pseudo_log_likelihood`], a pseudo-likelihood per unit: 16 rows ×
//! [`UNITS_PER_ROW`] units, one hidden input per row), and the exact or AIS average
//! log-likelihood of the training data when an observer recorded one under [`TRAIN_LL`] at
//! that epoch, watched as the median of its last [`LL_WINDOW`] records (an AIS estimate's
//! noise, or one epoch's swing of a noisy run, neither stops a run nor sets an unreachable
//! best alone); when either falls more than the allowed fall below its best, the run stops as
//! diverged and the best model is kept. The parameter guard ([`super::guard`]) catches what
//! overflows within an update; this catches a model that stays finite but has left the data
//! (PCD on binarized MNIST at rate 100 ended "all epochs done" at a test log-likelihood of
//! −3,102 nats where the uniform model scores −543).
//!
//! The allowed fall is relative: the tolerance times the independent-units model's figure on
//! the same pairs (`Σ ln p̂_i(v_i)` over the pairs with `p̂` the data's means: its entropy per
//! unit, at least [`MIN_SCALE`]), per unit for the pseudo-likelihood and × `n_visible` for the
//! log-likelihood. On binarized MNIST most pixels are nearly certain, so that model's figure
//! is only about −0.28 nats per unit: a diverging rate (10) costs 0.03-0.08 of it, where an
//! absolute 1 nat per unit never fell; on bars and stripes it is ln 2 per unit. The figure of
//! the data, not of the starting model, so a resumed run watches with the same allowance.
//! The starting model is the first best, and the base-rate initialization is the
//! independent-units model, so "below its best" covers "below the independent-units model".
//! Data that is not 0/1 is not watched (the figure is defined for binary rows).
//!
//! [`TrainParams::divergence_tol`]: super::TrainParams::divergence_tol

use crate::data::Dataset;
use crate::error::Result;
use crate::rbm::file::Offsets;
use crate::rbm::model::{visible_means, Rbm};
use crate::rbm::monitor;

/// Pairs (row, unit) the watch scores each epoch.
pub const WATCH_PAIRS: usize = 256;

/// Units scored per watched row: the rows' hidden inputs are shared by their pairs, so 256
/// pairs cost 16 rows' hidden inputs (and 256 softplus sums) instead of 256 rows'.
pub const UNITS_PER_ROW: usize = 16;

/// The least independent-units figure (nats per unit) the allowed fall is scaled by: data
/// whose watched units are (nearly) constant still gets a fall it can tolerate.
pub const MIN_SCALE: f64 = 0.01;

/// The training log-likelihood records the watch takes the median of: a fall (or a lucky
/// high record) has to show in two of three records to count.
pub const LL_WINDOW: usize = 3;

/// The metric name under which an observer's training log-likelihood is watched too (the
/// CLI's and Python's monitors use it).
pub const TRAIN_LL: &str = "train_ll";

/// The (row, unit) pairs the watch scores on `n` rows of `nv` units: `min(16, nv)` units per
/// row, consecutive (so they share the row's hidden input), the rows spread evenly over the
/// data (each row once before any twice), units by a stride coprime with most sizes, so a
/// row's units are distinct and revisited rows get other units.
pub(crate) fn watch_pairs(n: usize, nv: usize) -> Vec<(usize, usize)> {
    let k = WATCH_PAIRS.min(n.saturating_mul(nv));
    let per_row = UNITS_PER_ROW.min(nv).max(1);
    let rows = k.div_ceil(per_row);
    (0..k)
        .map(|j| (((j / per_row) * n / rows) % n, (j * 7919 + 13) % nv))
        .collect()
}

/// The independent-units model's figure on `pairs` (the mean of `ln p̂_i(v_i)`, `p̂` the
/// data's means, each observed value's frequency so never 0): the scale of the allowed fall.
fn independent_figure(data: &Dataset, pairs: &[(usize, usize)]) -> Result<f64> {
    let means = visible_means(data)?;
    let sum: f64 = pairs
        .iter()
        .map(|&(r, i)| {
            let p = means[i];
            if data.values()[[r, i]] != 0 {
                p
            } else {
                1.0 - p
            }
            .ln()
        })
        .sum();
    Ok(sum / pairs.len().max(1) as f64)
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
    /// The tolerance (a fraction of `scale`) as set, for the messages.
    tol: f32,
    /// The independent-units model's figure on the pairs, negated (≥ [`MIN_SCALE`]).
    scale: f64,
    /// The allowed fall of the pseudo-likelihood per unit: `tol × scale`.
    fall: f64,
    /// The best model by the pseudo-likelihood of the pairs.
    best: Best,
    /// The best model by the training log-likelihood, once an observer recorded one: the
    /// model kept when there is one (the better figure of the two).
    best_ll: Option<Best>,
    /// The last [`LL_WINDOW`] training log-likelihoods recorded, oldest first.
    recent_ll: Vec<f64>,
    /// The best median of [`LL_WINDOW`] consecutive records, and the epoch of its last one.
    best_median: Option<(f64, usize)>,
}

/// The median of a window's records (none is NaN: a NaN record stops the run first).
fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_unstable_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        0.5 * (v[m - 1] + v[m])
    }
}

impl DivergenceWatch {
    /// A watch over `data` starting from `rbm` (centering `offsets`) after `epoch` epochs,
    /// with tolerance `tol` (a fraction of the independent-units model's figure); `None` when
    /// `tol` is 0 (off) or the data is not binary or empty.
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
        let scale = (-independent_figure(data, &pairs)?).max(MIN_SCALE);
        Ok(Some(DivergenceWatch {
            pairs,
            tol,
            scale,
            fall: f64::from(tol) * scale,
            best: Best::new(rbm, offsets, epoch, figure),
            best_ll: None,
            recent_ll: Vec::with_capacity(LL_WINDOW),
            best_median: None,
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
        let allowed = format!(
            "more than the divergence tolerance ({} of the independent-units model's {:.3} \
             nats per unit",
            self.tol, -self.scale
        );
        if figure.is_nan() || figure < self.best.figure - self.fall {
            return Ok(Some(format!(
                "the pseudo-likelihood of {} training (row, unit) pairs fell to {figure:.3} \
                 nats per unit from {:.3} at epoch {}, {allowed}: {:.3}) below its best",
                self.pairs.len(),
                self.best.figure,
                self.best.epoch,
                self.fall
            )));
        }
        if let Some(ll) = ll {
            if ll.is_nan() {
                return Ok(Some(format!(
                    "the training log-likelihood recorded at epoch {epoch} is NaN"
                )));
            }
            let now = median(&self.window_with(ll));
            if let Some((best, at)) = self.best_median {
                if now < best - self.fall * nv {
                    return Ok(Some(format!(
                        "the training log-likelihood (the median of its last {LL_WINDOW} \
                         records) fell to {now:.3} from {best:.3} at epoch {at}, {allowed}, \
                         {:.1} nats here) below its best",
                        self.fall * nv
                    )));
                }
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

    /// The last records of the training log-likelihood with `ll` appended (at most
    /// [`LL_WINDOW`], oldest first).
    fn window_with(&self, ll: f64) -> Vec<f64> {
        let skip = (self.recent_ll.len() + 1).saturating_sub(LL_WINDOW);
        let mut w: Vec<f64> = self.recent_ll[skip..].to_vec();
        w.push(ll);
        w
    }

    /// Notes the training log-likelihood `ll` of `rbm` after `epoch` epochs (the starting
    /// model's, at the run's first observation; each later one through
    /// [`DivergenceWatch::after_epoch`]): the best model by that figure when it is, and the
    /// best median once [`LL_WINDOW`] records exist.
    pub(crate) fn record_ll(&mut self, rbm: &Rbm, offsets: Option<Offsets>, epoch: usize, ll: f64) {
        if self.best_ll.as_ref().is_none_or(|b| ll >= b.figure) {
            self.best_ll = Some(Best::new(rbm, offsets, epoch, ll));
        }
        self.recent_ll = self.window_with(ll);
        if self.recent_ll.len() == LL_WINDOW {
            let m = median(&self.recent_ll);
            if self.best_median.is_none_or(|(b, _)| m >= b) {
                self.best_median = Some((m, epoch));
            }
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
        // the default tolerance times the independent-units model's figure on the pairs
        let fall = 0.1 * -independent_figure(&data, &pairs).unwrap();
        let figure = |r: &Rbm| monitor::unit_pseudo_log_likelihood(r, &data, &pairs).unwrap();
        let figures: Vec<f64> = seen.iter().map(|(r, _)| figure(r)).collect();
        // the best before the stop (the last of equals), and no earlier fall below it
        let mut kept = 0;
        for (e, &f) in figures[..epoch].iter().enumerate() {
            assert!(
                f >= figures[kept] - fall,
                "epoch {e} fell and was not caught"
            );
            if f >= figures[kept] {
                kept = e;
            }
        }
        assert!(figures[epoch] < figures[kept] - fall, "{figures:?}");
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
        // PCD in batches of 4 at rate 0.7 learns for 161 epochs, then leaves the data
        let kept = stops_with_the_best_epoch(Algorithm::Pcd { k: 1 }, 4, 0.7);
        assert!(kept >= 1);
    }

    #[test]
    fn a_huge_rate_stops_with_the_best_model_and_offsets_centered() {
        // CG on the full batch at rate 10 falls within a few epochs: the starting model and
        // its offsets are put back
        stops_with_the_best_epoch(Algorithm::Cg { k: 1 }, 16, 10.0);
    }

    /// The watched pairs: 16 distinct units per row in consecutive pairs (one hidden input
    /// each), 16 distinct rows spread over the data; small data: every pair once.
    #[test]
    fn pairs_share_rows() {
        let p = watch_pairs(1000, 784);
        assert_eq!(p.len(), WATCH_PAIRS);
        let rows: Vec<usize> = p.chunks(UNITS_PER_ROW).map(|c| c[0].0).collect();
        for (c, &r) in p.chunks(UNITS_PER_ROW).zip(&rows) {
            assert!(c.iter().all(|&(cr, _)| cr == r));
            let mut u: Vec<usize> = c.iter().map(|&(_, i)| i).collect();
            u.sort_unstable();
            u.dedup();
            assert_eq!(u.len(), UNITS_PER_ROW);
        }
        assert_eq!(rows, (0..16).map(|j| j * 1000 / 16).collect::<Vec<_>>());
        let mut all = watch_pairs(14, 9);
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 14 * 9);
        assert_eq!(watch_pairs(1, 784).len(), WATCH_PAIRS);
    }

    /// The default rate of the CLI's tour on bars and stripes (the golden runs' settings, 30
    /// epochs) is never stopped.
    #[test]
    fn a_healthy_run_is_not_stopped() {
        let data = BarsAndStripes::new(3, false).unwrap().dataset().unwrap();
        for algorithm in [Algorithm::Cd { k: 1 }, Algorithm::Cg { k: 1 }] {
            let rbm0 = Rbm::init_from_data(&data, 4, 0.01, &mut rng_from_seed(1)).unwrap();
            let params = TrainParams::new()
                .algorithm(algorithm)
                .learning_rate(0.2)
                .full_batch()
                .epochs(30)
                .seed(1);
            let out = Trainer::new(rbm0, &data, params).unwrap().run().unwrap();
            assert_eq!(out.record.stop, StopReason::MaxEpochs);
        }
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
        // its scale: the independent-units model's figure, by brute force over the pairs
        let means = visible_means(&data).unwrap();
        let brute: f64 = w
            .pairs
            .iter()
            .map(|&(r, i)| {
                let on = data.values()[[r, i]] == 1;
                (if on { means[i] } else { 1.0 - means[i] }).ln()
            })
            .sum::<f64>()
            / w.pairs.len() as f64;
        assert!((w.scale + brute).abs() < 1e-12, "{} vs {brute}", w.scale);
        assert_eq!(w.fall, w.scale);
        assert!(TrainParams::new().divergence_tol(-1.0).check().is_err());
        assert!(TrainParams::new().divergence_tol(f32::NAN).check().is_err());
    }

    /// The training log-likelihood is watched by the median of its last 3 records: one dip
    /// (a noisy epoch, an AIS estimate's error) does not stop the run, one lucky record does
    /// not set a best the run must then keep up with, a fall in two records of three stops it,
    /// and the model kept is the one of the best single record.
    #[test]
    fn the_training_log_likelihood_is_watched_too_and_its_best_kept() {
        let data = BarsAndStripes::new(3, false).unwrap().dataset().unwrap();
        let m: Vec<Rbm> = (1..7)
            .map(|s| Rbm::init_from_data(&data, 4, 0.01, &mut rng_from_seed(s)).unwrap())
            .collect();
        let mut w = DivergenceWatch::start(&data, &m[0], None, 0.5, 0)
            .unwrap()
            .unwrap();
        // 9 units × 0.5 × the independent-units figure per unit
        let allowed = 9.0 * 0.5 * w.scale;
        w.record_ll(&m[0], None, 0, -11.0);
        let mut after = |i: usize, ll: f64| w.after_epoch(&m[i], None, &data, i, Some(ll));
        assert_eq!(after(1, -10.0).unwrap(), None);
        // the first median (of -11, -10, -10): -10
        assert_eq!(after(2, -10.0).unwrap(), None);
        let dip = -10.0 - 1.1 * allowed;
        assert_eq!(after(3, dip).unwrap(), None, "one dip");
        assert_eq!(after(4, -10.0 + 5.0 * allowed).unwrap(), None, "one spike");
        let why = after(5, dip).unwrap().unwrap();
        assert!(
            why.contains(&format!(
                "training log-likelihood (the median of its last 3 records) fell to {dip:.3} \
                 from -10.000 at epoch 4, more than the divergence tolerance (0.5 of the \
                 independent-units model's"
            )),
            "{why}"
        );
        let kept = w.into_best();
        assert_eq!((kept.epoch, &kept.rbm), (4, &m[4]));
        // a NaN record stops at once
        let mut w = DivergenceWatch::start(&data, &m[0], None, 0.5, 0)
            .unwrap()
            .unwrap();
        let why = w.after_epoch(&m[1], None, &data, 1, Some(f64::NAN));
        assert!(why.unwrap().unwrap().contains("at epoch 1 is NaN"));
    }

    #[test]
    fn median_of_a_window() {
        assert_eq!(median(&[3.0, -1.0, 2.0]), 2.0);
        assert_eq!(median(&[-5.0]), -5.0);
        assert_eq!(median(&[1.0, 4.0]), 2.5);
    }
}
