//! The divergence guard of the training loop: after every update the parameters are checked
//! ([`divergence`]: a NaN, an infinity, or a magnitude above
//! [`TrainParams::max_abs_param`](super::TrainParams::max_abs_param)), and a failed check puts
//! back the model of before that update ([`Guard::update`]). For updates that change the model
//! only by SGD steps the check is folded into the step (one pass over the parameters).

use super::gradient::Gradient;
use super::sgd::{GuardVerdict, Sgd};
use super::update::Update;
use crate::error::Result;
use crate::rbm::Rbm;
use rayon::prelude::*;

/// The guard of one run: the last good model (kept in a second model's buffers, swapped
/// rather than copied where the step can write beside the old values) and the bound.
#[derive(Debug)]
pub(crate) struct Guard {
    /// The model before the current update (taken while an update runs).
    last_good: Option<Rbm>,
    /// The update changes the model only through SGD steps: the step checks as it writes.
    fold: bool,
    /// The bound on every parameter's magnitude.
    max_abs: f32,
}

impl Guard {
    /// A guard for runs from `rbm` with `update`, bounding parameters by `max_abs`.
    pub(crate) fn new(rbm: &Rbm, update: &dyn Update, max_abs: f32) -> Self {
        Guard {
            last_good: Some(rbm.clone()),
            fold: update.changes_model_only_by_sgd(),
            max_abs,
        }
    }

    /// Applies `update` to `rbm` on the batch `v` and checks the result: `Ok(Some(detail))`
    /// when it diverged, with `rbm` put back to the model of before the update.
    pub(crate) fn update(
        &mut self,
        update: &mut dyn Update,
        rbm: &mut Rbm,
        v: &[f32],
        sgd: &mut Sgd,
        grad: &mut Gradient,
    ) -> Result<Option<String>> {
        let mut good = self
            .last_good
            .take()
            .expect("the last good model is put back");
        let verdict = if self.fold {
            sgd.arm_guard(good, self.max_abs);
            let updated = update.update(rbm, v, sgd, grad);
            let (backup, verdict) = sgd.disarm_guard().expect("armed above");
            good = backup;
            if let Err(e) = updated {
                self.last_good = Some(good);
                return Err(e);
            }
            verdict
        } else {
            copy_params(&mut good, rbm);
            if let Err(e) = update.update(rbm, v, sgd, grad) {
                self.last_good = Some(good);
                return Err(e);
            }
            GuardVerdict::Unchecked
        };
        // the step's own check when it made one (the full scan only to say what is wrong, or
        // when the step did not check)
        let diverged = match verdict {
            GuardVerdict::Checked { bad: false } | GuardVerdict::NotStepped => None,
            _ => divergence(rbm, self.max_abs),
        };
        if diverged.is_some() {
            std::mem::swap(rbm, &mut good);
        }
        self.last_good = Some(good);
        Ok(diverged)
    }
}

/// Copies the parameters of `src` into `dst` (same shape) without allocating.
fn copy_params(dst: &mut Rbm, src: &Rbm) {
    let (w, b, c) = dst.params_mut();
    // in parallel: a serial copy of W per update held the second thread idle (issue 19)
    w.par_chunks_mut(GUARD_CHUNK)
        .zip(src.w().par_chunks(GUARD_CHUNK))
        .for_each(|(d, s)| d.copy_from_slice(s));
    b.copy_from_slice(src.b());
    c.copy_from_slice(src.c());
}

/// Parameters per parallel task of the divergence guard's copy and check.
const GUARD_CHUNK: usize = 1 << 14;

/// The divergence guard's check: `None` when every parameter is finite and within
/// `max_abs` in magnitude, else what is wrong.
pub fn divergence(rbm: &Rbm, max_abs: f32) -> Option<String> {
    for (name, xs) in [("W", rbm.w()), ("b", rbm.b()), ("c", rbm.c())] {
        // a branch-free scan (vectorized) first; the position only when something is wrong
        // (the bound is finite, so ±∞ exceed it; NaN is caught on its own)
        let bound = max_abs.min(f32::MAX);
        // one comparison, false for NaN: no branch in the scan, which the compiler then
        // vectorizes (with `is_nan() || >` it compiled to two scalar compares and a branch
        // per entry: 6% of a one-thread PCD-1 MNIST epoch, issue 19)
        // (the negated comparison is the point: it is true for NaN)
        #[allow(clippy::neg_cmp_op_on_partial_ord)]
        let bad = |x: &f32| !(x.abs() <= bound);
        // in parallel over fixed chunks (a yes/no answer: the same for any thread count)
        if !xs
            .par_chunks(GUARD_CHUNK)
            .any(|ch| ch.iter().fold(0u32, |any, x| any | u32::from(bad(x))) != 0)
        {
            continue;
        }
        if let Some(i) = xs.iter().position(bad) {
            let x = xs[i];
            return Some(if x.is_finite() {
                format!("|{name}[{i}]| = {} exceeds the bound {max_abs}", x.abs())
            } else {
                format!("{name}[{i}] = {x} is not finite")
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn divergence_detects_nan_inf_and_size() {
        let mut rbm = Rbm::zeros(2, 2).unwrap();
        assert_eq!(divergence(&rbm, 1.0), None);
        rbm.params_mut().1[1] = f32::NAN;
        assert!(divergence(&rbm, 1.0).unwrap().contains("b[1] = NaN"));
        rbm.params_mut().1[1] = 0.0;
        rbm.params_mut().2[0] = f32::INFINITY;
        assert!(divergence(&rbm, f32::INFINITY)
            .unwrap()
            .contains("not finite"));
        rbm.params_mut().2[0] = 0.0;
        rbm.params_mut().0[3] = -2.0;
        assert!(divergence(&rbm, 1.0).unwrap().contains("|W[3]| = 2"));
    }
}
