//! Stochastic difference-of-convex programming, S-DCP (Alg. 3 of the S-DCP paper): for each
//! mini-batch, `∇g` (the data term) is computed once at the outer parameters `θ(t)`, then `d`
//! inner gradient steps on the convex `f(θ) − θᵀ∇g(θ(t))` each use `K′` Gibbs steps of chains
//! started at the batch and carried across the inner steps; the gradient accumulator `Δθ` is
//! reset at each inner step (as in Algs. 2 and 4; Alg. 3's listing omits it).
//!
//! The code shows that CD is S-DCP with `d = 1`: the first inner step *is* a CD-`K′` estimate
//! ([`Cd`]), the later ones continue its chains ([`Cd::estimate_continued`]).

use super::cd::Cd;
use super::gradient::{Gradient, GradientEstimator};
use super::sgd::Sgd;
use super::update::{restore_json, save_json, Update};
use crate::error::{Error, Result};
use crate::rbm::Rbm;

/// The S-DCP update with `d` inner steps of `K′` Gibbs steps each.
///
/// ```
/// use boltzkit::rbm::train::{Gradient, Sdcp, SgdParams};
/// use boltzkit::rbm::Rbm;
/// use boltzkit::rng::rng_from_seed;
/// let mut rbm = Rbm::random(4, 3, 0.3, &mut rng_from_seed(1))?;
/// let mut sdcp = Sdcp::new(3, 4, 7)?; // d = 3, K' = 4, seed 7
/// let mut sgd = SgdParams::new().learning_rate(0.1).check()?;
/// let mut g = Gradient::like(&rbm);
/// sdcp.step(&mut rbm, &[1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0], &mut sgd, &mut g)?;
/// assert!(rbm.is_finite());
/// # Ok::<(), boltzkit::Error>(())
/// ```
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Sdcp {
    d: usize,
    cd: Cd,
}

impl Sdcp {
    /// S-DCP with `d ≥ 1` inner steps of `k ≥ 1` Gibbs steps; chains seeded as [`Cd`]'s.
    pub fn new(d: usize, k: usize, seed: u64) -> Result<Self> {
        if d == 0 {
            return Err(Error::param(
                "inner",
                "S-DCP needs at least one inner step (d ≥ 1)",
            ));
        }
        Ok(Sdcp {
            d,
            cd: Cd::new(k, seed)?,
        })
    }

    /// The number of inner steps `d`.
    pub fn inner_steps(&self) -> usize {
        self.d
    }

    /// One S-DCP update on the mini-batch `v`: `d` optimizer steps on `rbm`, `grad` holding
    /// the last inner gradient.
    pub fn step(
        &mut self,
        rbm: &mut Rbm,
        v: &[f32],
        sgd: &mut Sgd,
        grad: &mut Gradient,
    ) -> Result<()> {
        self.cd.estimate(rbm, v, grad)?;
        sgd.step(rbm, grad)?;
        for _ in 1..self.d {
            self.cd.estimate_continued(rbm, v, grad)?;
            sgd.step(rbm, grad)?;
        }
        Ok(())
    }
}

impl Update for Sdcp {
    fn update(
        &mut self,
        rbm: &mut Rbm,
        v: &[f32],
        sgd: &mut Sgd,
        grad: &mut Gradient,
    ) -> Result<()> {
        self.step(rbm, v, sgd, grad)
    }

    /// Alg. 3 changes the model only by its `d` SGD steps.
    fn changes_model_only_by_sgd(&self) -> bool {
        true
    }

    fn save_state(&self) -> Result<Option<serde_json::Value>> {
        save_json(self)
    }

    fn restore_state(&mut self, state: serde_json::Value) -> Result<()> {
        restore_json(self, state, "S-DCP")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rbm::train::SgdParams;
    use crate::rng::rng_from_seed;

    fn batches(n: usize, rows: usize, nv: usize) -> Vec<Vec<f32>> {
        crate::rbm::testutil::random_batches(n, rows, nv, 77)
    }

    /// S-DCP with d = 1 is CD, bit for bit, at the same seed.
    #[test]
    fn d_equal_one_is_cd() {
        let rbm0 = Rbm::random(6, 4, 0.3, &mut rng_from_seed(5)).unwrap();
        let data = batches(5, 8, 6);
        let sgd_params = SgdParams::new().learning_rate(0.2).momentum(0.5);

        let mut a = rbm0.clone();
        let mut sdcp = Sdcp::new(1, 3, 11).unwrap();
        let mut sgd = sgd_params.check().unwrap();
        let mut g = Gradient::like(&a);
        for v in &data {
            sdcp.step(&mut a, v, &mut sgd, &mut g).unwrap();
        }

        let mut b = rbm0.clone();
        let mut cd = Cd::new(3, 11).unwrap();
        let mut sgd = sgd_params.check().unwrap();
        for v in &data {
            cd.estimate(&b, v, &mut g).unwrap();
            sgd.step(&mut b, &g).unwrap();
        }
        assert_eq!(a, b);

        // d = 3 is another algorithm: three inner steps per batch, chains carried
        let mut c = rbm0.clone();
        let mut sdcp3 = Sdcp::new(3, 3, 11).unwrap();
        let mut sgd = sgd_params.check().unwrap();
        for v in &data {
            sdcp3.step(&mut c, v, &mut sgd, &mut g).unwrap();
        }
        assert_ne!(a, c);
        assert!(Sdcp::new(0, 1, 1).is_err());
    }

    /// The inner steps keep ∇g of the outer parameters and carry the chains.
    #[test]
    fn inner_steps_follow_algorithm_3() {
        let rbm0 = Rbm::random(5, 3, 0.5, &mut rng_from_seed(8)).unwrap();
        let v = &batches(1, 4, 5)[0];
        let params = SgdParams::new().learning_rate(0.3);
        let mut a = rbm0.clone();
        let mut g = Gradient::like(&a);
        Sdcp::new(2, 2, 3)
            .unwrap()
            .step(&mut a, v, &mut params.check().unwrap(), &mut g)
            .unwrap();

        // by hand: positive statistics at θ(t), chains from v, two inner updates
        let mut b = rbm0.clone();
        let mut sgd = params.check().unwrap();
        let mut p_pos = vec![0.0; 4 * 3];
        rbm0.hidden_probs(v, &mut p_pos).unwrap();
        let mut chains =
            crate::rbm::GibbsChains::new(&b, v, crate::rng::derive_seed(3, 0)).unwrap();
        let mut h = Gradient::like(&b);
        for _ in 0..2 {
            chains.run(&b, 2).unwrap();
            chains.update_hidden_probs(&b).unwrap();
            h.set_difference(&b, v, &p_pos, chains.visible(), chains.hidden_probs())
                .unwrap();
            sgd.step(&mut b, &h).unwrap();
        }
        assert_eq!(a, b);
        assert_eq!(g, h);
    }
}
