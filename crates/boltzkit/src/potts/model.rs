//! The Potts model: `L` sites, `q_i` states at site `i`, and
//!
//! ```text
//! p(s) ∝ exp( Σ_i h_i(s_i) + Σ_{i<j} J_ij(s_i, s_j) )
//! ```
//!
//! (Weigt et al. 2009; Ekeberg et al. 2013, Eq. 1). A binary fully visible Boltzmann machine
//! is the case `q_i = 2`. The parameters are redundant: adding `c(b)` to every `J_ij(·, b)` and
//! subtracting it from `h_j(b)` changes no probability. [`Potts::zero_sum_gauge`] picks the
//! representative whose fields and coupling rows and columns sum to zero (the "Ising gauge"
//! in which DCA scores are computed).
//!
//! Layout, public because model files and the engine share it: the fields of site `i` are the
//! `q_i` numbers `h[offset_i ..]` with `offset_i = Σ_{k<i} q_k`; the couplings of a pair
//! `i < j` are one `q_i × q_j` row-major block, `J_ij(a, b)` at `a·q_j + b`, blocks in the
//! order `(0,1), (0,2), …, (0,L−1), (1,2), …, (L−2,L−1)`.

use crate::data::Dataset;
use crate::error::{Error, Result};

/// A Potts model (see the module docs for the parameters' layout).
///
/// ```
/// use boltzkit::potts::Potts;
/// // Two sites with 3 and 2 states; J_01(a, b) = 1 when a == b.
/// let mut m = Potts::zeros(vec![3, 2])?;
/// m.coupling_mut(0, 1).copy_from_slice(&[1.0, 0.0, 0.0, 1.0, 0.0, 0.0]);
/// assert_eq!(m.log_potential(&[1, 1])?, 1.0);
/// assert_eq!(m.log_potential(&[2, 1])?, 0.0);
/// let g = m.zero_sum_gauge();
/// // Same distribution: differences of log-potentials are unchanged.
/// let d = |m: &Potts| m.log_potential(&[0, 0]).unwrap() - m.log_potential(&[2, 1]).unwrap();
/// assert!((d(&m) - d(&g)).abs() < 1e-12);
/// # Ok::<(), boltzkit::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Potts {
    q: Vec<usize>,
    field_offsets: Vec<usize>,
    pair_offsets: Vec<usize>,
    h: Vec<f64>,
    j: Vec<f64>,
    alphabet: Option<Vec<char>>,
    sites: Option<Vec<usize>>,
}

/// The most states a site may have (codes are `u8`).
pub const MAX_STATES: usize = 255;

/// Index of the pair `i < j` among the `L (L − 1) / 2` pairs in the order of the module docs.
pub fn pair_index(l: usize, i: usize, j: usize) -> usize {
    debug_assert!(i < j && j < l);
    i * (2 * l - i - 1) / 2 + (j - i - 1)
}

/// Field and pair offsets of the layout, or an error naming the bad `q`.
fn offsets(q: &[usize]) -> Result<(Vec<usize>, Vec<usize>, usize, usize)> {
    if q.is_empty() {
        return Err(Error::param(
            "states",
            "a Potts model needs at least one site",
        ));
    }
    if let Some(i) = q.iter().position(|&k| !(1..=MAX_STATES).contains(&k)) {
        return Err(Error::param(
            "states",
            format!(
                "site {i} has {} states; each site needs 1 to {MAX_STATES}",
                q[i]
            ),
        ));
    }
    let mut field = Vec::with_capacity(q.len());
    let mut n_h = 0usize;
    for &k in q {
        field.push(n_h);
        n_h += k;
    }
    let l = q.len();
    let mut pair = Vec::with_capacity(l * (l - 1) / 2);
    let mut n_j = 0usize;
    for i in 0..l {
        for j in i + 1..l {
            pair.push(n_j);
            n_j = n_j
                .checked_add(q[i] * q[j])
                .ok_or_else(|| Error::TooLarge {
                    what: "Potts couplings".into(),
                    needed: format!("{l} sites"),
                    limit: "usize".into(),
                })?;
        }
    }
    Ok((field, pair, n_h, n_j))
}

/// The number of parameters `(Σ q_i, Σ_{i<j} q_i q_j)` of a model with these states per site,
/// saturating (for memory estimates before anything is allocated).
pub fn parameter_count(q: &[usize]) -> (u64, u64) {
    let n_h: u64 = q.iter().map(|&k| k as u64).sum();
    let sq: u64 = q.iter().map(|&k| (k as u64) * (k as u64)).sum();
    // Σ_{i<j} q_i q_j = ((Σ q)² − Σ q²) / 2
    (n_h, (n_h.saturating_mul(n_h) - sq) / 2)
}

impl Potts {
    /// A model with `states[i]` states at site `i` and every parameter zero (the uniform
    /// distribution).
    pub fn zeros(states: Vec<usize>) -> Result<Self> {
        let (field_offsets, pair_offsets, n_h, n_j) = offsets(&states)?;
        Ok(Potts {
            q: states,
            field_offsets,
            pair_offsets,
            h: vec![0.0; n_h],
            j: vec![0.0; n_j],
            alphabet: None,
            sites: None,
        })
    }

    /// A model from its parameters in the layout of the module docs; every value must be
    /// finite.
    pub fn new(states: Vec<usize>, h: Vec<f64>, j: Vec<f64>) -> Result<Self> {
        let mut m = Potts::zeros(states)?;
        for (name, got, want) in [("h", h.len(), m.h.len()), ("J", j.len(), m.j.len())] {
            if got != want {
                return Err(Error::Shape {
                    op: format!("Potts::new `{name}`"),
                    expected: format!("{want} values for states {:?}", m.q),
                    found: format!("{got}"),
                });
            }
        }
        if let Some(k) = h.iter().chain(&j).position(|v| !v.is_finite()) {
            return Err(Error::InvalidData(format!(
                "Potts::new: parameter {k} is not finite"
            )));
        }
        m.h = h;
        m.j = j;
        Ok(m)
    }

    /// Names the states: `alphabet` has one character per state, so every site must have
    /// `alphabet.chars().count()` states.
    pub fn with_alphabet(mut self, alphabet: &str) -> Result<Self> {
        let chars: Vec<char> = alphabet.chars().collect();
        if let Some(i) = self.q.iter().position(|&k| k != chars.len()) {
            return Err(Error::param(
                "alphabet",
                format!(
                    "`{alphabet}` names {} states but site {i} has {}",
                    chars.len(),
                    self.q[i]
                ),
            ));
        }
        let mut seen = chars.clone();
        seen.sort_unstable();
        seen.dedup();
        if seen.len() != chars.len() {
            return Err(Error::param(
                "alphabet",
                format!("`{alphabet}` repeats a character"),
            ));
        }
        self.alphabet = Some(chars);
        Ok(self)
    }

    /// Records which columns of the source alignment the sites are (`sites[i]` is site `i`'s
    /// column, 0-based, strictly increasing), as a model file keeps them.
    pub fn with_sites(mut self, sites: Vec<usize>) -> Result<Self> {
        if sites.len() != self.q.len() {
            return Err(Error::Shape {
                op: "Potts::with_sites".into(),
                expected: format!("{} columns (one per site)", self.q.len()),
                found: format!("{}", sites.len()),
            });
        }
        if sites.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Error::param("sites", "columns must be strictly increasing"));
        }
        self.sites = Some(sites);
        Ok(self)
    }

    /// Number of sites `L`.
    pub fn n_sites(&self) -> usize {
        self.q.len()
    }

    /// States per site `q_i`.
    pub fn states(&self) -> &[usize] {
        &self.q
    }

    /// The alphabet naming the states, if any.
    pub fn alphabet(&self) -> Option<String> {
        self.alphabet.as_ref().map(|a| a.iter().collect())
    }

    /// The source columns of the sites, if recorded.
    pub fn sites(&self) -> Option<&[usize]> {
        self.sites.as_deref()
    }

    /// All fields, concatenated by site.
    pub fn fields_flat(&self) -> &[f64] {
        &self.h
    }

    /// All coupling blocks, in pair order.
    pub fn couplings_flat(&self) -> &[f64] {
        &self.j
    }

    /// Fields and couplings, mutably, for learners that write them in place.
    pub fn parameters_mut(&mut self) -> (&mut [f64], &mut [f64]) {
        (&mut self.h, &mut self.j)
    }

    /// The fields `h_i(·)` of site `i`.
    pub fn field(&self, i: usize) -> &[f64] {
        &self.h[self.field_offsets[i]..self.field_offsets[i] + self.q[i]]
    }

    /// The fields of site `i`, mutably.
    pub fn field_mut(&mut self, i: usize) -> &mut [f64] {
        let o = self.field_offsets[i];
        &mut self.h[o..o + self.q[i]]
    }

    /// Offset of the block of pair `i < j` in [`Potts::couplings_flat`].
    pub fn coupling_offset(&self, i: usize, j: usize) -> usize {
        self.pair_offsets[pair_index(self.q.len(), i, j)]
    }

    /// The `q_i × q_j` row-major block `J_ij` of a pair `i < j` (panics otherwise).
    pub fn coupling(&self, i: usize, j: usize) -> &[f64] {
        assert!(
            i < j && j < self.q.len(),
            "coupling({i}, {j}) needs i < j < L"
        );
        let o = self.coupling_offset(i, j);
        &self.j[o..o + self.q[i] * self.q[j]]
    }

    /// The block `J_ij` of a pair `i < j`, mutably (panics otherwise).
    pub fn coupling_mut(&mut self, i: usize, j: usize) -> &mut [f64] {
        assert!(
            i < j && j < self.q.len(),
            "coupling_mut({i}, {j}) needs i < j < L"
        );
        let o = self.coupling_offset(i, j);
        let n = self.q[i] * self.q[j];
        &mut self.j[o..o + n]
    }

    /// `J_ij(a, b)` for any two distinct sites (`J_ji(b, a)` when `i > j`).
    pub fn coupling_value(&self, i: usize, j: usize, a: usize, b: usize) -> f64 {
        if i < j {
            self.coupling(i, j)[a * self.q[j] + b]
        } else {
            self.coupling(j, i)[b * self.q[i] + a]
        }
    }

    /// Checks one sequence of codes (`s[i] < q_i`).
    fn check_sequence(&self, s: &[u8]) -> Result<()> {
        if s.len() != self.q.len() {
            return Err(Error::Shape {
                op: "Potts sequence".into(),
                expected: format!("{} sites", self.q.len()),
                found: format!("{}", s.len()),
            });
        }
        if let Some(i) = s.iter().zip(&self.q).position(|(&a, &k)| a as usize >= k) {
            return Err(Error::InvalidData(format!(
                "state {} at site {i}, which has {} states",
                s[i], self.q[i]
            )));
        }
        Ok(())
    }

    /// `Σ_i h_i(s_i) + Σ_{i<j} J_ij(s_i, s_j)` without checks (codes in range).
    pub(crate) fn log_potential_unchecked(&self, s: &[u8]) -> f64 {
        let l = self.q.len();
        let mut v = 0.0;
        let mut p = 0;
        for i in 0..l {
            let a = s[i] as usize;
            v += self.h[self.field_offsets[i] + a];
            for (&b, &qj) in s[i + 1..].iter().zip(&self.q[i + 1..]) {
                v += self.j[self.pair_offsets[p] + a * qj + b as usize];
                p += 1;
            }
        }
        v
    }

    /// The unnormalized log-probability `Σ_i h_i(s_i) + Σ_{i<j} J_ij(s_i, s_j)` of one
    /// sequence of codes.
    pub fn log_potential(&self, s: &[u8]) -> Result<f64> {
        self.check_sequence(s)?;
        Ok(self.log_potential_unchecked(s))
    }

    /// The statistical energy `E(s) = −Σ_i h_i(s_i) − Σ_{i<j} J_ij(s_i, s_j)` of every row
    /// of `data` (lower is more probable), in row order.
    pub fn energies(&self, data: &Dataset) -> Result<Vec<f64>> {
        Ok(self.log_potentials(data)?.into_iter().map(|v| -v).collect())
    }

    /// [`Potts::log_potential`] of every row of `data`, in row order (rows in parallel).
    pub fn log_potentials(&self, data: &Dataset) -> Result<Vec<f64>> {
        use rayon::prelude::*;
        if data.n_vars() != self.q.len() {
            return Err(Error::Shape {
                op: "Potts::log_potentials".into(),
                expected: format!("{} columns (one per site)", self.q.len()),
                found: format!("{}", data.n_vars()),
            });
        }
        let card = data.cardinalities();
        if let Some(i) = (0..self.q.len()).find(|&i| card[i] as usize > self.q[i]) {
            // Values below the data's cardinality may still all be in range: check them.
            let col = data.values().column(i);
            if let Some(&a) = col.iter().find(|&&a| a as usize >= self.q[i]) {
                return Err(Error::InvalidData(format!(
                    "state {a} at site {i}, which has {} states",
                    self.q[i]
                )));
            }
        }
        let values = data.values();
        Ok((0..data.n_samples())
            .into_par_iter()
            .map(|r| {
                let row = values.row(r);
                match row.as_slice() {
                    Some(s) => self.log_potential_unchecked(s),
                    None => self.log_potential_unchecked(&row.to_vec()),
                }
            })
            .collect())
    }

    /// The same distribution in the zero-sum ("Ising") gauge: every `h_i(·)`, and every row
    /// and column of every `J_ij`, sums to zero. Log-potentials change by one constant.
    ///
    /// `J'_ij(a,b) = J_ij(a,b) − J_ij(·,b) − J_ij(a,·) + J_ij(·,·)` and
    /// `h'_i(a) = h_i(a) − h_i(·) + Σ_{j≠i} (J_ij(a,·) − J_ij(·,·))`, a dot meaning the mean
    /// over that index (Ekeberg et al. 2013, Sec. II.C).
    pub fn zero_sum_gauge(&self) -> Potts {
        let l = self.q.len();
        let mut out = self.clone();
        // Shifts of the fields from the couplings' row and column means.
        let mut shift = vec![0.0; self.h.len()];
        for i in 0..l {
            for j in i + 1..l {
                let (qi, qj) = (self.q[i], self.q[j]);
                let block = self.coupling(i, j);
                let rows: Vec<f64> = (0..qi)
                    .map(|a| block[a * qj..(a + 1) * qj].iter().sum::<f64>() / qj as f64)
                    .collect();
                let cols: Vec<f64> = (0..qj)
                    .map(|b| (0..qi).map(|a| block[a * qj + b]).sum::<f64>() / qi as f64)
                    .collect();
                let all = rows.iter().sum::<f64>() / qi as f64;
                for a in 0..qi {
                    shift[self.field_offsets[i] + a] += rows[a] - all;
                }
                for b in 0..qj {
                    shift[self.field_offsets[j] + b] += cols[b] - all;
                }
                let dst = out.coupling_mut(i, j);
                for a in 0..qi {
                    for b in 0..qj {
                        dst[a * qj + b] = block[a * qj + b] - rows[a] - cols[b] + all;
                    }
                }
            }
        }
        for i in 0..l {
            let o = self.field_offsets[i];
            let hi = &self.h[o..o + self.q[i]];
            let mean = hi.iter().sum::<f64>() / self.q[i] as f64;
            for a in 0..self.q[i] {
                out.h[o + a] = hi[a] - mean + shift[o + a];
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::rng_from_seed;
    use rand::Rng;

    /// A model with random parameters (uniform in ±`scale`).
    pub(crate) fn random(q: Vec<usize>, scale: f64, seed: u64) -> Potts {
        let mut m = Potts::zeros(q).unwrap();
        let mut rng = rng_from_seed(seed);
        let (h, j) = m.parameters_mut();
        for v in h.iter_mut().chain(j.iter_mut()) {
            *v = scale * (2.0 * rng.random::<f64>() - 1.0);
        }
        m
    }

    #[test]
    fn layout_and_pair_index() {
        let m = Potts::zeros(vec![2, 3, 4, 2]).unwrap();
        assert_eq!(m.fields_flat().len(), 11);
        assert_eq!(m.couplings_flat().len(), 6 + 8 + 4 + 12 + 6 + 8);
        let mut p = 0;
        for i in 0..4 {
            for j in i + 1..4 {
                assert_eq!(pair_index(4, i, j), p);
                p += 1;
            }
        }
        assert_eq!(parameter_count(&[2, 3, 4, 2]), (11, 44));
        assert!(Potts::zeros(vec![]).is_err());
        assert!(Potts::zeros(vec![2, 0]).is_err());
        assert!(Potts::new(vec![2, 2], vec![0.0; 3], vec![0.0; 4]).is_err());
        assert!(Potts::new(vec![2, 2], vec![0.0; 4], vec![f64::NAN; 4]).is_err());
    }

    #[test]
    fn zero_sum_gauge_keeps_differences_and_sums_to_zero() {
        let q = vec![3, 2, 4, 3];
        let m = random(q.clone(), 1.0, 1);
        let g = m.zero_sum_gauge();
        // Every state: log-potential differences unchanged.
        let mut s = vec![0u8; 4];
        let base = m.log_potential(&s).unwrap() - g.log_potential(&s).unwrap();
        for x in 0..3 * 2 * 4 * 3 {
            let mut r = x;
            for (i, &k) in q.iter().enumerate() {
                s[i] = (r % k) as u8;
                r /= k;
            }
            let d = m.log_potential(&s).unwrap() - g.log_potential(&s).unwrap();
            assert!((d - base).abs() < 1e-12);
        }
        for i in 0..4 {
            assert!(g.field(i).iter().sum::<f64>().abs() < 1e-12);
            for j in i + 1..4 {
                let b = g.coupling(i, j);
                for a in 0..q[i] {
                    assert!(b[a * q[j]..(a + 1) * q[j]].iter().sum::<f64>().abs() < 1e-12);
                }
                for c in 0..q[j] {
                    assert!((0..q[i]).map(|a| b[a * q[j] + c]).sum::<f64>().abs() < 1e-12);
                }
                assert_eq!(g.coupling_value(j, i, 1, 0), g.coupling(i, j)[1]);
            }
        }
        // Idempotent.
        let gg = g.zero_sum_gauge();
        for (a, b) in g.couplings_flat().iter().zip(gg.couplings_flat()) {
            assert!((a - b).abs() < 1e-12);
        }
    }

    #[test]
    fn alphabet_sites_and_sequence_checks() {
        let m = Potts::zeros(vec![3, 3]).unwrap();
        assert!(m.clone().with_alphabet("ab").is_err());
        assert!(m.clone().with_alphabet("aab").is_err());
        let m = m
            .with_alphabet("_*^")
            .unwrap()
            .with_sites(vec![2, 7])
            .unwrap();
        assert_eq!(m.alphabet().as_deref(), Some("_*^"));
        assert_eq!(m.sites(), Some(&[2usize, 7][..]));
        assert!(m.clone().with_sites(vec![3, 3]).is_err());
        assert!(m.log_potential(&[0, 3]).is_err());
        assert!(m.log_potential(&[0]).is_err());
        let data = Dataset::from_flat(vec![0, 1, 2, 2], 2, vec![3, 3]).unwrap();
        assert_eq!(m.energies(&data).unwrap(), vec![-0.0, -0.0]);
        let wide = Dataset::from_flat(vec![0, 1, 2, 5], 2, vec![3, 6]).unwrap();
        assert!(m.log_potentials(&wide).is_err());
    }
}
