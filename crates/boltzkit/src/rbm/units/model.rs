//! [`UnitRbm`]: an RBM over two layers of any unit types ([`Units`]), with the energy
//! `E(x, y) = U_x(x) + U_y(y) − xᵀ W y`, the free energy of a visible row and the exact
//! `ln Z` by enumerating the discrete layer with fewer states while the other is summed or
//! integrated in closed form through its log-partition:
//! `ln Z = ln Σ_a e^{−U_a(a) + Γ_b(a·W)}` (`W`, or `Wᵀ` when the hidden layer is the one
//! enumerated). The binary pair keeps [`crate::rbm::Rbm`]; this model is the seam's first user
//! and the reference the trainers over the seam will be checked against.

use super::bernoulli::dot;
use super::layer::Units;
use crate::error::{Error, Result};
use crate::linalg;
use crate::rbm::packed::PackedWeights;

/// Most states an exact `ln Z` enumerates (`2^22`: 32 MB of log-weights).
pub const MAX_ENUM_STATES: u64 = 1 << 22;

/// States per enumeration chunk.
const CHUNK: usize = 4096;

/// An RBM whose layers have any unit types: `W` is `width_v × width_h` row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct UnitRbm {
    pub(super) visible: Units,
    pub(super) hidden: Units,
    pub(super) w: Vec<f32>,
    /// `W` and `Wᵀ` packed for the sparse 0/1 products of discrete rows (a cache, as
    /// [`crate::rbm::Rbm`]'s: clones start empty, comparisons ignore it).
    pub(super) packed: Box<PackedWeights>,
}

impl UnitRbm {
    /// The model from its layers and couplings (`W` with one row per visible value and one
    /// column per hidden value, all finite).
    pub fn new(visible: Units, hidden: Units, w: Vec<f32>) -> Result<Self> {
        let (wv, wh) = (visible.width(), hidden.width());
        if w.len() != wv * wh {
            return Err(Error::Shape {
                op: "UnitRbm::new".into(),
                expected: format!("W with {wv} × {wh} entries"),
                found: format!("{}", w.len()),
            });
        }
        if let Some(i) = w.iter().position(|x| !x.is_finite()) {
            return Err(Error::param(
                format!("W[{i}]"),
                format!("{} is not finite", w[i]),
            ));
        }
        Ok(UnitRbm {
            visible,
            hidden,
            w,
            packed: Box::default(),
        })
    }

    /// The visible layer.
    pub fn visible(&self) -> &Units {
        &self.visible
    }

    /// The hidden layer.
    pub fn hidden(&self) -> &Units {
        &self.hidden
    }

    /// `W`, `width_v × width_h` row-major.
    pub fn w(&self) -> &[f32] {
        &self.w
    }

    /// `E(v, h) = U_v(v) + U_h(h) − vᵀ W h` of one joint state, in `f64`.
    pub fn energy(&self, v: &[f32], h: &[f32]) -> Result<f64> {
        self.visible.check_states(v)?;
        self.hidden.check_states(h)?;
        let mut e = [0.0f64; 2];
        self.visible.energies(v, &mut e[..1])?;
        self.hidden.energies(h, &mut e[1..])?;
        let wh = self.hidden.width();
        let coupling: f64 = v
            .iter()
            .zip(self.w.chunks_exact(wh))
            .map(|(&vi, row)| f64::from(vi) * dot(row, h))
            .sum();
        Ok(e[0] + e[1] - coupling)
    }

    /// The free energy `F(v) = U_v(v) − Γ_h(vᵀW)` of one visible row, so `p(v) = e^{−F(v)}/Z`.
    pub fn free_energy(&self, v: &[f32]) -> Result<f64> {
        self.visible.check_states(v)?;
        Ok(-self.neg_free_energies(v, false)?[0])
    }

    /// `−U_a(a) + Γ_b(input)` of each row of `rows` of layer `a` (the hidden layer when
    /// `hidden`), `b` the other layer.
    pub(super) fn neg_free_energies(&self, rows: &[f32], hidden: bool) -> Result<Vec<f64>> {
        let (a, b) = if hidden {
            (&self.hidden, &self.visible)
        } else {
            (&self.visible, &self.hidden)
        };
        let n = rows.len() / a.width();
        let mut input = vec![0.0f32; n * b.width()];
        self.product(rows, &mut input, hidden);
        let (mut energy, mut gamma) = (vec![0.0f64; n], vec![0.0f64; n]);
        a.energies(rows, &mut energy)?;
        b.log_partitions(&input, &mut gamma)?;
        Ok(energy.iter().zip(&gamma).map(|(e, g)| g - e).collect())
    }

    /// `−F(v)` of each visible row of `rows` (`ln p(v) + ln Z`), the rows checked.
    pub fn neg_free_energies_of(&self, rows: &[f32]) -> Result<Vec<f64>> {
        self.visible.check_states(rows)?;
        self.neg_free_energies(rows, false)
    }

    /// Whether [`UnitRbm::log_partition_exact`] can enumerate the model (a discrete layer of
    /// at most [`MAX_ENUM_STATES`] states).
    pub fn is_enumerable(&self) -> bool {
        self.enumerated_layer().is_ok()
    }

    /// The (weighted) mean log-likelihood `Σ_r a_r (−F(v_r)) − ln Z` of the visible rows
    /// `rows`, the weights scaled to add to 1 (`None`: equal), with `log_z` (`None`: the
    /// exact [`UnitRbm::log_partition_exact`]).
    pub fn log_likelihood(
        &self,
        rows: &[f32],
        weights: Option<&[f64]>,
        log_z: Option<f64>,
    ) -> Result<f64> {
        let neg_f = self.neg_free_energies_of(rows)?;
        let a = super::sample_weights::normalized_weights(weights, neg_f.len())?;
        let log_z = match log_z {
            Some(z) => z,
            None => self.log_partition_exact()?,
        };
        Ok(neg_f.iter().zip(&a).map(|(f, a)| a * f).sum::<f64>() - log_z)
    }

    /// The exact `ln Z`, enumerating the discrete layer with fewer states (at most
    /// [`MAX_ENUM_STATES`]); the other layer, discrete or not, enters through its
    /// log-partition. An error when neither layer is discrete or the states are too many.
    pub fn log_partition_exact(&self) -> Result<f64> {
        let (hidden, count) = self.enumerated_layer()?;
        let mut log_w = Vec::with_capacity(count as usize);
        self.for_each_state_chunk(hidden, count, |rows| {
            log_w.extend(self.neg_free_energies(rows, hidden)?);
            Ok(())
        })?;
        Ok(linalg::log_sum_exp(&log_w))
    }

    /// The layer an exact sum enumerates (`true`: the hidden one), the discrete one with
    /// fewer states, and its number of states (at most [`MAX_ENUM_STATES`]).
    pub(super) fn enumerated_layer(&self) -> Result<(bool, u64)> {
        let (nv, nh) = (n_states(&self.visible), n_states(&self.hidden));
        let hidden = match (nv, nh) {
            (Some(a), Some(b)) => b < a,
            (Some(_), None) => false,
            (None, Some(_)) => true,
            (None, None) => {
                return Err(Error::param(
                    "units",
                    "an exact ln Z needs a discrete (Bernoulli or categorical) layer",
                ))
            }
        };
        let count = if hidden { nh } else { nv };
        let count = count
            .filter(|&c| c <= MAX_ENUM_STATES)
            .ok_or_else(|| Error::TooLarge {
                what: "exact ln Z of an RBM".into(),
                needed: format!(
                    "{} states of the {} layer",
                    count.map_or("more than 2^64".into(), |c| c.to_string()),
                    if hidden { "hidden" } else { "visible" }
                ),
                limit: format!("{MAX_ENUM_STATES}"),
            })?;
        Ok((hidden, count))
    }

    /// `f` on the `count` states of the visible (or with `hidden` the hidden) layer in order,
    /// in chunks of at most 4,096 rows.
    pub(super) fn for_each_state_chunk(
        &self,
        hidden: bool,
        count: u64,
        mut f: impl FnMut(&[f32]) -> Result<()>,
    ) -> Result<()> {
        let layer = if hidden { &self.hidden } else { &self.visible };
        let w = layer.width();
        let mut rows = vec![0.0f32; CHUNK * w];
        let mut start = 0u64;
        while start < count {
            let n = (count - start).min(CHUNK as u64) as usize;
            for (k, row) in rows.chunks_exact_mut(w).take(n).enumerate() {
                write_state(layer, start + k as u64, row);
            }
            f(&rows[..n * w])?;
            start += n as u64;
        }
        Ok(())
    }
}

/// States per unit of a discrete layer (`None` for a continuous one).
fn radices(layer: &Units) -> Option<Vec<usize>> {
    match layer {
        Units::Bernoulli(u) => Some(vec![2; u.bias().len()]),
        Units::Categorical(u) => Some(u.q().to_vec()),
        _ => None,
    }
}

/// The number of states of a discrete layer (`None` for a continuous one or beyond `u64`).
fn n_states(layer: &Units) -> Option<u64> {
    radices(layer)?
        .iter()
        .try_fold(1u64, |n, &q| n.checked_mul(q as u64))
}

/// State `index` of a discrete layer (unit 0 the least significant digit) as its row.
fn write_state(layer: &Units, mut index: u64, row: &mut [f32]) {
    row.fill(0.0);
    let one_hot = matches!(layer, Units::Categorical(_));
    let mut at = 0;
    for q in radices(layer).unwrap_or_default() {
        let k = (index % q as u64) as usize;
        index /= q as u64;
        if one_hot {
            row[at + k] = 1.0;
            at += q;
        } else {
            row[at] = k as f32;
            at += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::quadrature::tanh_sinh;
    use super::super::{Bernoulli, Categorical, DRelu, Gaussian, UnitType};
    use super::*;
    use crate::rbm::Rbm;
    use crate::rng::rng_from_seed;

    fn weights(n: usize, seed: u64) -> Vec<f32> {
        super::super::twins::normal_weights(n, 0.7, seed)
    }

    /// `ln Σ_v Σ_h e^{−E(v,h)}` over every joint state of two discrete layers.
    fn double_enumeration(m: &UnitRbm) -> f64 {
        let states = |l: &Units| -> Vec<Vec<f32>> {
            let n = n_states(l).unwrap();
            (0..n)
                .map(|i| {
                    let mut r = vec![0.0; l.width()];
                    write_state(l, i, &mut r);
                    r
                })
                .collect()
        };
        let (vs, hs) = (states(m.visible()), states(m.hidden()));
        let e: Vec<f64> = vs
            .iter()
            .flat_map(|v| hs.iter().map(move |h| -m.energy(v, h).unwrap()))
            .collect();
        linalg::log_sum_exp(&e)
    }

    #[test]
    fn bernoulli_pair_equals_the_binary_rbm() {
        let (nv, nh) = (5, 3);
        let rbm = Rbm::random(nv, nh, 0.8, &mut rng_from_seed(2)).unwrap();
        let m = UnitRbm::new(
            Units::Bernoulli(Bernoulli::new(rbm.b().to_vec()).unwrap()),
            Units::Bernoulli(Bernoulli::new(rbm.c().to_vec()).unwrap()),
            rbm.w().to_vec(),
        )
        .unwrap();
        let want = crate::rbm::exact::log_partition(&rbm).unwrap();
        let got = m.log_partition_exact().unwrap();
        assert!(
            (got - want).abs() < 1e-5 * want.abs().max(1.0),
            "{got} vs {want}"
        );
        let v = [1u8, 0, 1, 1, 0];
        let vf: Vec<f32> = v.iter().map(|&x| f32::from(x)).collect();
        let want = rbm.free_energy(&v).unwrap();
        assert!((m.free_energy(&vf).unwrap() - want).abs() < 1e-5 * want.abs().max(1.0));
        assert!((double_enumeration(&m) - got).abs() < 1e-5 * got.abs().max(1.0));
    }

    #[test]
    fn categorical_layers_either_way_match_double_enumeration() {
        let cat = Categorical::new(vec![3, 2, 4], weights(9, 3)).unwrap();
        let ber = Bernoulli::new(weights(2, 4)).unwrap();
        // visible categorical (24 states) with 2 hidden units (4): the hidden layer enumerated
        let m = UnitRbm::new(
            Units::Categorical(cat.clone()),
            Units::Bernoulli(ber.clone()),
            weights(18, 5),
        )
        .unwrap();
        let want = double_enumeration(&m);
        let got = m.log_partition_exact().unwrap();
        assert!(
            (got - want).abs() < 1e-5 * want.abs().max(1.0),
            "{got} vs {want}"
        );
        // and categorical hidden with one Bernoulli visible: the visible layer enumerated
        let m = UnitRbm::new(
            Units::Bernoulli(Bernoulli::new(vec![0.4]).unwrap()),
            Units::Categorical(cat),
            weights(9, 6),
        )
        .unwrap();
        let want = double_enumeration(&m);
        assert!((m.log_partition_exact().unwrap() - want).abs() < 1e-5 * want.abs().max(1.0));
    }

    #[test]
    fn continuous_layers_match_quadrature() {
        // one Gaussian visible unit, two Bernoulli hidden units: Σ_h ∫ e^{−E(v,h)} dv
        let g = Gaussian::new(
            vec![0.3],
            vec![0.5],
            Gaussian::standard(1).unwrap().bounds(),
        )
        .unwrap();
        let ber = Bernoulli::new(vec![-0.2, 0.6]).unwrap();
        let m = UnitRbm::new(Units::Gaussian(g), Units::Bernoulli(ber), vec![0.8, -1.1]).unwrap();
        let hs = [[0.0f32, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]];
        let z: f64 = hs
            .iter()
            .map(|h| {
                tanh_sinh(
                    &|v| (-m.energy(&[v as f32], h).unwrap()).exp(),
                    -30.0,
                    30.0,
                    128,
                )
            })
            .sum();
        let got = m.log_partition_exact().unwrap();
        assert!((got - z.ln()).abs() < 1e-5, "{got} vs {}", z.ln());
        // three Bernoulli visible units, one dReLU hidden unit: Σ_v ∫ e^{−E(v,h)} dh
        let d = DRelu::new(vec![1.5], vec![0.7], vec![0.2], vec![-0.4]).unwrap();
        let ber = Bernoulli::new(vec![0.1, -0.5, 0.3]).unwrap();
        let m = UnitRbm::new(
            Units::Bernoulli(ber.clone()),
            Units::DRelu(d),
            vec![0.9, -0.6, 1.2],
        )
        .unwrap();
        let blocks = vec![vec![vec![0.0], vec![1.0]]; 3];
        let z: f64 = super::super::twins::all_states(&blocks)
            .iter()
            .map(|v| {
                let f = |h: f64| (-m.energy(v, &[h as f32]).unwrap()).exp();
                tanh_sinh(&f, -30.0, 0.0, 64) + tanh_sinh(&f, 0.0, 30.0, 64)
            })
            .sum();
        let got = m.log_partition_exact().unwrap();
        assert!((got - z.ln()).abs() < 1e-5, "{got} vs {}", z.ln());
        assert_eq!(ber.n_units(), 3);
    }

    #[test]
    fn refusals() {
        let g = Units::Gaussian(Gaussian::standard(2).unwrap());
        let r = Units::DRelu(DRelu::new(vec![1.0], vec![1.0], vec![0.0], vec![0.0]).unwrap());
        let m = UnitRbm::new(g.clone(), r.clone(), vec![0.1, 0.2]).unwrap();
        assert!(m.log_partition_exact().is_err());
        assert!(UnitRbm::new(g.clone(), r.clone(), vec![0.1]).is_err());
        assert!(UnitRbm::new(g, r, vec![0.1, f32::NAN]).is_err());
        let big = Units::Bernoulli(Bernoulli::new(vec![0.0; 23]).unwrap());
        let m = UnitRbm::new(big.clone(), big, vec![0.0; 23 * 23]).unwrap();
        assert!(matches!(
            m.log_partition_exact(),
            Err(Error::TooLarge { .. })
        ));
    }
}
