//! Centered gradients: CG (Melchior et al. 2016, Alg. 1, `dd_s^b`) and CS-DCP (Alg. 4 of the
//! S-DCP paper), which is S-DCP with centered gradients; CG is CS-DCP with `d = 1`.
//!
//! The centered energy with offsets `μ` (visible) and `λ` (hidden) is
//! `E_c(v, h) = −(v−μ)ᵀW(h−λ) − b_cᵀ(v−μ) − c_cᵀ(h−λ)`, equal to the standard energy with
//! `b = b_c − Wλ`, `c = c_c − Wᵀμ` up to the constant `−μᵀWλ + b_cᵀμ + c_cᵀλ`
//! ([`to_centered`], [`from_centered`]): the distribution is the same. The model is kept in the
//! standard parameters, so the re-parameterization that accompanies each offset update (the
//! `b ← b + ν_λ W(λ_batch − λ)`, `c ← c + ν_μ Wᵀ(μ_batch − μ)` lines of Alg. 4) leaves it
//! untouched, and the centered ascent step `Δ(W, b_c, c_c) = η(∇W, ∇b, ∇c)` is applied as the
//! standard step `ΔW = η∇W`, `Δb = η(∇b − ∇W λ)`, `Δc = η(∇c − ∇Wᵀ μ)`, with `λ`, `μ` the
//! offsets after their update. (With momentum the velocity lives in standard coordinates; the
//! paper uses none.)

use super::cd::Cd;
use super::gradient::{Gradient, GradientEstimator};
use super::sgd::Sgd;
use super::update::{restore_json, save_json, Update};
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::rbm::file::Offsets;
use crate::rbm::model::visible_means;
use crate::rbm::Rbm;

/// The centered parameters `(W, b_c, c_c)` of `rbm` for offsets `mu`, `lambda`:
/// `b_c = b + Wλ`, `c_c = c + Wᵀμ` (`W` unchanged), in `f64`.
pub fn to_centered(rbm: &Rbm, mu: &[f32], lambda: &[f32]) -> Result<(Vec<f64>, Vec<f64>)> {
    check_offsets(rbm, mu, lambda)?;
    let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
    let w = rbm.w();
    let b_c = (0..nv)
        .map(|i| {
            f64::from(rbm.b()[i])
                + (0..nh)
                    .map(|j| f64::from(w[i * nh + j]) * f64::from(lambda[j]))
                    .sum::<f64>()
        })
        .collect();
    let c_c = (0..nh)
        .map(|j| {
            f64::from(rbm.c()[j])
                + (0..nv)
                    .map(|i| f64::from(w[i * nh + j]) * f64::from(mu[i]))
                    .sum::<f64>()
        })
        .collect();
    Ok((b_c, c_c))
}

/// The standard RBM equal in distribution to the centered one `(W, b_c, c_c; μ, λ)`:
/// `b = b_c − Wλ`, `c = c_c − Wᵀμ`.
pub fn from_centered(
    n_visible: usize,
    n_hidden: usize,
    w: Vec<f32>,
    b_c: &[f64],
    c_c: &[f64],
    mu: &[f32],
    lambda: &[f32],
) -> Result<Rbm> {
    let shell = Rbm::new(
        n_visible,
        n_hidden,
        w,
        vec![0.0; n_visible],
        vec![0.0; n_hidden],
    )?;
    let (wb, wc) = to_centered(&shell, mu, lambda)?; // Wλ and Wᵀμ
    if b_c.len() != n_visible || c_c.len() != n_hidden {
        return Err(Error::Shape {
            op: "from_centered".into(),
            expected: format!("b_c with {n_visible} and c_c with {n_hidden} entries"),
            found: format!("{} and {}", b_c.len(), c_c.len()),
        });
    }
    let b = b_c.iter().zip(&wb).map(|(x, y)| (x - y) as f32).collect();
    let c = c_c.iter().zip(&wc).map(|(x, y)| (x - y) as f32).collect();
    Rbm::new(n_visible, n_hidden, shell.w().to_vec(), b, c)
}

fn check_offsets(rbm: &Rbm, mu: &[f32], lambda: &[f32]) -> Result<()> {
    if mu.len() != rbm.n_visible() || lambda.len() != rbm.n_hidden() {
        return Err(Error::Shape {
            op: "centering offsets".into(),
            expected: format!(
                "mu with {} and lambda with {} entries",
                rbm.n_visible(),
                rbm.n_hidden()
            ),
            found: format!("{} and {}", mu.len(), lambda.len()),
        });
    }
    Ok(())
}

/// CS-DCP with `d` inner steps of `K′` Gibbs steps (Alg. 4 of the S-DCP paper); `d = 1` is CG
/// with CD-`K′` (Melchior et al. 2016, Alg. 1). Offsets start at `μ` = the data mean and
/// `λ = 0.5` ([`Centered::from_data`], as Sec. 4.1 of the S-DCP paper) and slide with factors
/// `ν_μ`, `ν_λ` (0.01 there) toward the batch means of `v` and of `p(h | v)` at the outer
/// parameters, once per inner step as the listing of Alg. 4 does.
///
/// ```
/// use boltzkit::rbm::train::{Centered, Gradient, SgdParams};
/// use boltzkit::rbm::Rbm;
/// use boltzkit::rng::rng_from_seed;
/// let mut rbm = Rbm::random(4, 3, 0.3, &mut rng_from_seed(1))?;
/// let mut cs = Centered::new(3, 4, 7, vec![0.5; 4], vec![0.5; 3], 0.01, 0.01)?;
/// let mut sgd = SgdParams::new().learning_rate(0.1).check()?;
/// let mut g = Gradient::like(&rbm);
/// cs.step(&mut rbm, &[1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0], &mut sgd, &mut g)?;
/// assert!(rbm.is_finite() && cs.offsets().mu[2] > 0.5); // column 2 is all ones
/// # Ok::<(), boltzkit::Error>(())
/// ```
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Centered {
    d: usize,
    cd: Cd,
    mu: Vec<f32>,
    lambda: Vec<f32>,
    nu_mu: f32,
    nu_lambda: f32,
    #[serde(skip)] // scratch, overwritten by every step
    hp: Vec<f32>,
}

impl Centered {
    /// CS-DCP (`d ≥ 1` inner steps of `k ≥ 1` Gibbs steps) with initial offsets `mu`,
    /// `lambda` (each in `[0, 1]`) and sliding factors in `[0, 1]`.
    pub fn new(
        d: usize,
        k: usize,
        seed: u64,
        mu: Vec<f32>,
        lambda: Vec<f32>,
        nu_mu: f32,
        nu_lambda: f32,
    ) -> Result<Self> {
        if d == 0 {
            return Err(Error::param(
                "inner",
                "CS-DCP needs at least one inner step (d ≥ 1)",
            ));
        }
        for (name, nu) in [("nu_mu", nu_mu), ("nu_lambda", nu_lambda)] {
            if !(0.0..=1.0).contains(&nu) {
                return Err(Error::param(name, format!("must be in [0, 1], got {nu}")));
            }
        }
        for (name, x) in [("mu", &mu), ("lambda", &lambda)] {
            if let Some(i) = x.iter().position(|v| !(0.0..=1.0).contains(v)) {
                return Err(Error::param(
                    name,
                    format!("offset {i} is {}; must be in [0, 1]", x[i]),
                ));
            }
        }
        Ok(Centered {
            d,
            cd: Cd::new(k, seed)?,
            mu,
            lambda,
            nu_mu,
            nu_lambda,
            hp: Vec::new(),
        })
    }

    /// The set-up of Sec. 4.1 of the S-DCP paper: `μ` = the data mean, `λ = 0.5`.
    pub fn from_data(
        data: &Dataset,
        n_hidden: usize,
        d: usize,
        k: usize,
        seed: u64,
        nu_mu: f32,
        nu_lambda: f32,
    ) -> Result<Self> {
        let mu = visible_means(data)?.iter().map(|&m| m as f32).collect();
        Centered::new(d, k, seed, mu, vec![0.5; n_hidden], nu_mu, nu_lambda)
    }

    /// The current offsets (to store beside the model, [`crate::rbm::file::save_rbm`]).
    pub fn offsets(&self) -> Offsets {
        Offsets {
            mu: self.mu.clone(),
            lambda: self.lambda.clone(),
        }
    }

    /// One CS-DCP update on the mini-batch `v`: `d` optimizer steps on `rbm`, `grad` holding
    /// the last inner (standard-coordinate) gradient.
    pub fn step(
        &mut self,
        rbm: &mut Rbm,
        v: &[f32],
        sgd: &mut Sgd,
        grad: &mut Gradient,
    ) -> Result<()> {
        check_offsets(rbm, &self.mu, &self.lambda)?;
        let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
        let rows = rbm.batch_rows("Centered::step", v, nv)?;
        if rows == 0 {
            return Err(Error::param("batch", "empty mini-batch"));
        }
        self.hp.resize(rows * nh, 0.0);
        rbm.hidden_probs(v, &mut self.hp)?;
        let m_v = col_means(v, nv);
        let m_h = col_means(&self.hp, nh);
        let (mut mu0, mut lambda0) = (Vec::new(), Vec::new());
        for l in 0..self.d {
            if l == 0 {
                self.cd.estimate(rbm, v, grad)?;
            } else {
                self.cd.estimate_continued(rbm, v, grad)?;
            }
            // offsets slide toward the batch means (the re-parameterization keeps the model)
            slide(&mut self.mu, &m_v, self.nu_mu);
            slide(&mut self.lambda, &m_h, self.nu_lambda);
            if l == 0 {
                mu0.clone_from(&self.mu);
                lambda0.clone_from(&self.lambda);
            }
            center(grad, &m_v, &m_h, &mu0, &lambda0, &self.mu, &self.lambda);
            sgd.step(rbm, grad)?;
        }
        Ok(())
    }
}

/// Column means of a row-major batch, accumulated in `f64`.
fn col_means(x: &[f32], width: usize) -> Vec<f64> {
    let rows = x.len() / width;
    let mut m = vec![0f64; width];
    for r in x.chunks_exact(width) {
        m.iter_mut().zip(r).for_each(|(a, &v)| *a += f64::from(v));
    }
    m.iter_mut().for_each(|a| *a /= rows as f64);
    m
}

fn slide(off: &mut [f32], batch_mean: &[f64], nu: f32) {
    for (o, &m) in off.iter_mut().zip(batch_mean) {
        *o = ((1.0 - f64::from(nu)) * f64::from(*o) + f64::from(nu) * m) as f32;
    }
}

/// Turns the standard difference `G` (`⟨vhᵀ⟩_data − ⟨vhᵀ⟩_model`, …; data means `m_v`,
/// `m_h`) into the centered step in standard coordinates. The data term is centered with
/// the offsets of the first inner step (`μ0`, `λ0`: Alg. 4 computes `∇_W g` once) and the
/// model term with the current ones (`μ`, `λ`):
/// `∇W = G_W − (μ0 m_hᵀ + m_v λ0ᵀ − μ0 λ0ᵀ) + (μ n_hᵀ + n_v λᵀ − μ λᵀ)` with model means
/// `n_v = m_v − G_b`, `n_h = m_h − G_c`; then `b ← G_b − ∇W λ`, `c ← G_c − ∇Wᵀ μ`.
fn center(
    g: &mut Gradient,
    m_v: &[f64],
    m_h: &[f64],
    mu0: &[f32],
    lambda0: &[f32],
    mu: &[f32],
    lambda: &[f32],
) {
    let (nv, nh) = (g.b.len(), g.c.len());
    let n_v: Vec<f64> = (0..nv).map(|i| m_v[i] - f64::from(g.b[i])).collect();
    let n_h: Vec<f64> = (0..nh).map(|j| m_h[j] - f64::from(g.c[j])).collect();
    let f = |x: f32| f64::from(x);
    let mut gb: Vec<f64> = g.b.iter().map(|&x| f(x)).collect();
    let mut gc: Vec<f64> = g.c.iter().map(|&x| f(x)).collect();
    for i in 0..nv {
        for j in 0..nh {
            let pos = f(mu0[i]) * m_h[j] + m_v[i] * f(lambda0[j]) - f(mu0[i]) * f(lambda0[j]);
            let neg = f(mu[i]) * n_h[j] + n_v[i] * f(lambda[j]) - f(mu[i]) * f(lambda[j]);
            let w = f(g.w[i * nh + j]) - pos + neg;
            g.w[i * nh + j] = w as f32;
            gb[i] -= w * f(lambda[j]);
            gc[j] -= w * f(mu[i]);
        }
    }
    g.b.iter_mut().zip(&gb).for_each(|(o, &x)| *o = x as f32);
    g.c.iter_mut().zip(&gc).for_each(|(o, &x)| *o = x as f32);
}

impl Update for Centered {
    fn update(
        &mut self,
        rbm: &mut Rbm,
        v: &[f32],
        sgd: &mut Sgd,
        grad: &mut Gradient,
    ) -> Result<()> {
        self.step(rbm, v, sgd, grad)
    }

    fn offsets(&self) -> Option<Offsets> {
        Some(Centered::offsets(self))
    }

    fn save_state(&self) -> Result<Option<serde_json::Value>> {
        save_json(self)
    }

    fn restore_state(&mut self, state: serde_json::Value) -> Result<()> {
        restore_json(self, state, "centered (CG / CS-DCP)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rbm::exact;
    use crate::rbm::testutil::all_states;
    use crate::rbm::train::SgdParams;
    use crate::rng::rng_from_seed;
    use ndarray::Array2;

    /// The centered energy of one joint state, in `f64`.
    fn centered_energy(
        w: &[f32],
        b_c: &[f64],
        c_c: &[f64],
        mu: &[f32],
        lambda: &[f32],
        v: &[u8],
        h: &[u8],
    ) -> f64 {
        let nh = h.len();
        let dv: Vec<f64> = v
            .iter()
            .zip(mu)
            .map(|(&x, &m)| f64::from(x) - f64::from(m))
            .collect();
        let dh: Vec<f64> = h
            .iter()
            .zip(lambda)
            .map(|(&x, &l)| f64::from(x) - f64::from(l))
            .collect();
        let mut e = 0.0;
        for (i, &a) in dv.iter().enumerate() {
            for (j, &bj) in dh.iter().enumerate() {
                e -= a * f64::from(w[i * nh + j]) * bj;
            }
            e -= b_c[i] * a;
        }
        e - c_c.iter().zip(&dh).map(|(c, d)| c * d).sum::<f64>()
    }

    /// Centering's re-parameterization leaves the distribution unchanged: brute-force
    /// enumeration of the centered energy gives the standard model's exact `ln Z` (up to the
    /// known constant) and the same exact log-likelihood; [`from_centered`] inverts
    /// [`to_centered`].
    #[test]
    fn centering_leaves_the_distribution_unchanged() {
        let (nv, nh) = (5, 4);
        let rbm = Rbm::random(nv, nh, 0.9, &mut rng_from_seed(21)).unwrap();
        let mu = vec![0.1, 0.7, 0.5, 0.3, 0.9];
        let lambda = vec![0.5, 0.2, 0.8, 0.4];
        let (b_c, c_c) = to_centered(&rbm, &mu, &lambda).unwrap();
        let vs = all_states(nv);
        let hs = all_states(nh);
        let log_pv_unnorm: Vec<f64> = vs
            .iter()
            .map(|v| {
                let t: Vec<f64> = hs
                    .iter()
                    .map(|h| -centered_energy(rbm.w(), &b_c, &c_c, &mu, &lambda, v, h))
                    .collect();
                crate::linalg::log_sum_exp(&t)
            })
            .collect();
        let log_zc = crate::linalg::log_sum_exp(&log_pv_unnorm);
        // E_c = E_std + const, const = −μᵀWλ + b_cᵀμ + c_cᵀλ
        let mut konst = 0.0;
        for i in 0..nv {
            for (j, &l) in lambda.iter().enumerate() {
                konst -= f64::from(mu[i]) * f64::from(rbm.w()[i * nh + j]) * f64::from(l);
            }
            konst += b_c[i] * f64::from(mu[i]);
        }
        konst += c_c
            .iter()
            .zip(&lambda)
            .map(|(c, &l)| c * f64::from(l))
            .sum::<f64>();
        let log_z = exact::log_partition(&rbm).unwrap();
        assert!(
            (log_zc - (log_z - konst)).abs() < 1e-9,
            "{log_zc} vs {log_z} − {konst}"
        );
        // log-likelihood of a dataset under both
        let rows: Vec<u8> = [3usize, 7, 12, 31, 0]
            .iter()
            .flat_map(|&s| vs[s].clone())
            .collect();
        let data = Dataset::binary(Array2::from_shape_vec((5, nv), rows).unwrap()).unwrap();
        let ll_c = [3usize, 7, 12, 31, 0]
            .iter()
            .map(|&s| log_pv_unnorm[s] - log_zc)
            .sum::<f64>()
            / 5.0;
        let ll = exact::average_log_likelihood(&rbm, &data).unwrap();
        assert!((ll - ll_c).abs() < 1e-9, "{ll} vs {ll_c}");
        // round trip
        let back = from_centered(nv, nh, rbm.w().to_vec(), &b_c, &c_c, &mu, &lambda).unwrap();
        for (a, b) in back
            .b()
            .iter()
            .chain(back.c())
            .zip(rbm.b().iter().chain(rbm.c()))
        {
            assert!((a - b).abs() < 1e-6);
        }
        // a nonzero offset changes the centered biases (the test can fail)
        assert!(b_c
            .iter()
            .zip(rbm.b())
            .any(|(x, &y)| (x - f64::from(y)).abs() > 1e-3));
    }

    /// One CS-DCP update (d = 2) equals Alg. 4 done by hand in centered coordinates.
    #[test]
    fn step_follows_algorithm_4_in_centered_coordinates() {
        let (nv, nh, rows) = (5, 3, 4);
        let rbm0 = Rbm::random(nv, nh, 0.5, &mut rng_from_seed(8)).unwrap();
        let mut r = rng_from_seed(9);
        let v: Vec<f32> = (0..rows * nv)
            .map(|_| f32::from(u8::from(rand::Rng::random::<f32>(&mut r) < 0.4)))
            .collect();
        let (mu_init, lambda_init) = (vec![0.4f32; nv], vec![0.5f32; nh]);
        let (eta, nu) = (0.3f32, 0.2f32);
        let mut a = rbm0.clone();
        let mut cs = Centered::new(2, 2, 3, mu_init.clone(), lambda_init.clone(), nu, nu).unwrap();
        let mut sgd = SgdParams::new().learning_rate(eta).check().unwrap();
        let mut g = Gradient::like(&a);
        cs.step(&mut a, &v, &mut sgd, &mut g).unwrap();

        // by hand: centered parameters, chains as Cd's (the sampler sees the same model)
        let mean = |x: &[f32], w: usize| col_means(x, w);
        let mut hp = vec![0.0; rows * nh];
        rbm0.hidden_probs(&v, &mut hp).unwrap();
        let (m_v, m_h) = (mean(&v, nv), mean(&hp, nh));
        let (mut mu, mut lambda) = (mu_init, lambda_init);
        let mut w: Vec<f64> = rbm0.w().iter().map(|&x| f64::from(x)).collect();
        let (mut b_c, mut c_c) = to_centered(&rbm0, &mu, &lambda).unwrap();
        let mut chains =
            crate::rbm::GibbsChains::new(&rbm0, &v, crate::rng::derive_seed(3, 0)).unwrap();
        let mut grad_wg = vec![0f64; nv * nh];
        let mut model = rbm0.clone();
        for l in 0..2 {
            chains.run(&model, 2).unwrap();
            chains.update_hidden_probs(&model).unwrap();
            let (vn, hn) = (chains.visible().to_vec(), chains.hidden_probs().to_vec());
            // re-parameterization, then offsets slide
            for i in 0..nv {
                for j in 0..nh {
                    b_c[i] += f64::from(nu) * w[i * nh + j] * (m_h[j] - f64::from(lambda[j]));
                    c_c[j] += f64::from(nu) * w[i * nh + j] * (m_v[i] - f64::from(mu[i]));
                }
            }
            slide(&mut mu, &m_v, nu);
            slide(&mut lambda, &m_h, nu);
            let outer = |vv: &[f32], hh: &[f32]| {
                let mut o = vec![0f64; nv * nh];
                for (vr, hr) in vv.chunks(nv).zip(hh.chunks(nh)) {
                    for i in 0..nv {
                        for j in 0..nh {
                            o[i * nh + j] += (f64::from(vr[i]) - f64::from(mu[i]))
                                * (f64::from(hr[j]) - f64::from(lambda[j]))
                                / rows as f64;
                        }
                    }
                }
                o
            };
            if l == 0 {
                grad_wg = outer(&v, &hp);
            }
            let neg = outer(&vn, &hn);
            let (n_v, n_h) = (mean(&vn, nv), mean(&hn, nh));
            for k in 0..nv * nh {
                w[k] += f64::from(eta) * (grad_wg[k] - neg[k]);
            }
            for i in 0..nv {
                b_c[i] += f64::from(eta) * (m_v[i] - n_v[i]);
            }
            for j in 0..nh {
                c_c[j] += f64::from(eta) * (m_h[j] - n_h[j]);
            }
            let wf: Vec<f32> = w.iter().map(|&x| x as f32).collect();
            model = from_centered(nv, nh, wf, &b_c, &c_c, &mu, &lambda).unwrap();
        }
        let close = |x: &[f32], y: &[f32]| x.iter().zip(y).all(|(p, q)| (p - q).abs() < 1e-5);
        assert!(close(a.w(), model.w()), "{:?} vs {:?}", a.w(), model.w());
        assert!(close(a.b(), model.b()), "{:?} vs {:?}", a.b(), model.b());
        assert!(close(a.c(), model.c()), "{:?} vs {:?}", a.c(), model.c());
        assert_eq!(cs.offsets().mu, mu);
        assert_eq!(cs.offsets().lambda, lambda);
        assert!(Centered::new(0, 1, 1, vec![], vec![], 0.1, 0.1).is_err());
        assert!(Centered::new(1, 1, 1, vec![1.5], vec![], 0.1, 0.1).is_err());
        assert!(Centered::new(1, 1, 1, vec![], vec![], 2.0, 0.1).is_err());
    }
}
