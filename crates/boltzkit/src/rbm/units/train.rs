//! Training a [`UnitRbm`]: CD-k or PCD-k on weighted mini-batches of state rows, with the
//! settings of the binary trainer ([`TrainParams`]: epochs, batch size, learning rate and its
//! schedule, momentum, L2 `weight_decay`, shuffle, seed, the divergence bound) and PGM's L1²
//! penalty ([`UnitTrainParams::l1_squared`]).
//!
//! Per mini-batch: the data statistics of the batch rows weighted by their sample weights
//! (scaled to mean 1 over the data, divided by the batch size), the model statistics of the
//! chains' visible rows (PCD: persistent chains, one per row of the first batch; CD: chains
//! restarted at the batch), each `k` Gibbs steps, weighted to the same total as the batch's
//! (PGM's `weights.sum() / batch`), their difference ([`UnitStats::gradient`]) minus the
//! penalties' gradients, and one step of the optimizer ([`UnitOptimizer`]: SGD with momentum
//! or PGM's ADAM, optionally PGM's decay, saturation and zero-sum gauge) on `W` and every
//! layer's trainable coordinates ([`super::UnitType::trainable`]: fields, Gaussian `ζ`, ReLU/dReLU `γ`, `θ`).
//! A non-finite parameter or one above `max_abs_param` ends the run with
//! [`StopReason::Diverged`] and the model of before that update.
//!
//! The binary trainer's loop (`rbm/train`) stays the binary `Rbm`'s: its observers, updates
//! and checkpoints are typed on `Rbm` and its fused kernels. This loop is the same schedule
//! (seeded shuffle per epoch, the learning rate per epoch, the guard after every update, the
//! interrupt after every update) over the seam.

use super::chains::UnitChains;
use super::model::UnitRbm;
use super::optim::{decayed_rate, zero_sum_gauge, OptimSettings, Optimizer, UnitOptimizer};
use super::sample_weights::normalized_weights;
use super::statistics::UnitStats;
use crate::error::{Error, Result};
use crate::fit::{Count, Interrupt, StopReason};
use crate::rbm::train::{Algorithm, TrainParams};
use crate::rng::{derive_rng, derive_seed};
use rand::seq::SliceRandom;

/// Settings of a [`UnitRbm`] training run: the binary trainer's settings and the L1² penalty.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct UnitTrainParams {
    /// The loop's settings; the algorithm must be `cd-k` or `pcd-k`.
    #[serde(flatten)]
    pub train: TrainParams,
    /// PGM's `l1b`: the penalty `λ/(2·width_v) Σ_μ (Σ_i |W_iμ|)²` on each hidden unit's
    /// weights (gradient `λ · mean_i |W_iμ| · sign W_iμ`, as PGM's Potts layers; default 0).
    pub l1_squared: f64,
    /// Clip each mini-batch gradient (all parameters) to this Euclidean norm, as Liao et al.
    /// (2022) do for Gaussian-Bernoulli RBMs ([`super::clip_gradient`]); 0 (default): off.
    pub clip_norm: f64,
    /// The update rule (default `sgd`, with `momentum`; `adam`: PGM's ADAM, its notebooks'
    /// choice, with `adam_beta1`, `adam_beta2`, `adam_epsilon`; `momentum` must then be 0).
    pub optimizer: UnitOptimizer,
    /// ADAM's first-moment decay `β₁` (default 0: no first moment, as PGM's updates of `W` and
    /// the fields), in `[0, 1)`.
    pub adam_beta1: f64,
    /// ADAM's second-moment decay `β₂` (default 0.99, PGM's), in `[0, 1)`.
    pub adam_beta2: f64,
    /// ADAM's `ε` added to `√v̂` (default 10⁻³, PGM's), > 0.
    pub adam_epsilon: f64,
    /// PGM's learning-rate decay: the rate constant for this fraction of the epochs, then
    /// geometric down to `learning_rate_end` (default 1 % of `learning_rate`) at the last
    /// epoch (PGM's `decay_after`, 0.5 in its notebooks); in `[0, 1)`. Default `None`: the
    /// binary trainer's schedule (constant, or linear to `learning_rate_end`).
    pub decay_after: Option<f64>,
    /// PGM's gradient saturation: each gradient coordinate clipped to `[−c, c]` before the
    /// update (PGM: 1); > 0. Default `None`: no clipping.
    pub saturate: Option<f64>,
    /// PGM's zero-sum gauge after every update (categorical visible units only): each site's
    /// fields and each hidden unit's weights on a site's states shifted to mean 0 over the
    /// states (default false).
    pub zero_sum_gauge: bool,
}

impl Default for UnitTrainParams {
    fn default() -> Self {
        UnitTrainParams {
            train: TrainParams::default(),
            l1_squared: 0.0,
            clip_norm: 0.0,
            optimizer: UnitOptimizer::Sgd,
            adam_beta1: 0.0,
            adam_beta2: 0.99,
            adam_epsilon: 1e-3,
            decay_after: None,
            saturate: None,
            zero_sum_gauge: false,
        }
    }
}

impl UnitTrainParams {
    /// PGM's training settings of its protein notebooks on top of `train`: ADAM (β₁ 0, β₂
    /// 0.99, ε 10⁻³), decay after half the epochs to 1 % of the rate, gradients saturated at
    /// 1, the zero-sum gauge; `l1_squared` 0 (set it as wanted).
    pub fn pgm(train: TrainParams) -> Self {
        UnitTrainParams {
            train: TrainParams {
                momentum: 0.0,
                ..train
            },
            optimizer: UnitOptimizer::Adam,
            decay_after: Some(0.5),
            saturate: Some(1.0),
            zero_sum_gauge: true,
            ..UnitTrainParams::default()
        }
    }

    /// The optimizer's settings, checked.
    fn optim(&self) -> Result<OptimSettings> {
        OptimSettings {
            optimizer: self.optimizer,
            momentum: f64::from(self.train.momentum),
            beta1: self.adam_beta1,
            beta2: self.adam_beta2,
            epsilon: self.adam_epsilon,
            saturate: self.saturate,
        }
        .check()
    }
}

/// What a run gives back: the model, the epochs and updates done and why it stopped.
#[derive(Debug, Clone)]
pub struct UnitFit {
    /// The trained model (for a diverged run, the one before the failed update).
    pub model: UnitRbm,
    /// Epochs done.
    pub epochs: usize,
    /// Updates done.
    pub steps: u64,
    /// Why the run ended.
    pub stop: StopReason,
}

impl UnitRbm {
    /// Whether every parameter is finite and at most `bound` in magnitude; else which is not.
    fn out_of_bounds(&self, bound: f64) -> Option<String> {
        let bad = |x: f64| !x.is_finite() || x.abs() > bound;
        if let Some(i) = self.w.iter().position(|&x| bad(f64::from(x))) {
            return Some(format!("W[{i}] = {}", self.w[i]));
        }
        for (name, layer) in [("visible", &self.visible), ("hidden", &self.hidden)] {
            let theta = layer.trainable();
            if let Some(i) = theta.iter().position(|&x| bad(x)) {
                return Some(format!(
                    "{name} {} coordinate {i} = {}",
                    layer.kind(),
                    theta[i]
                ));
            }
        }
        None
    }
}

/// Trains `model` on the visible state rows `data` (sample weights `weights`, one per row;
/// `None`: equal) with `params`, calling `on_epoch(epoch, model)` after each epoch (it may
/// end the run by returning `false`: [`StopReason::EarlyStopped`]) and stopping after the
/// current update when `interrupt` is set.
pub fn train(
    mut model: UnitRbm,
    data: &[f32],
    weights: Option<&[f64]>,
    params: &UnitTrainParams,
    interrupt: Option<&Interrupt>,
    mut on_epoch: impl FnMut(usize, &UnitRbm) -> Result<bool>,
) -> Result<UnitFit> {
    let p = *params.train.check()?.get();
    let (k, persistent) = match p.algorithm {
        Algorithm::Cd { k } => (k, false),
        Algorithm::Pcd { k } => (k, true),
        other => {
            return Err(Error::param(
                "algo",
                format!("an RBM with {} visible and {} hidden units trains with cd-k or pcd-k; {other} is for binary RBMs",
                    model.visible().kind(), model.hidden().kind()),
            ))
        }
    };
    if !(params.l1_squared.is_finite() && params.l1_squared >= 0.0) {
        return Err(Error::param(
            "l1_squared",
            format!("{} is not a finite value ≥ 0", params.l1_squared),
        ));
    }
    if !(params.clip_norm.is_finite() && params.clip_norm >= 0.0) {
        return Err(Error::param(
            "clip_norm",
            format!("{} is not a finite value ≥ 0 (0: off)", params.clip_norm),
        ));
    }
    let optim = params.optim()?;
    if params.zero_sum_gauge {
        zero_sum_gauge(&mut model.clone())?;
    }
    if let Some(after) = params.decay_after {
        decayed_rate(&p, after, 0)?;
    }
    let wv = model.visible().width();
    if data.is_empty() || !data.len().is_multiple_of(wv) {
        return Err(Error::Shape {
            op: "units::train".into(),
            expected: format!("at least one data row of {wv} values"),
            found: format!("{} values", data.len()),
        });
    }
    model.visible().check_states(data)?;
    let n = data.len() / wv;
    // sample weights scaled to mean 1 over the data
    let unit_w: Vec<f64> = normalized_weights(weights, n)?
        .iter()
        .map(|w| w * n as f64)
        .collect();
    let bs = p.batch_size.unwrap_or(n).min(n);
    let mut order: Vec<usize> = (0..n).collect();
    let mut shuffle_rng = derive_rng(p.seed, 1);
    let mut batch = vec![0.0f32; bs * wv];
    let first: Vec<f32> = order[..bs]
        .iter()
        .flat_map(|&r| data[r * wv..(r + 1) * wv].iter().copied())
        .collect();
    let mut chains = UnitChains::new(&model, &first, derive_seed(p.seed, 2))?;
    let mut data_stats = UnitStats::zeros(&model);
    let mut model_stats = UnitStats::zeros(&model);
    let mut optimizer = Optimizer::new(&model, optim);
    let mut step = 0u64;
    let schedule = p.learning_rate_schedule();
    for epoch in 0..p.epochs {
        let lr = match params.decay_after {
            Some(after) => decayed_rate(&p, after, epoch)?,
            None => f64::from(schedule.at(epoch, p.epochs)),
        };
        if p.shuffle {
            order.shuffle(&mut shuffle_rng);
        }
        for rows in order.chunks(bs) {
            let v = &mut batch[..rows.len() * wv];
            for (dst, &r) in v.chunks_exact_mut(wv).zip(rows) {
                dst.copy_from_slice(&data[r * wv..(r + 1) * wv]);
            }
            let a: Vec<f64> = rows.iter().map(|&r| unit_w[r] / bs as f64).collect();
            model.statistics(v, &a, false, &mut data_stats)?;
            if !persistent {
                chains.restart(v)?;
            }
            chains.run(&model, k)?;
            let total: f64 = a.iter().sum();
            let m = chains.n_chains();
            model.statistics(
                chains.visible(),
                &vec![total / m as f64; m],
                false,
                &mut model_stats,
            )?;
            let mut g = UnitStats::gradient(&data_stats, &model_stats);
            penalize(
                &model,
                &mut g,
                f64::from(p.weight_decay),
                params.l1_squared,
                total,
            );
            super::clip_gradient(&mut g, params.clip_norm);
            let before = model.clone();
            optimizer.step(&mut model, &mut g, lr)?;
            if params.zero_sum_gauge {
                zero_sum_gauge(&mut model)?;
            }
            step += 1;
            if let Some(detail) = model.out_of_bounds(f64::from(p.max_abs_param)) {
                return Ok(UnitFit {
                    model: before,
                    epochs: epoch,
                    steps: step - 1,
                    stop: StopReason::Diverged {
                        epoch: epoch + 1,
                        step,
                        detail,
                    },
                });
            }
            if interrupt.is_some_and(Interrupt::is_set) {
                return Ok(UnitFit {
                    model,
                    epochs: epoch,
                    steps: step,
                    stop: StopReason::Interrupted {
                        after: Count::epochs(epoch),
                    },
                });
            }
        }
        if !on_epoch(epoch + 1, &model)? {
            return Ok(UnitFit {
                model,
                epochs: epoch + 1,
                steps: step,
                stop: StopReason::EarlyStopped {
                    after: Count::epochs(epoch + 1),
                    detail: "the epoch observer ended the run".into(),
                },
            });
        }
    }
    Ok(UnitFit {
        model,
        epochs: p.epochs,
        steps: step,
        stop: StopReason::MaxEpochs,
    })
}

/// `g.w −= scale · (l2 W + λ mean_i|W_iμ| sign W)`: the L2 and L1² penalties' gradients,
/// scaled as the batch's statistics (`scale`: the batch's total weight).
fn penalize(model: &UnitRbm, g: &mut UnitStats, l2: f64, l1_squared: f64, scale: f64) {
    if l2 == 0.0 && l1_squared == 0.0 {
        return;
    }
    let (wv, wh) = (model.visible().width(), model.hidden().width());
    let w = model.w();
    let mut col = vec![0.0f64; wh];
    for row in w.chunks_exact(wh) {
        col.iter_mut()
            .zip(row)
            .for_each(|(c, &x)| *c += f64::from(x.abs()));
    }
    col.iter_mut().for_each(|c| *c /= wv as f64);
    for (gr, row) in g.w.chunks_exact_mut(wh).zip(w.chunks_exact(wh)) {
        for ((gi, &x), &c) in gr.iter_mut().zip(row).zip(&col) {
            let x64 = f64::from(x);
            let pen = l2 * x64 + l1_squared * c * x64.signum() * f64::from(u8::from(x != 0.0));
            *gi -= (scale * pen) as f32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Bernoulli, Categorical, DRelu, Units};
    use super::*;
    use rand_distr::{Distribution as _, Normal};

    fn weights(n: usize, sd: f32, seed: u64) -> Vec<f32> {
        let normal = Normal::new(0.0f32, sd).unwrap();
        let mut rng = crate::rng::rng_from_seed(seed);
        (0..n).map(|_| normal.sample(&mut rng)).collect()
    }

    /// Visible rows drawn from `teacher` (long chains from one start).
    fn draws(teacher: &UnitRbm, start: &[f32], n: usize, seed: u64) -> Vec<f32> {
        let mut c = UnitChains::new(teacher, &start.repeat(n), seed).unwrap();
        c.run(teacher, 50).unwrap();
        c.visible().to_vec()
    }

    fn categorical_dataset() -> (UnitRbm, Vec<f32>) {
        let q = vec![3usize, 3, 2, 4];
        let cat = Units::Categorical(Categorical::new(q, weights(12, 1.0, 1)).unwrap());
        let drelu = Units::DRelu(
            DRelu::new(vec![1.0; 2], vec![1.0; 2], vec![0.5, -0.5], vec![0.2, 0.3]).unwrap(),
        );
        let teacher = UnitRbm::new(cat, drelu, weights(24, 1.2, 2)).unwrap();
        let start = [1., 0., 0., 1., 0., 0., 1., 0., 1., 0., 0., 0.];
        let data = draws(&teacher, &start, 400, 3);
        (teacher, data)
    }

    /// A fresh model for [`categorical_dataset`]: fields 0, small weights, dReLU at PGM's
    /// start (γ 1, θ 0).
    fn fresh_drelu_start() -> UnitRbm {
        UnitRbm::new(
            Units::Categorical(Categorical::new(vec![3, 3, 2, 4], vec![0.0; 12]).unwrap()),
            Units::DRelu(
                DRelu::new(vec![1.0; 2], vec![1.0; 2], vec![0.0; 2], vec![0.0; 2]).unwrap(),
            ),
            weights(24, 0.1, 4),
        )
        .unwrap()
    }

    #[test]
    fn pcd_and_cd_raise_the_exact_likelihood_to_the_teachers() {
        let (teacher, data) = categorical_dataset();
        let want = teacher.log_likelihood_exact(&data, None).unwrap().0;
        let start = fresh_drelu_start();
        let before = start.log_likelihood_exact(&data, None).unwrap().0;
        for algorithm in [Algorithm::Pcd { k: 1 }, Algorithm::Cd { k: 1 }] {
            let params = UnitTrainParams {
                train: TrainParams::new()
                    .epochs(60)
                    .batch_size(50)
                    .learning_rate(0.05)
                    .algorithm(algorithm)
                    .seed(5),
                ..UnitTrainParams::default()
            };
            let mut lls = Vec::new();
            let fit = train(start.clone(), &data, None, &params, None, |e, m| {
                if e % 20 == 0 {
                    lls.push(m.log_likelihood_exact(&data, None)?.0);
                }
                Ok(true)
            })
            .unwrap();
            assert_eq!(fit.stop, StopReason::MaxEpochs);
            let after = *lls.last().unwrap();
            eprintln!("{algorithm}: exact LL {before:.4} -> {lls:.4?}, teacher {want:.4}");
            assert!(after > before + 0.2, "{algorithm}: {before} -> {after}");
            assert!(after > want - 0.1, "{algorithm}: {after} vs teacher {want}");
        }
    }

    /// PGM's settings (ADAM, decay after half the epochs, saturation, zero-sum gauge) reach
    /// the teacher's exact log-likelihood too, and the gauge holds after the run.
    #[test]
    fn pgm_settings_raise_the_exact_likelihood_to_the_teachers() {
        let (teacher, data) = categorical_dataset();
        let want = teacher.log_likelihood_exact(&data, None).unwrap().0;
        let start = fresh_drelu_start();
        let before = start.log_likelihood_exact(&data, None).unwrap().0;
        let params = UnitTrainParams::pgm(
            TrainParams::new()
                .epochs(60)
                .batch_size(50)
                .learning_rate(0.02)
                .algorithm(Algorithm::Pcd { k: 1 })
                .seed(5),
        );
        let fit = train(start, &data, None, &params, None, |_, _| Ok(true)).unwrap();
        let after = fit.model.log_likelihood_exact(&data, None).unwrap().0;
        eprintln!("pgm settings: exact LL {before:.4} -> {after:.4}, teacher {want:.4}");
        assert!(after > before + 0.2, "{before} -> {after}");
        assert!(after > want - 0.1, "{after} vs teacher {want}");
        let f = fit.model.visible().trainable();
        assert!(f[..3].iter().sum::<f64>().abs() < 1e-9);
        // ADAM refuses momentum; the gauge refuses a Bernoulli visible layer
        let bad = UnitTrainParams {
            train: params.train.momentum(0.9),
            ..params
        };
        let e = train(fit.model.clone(), &data, None, &bad, None, |_, _| Ok(true));
        assert!(e.unwrap_err().to_string().contains("momentum"));
    }

    #[test]
    fn seeded_runs_repeat_and_penalties_shrink_the_weights() {
        let (_, data) = categorical_dataset();
        let start = UnitRbm::new(
            Units::Categorical(Categorical::new(vec![3, 3, 2, 4], vec![0.0; 12]).unwrap()),
            Units::Bernoulli(Bernoulli::new(vec![0.0; 3]).unwrap()),
            weights(36, 0.1, 6),
        )
        .unwrap();
        let run = |l1: f64, w: Option<&[f64]>| {
            let params = UnitTrainParams {
                train: TrainParams::new()
                    .epochs(10)
                    .batch_size(40)
                    .learning_rate(0.05)
                    .algorithm(Algorithm::Pcd { k: 1 })
                    .seed(7),
                l1_squared: l1,
                ..UnitTrainParams::default()
            };
            train(start.clone(), &data, w, &params, None, |_, _| Ok(true))
                .unwrap()
                .model
        };
        let a = run(0.0, None);
        assert_eq!(a, run(0.0, None));
        let norm = |m: &UnitRbm| m.w().iter().map(|x| x.abs()).sum::<f32>();
        assert!(norm(&run(1.0, None)) < 0.8 * norm(&a));
        // equal weights are no weights; other weights change the run
        assert_eq!(run(0.0, Some(&vec![2.0; 400])), a);
        let w: Vec<f64> = (0..400).map(|r| f64::from(r % 3 == 0)).collect();
        assert_ne!(run(0.0, Some(&w)), a);
        // refusals: an algorithm of the binary trainer, bad rows, bad penalty
        let bad = UnitTrainParams {
            train: TrainParams::new().algorithm(Algorithm::Pt { replicas: 4, k: 1 }),
            ..UnitTrainParams::default()
        };
        let e = train(start.clone(), &data, None, &bad, None, |_, _| Ok(true)).unwrap_err();
        assert!(e.to_string().contains("cd-k or pcd-k"), "{e}");
        let ok = UnitTrainParams::default();
        assert!(train(start.clone(), &data[1..], None, &ok, None, |_, _| Ok(true)).is_err());
        let neg = UnitTrainParams {
            l1_squared: -1.0,
            ..ok
        };
        assert!(train(start, &data, None, &neg, None, |_, _| Ok(true)).is_err());
    }
}
