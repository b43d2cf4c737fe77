//! [`GibbsLangevin`]: the Gibbs-Langevin sampler of Liao et al. (2022, "Gaussian-Bernoulli
//! RBMs without tears", Sec. 4) for a Gaussian visible layer: each sweep one block Gibbs step
//! (`h ~ p(h | v)`, `v ~ p(v | h)`) then [`LangevinParams::steps`] Langevin steps on the
//! visible marginal `p(v) ∝ e^{−F(v)}`, Metropolis-adjusted by default (MALA), so every sweep
//! leaves `p(v)` invariant exactly.
//!
//! With `F(v) = U_v(v) − Γ_h(vᵀW)`, `∇F(v) = v/σ² − b − W E[h | v]`. Steps are preconditioned
//! by the variances (`M = diag σ²`): the proposal is
//! `v' = v − η M ∇F(v) + √(2η) σ ξ = v + η (c(v) − v) + √(2η) σ ξ` with
//! `c(v) = σ²(b + W E[h | v])` (the visible conditional mean at the hidden means),
//! `ξ ~ N(0, I)`, accepted with probability
//! `min(1, e^{F(v) − F(v')} q(v | v') / q(v' | v))`,
//! `ln q(v' | v) = −Σ_i (v'_i − v_i − η(c_i(v) − v_i))² / (4η σ²_i) + const`.
//! One generator per chain ([`derive_rng`]), so draws do not depend on the thread count.

use super::chains::UnitChains;
use super::layer::Units;
use super::model::UnitRbm;
use crate::error::{Error, Result};
use crate::rng::{derive_rng, derive_seed, BkRng};
use rand::Rng;
use rand_distr::{Distribution as _, StandardNormal};

/// Settings of the Langevin part of a Gibbs-Langevin sweep.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct LangevinParams {
    /// Langevin steps after each block Gibbs step (default 5; 0 is plain Gibbs).
    pub steps: usize,
    /// Step size `η` relative to each unit's variance (default 0.1), > 0.
    pub step_size: f64,
    /// Metropolis adjustment (MALA; default true): without it the chain is the unadjusted
    /// Langevin algorithm, whose stationary law is `p(v)` only as `η → 0`.
    pub adjust: bool,
}

impl Default for LangevinParams {
    fn default() -> Self {
        LangevinParams {
            steps: 5,
            step_size: 0.1,
            adjust: true,
        }
    }
}

/// Gibbs-Langevin chains over a model with a Gaussian visible layer.
#[derive(Debug, Clone)]
pub struct GibbsLangevin {
    chains: UnitChains,
    params: LangevinParams,
    rngs: Vec<BkRng>,
    proposed: u64,
    accepted: u64,
}

/// The buffers of one Langevin step over a batch: `c(v)`, `−F(v)` and the hidden means.
struct Drift {
    c: Vec<f32>,
    neg_f: Vec<f64>,
    h: Vec<f32>,
}

impl GibbsLangevin {
    /// Chains started at the visible rows `v0`; Gibbs draws from [`UnitChains`] with `seed`,
    /// Langevin noise from [`derive_rng`]`(derive_seed(seed, 1), i)` for chain `i`.
    pub fn new(model: &UnitRbm, v0: &[f32], seed: u64, params: LangevinParams) -> Result<Self> {
        if !matches!(model.visible(), Units::Gaussian(_)) {
            return Err(Error::param(
                "sampler",
                format!(
                    "Gibbs-Langevin needs Gaussian visible units, found {}",
                    model.visible().kind()
                ),
            ));
        }
        if !(params.step_size.is_finite() && params.step_size > 0.0) {
            return Err(Error::param(
                "langevin step_size",
                format!("{} is not a finite value > 0", params.step_size),
            ));
        }
        let chains = UnitChains::new(model, v0, seed)?;
        let stream = derive_seed(seed, 1);
        let rngs = (0..chains.n_chains() as u64)
            .map(|i| derive_rng(stream, i))
            .collect();
        Ok(GibbsLangevin {
            chains,
            params,
            rngs,
            proposed: 0,
            accepted: 0,
        })
    }

    /// The visible rows (`n_chains × n_visible`).
    pub fn visible(&self) -> &[f32] {
        self.chains.visible()
    }

    /// The fraction of Langevin proposals accepted so far (1 without adjustment).
    pub fn acceptance(&self) -> f64 {
        if self.proposed == 0 {
            return 1.0;
        }
        self.accepted as f64 / self.proposed as f64
    }

    /// `sweeps` sweeps: each one Gibbs step, then the Langevin steps.
    pub fn run(&mut self, model: &UnitRbm, sweeps: usize) -> Result<()> {
        for _ in 0..sweeps {
            self.chains.step(model)?;
            if self.params.steps > 0 {
                let mut v = self.chains.visible().to_vec();
                self.langevin(model, &mut v)?;
                self.chains.restart(&v)?;
            }
        }
        Ok(())
    }

    /// `c(v)` and `−F(v)` of every row of `v`.
    fn drift(model: &UnitRbm, v: &[f32], d: &mut Drift) -> Result<()> {
        model.hidden_means(v, &mut d.h)?;
        model.visible_means(&d.h, &mut d.c)?;
        d.neg_f = model.neg_free_energies_of(v)?;
        Ok(())
    }

    /// The Langevin steps on the rows `v`.
    fn langevin(&mut self, model: &UnitRbm, v: &mut [f32]) -> Result<()> {
        let Units::Gaussian(g) = model.visible() else {
            unreachable!("checked by GibbsLangevin::new")
        };
        let var: Vec<f64> = g.variance().iter().map(|&s| f64::from(s)).collect();
        let n = var.len();
        let rows = v.len() / n;
        let eta = self.params.step_size;
        let new = |w: usize| Drift {
            c: vec![0.0; rows * n],
            neg_f: vec![0.0; rows],
            h: vec![0.0; rows * w],
        };
        let wh = model.hidden().width();
        let (mut at, mut to) = (new(wh), new(wh));
        Self::drift(model, v, &mut at)?;
        let mut proposal = vec![0.0f32; rows * n];
        for _ in 0..self.params.steps {
            for (r, rng) in self.rngs.iter_mut().enumerate().take(rows) {
                let span = r * n..(r + 1) * n;
                for ((p, (&x, &c)), &s) in proposal[span.clone()]
                    .iter_mut()
                    .zip(v[span.clone()].iter().zip(&at.c[span]))
                    .zip(&var)
                {
                    let z: f64 = StandardNormal.sample(rng);
                    let (x, c) = (f64::from(x), f64::from(c));
                    *p = (x + eta * (c - x) + (2.0 * eta * s).sqrt() * z) as f32;
                }
            }
            Self::drift(model, &proposal, &mut to)?;
            for (r, rng) in self.rngs.iter_mut().enumerate().take(rows) {
                let span = r * n..(r + 1) * n;
                let accept = !self.params.adjust || {
                    let log_q = |to: &[f32], from: &[f32], c: &[f32]| -> f64 {
                        to.iter()
                            .zip(from.iter().zip(c))
                            .zip(&var)
                            .map(|((&y, (&x, &c)), &s)| {
                                let (y, x, c) = (f64::from(y), f64::from(x), f64::from(c));
                                let d = y - x - eta * (c - x);
                                -d * d / (4.0 * eta * s)
                            })
                            .sum()
                    };
                    let (x, y) = (&v[span.clone()], &proposal[span.clone()]);
                    let log_a = to.neg_f[r] - at.neg_f[r] + log_q(x, y, &to.c[span.clone()])
                        - log_q(y, x, &at.c[span.clone()]);
                    let u: f64 = rng.random();
                    u.ln() < log_a
                };
                self.proposed += 1;
                if accept {
                    self.accepted += 1;
                    v[span.clone()].copy_from_slice(&proposal[span.clone()]);
                    at.c[span.clone()].copy_from_slice(&to.c[span]);
                    at.neg_f[r] = to.neg_f[r];
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::twins::normal_weights;
    use super::super::{Bernoulli, Bounded, Gaussian, UnitType as _, VARIANCE_BOUNDS};
    use super::*;

    /// Two Gaussian units, three Bernoulli hidden units: `p(v)` a mixture of 8 Gaussians.
    fn model() -> UnitRbm {
        let (lo, hi) = VARIANCE_BOUNDS;
        let g = Gaussian::new(
            vec![0.5, -0.3],
            vec![0.4, 1.2],
            Bounded::new(lo, hi).unwrap(),
        )
        .unwrap();
        let h = Bernoulli::new(vec![-0.5, 0.3, 0.1]).unwrap();
        let mut w = normal_weights(6, 1.5, 3);
        w[0] = 3.0; // a well separated mode, which plain Langevin crosses slowly
        UnitRbm::new(Units::Gaussian(g), Units::Bernoulli(h), w).unwrap()
    }

    /// Exact `E[v_i]` and `E[v_i²]` by enumerating `h`: `p(h) ∝ e^{b_h·h + Γ_v(Wh)}`,
    /// `v | h ~ N(σ²(b + Wh), σ²)`.
    fn exact_moments(m: &UnitRbm) -> [f64; 4] {
        let Units::Gaussian(g) = m.visible() else {
            unreachable!()
        };
        let Units::Bernoulli(b) = m.hidden() else {
            unreachable!()
        };
        let (mut z, mut mom) = (0.0, [0.0f64; 4]);
        for s in 0..8u32 {
            let h: Vec<f32> = (0..3).map(|j| ((s >> j) & 1) as f32).collect();
            let input: Vec<f32> = (0..2)
                .map(|i| (0..3).map(|j| m.w()[i * 3 + j] * h[j]).sum())
                .collect();
            let logw = (0..3).map(|j| f64::from(b.bias()[j] * h[j])).sum::<f64>()
                + g.log_partition(&input);
            let p = logw.exp();
            let mut mean = [0.0f32; 2];
            g.mean(&input, &mut mean);
            for i in 0..2 {
                let (mu, s2) = (f64::from(mean[i]), f64::from(g.variance()[i]));
                mom[i] += p * mu;
                mom[2 + i] += p * (s2 + mu * mu);
            }
            z += p;
        }
        mom.map(|x| x / z)
    }

    /// Moments over `chains` chains from 0 after `burn` sweeps, averaged over `keep` more.
    fn sampled_moments(m: &UnitRbm, p: LangevinParams, gibbs: bool) -> ([f64; 4], f64) {
        let (chains, burn, keep) = (1000, 30, 30);
        let mut s = GibbsLangevin::new(m, &vec![0.0; 2 * chains], 9, p).unwrap();
        let mut mom = [0.0f64; 4];
        let sweep = |s: &mut GibbsLangevin| {
            if gibbs {
                s.run(m, 1).unwrap();
            } else {
                let mut v = s.visible().to_vec();
                s.langevin(m, &mut v).unwrap();
                s.chains.restart(&v).unwrap();
            }
        };
        for _ in 0..burn {
            sweep(&mut s);
        }
        for _ in 0..keep {
            sweep(&mut s);
            for row in s.visible().chunks_exact(2) {
                for i in 0..2 {
                    let x = f64::from(row[i]);
                    mom[i] += x;
                    mom[2 + i] += x * x;
                }
            }
        }
        (mom.map(|x| x / (chains * keep) as f64), s.acceptance())
    }

    /// The largest relative difference (absolute below 1).
    fn worst(got: [f64; 4], want: [f64; 4]) -> f64 {
        got.iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs() / b.abs().max(1.0))
            .fold(0.0, f64::max)
    }

    #[test]
    fn stationary_moments_match_the_exact_mixture() {
        let m = model();
        let want = exact_moments(&m);
        // MALA alone (no Gibbs step), then whole Gibbs-Langevin sweeps
        let mala = LangevinParams {
            steps: 10,
            step_size: 0.3,
            adjust: true,
        };
        let (got, acc) = sampled_moments(&m, mala, false);
        eprintln!("MALA {got:.4?} vs exact {want:.4?}, acceptance {acc:.3}");
        assert!(worst(got, want) < 0.02, "{got:?} vs {want:?}");
        assert!(acc > 0.3 && acc < 1.0, "acceptance {acc}");
        let (got, acc) = sampled_moments(&m, LangevinParams::default(), true);
        eprintln!("Gibbs-Langevin {got:.4?}, acceptance {acc:.3}");
        assert!(worst(got, want) < 0.02, "{got:?} vs {want:?}");
        // the same steps unadjusted and large are biased: the check can fail
        let ula = LangevinParams {
            steps: 10,
            step_size: 0.9,
            adjust: false,
        };
        let (got, acc) = sampled_moments(&m, ula, false);
        eprintln!("ULA {got:.4?}");
        assert_eq!(acc, 1.0);
        assert!(worst(got, want) > 0.05, "{got:?} vs {want:?}");
    }

    #[test]
    fn refusals_and_repeatable_draws() {
        let m = model();
        let bad = LangevinParams {
            step_size: 0.0,
            ..LangevinParams::default()
        };
        assert!(GibbsLangevin::new(&m, &[0.0, 0.0], 1, bad).is_err());
        let b = UnitRbm::new(
            Units::Bernoulli(Bernoulli::new(vec![0.0; 2]).unwrap()),
            Units::Bernoulli(Bernoulli::new(vec![0.0; 3]).unwrap()),
            vec![0.0; 6],
        )
        .unwrap();
        assert!(GibbsLangevin::new(&b, &[0.0, 1.0], 1, LangevinParams::default()).is_err());
        let run = || {
            let mut s = GibbsLangevin::new(&m, &[0.0; 8], 4, LangevinParams::default()).unwrap();
            s.run(&m, 5).unwrap();
            s.visible().to_vec()
        };
        assert_eq!(run(), run());
    }
}
