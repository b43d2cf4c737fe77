//! What the unit types share: parameter and state checks, the data's column moments (their
//! AIS base models), and the linear interpolation of parameters along the AIS path.

use crate::error::{Error, Result};

/// `Ok` when `v` is non-empty and every entry is finite and, with `above = Some(a)`, `> a`.
pub(super) fn params(name: &str, v: &[f32], above: Option<f32>) -> Result<()> {
    if v.is_empty() {
        return Err(Error::param(name, "a layer needs at least one unit"));
    }
    if let Some(i) = v
        .iter()
        .position(|&x| !x.is_finite() || above.is_some_and(|a| x <= a))
    {
        let need = match above {
            Some(a) => format!("finite and > {a}"),
            None => "finite".into(),
        };
        return Err(Error::param(
            format!("{name}[{i}]"),
            format!("{} is not {need}", v[i]),
        ));
    }
    Ok(())
}

/// `Ok` when every parameter vector has `n` entries.
pub(super) fn same_len(what: &str, lens: &[(&str, usize)], n: usize) -> Result<()> {
    match lens.iter().find(|(_, len)| *len != n) {
        Some((name, len)) => Err(Error::Shape {
            op: what.into(),
            expected: format!("{name} with {n} entries"),
            found: format!("{len}"),
        }),
        None => Ok(()),
    }
}

/// `Ok` when the row `x` has `n` values.
pub(super) fn width(what: &str, x: &[f32], n: usize) -> Result<()> {
    if x.len() != n {
        return Err(Error::Shape {
            op: what.into(),
            expected: format!("{n} values"),
            found: format!("{}", x.len()),
        });
    }
    Ok(())
}

/// `Ok` when every value of `x` is finite and, with `non_negative`, `≥ 0`.
pub(super) fn real_state(what: &str, x: &[f32], n: usize, non_negative: bool) -> Result<()> {
    width(what, x, n)?;
    match x
        .iter()
        .position(|&v| !v.is_finite() || (non_negative && v < 0.0))
    {
        Some(i) => Err(Error::InvalidData(format!(
            "{what}: unit {i} = {} is not {}",
            x[i],
            if non_negative {
                "finite and ≥ 0"
            } else {
                "finite"
            }
        ))),
        None => Ok(()),
    }
}

/// The column means and variances (`1/N`) of rows of `n` values, in `f64`.
pub(super) fn column_moments(data: &[f32], n: usize) -> Result<(Vec<f64>, Vec<f64>)> {
    if data.is_empty() || !data.len().is_multiple_of(n) {
        return Err(Error::Shape {
            op: "unit base model".into(),
            expected: format!("at least one row of {n} values"),
            found: format!("{} values", data.len()),
        });
    }
    let rows = (data.len() / n) as f64;
    let mut mean = vec![0.0f64; n];
    for row in data.chunks_exact(n) {
        mean.iter_mut()
            .zip(row)
            .for_each(|(m, &x)| *m += f64::from(x));
    }
    mean.iter_mut().for_each(|m| *m /= rows);
    let mut var = vec![0.0f64; n];
    for row in data.chunks_exact(n) {
        var.iter_mut()
            .zip(row)
            .zip(&mean)
            .for_each(|((v, &x), m)| *v += (f64::from(x) - m).powi(2));
    }
    var.iter_mut().for_each(|v| *v /= rows);
    Ok((mean, var))
}

/// The column means of rows of `n` values.
pub(super) fn column_means(data: &[f32], n: usize) -> Result<Vec<f64>> {
    Ok(column_moments(data, n)?.0)
}

/// `out ← (1 − β)·base + β·target`, in `f64` then rounded.
pub(super) fn lerp(base: &[f32], target: &[f32], beta: f64, out: &mut [f32]) {
    for ((o, &a), &b) in out.iter_mut().zip(base).zip(target) {
        *o = ((1.0 - beta) * f64::from(a) + beta * f64::from(b)) as f32;
    }
}

/// `p ← θ` (rounded to `f32`).
pub(super) fn set(p: &mut [f32], theta: &[f64]) {
    p.iter_mut().zip(theta).for_each(|(p, &t)| *p = t as f32);
}

/// `out += a · x`.
pub(super) fn axpy(a: f64, x: &[f32], out: &mut [f64]) {
    out.iter_mut()
        .zip(x)
        .for_each(|(o, &x)| *o += a * f64::from(x));
}
