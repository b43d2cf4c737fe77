//! [`Units`]: one layer of any unit type, and [`UnitKind`], its name in settings and model
//! files. Each batch operation (a half-step of Gibbs sampling, a batch of free energies)
//! matches on the type once and then runs the type's own row functions over the batch's rows
//! in parallel, in fixed blocks of rows (or one generator per row for sampling), so the
//! results are the same bits for any thread count.

use super::bernoulli::Bernoulli;
use super::categorical::Categorical;
use super::drelu::DRelu;
use super::gaussian::Gaussian;
use super::relu::Relu;
use super::unit_type::UnitType;
use crate::error::{Error, Result};
use crate::rng::BkRng;
use rayon::prelude::*;

/// Rows per parallel task.
const ROW_BLOCK: usize = 16;

/// The unit types, by the names settings and model files use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UnitKind {
    /// 0/1 units ([`Bernoulli`]).
    Bernoulli,
    /// Potts units, one-hot blocks ([`Categorical`]).
    Categorical,
    /// Real units with learned variances ([`Gaussian`]).
    Gaussian,
    /// Non-negative real units ([`Relu`]).
    Relu,
    /// Double-sided ReLU units ([`DRelu`]).
    Drelu,
}

impl UnitKind {
    /// Every kind, in the order above.
    pub const ALL: [UnitKind; 5] = [
        UnitKind::Bernoulli,
        UnitKind::Categorical,
        UnitKind::Gaussian,
        UnitKind::Relu,
        UnitKind::Drelu,
    ];

    /// The name (`bernoulli`, `categorical`, `gaussian`, `relu`, `drelu`).
    pub fn name(self) -> &'static str {
        match self {
            UnitKind::Bernoulli => "bernoulli",
            UnitKind::Categorical => "categorical",
            UnitKind::Gaussian => "gaussian",
            UnitKind::Relu => "relu",
            UnitKind::Drelu => "drelu",
        }
    }

    /// Whether the states are finitely many (enumerable for an exact `ln Z`).
    pub fn is_discrete(self) -> bool {
        matches!(self, UnitKind::Bernoulli | UnitKind::Categorical)
    }
}

impl std::str::FromStr for UnitKind {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        UnitKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = UnitKind::ALL.iter().map(|k| k.name()).collect();
                Error::param(
                    "units",
                    format!(
                        "unknown unit type {s:?}; expected one of {}",
                        names.join(", ")
                    ),
                )
            })
    }
}

impl std::fmt::Display for UnitKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One layer of units of one type.
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs)]
pub enum Units {
    Bernoulli(Bernoulli),
    Categorical(Categorical),
    Gaussian(Gaussian),
    Relu(Relu),
    DRelu(DRelu),
}

/// `each!(layer, u => expr)`: `expr` with `u` bound to the concrete layer (the one match).
macro_rules! each {
    ($layer:expr, $u:ident => $e:expr) => {
        match $layer {
            Units::Bernoulli($u) => $e,
            Units::Categorical($u) => $e,
            Units::Gaussian($u) => $e,
            Units::Relu($u) => $e,
            Units::DRelu($u) => $e,
        }
    };
}

impl Units {
    /// The layer's type.
    pub fn kind(&self) -> UnitKind {
        match self {
            Units::Bernoulli(_) => UnitKind::Bernoulli,
            Units::Categorical(_) => UnitKind::Categorical,
            Units::Gaussian(_) => UnitKind::Gaussian,
            Units::Relu(_) => UnitKind::Relu,
            Units::DRelu(_) => UnitKind::Drelu,
        }
    }

    /// Number of units.
    pub fn n_units(&self) -> usize {
        each!(self, u => u.n_units())
    }

    /// Values per state row.
    pub fn width(&self) -> usize {
        each!(self, u => u.width())
    }

    /// Rows of a batch `x` of this layer's rows, checked against `out`'s length.
    fn rows(&self, op: &str, x: &[f32], out_len: usize, out_per_row: usize) -> Result<usize> {
        let w = self.width();
        if !x.len().is_multiple_of(w) || out_len != x.len() / w * out_per_row {
            return Err(Error::Shape {
                op: format!("Units::{op}"),
                expected: format!("rows of {w} values and {out_per_row} outputs per row"),
                found: format!("{} values and {out_len} outputs", x.len()),
            });
        }
        Ok(x.len() / w)
    }

    /// The layer's own energy `Σ_i U_i(x_i)` of each row of `x` into `out`.
    pub fn energies(&self, x: &[f32], out: &mut [f64]) -> Result<()> {
        self.rows("energies", x, out.len(), 1)?;
        let w = self.width();
        each!(self, u => per_row(x, w, out, |row| u.energy(row)));
        Ok(())
    }

    /// `Σ_i Γ_i(I_i)` of each row of inputs into `out`.
    pub fn log_partitions(&self, input: &[f32], out: &mut [f64]) -> Result<()> {
        self.rows("log_partitions", input, out.len(), 1)?;
        let w = self.width();
        each!(self, u => per_row(input, w, out, |row| u.log_partition(row)));
        Ok(())
    }

    /// `E[x | I]` of each row of inputs into `out` (same shape).
    pub fn means(&self, input: &[f32], out: &mut [f32]) -> Result<()> {
        let w = self.width();
        self.rows("means", input, out.len(), w)?;
        each!(self, u => input
        .par_chunks(ROW_BLOCK * w)
        .zip(out.par_chunks_mut(ROW_BLOCK * w))
        .for_each(|(i, o)| {
            i.chunks_exact(w)
                .zip(o.chunks_exact_mut(w))
                .for_each(|(i, o)| u.mean(i, o))
        }));
        Ok(())
    }

    /// One draw per row of inputs into `out` (same shape), row `r` from `rngs[r]`.
    pub fn sample(&self, input: &[f32], out: &mut [f32], rngs: &mut [BkRng]) -> Result<()> {
        let w = self.width();
        let rows = self.rows("sample", input, out.len(), w)?;
        if rngs.len() != rows {
            return Err(Error::Shape {
                op: "Units::sample".into(),
                expected: format!("one generator per row ({rows})"),
                found: format!("{}", rngs.len()),
            });
        }
        each!(self, u => input
            .par_chunks(w)
            .zip(out.par_chunks_mut(w))
            .zip(rngs.par_iter_mut())
            .for_each(|((i, o), rng)| u.sample(i, o, rng)));
        Ok(())
    }

    /// `Ok` when every row of `x` is a state of this layer; else the first bad row's error,
    /// with its row number.
    pub fn check_states(&self, x: &[f32]) -> Result<()> {
        let w = self.width();
        self.rows("check_states", x, 0, 0)?;
        for (r, row) in x.chunks_exact(w).enumerate() {
            each!(self, u => u.check_state(row)).map_err(|e| match e {
                Error::InvalidData(m) => Error::InvalidData(format!("row {r}: {m}")),
                e => e,
            })?;
        }
        Ok(())
    }

    /// The layer AIS anneals from ([`UnitType::ais_base`]).
    pub fn ais_base(&self, data: Option<&[f32]>) -> Result<Units> {
        Ok(match self {
            Units::Bernoulli(u) => Units::Bernoulli(u.ais_base(data)?),
            Units::Categorical(u) => Units::Categorical(u.ais_base(data)?),
            Units::Gaussian(u) => Units::Gaussian(u.ais_base(data)?),
            Units::Relu(u) => Units::Relu(u.ais_base(data)?),
            Units::DRelu(u) => Units::DRelu(u.ais_base(data)?),
        })
    }

    /// `out ← (1 − β)·base + β·self` ([`UnitType::interpolate`]); an error unless the three
    /// layers have one type and shape.
    pub fn interpolate(&self, base: &Units, beta: f64, out: &mut Units) -> Result<()> {
        let shape_error = |base: &Units, out: &Units| Error::Shape {
            op: "Units::interpolate".into(),
            expected: format!("three {} layers of width {}", self.kind(), self.width()),
            found: format!(
                "{} ({}) and {} ({})",
                base.kind(),
                base.width(),
                out.kind(),
                out.width()
            ),
        };
        if [base.width(), out.width()] != [self.width(); 2] {
            return Err(shape_error(base, out));
        }
        match (self, base, &mut *out) {
            (Units::Bernoulli(s), Units::Bernoulli(b), Units::Bernoulli(o)) => {
                s.interpolate(b, beta, o)
            }
            (Units::Categorical(s), Units::Categorical(b), Units::Categorical(o))
                if s.q() == b.q() && s.q() == o.q() =>
            {
                s.interpolate(b, beta, o)
            }
            (Units::Gaussian(s), Units::Gaussian(b), Units::Gaussian(o)) => {
                s.interpolate(b, beta, o)
            }
            (Units::Relu(s), Units::Relu(b), Units::Relu(o)) => s.interpolate(b, beta, o),
            (Units::DRelu(s), Units::DRelu(b), Units::DRelu(o)) => s.interpolate(b, beta, o),
            _ => return Err(shape_error(base, out)),
        }
        Ok(())
    }
}

impl Units {
    /// The trainable coordinates ([`UnitType::trainable`]).
    pub fn trainable(&self) -> Vec<f64> {
        each!(self, u => u.trainable())
    }

    /// Sets the trainable coordinates ([`UnitType::set_trainable`]); an error unless there are
    /// as many as [`Units::trainable`] gives, all finite.
    pub fn set_trainable(&mut self, theta: &[f64]) -> Result<()> {
        let n = self.trainable().len();
        if theta.len() != n {
            return Err(Error::Shape {
                op: "Units::set_trainable".into(),
                expected: format!("{n} coordinates"),
                found: format!("{}", theta.len()),
            });
        }
        if let Some(i) = theta.iter().position(|t| !t.is_finite()) {
            return Err(Error::param(
                format!("{} coordinate {i}", self.kind()),
                format!("{} is not finite", theta[i]),
            ));
        }
        each!(self, u => u.set_trainable(theta));
        Ok(())
    }

    /// `out += Σ_r a_r ∂U(x_r)/∂θ` over the rows of `x` (states), or with `mean`
    /// `out += Σ_r a_r E[∂U/∂θ | I_r]` over the rows of `x` (inputs): partial sums over fixed
    /// blocks of rows in parallel, added in order (the same bits for any thread count).
    pub fn add_energy_grads(
        &self,
        x: &[f32],
        a: &[f64],
        mean: bool,
        out: &mut [f64],
    ) -> Result<()> {
        self.rows("add_energy_grads", x, a.len(), 1)?;
        let n = self.trainable().len();
        if out.len() != n {
            return Err(Error::Shape {
                op: "Units::add_energy_grads".into(),
                expected: format!("{n} coordinates"),
                found: format!("{}", out.len()),
            });
        }
        let w = self.width();
        let partial: Vec<Vec<f64>> = each!(self, u => x
            .par_chunks(ROW_BLOCK * w)
            .zip(a.par_chunks(ROW_BLOCK))
            .map(|(x, a)| {
                let mut acc = vec![0.0f64; n];
                for (row, &a) in x.chunks_exact(w).zip(a) {
                    if mean {
                        u.add_mean_energy_grad(row, a, &mut acc);
                    } else {
                        u.add_energy_grad(row, a, &mut acc);
                    }
                }
                acc
            })
            .collect());
        for p in partial {
            out.iter_mut().zip(&p).for_each(|(o, p)| *o += p);
        }
        Ok(())
    }
}

/// `out[r] = f(row r of x)` in parallel over fixed blocks of rows.
fn per_row(x: &[f32], w: usize, out: &mut [f64], f: impl Fn(&[f32]) -> f64 + Sync) {
    x.par_chunks(ROW_BLOCK * w)
        .zip(out.par_chunks_mut(ROW_BLOCK))
        .for_each(|(x, o)| {
            x.chunks_exact(w)
                .zip(o.iter_mut())
                .for_each(|(row, o)| *o = f(row))
        });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::derive_rng;
    use crate::testutil::on_threads;

    fn layers() -> Vec<Units> {
        vec![
            Units::Bernoulli(Bernoulli::new(vec![0.2, -0.4, 1.0]).unwrap()),
            Units::Categorical(Categorical::new(vec![2, 1], vec![0.3, -0.3, 0.0]).unwrap()),
            Units::Gaussian(Gaussian::standard(3).unwrap()),
            Units::Relu(Relu::new(vec![1.0, 2.0, 0.5], vec![0.0, 0.1, -0.2]).unwrap()),
            Units::DRelu(
                DRelu::new(vec![1.0; 3], vec![2.0; 3], vec![0.1; 3], vec![-0.3; 3]).unwrap(),
            ),
        ]
    }

    #[test]
    fn batches_are_the_rows_and_the_same_bits_on_any_thread_count() {
        let rows = 40;
        for layer in layers() {
            let w = layer.width();
            let input: Vec<f32> = (0..rows * w)
                .map(|k| (k as f32 * 0.37).sin() * 3.0)
                .collect();
            let run = || {
                let mut lp = vec![0.0f64; rows];
                layer.log_partitions(&input, &mut lp).unwrap();
                let mut mean = vec![0.0f32; rows * w];
                layer.means(&input, &mut mean).unwrap();
                let mut rngs: Vec<_> = (0..rows as u64).map(|r| derive_rng(4, r)).collect();
                let mut x = vec![0.0f32; rows * w];
                layer.sample(&input, &mut x, &mut rngs).unwrap();
                layer.check_states(&x).unwrap();
                let mut e = vec![0.0f64; rows];
                layer.energies(&x, &mut e).unwrap();
                (lp, mean, x, e)
            };
            let (lp, mean, x, e) = on_threads(1, run);
            assert_eq!(
                (lp.clone(), mean.clone(), x.clone(), e.clone()),
                on_threads(3, run)
            );
            let r = 17;
            let row = &input[r * w..(r + 1) * w];
            let mut m = vec![0.0f32; w];
            each!(&layer, u => {
                assert_eq!(lp[r], u.log_partition(row));
                u.mean(row, &mut m);
                assert_eq!(e[r], u.energy(&x[r * w..(r + 1) * w]));
            });
            assert_eq!(&mean[r * w..(r + 1) * w], &m[..]);
        }
    }

    #[test]
    fn shapes_kinds_and_names_are_checked() {
        let ls = layers();
        let mut out = ls[0].clone();
        assert!(ls[0].interpolate(&ls[0], 0.5, &mut out).is_ok());
        assert!(ls[0].interpolate(&ls[2], 0.5, &mut out).is_err());
        let mut lp = vec![0.0; 2];
        assert!(ls[0].log_partitions(&[0.0; 5], &mut lp).is_err());
        let bad = ls[1]
            .check_states(&[1.0, 0.0, 1.0, 1.0, 1.0, 0.0])
            .unwrap_err();
        assert!(bad.to_string().contains("row 1"), "{bad}");
        for k in UnitKind::ALL {
            assert_eq!(k.name().parse::<UnitKind>().unwrap(), k);
            assert_eq!(serde_json::to_string(&k).unwrap(), format!("\"{k}\""));
        }
        assert!("potts".parse::<UnitKind>().is_err());
        assert_eq!(
            ls.iter().map(|l| l.kind()).collect::<Vec<_>>(),
            UnitKind::ALL
        );
    }
}
