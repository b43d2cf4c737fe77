//! Parallel tempering (replica exchange) for RBMs (Salakhutdinov 2009; Desjardins et al.
//! 2010; the PT baseline of the pop-CD paper, Sec. 4.1): each chain keeps `M` replicas of the
//! joint state `(v, h)`, replica `t` at inverse temperature `β_t` sampling
//! `p_β(v, h) ∝ e^{−β E(v,h)}` by block Gibbs (`p_β(h_j = 1 | v) = σ(β (c_j + vᵀW_{:,j}))`,
//! likewise for `v`). After each Gibbs step neighbours `(t, t+1)` propose to exchange their
//! states, accepted with probability `min(1, e^{(β_{t+1} − β_t)(E_{t+1} − E_t)})` (Metropolis;
//! [`swap_log_ratio`]), which leaves the product `Π_t p_{β_t}` invariant by detailed balance.
//! Even pairs are proposed on even rounds, odd pairs on odd rounds. The `β = 1` replica is a
//! sample of the model; chains persist across calls (a sampler any trainer can use, e.g.
//! [`crate::rbm::train::Pt`]).
//!
//! Layout: all `n_chains · M` replica states form one mini-batch (one GEMM per half-step);
//! an exchange swaps the temperatures of two rows, not their contents. Row `i` draws its units
//! from [`derive_rng`]`(derive_seed(seed, 0), i)`, chain `c` its exchange decisions from
//! `derive_rng(derive_seed(seed, 1), c)`, in fixed blocks: same bits whatever the thread count.

use super::gibbs::{sample_blocks, CHAIN_BLOCK};
use super::model::Rbm;
use crate::error::{Error, Result};
use crate::linalg;
use crate::rng::{derive_rng, derive_seed, BkRng};
use rand::Rng;
use rayon::prelude::*;

/// `M` inverse temperatures uniformly spaced in `[0, 1]`: `β_t = t / (M − 1)` (the pop-CD
/// paper's PT; `M ≥ 2`).
pub fn uniform_betas(replicas: usize) -> Result<Vec<f64>> {
    if replicas < 2 {
        return Err(Error::param(
            "replicas",
            format!("parallel tempering needs at least 2 replicas, got {replicas}"),
        ));
    }
    Ok((0..replicas)
        .map(|t| t as f64 / (replicas - 1) as f64)
        .collect())
}

/// The log acceptance ratio of exchanging the states of replicas at `beta_lo < beta_hi` whose
/// current energies are `e_lo` and `e_hi`: `(β_hi − β_lo)(E_hi − E_lo)`; the exchange is
/// accepted with probability `min(1, e^{ratio})`.
pub fn swap_log_ratio(beta_lo: f64, beta_hi: f64, e_lo: f64, e_hi: f64) -> f64 {
    (beta_hi - beta_lo) * (e_hi - e_lo)
}

/// Persistent parallel-tempering chains; see the module documentation.
///
/// ```
/// use boltzkit::rbm::tempering::TemperedChains;
/// use boltzkit::rbm::Rbm;
/// use boltzkit::rng::rng_from_seed;
/// let rbm = Rbm::random(6, 3, 0.5, &mut rng_from_seed(1))?;
/// // 4 chains started at v = 0, 5 replicas each at β = 0, 0.25, …, 1
/// let mut pt = TemperedChains::new(&rbm, &[0.0; 4 * 6], 5, 42)?;
/// for _ in 0..20 {
///     pt.step(&rbm)?; // a Gibbs step of every replica, then one round of exchanges
/// }
/// let mut cold = vec![0.0; 4 * 6];
/// pt.cold_visible(&mut cold)?; // the β = 1 replicas: samples of the model
/// let rates = pt.swap_rates(); // acceptance per neighbour pair since the last reset
/// assert_eq!(rates.len(), 4);
/// assert!(rates.iter().all(|&r| (0.0..=1.0).contains(&r)));
/// # Ok::<(), boltzkit::Error>(())
/// ```
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct TemperedChains {
    nv: usize,
    nh: usize,
    n_chains: usize,
    m: usize,
    betas: Vec<f32>,
    /// `temp[c·M + j]`: the temperature index of row `j` of chain `c`.
    temp: Vec<usize>,
    /// `holder[c·M + t]`: the row (within chain `c`) at temperature `t`.
    holder: Vec<usize>,
    v: Vec<f32>,
    h: Vec<f32>,
    ph: Vec<f32>,
    xv: Vec<f32>,
    pv: Vec<f32>,
    energy: Vec<f64>,
    rngs: Vec<BkRng>,
    swap_rngs: Vec<BkRng>,
    /// Accepted exchanges per chain and pair, `c·(M−1) + t`, since the last reset.
    accepted: Vec<u32>,
    /// Proposed exchanges per pair (the same for every chain) since the last reset.
    proposed: Vec<u64>,
    round: u64,
}

impl TemperedChains {
    /// `n_chains` chains (the rows of `v0`, `n_chains × n_visible`, 0/1), each with `replicas`
    /// replicas at [`uniform_betas`], every replica started at its chain's row of `v0` with
    /// `h = 0`.
    pub fn new(rbm: &Rbm, v0: &[f32], replicas: usize, seed: u64) -> Result<Self> {
        TemperedChains::with_betas(rbm, v0, &uniform_betas(replicas)?, seed)
    }

    /// As [`TemperedChains::new`] with given inverse temperatures: strictly increasing in
    /// `[0, 1]`, the last equal to 1, at least two.
    pub fn with_betas(rbm: &Rbm, v0: &[f32], betas: &[f64], seed: u64) -> Result<Self> {
        let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
        let n_chains = rbm.batch_rows("TemperedChains::new", v0, nv)?;
        if n_chains == 0 {
            return Err(Error::param("chains", "at least one chain is needed"));
        }
        let m = betas.len();
        let increasing = betas.windows(2).all(|w| w[0] < w[1]);
        if m < 2 || !increasing || betas[0] < 0.0 || betas[m - 1] != 1.0 {
            return Err(Error::param(
                "betas",
                format!(
                    "need at least 2 inverse temperatures, strictly increasing in [0, 1] and \
                     ending at 1, got {betas:?}"
                ),
            ));
        }
        let rows = n_chains * m;
        let mut v = vec![0f32; rows * nv];
        for (c, src) in v0.chunks_exact(nv).enumerate() {
            for j in 0..m {
                v[(c * m + j) * nv..(c * m + j + 1) * nv].copy_from_slice(src);
            }
        }
        let row_seed = derive_seed(seed, 0);
        let swap_seed = derive_seed(seed, 1);
        let mut pt = TemperedChains {
            nv,
            nh,
            n_chains,
            m,
            betas: betas.iter().map(|&b| b as f32).collect(),
            temp: (0..rows).map(|r| r % m).collect(),
            holder: (0..rows).map(|r| r % m).collect(),
            v,
            h: vec![0f32; rows * nh],
            ph: vec![0f32; rows * nh],
            xv: vec![0f32; rows * nv],
            pv: vec![0f32; rows * nv],
            energy: vec![0f64; rows],
            rngs: (0..rows as u64).map(|i| derive_rng(row_seed, i)).collect(),
            swap_rngs: (0..n_chains as u64)
                .map(|c| derive_rng(swap_seed, c))
                .collect(),
            accepted: vec![0; n_chains * (m - 1)],
            proposed: vec![0; m - 1],
            round: 0,
        };
        pt.refresh_energies(rbm)?;
        Ok(pt)
    }

    /// Number of chains.
    pub fn n_chains(&self) -> usize {
        self.n_chains
    }

    /// Replicas per chain `M`.
    pub fn n_replicas(&self) -> usize {
        self.m
    }

    /// The inverse temperatures, increasing (the last is 1).
    pub fn betas(&self) -> &[f32] {
        &self.betas
    }

    fn check(&self, rbm: &Rbm) -> Result<()> {
        if rbm.n_visible() != self.nv || rbm.n_hidden() != self.nh {
            return Err(Error::Shape {
                op: "TemperedChains".into(),
                expected: format!("an RBM with {} × {} units", self.nv, self.nh),
                found: format!("{} × {}", rbm.n_visible(), rbm.n_hidden()),
            });
        }
        Ok(())
    }

    /// `E(v, h) = −vᵀ(b + Wh) − cᵀh` of every row, from `xv = b + Wh` (`f64` sums).
    fn energies_from_input(&mut self, c: &[f32]) {
        let (nv, nh) = (self.nv, self.nh);
        self.energy
            .par_chunks_mut(CHAIN_BLOCK)
            .enumerate()
            .for_each(|(blk, es)| {
                for (k, e) in es.iter_mut().enumerate() {
                    let row = blk * CHAIN_BLOCK + k;
                    let v = &self.v[row * nv..(row + 1) * nv];
                    let x = &self.xv[row * nv..(row + 1) * nv];
                    let h = &self.h[row * nh..(row + 1) * nh];
                    let vx: f64 = v.iter().zip(x).map(|(&a, &b)| f64::from(a * b)).sum();
                    let ch: f64 = h.iter().zip(c).map(|(&a, &b)| f64::from(a * b)).sum();
                    *e = -vx - ch;
                }
            });
    }

    /// Recomputes the energies of the current states under `rbm` (one GEMM).
    fn refresh_energies(&mut self, rbm: &Rbm) -> Result<()> {
        rbm.visible_input(&self.h, &mut self.xv)?;
        self.energies_from_input(rbm.c());
        Ok(())
    }

    /// Scales each row of `x` (width `width`) by its row's `β`.
    fn scale_rows(x: &mut [f32], width: usize, temp: &[usize], betas: &[f32]) {
        x.par_chunks_mut(CHAIN_BLOCK * width)
            .zip(temp.par_chunks(CHAIN_BLOCK))
            .for_each(|(xs, ts)| {
                for (row, &t) in xs.chunks_exact_mut(width).zip(ts) {
                    let b = betas[t];
                    row.iter_mut().for_each(|a| *a *= b);
                }
            });
    }

    /// One tempered block-Gibbs step of every replica: `h ~ p_β(h | v)`, then
    /// `v ~ p_β(v | h)`; the energies `E(v, h)` of the new states are kept for the exchanges.
    pub fn gibbs_step(&mut self, rbm: &Rbm) -> Result<()> {
        self.check(rbm)?;
        rbm.hidden_input(&self.v, &mut self.ph)?;
        Self::scale_rows(&mut self.ph, self.nh, &self.temp, &self.betas);
        linalg::sigmoid_inplace(&mut self.ph);
        sample_blocks(&self.ph, &mut self.h, &mut self.rngs, self.nh);
        rbm.visible_input(&self.h, &mut self.xv)?;
        self.pv.copy_from_slice(&self.xv);
        Self::scale_rows(&mut self.pv, self.nv, &self.temp, &self.betas);
        linalg::sigmoid_inplace(&mut self.pv);
        sample_blocks(&self.pv, &mut self.v, &mut self.rngs, self.nv);
        self.energies_from_input(rbm.c());
        Ok(())
    }

    /// One round of exchange proposals between neighbouring temperatures (even pairs
    /// `(0,1), (2,3), …` on even rounds, odd pairs on odd rounds), using the energies of the
    /// last Gibbs step (or of the start).
    pub fn swap_round(&mut self) {
        let m = self.m;
        let parity = (self.round % 2) as usize;
        self.round += 1;
        for t in (parity..m - 1).step_by(2) {
            self.proposed[t] += self.n_chains as u64;
        }
        let betas = &self.betas;
        let energy = &self.energy;
        self.holder
            .par_chunks_mut(CHAIN_BLOCK * m)
            .zip(self.temp.par_chunks_mut(CHAIN_BLOCK * m))
            .zip(self.swap_rngs.par_chunks_mut(CHAIN_BLOCK))
            .zip(self.accepted.par_chunks_mut(CHAIN_BLOCK * (m - 1)))
            .enumerate()
            .for_each(|(blk, (((holders, temps), rngs), acc))| {
                for (k, (((holder, temp), rng), acc)) in holders
                    .chunks_exact_mut(m)
                    .zip(temps.chunks_exact_mut(m))
                    .zip(rngs.iter_mut())
                    .zip(acc.chunks_exact_mut(m - 1))
                    .enumerate()
                {
                    let base = (blk * CHAIN_BLOCK + k) * m;
                    for t in (parity..m - 1).step_by(2) {
                        let (ja, jb) = (holder[t], holder[t + 1]);
                        let ratio = swap_log_ratio(
                            f64::from(betas[t]),
                            f64::from(betas[t + 1]),
                            energy[base + ja],
                            energy[base + jb],
                        );
                        let u: f64 = rng.random();
                        if ratio >= 0.0 || u < ratio.exp() {
                            holder.swap(t, t + 1);
                            temp[ja] = t + 1;
                            temp[jb] = t;
                            acc[t] += 1;
                        }
                    }
                }
            });
    }

    /// A Gibbs step of every replica, then one round of exchanges.
    pub fn step(&mut self, rbm: &Rbm) -> Result<()> {
        self.gibbs_step(rbm)?;
        self.swap_round();
        Ok(())
    }

    /// The state `(v, h)` of the replica at temperature index `t` of chain `chain`.
    pub fn state(&self, chain: usize, t: usize) -> Result<(&[f32], &[f32])> {
        if chain >= self.n_chains || t >= self.m {
            return Err(Error::param(
                "replica",
                format!(
                    "chain {chain}, temperature {t}: there are {} chains of {} replicas",
                    self.n_chains, self.m
                ),
            ));
        }
        let row = chain * self.m + self.holder[chain * self.m + t];
        Ok((
            &self.v[row * self.nv..(row + 1) * self.nv],
            &self.h[row * self.nh..(row + 1) * self.nh],
        ))
    }

    /// Copies the visible states of the `β = 1` replicas into `out` (`n_chains × n_visible`).
    pub fn cold_visible(&self, out: &mut [f32]) -> Result<()> {
        crate::rbm::model::check_len(
            "TemperedChains::cold_visible",
            "out",
            out.len(),
            self.n_chains * self.nv,
        )?;
        let (m, nv) = (self.m, self.nv);
        for (c, dst) in out.chunks_exact_mut(nv).enumerate() {
            let row = c * m + self.holder[c * m + m - 1];
            dst.copy_from_slice(&self.v[row * nv..(row + 1) * nv]);
        }
        Ok(())
    }

    /// The acceptance rate of exchanges between temperatures `t` and `t + 1`, for each
    /// `t < M − 1`, since the last [`TemperedChains::reset_swap_stats`] (NaN where none was
    /// proposed).
    pub fn swap_rates(&self) -> Vec<f64> {
        let m1 = self.m - 1;
        (0..m1)
            .map(|t| {
                let acc: u64 = self
                    .accepted
                    .iter()
                    .skip(t)
                    .step_by(m1)
                    .map(|&a| u64::from(a))
                    .sum();
                if self.proposed[t] == 0 {
                    f64::NAN
                } else {
                    acc as f64 / self.proposed[t] as f64
                }
            })
            .collect()
    }

    /// Starts a new period for [`TemperedChains::swap_rates`].
    pub fn reset_swap_stats(&mut self) {
        self.accepted.fill(0);
        self.proposed.fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rbm::testutil::all_states;
    use crate::rng::rng_from_seed;

    /// Index of a joint state (v bits, then h bits, unit 0 least significant).
    fn joint_index(v: &[f32], h: &[f32]) -> usize {
        v.iter()
            .chain(h)
            .enumerate()
            .map(|(i, &x)| (x as usize) << i)
            .sum()
    }

    /// A joint state `(v, h)`.
    type Joint = (Vec<u8>, Vec<u8>);

    /// All joint states in [`joint_index`] order and their energies.
    fn joint_states(rbm: &Rbm) -> (Vec<Joint>, Vec<f64>) {
        let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
        let states: Vec<Joint> = all_states(nv + nh)
            .into_iter()
            .map(|s| (s[..nv].to_vec(), s[nv..].to_vec()))
            .collect();
        let e = states
            .iter()
            .map(|(v, h)| rbm.energy(v, h).unwrap())
            .collect();
        (states, e)
    }

    fn tempered(e: &[f64], beta: f64) -> Vec<f64> {
        let w: Vec<f64> = e.iter().map(|&x| (-beta * x).exp()).collect();
        let z: f64 = w.iter().sum();
        w.iter().map(|x| x / z).collect()
    }

    /// π_lo(x) π_hi(y) a(x, y) = π_lo(y) π_hi(x) a(y, x) for every pair of joint states of a
    /// tiny RBM: the exchange rule satisfies detailed balance exactly.
    #[test]
    fn swap_rule_satisfies_detailed_balance_exactly() {
        let rbm = Rbm::random(3, 2, 1.5, &mut rng_from_seed(3)).unwrap();
        let (_, e) = joint_states(&rbm);
        let (lo, hi) = (0.3, 1.0);
        let (p_lo, p_hi) = (tempered(&e, lo), tempered(&e, hi));
        let a = |x: usize, y: usize| swap_log_ratio(lo, hi, e[x], e[y]).min(0.0).exp();
        for x in 0..e.len() {
            for y in 0..e.len() {
                let fwd = p_lo[x] * p_hi[y] * a(x, y);
                let back = p_lo[y] * p_hi[x] * a(y, x);
                assert!((fwd - back).abs() < 1e-14, "{x},{y}: {fwd} vs {back}");
            }
        }
    }

    /// From pairs drawn exactly from π_lo ⊗ π_hi, one exchange round: the empirical flow from
    /// (x, y) to (y, x) matches its exact value N π_lo(x) π_hi(y) a(x, y) (within 4.5 binomial
    /// standard deviations, cell by cell), hence the flows both ways agree (detailed balance),
    /// and the joint after the round is still the product (total variation < 0.02).
    #[test]
    fn swap_round_keeps_the_product_distribution() {
        let rbm = Rbm::random(2, 1, 1.5, &mut rng_from_seed(5)).unwrap();
        let (states, e) = joint_states(&rbm);
        let (lo, hi) = (0.3, 1.0);
        let (p_lo, p_hi) = (tempered(&e, lo), tempered(&e, hi));
        let n = 40_000;
        let mut pt = TemperedChains::with_betas(&rbm, &vec![0.0; n * 2], &[lo, hi], 9).unwrap();
        // exact draws of both replicas, written into the rows
        let mut rng = rng_from_seed(17);
        let draw = |p: &[f64], rng: &mut BkRng| {
            let u: f64 = rng.random();
            let mut acc = 0.0;
            p.iter()
                .position(|&q| {
                    acc += q;
                    u < acc
                })
                .unwrap_or(p.len() - 1)
        };
        let mut before = vec![(0usize, 0usize); n];
        for (c, b) in before.iter_mut().enumerate() {
            let (x, y) = (draw(&p_lo, &mut rng), draw(&p_hi, &mut rng));
            *b = (x, y);
            for (t, s) in [(0, x), (1, y)] {
                let row = c * 2 + t;
                let (v, h) = &states[s];
                pt.v[row * 2..row * 2 + 2]
                    .iter_mut()
                    .zip(v)
                    .for_each(|(o, &a)| *o = f32::from(a));
                pt.h[row] = f32::from(h[0]);
            }
        }
        pt.refresh_energies(&rbm).unwrap();
        for (c, &(x, y)) in before.iter().enumerate() {
            assert!((pt.energy[c * 2] - e[x]).abs() < 1e-5);
            assert!((pt.energy[c * 2 + 1] - e[y]).abs() < 1e-5);
        }
        pt.swap_round();
        let k = e.len();
        let mut flow = vec![0f64; k * k];
        let mut after = vec![0f64; k * k];
        for (c, &(x, y)) in before.iter().enumerate() {
            let (v0, h0) = pt.state(c, 0).unwrap();
            let (v1, h1) = pt.state(c, 1).unwrap();
            let (a, b) = (joint_index(v0, h0), joint_index(v1, h1));
            after[a * k + b] += 1.0 / n as f64;
            if (a, b) == (y, x) && x != y {
                flow[x * k + y] += 1.0;
            }
        }
        for x in 0..k {
            for y in 0..k {
                if x == y {
                    continue;
                }
                let p = p_lo[x] * p_hi[y] * swap_log_ratio(lo, hi, e[x], e[y]).min(0.0).exp();
                let sd = (n as f64 * p * (1.0 - p)).sqrt().max(1.0);
                assert!(
                    (flow[x * k + y] - n as f64 * p).abs() < 4.5 * sd,
                    "{x}->{y}: {} vs {}",
                    flow[x * k + y],
                    n as f64 * p
                );
            }
        }
        let tv: f64 = (0..k * k)
            .map(|i| (after[i] - p_lo[i / k] * p_hi[i % k]).abs())
            .sum::<f64>()
            / 2.0;
        assert!(tv < 0.02, "total variation {tv}");
        let rates = pt.swap_rates();
        assert!(rates[0] > 0.0 && rates[0] < 1.0);
    }

    /// The whole sampler (tempered Gibbs + exchanges) has the tempered joints as its
    /// stationary distributions: the empirical joint of each replica matches p_β exactly
    /// enumerated (total variation < 0.03 for each β).
    #[test]
    fn replicas_reach_their_tempered_joints() {
        let rbm = Rbm::random(3, 2, 2.0, &mut rng_from_seed(11)).unwrap();
        let (_, e) = joint_states(&rbm);
        let n = 3000;
        let mut pt = TemperedChains::new(&rbm, &vec![1.0; n * 3], 3, 4).unwrap();
        for _ in 0..30 {
            pt.step(&rbm).unwrap();
        }
        let k = e.len();
        let mut counts = vec![vec![0f64; k]; 3];
        let rounds = 8;
        for _ in 0..rounds {
            for _ in 0..3 {
                pt.step(&rbm).unwrap();
            }
            for c in 0..n {
                for (t, cnt) in counts.iter_mut().enumerate() {
                    let (v, h) = pt.state(c, t).unwrap();
                    cnt[joint_index(v, h)] += 1.0 / (n * rounds) as f64;
                }
            }
        }
        for (t, cnt) in counts.iter().enumerate() {
            let p = tempered(&e, f64::from(pt.betas()[t]));
            let tv: f64 = cnt.iter().zip(&p).map(|(a, b)| (a - b).abs()).sum::<f64>() / 2.0;
            assert!(tv < 0.03, "β = {}: total variation {tv}", pt.betas()[t]);
        }
        let mut cold = vec![0f32; n * 3];
        pt.cold_visible(&mut cold).unwrap();
        assert_eq!(&cold[3..6], pt.state(1, 2).unwrap().0);
    }

    #[test]
    fn rates_settings_and_thread_independence() {
        // a zero model: every energy 0, every exchange accepted
        let zero = Rbm::zeros(4, 3).unwrap();
        let mut pt = TemperedChains::new(&zero, &[0.0; 5 * 4], 4, 1).unwrap();
        pt.step(&zero).unwrap();
        let r = pt.swap_rates();
        assert_eq!(r[0], 1.0);
        assert!(r[1].is_nan()); // odd pairs not proposed yet
        pt.step(&zero).unwrap();
        assert_eq!(pt.swap_rates(), vec![1.0, 1.0, 1.0]);
        pt.reset_swap_stats();
        assert!(pt.swap_rates().iter().all(|r| r.is_nan()));

        let rbm = Rbm::random(8, 5, 0.8, &mut rng_from_seed(2)).unwrap();
        let n = 2 * CHAIN_BLOCK + 3;
        let run = |threads: usize| {
            crate::testutil::on_threads(threads, || {
                let mut pt = TemperedChains::new(&rbm, &vec![1.0; n * 8], 5, 3).unwrap();
                for _ in 0..6 {
                    pt.step(&rbm).unwrap();
                }
                let mut cold = vec![0f32; n * 8];
                pt.cold_visible(&mut cold).unwrap();
                (cold, pt.swap_rates(), pt.h.clone())
            })
        };
        let a = run(1);
        assert_eq!(a.0, run(2).0);
        assert_eq!(a.1, run(3).1);
        assert!(uniform_betas(1).is_err());
        assert_eq!(uniform_betas(3).unwrap(), vec![0.0, 0.5, 1.0]);
        assert!(TemperedChains::with_betas(&rbm, &[0.0; 8], &[0.5, 0.2, 1.0], 1).is_err());
        assert!(TemperedChains::with_betas(&rbm, &[0.0; 8], &[0.0, 0.5], 1).is_err());
        assert!(TemperedChains::new(&rbm, &[0.0; 7], 3, 1).is_err());
        let mut pt = TemperedChains::new(&rbm, &[0.0; 8], 3, 1).unwrap();
        assert!(pt.state(1, 0).is_err() && pt.state(0, 3).is_err());
        assert!(pt.gibbs_step(&zero).is_err());
        assert!(pt.cold_visible(&mut [0.0; 7]).is_err());
    }
}
