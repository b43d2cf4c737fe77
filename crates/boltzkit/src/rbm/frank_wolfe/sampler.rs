//! Persistent chains for the current [`FwModel`]: block Gibbs on the standard RBM it equals
//! (Prop. 3.1), or, for a fractional RBM (Eq. 11), the Metropolis-Hastings scheme of Sec. 3.3:
//! one block-Gibbs move of the standard RBM of Eq. 12 as the proposal, accepted with
//! probability `min(1, A)`, `ln A = φ(v′) − φ(v)`, `φ(v) = Σ_i [c_i softplus(a_i) −
//! softplus(c_i a_i)]`, `a_i = w_iᵀṽ` (the visible bias cancels).
//!
//! Chain `i` of generation `g` draws its Gibbs moves from `derive_rng(derive_seed(seed, 2g), i)`
//! and its acceptance tests from `derive_rng(derive_seed(seed, 2g + 1), i)`; a new generation
//! starts when the number of units changes. Results do not depend on the thread count.
//!
//! ```
//! use boltzkit::rbm::frank_wolfe::{FwModel, FwSampler};
//! // a fractional RBM: one atom with coefficient α q = 0.5
//! let m = FwModel::new(3, vec![1.0, -1.0, 0.5, 0.2], vec![1.0], 0.5, vec![0.0; 3])?;
//! let mut s = FwSampler::new(&m, &[0.0; 2 * 3], 9)?;
//! s.step(5)?;
//! assert!(s.visible().iter().all(|&x| x == 0.0 || x == 1.0));
//! assert_eq!(s.proposals(), 10);
//! # Ok::<(), boltzkit::Error>(())
//! ```

use super::model::FwModel;
use crate::error::Result;
use crate::linalg::softplus_f64;
use crate::rbm::{GibbsChains, Rbm};
use crate::rng::{derive_rng, derive_seed, BkRng};
use rand::Rng;

/// The Metropolis-Hastings state of a fractional model.
#[derive(Debug, Clone)]
struct Mh {
    /// The atoms as an RBM (unscaled), giving `a_i = w_iᵀṽ` by one GEMM.
    atoms: Rbm,
    coef: Vec<f64>,
    phi: Vec<f64>,
    phi_new: Vec<f64>,
    prev: Vec<f32>,
    act: Vec<f32>,
    rngs: Vec<BkRng>,
}

/// Persistent chains sampling an [`FwModel`] (see the module docs).
#[derive(Debug, Clone)]
pub struct FwSampler {
    seed: u64,
    generation: u64,
    proposal: Rbm,
    chains: GibbsChains,
    mh: Option<Mh>,
    proposed: u64,
    accepted: u64,
}

impl FwSampler {
    /// Chains for `model` started at the visible states `v0` (`n_chains × n_visible`, 0/1).
    pub fn new(model: &FwModel, v0: &[f32], seed: u64) -> Result<Self> {
        let proposal = model.proposal_rbm()?;
        let chains = GibbsChains::new(&proposal, v0, derive_seed(seed, 0))?;
        let mut s = FwSampler {
            seed,
            generation: 0,
            proposal,
            chains,
            mh: None,
            proposed: 0,
            accepted: 0,
        };
        s.set_mh(model)?;
        Ok(s)
    }

    /// Number of chains.
    pub fn n_chains(&self) -> usize {
        self.chains.n_chains()
    }

    /// The current visible states (`n_chains × n_visible`).
    pub fn visible(&self) -> &[f32] {
        self.chains.visible()
    }

    /// Metropolis-Hastings proposals made so far (0 while the model is standard).
    pub fn proposals(&self) -> u64 {
        self.proposed
    }

    /// Accepted proposals.
    pub fn accepted(&self) -> u64 {
        self.accepted
    }

    /// Whether the chains use Metropolis-Hastings (the model is fractional).
    pub fn is_mh(&self) -> bool {
        self.mh.is_some()
    }

    /// Follows a change of `model` (new or removed units, `α`, bias): the chains keep their
    /// visible states; a change in the number of units starts a new generation of streams.
    pub fn set_model(&mut self, model: &FwModel) -> Result<()> {
        let proposal = model.proposal_rbm()?;
        if proposal.n_hidden() != self.proposal.n_hidden() {
            self.generation += 1;
            let v = self.chains.visible().to_vec();
            self.chains =
                GibbsChains::new(&proposal, &v, derive_seed(self.seed, 2 * self.generation))?;
        }
        self.proposal = proposal;
        self.set_mh(model)
    }

    /// Follows a change of the visible bias only (no allocation).
    pub fn set_bias(&mut self, b: &[f64]) {
        let (_, pb, _) = self.proposal.params_mut();
        pb.iter_mut().zip(b).for_each(|(o, &x)| *o = x as f32);
    }

    fn set_mh(&mut self, model: &FwModel) -> Result<()> {
        if model.is_standard() {
            self.mh = None;
            return Ok(());
        }
        let n = self.chains.n_chains();
        let nh = model.n_units();
        let atoms = model.atoms_rbm()?;
        let rngs = match self.mh.take() {
            Some(m) if m.rngs.len() == n && m.coef.len() == nh => m.rngs,
            _ => (0..n as u64)
                .map(|i| derive_rng(derive_seed(self.seed, 2 * self.generation + 1), i))
                .collect(),
        };
        let mut mh = Mh {
            atoms,
            coef: model.coefficients(),
            phi: vec![0.0; n],
            phi_new: vec![0.0; n],
            prev: vec![0.0; self.chains.visible().len()],
            act: vec![0.0; n * nh],
            rngs,
        };
        mh.atoms.hidden_input(self.chains.visible(), &mut mh.act)?;
        phi_rows(&mh.act, &mh.coef, &mut mh.phi);
        self.mh = Some(mh);
        Ok(())
    }

    /// `k` transitions of every chain: block-Gibbs steps (standard model) or MH steps with the
    /// Eq. 12 proposal (fractional model).
    pub fn step(&mut self, k: usize) -> Result<()> {
        let Some(mh) = self.mh.as_mut() else {
            return self.chains.run(&self.proposal, k);
        };
        let nv = self.proposal.n_visible();
        for _ in 0..k {
            mh.prev.copy_from_slice(self.chains.visible());
            self.chains.run(&self.proposal, 1)?;
            mh.atoms.hidden_input(self.chains.visible(), &mut mh.act)?;
            phi_rows(&mh.act, &mh.coef, &mut mh.phi_new);
            let mut rejected = false;
            let visible = self.chains.visible();
            for (i, rng) in mh.rngs.iter_mut().enumerate() {
                let log_a = mh.phi_new[i] - mh.phi[i];
                let u: f64 = rng.random();
                self.proposed += 1;
                if log_a >= 0.0 || u < log_a.exp() {
                    // accepted: `prev` (the merged batch) takes the proposed row
                    self.accepted += 1;
                    mh.phi[i] = mh.phi_new[i];
                    mh.prev[i * nv..(i + 1) * nv].copy_from_slice(&visible[i * nv..(i + 1) * nv]);
                } else {
                    rejected = true;
                }
            }
            if rejected {
                self.chains.set_visible(&mh.prev)?;
            }
        }
        Ok(())
    }

    /// The mean of the chains' visible states, per unit, into `out` (`n_visible` values).
    pub fn visible_means(&self, out: &mut [f64]) {
        let nv = out.len();
        out.iter_mut().for_each(|x| *x = 0.0);
        for row in self.chains.visible().chunks_exact(nv) {
            out.iter_mut()
                .zip(row)
                .for_each(|(o, &x)| *o += f64::from(x));
        }
        let n = self.chains.n_chains() as f64;
        out.iter_mut().for_each(|x| *x /= n);
    }
}

/// `φ(v) = Σ_i [c_i softplus(a_i) − softplus(c_i a_i)]` for each row of activations `act`.
fn phi_rows(act: &[f32], coef: &[f64], out: &mut [f64]) {
    let nh = coef.len();
    for (row, o) in act.chunks_exact(nh).zip(out.iter_mut()) {
        *o = row
            .iter()
            .zip(coef)
            .map(|(&a, &c)| {
                let a = f64::from(a);
                c * softplus_f64(a) - softplus_f64(c * a)
            })
            .sum();
    }
}
