//! The optimizer step: stochastic gradient ascent on the log-likelihood with momentum and
//! weight decay, `Δ ← m·Δ + η·(∇ − λ·W)`, `θ ← θ + Δ` (weight decay on `W` only; off by
//! default, as in the S-DCP paper's experiments).

use super::gradient::Gradient;
use crate::error::{Error, Result};
use crate::rbm::packed::Repack;
use crate::rbm::Rbm;
use rayon::iter::Either;
use rayon::prelude::*;

/// Parameters per parallel task of [`Sgd::step`].
const CHUNK: usize = 1 << 14;

/// Unchecked settings of [`Sgd`]; [`SgdParams::check`] validates them.
///
/// ```
/// use boltzkit::rbm::train::{Gradient, SgdParams};
/// use boltzkit::rbm::Rbm;
/// let mut rbm = Rbm::zeros(2, 1)?;
/// let mut sgd = SgdParams::new().learning_rate(0.5).check()?;
/// let g = Gradient { w: vec![1.0, -1.0], b: vec![0.0, 2.0], c: vec![4.0] };
/// sgd.step(&mut rbm, &g)?;
/// assert_eq!((rbm.w(), rbm.b(), rbm.c()), (&[0.5, -0.5][..], &[0.0, 1.0][..], &[2.0][..]));
/// # Ok::<(), boltzkit::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct SgdParams {
    /// Step size `η` (default 0.01, the paper's MNIST setting); finite and `> 0`.
    pub learning_rate: f32,
    /// Momentum `m ∈ [0, 1)` (default 0).
    pub momentum: f32,
    /// L2 weight decay `λ ≥ 0` on `W` (default 0).
    pub weight_decay: f32,
}

impl Default for SgdParams {
    fn default() -> Self {
        SgdParams {
            learning_rate: 0.01,
            momentum: 0.0,
            weight_decay: 0.0,
        }
    }
}

impl SgdParams {
    /// The defaults.
    pub fn new() -> Self {
        SgdParams::default()
    }

    /// Sets the learning rate.
    pub fn learning_rate(mut self, x: f32) -> Self {
        self.learning_rate = x;
        self
    }

    /// Sets the momentum.
    pub fn momentum(mut self, x: f32) -> Self {
        self.momentum = x;
        self
    }

    /// Sets the weight decay.
    pub fn weight_decay(mut self, x: f32) -> Self {
        self.weight_decay = x;
        self
    }

    /// Validates the settings into an optimizer; the error names the field at fault.
    pub fn check(self) -> Result<Sgd> {
        if !(self.learning_rate.is_finite() && self.learning_rate > 0.0) {
            return Err(Error::param(
                "learning_rate",
                format!("must be finite and > 0, got {}", self.learning_rate),
            ));
        }
        if !(0.0..1.0).contains(&self.momentum) {
            return Err(Error::param(
                "momentum",
                format!("must be in [0, 1), got {}", self.momentum),
            ));
        }
        if !(self.weight_decay.is_finite() && self.weight_decay >= 0.0) {
            return Err(Error::param(
                "weight_decay",
                format!("must be finite and ≥ 0, got {}", self.weight_decay),
            ));
        }
        Ok(Sgd {
            params: self,
            velocity: None,
            guard: None,
        })
    }
}

/// Checked SGD with its momentum buffer (allocated at the first step with momentum > 0).
#[derive(Debug, Clone)]
pub struct Sgd {
    params: SgdParams,
    velocity: Option<Gradient>,
    /// The training loop's divergence guard, when folded into the next step.
    guard: Option<StepGuard>,
}

/// The divergence guard carried out inside [`Sgd::step`] (issue 19): the first step after
/// [`Sgd::arm_guard`] writes the new parameters into `backup`'s buffers, checking each
/// against `bound` in the same pass, then swaps the two models: `backup` holds the model
/// before the step without a copy of it. The loop's separate copy
/// of the model before each update and its scan after (two more passes over `W` per
/// mini-batch) are then not needed.
#[derive(Debug, Clone)]
struct StepGuard {
    backup: Rbm,
    bound: f32,
    steps: u32,
    bad: bool,
}

/// What [`Sgd::disarm_guard`] reports about the steps since [`Sgd::arm_guard`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GuardVerdict {
    /// No step: the model and the backup are as they were.
    NotStepped,
    /// One step, its new parameters checked: `bad` when one is not finite or exceeds the
    /// bound. The backup holds the model before it.
    Checked { bad: bool },
    /// Several steps: the backup holds the model before the first; the result is unchecked.
    Unchecked,
}

impl Sgd {
    /// The settings.
    pub fn params(&self) -> SgdParams {
        self.params
    }

    /// Changes the learning rate between steps (schedules); same checks as
    /// [`SgdParams::check`].
    pub fn set_learning_rate(&mut self, x: f32) -> Result<()> {
        self.params = self.params.learning_rate(x).check()?.params;
        Ok(())
    }

    /// The momentum buffer `Δ` (`None` before the first step, and always with momentum 0,
    /// where `Δ` is not kept): part of a run's state ([`super::TrainState`]).
    pub fn velocity(&self) -> Option<&Gradient> {
        self.velocity.as_ref()
    }

    /// Replaces the momentum buffer (resuming a run); its shape is checked at the next step.
    pub fn set_velocity(&mut self, velocity: Option<Gradient>) {
        self.velocity = velocity;
    }

    /// One ascent step `Δ ← m·Δ + η·(∇ − λ·W)`, `θ ← θ + Δ` with `∇` = `grad`.
    pub fn step(&mut self, rbm: &mut Rbm, grad: &Gradient) -> Result<()> {
        let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
        if grad.w.len() != nv * nh || grad.b.len() != nv || grad.c.len() != nh {
            return Err(Error::Shape {
                op: "Sgd::step".into(),
                expected: format!("a gradient for {nv} × {nh} units"),
                found: format!(
                    "w {}, b {}, c {} entries",
                    grad.w.len(),
                    grad.b.len(),
                    grad.c.len()
                ),
            });
        }
        let SgdParams {
            learning_rate: lr,
            momentum: mom,
            weight_decay: wd,
        } = self.params;
        // with momentum 0 no velocity is kept: `Δ = η·(∇ − λ·W)` is used once (two passes
        // over a `W`-sized buffer per step fewer)
        let vel = if mom == 0.0 {
            self.velocity = None;
            None
        } else {
            let vel = self.velocity.get_or_insert_with(|| Gradient::zeros(nv, nh));
            if vel.w.len() != nv * nh || vel.b.len() != nv || vel.c.len() != nh {
                return Err(Error::Shape {
                    op: "Sgd::step (restored velocity)".into(),
                    expected: format!("a velocity for {nv} × {nh} units"),
                    found: format!("w {}, b {}, c {}", vel.w.len(), vel.b.len(), vel.c.len()),
                });
            }
            Some(vel)
        };
        let (vw, vb, vc) = match vel {
            Some(v) => (Some(&mut v.w[..]), Some(&mut v.b[..]), Some(&mut v.c[..])),
            None => (None, None, None),
        };
        let guard = match &mut self.guard {
            Some(g) => {
                g.steps += 1;
                (g.steps == 1).then_some(g)
            }
            None => None,
        };
        let step = Step {
            momentum: mom,
            learning_rate: lr,
        };
        let packings = rbm.packings_held();
        let Some(g) = guard else {
            let (w, b, c, repack) = rbm.params_mut_repacking(packings);
            step.apply(Params::InPlace(w), vw, &grad.w, wd, repack);
            step.apply(Params::InPlace(b), vb, &grad.b, 0.0, None);
            step.apply(Params::InPlace(c), vc, &grad.c, 0.0, None);
            return Ok(());
        };
        if (g.backup.n_visible(), g.backup.n_hidden()) != (nv, nh) {
            return Err(Error::Internal(format!(
                "Sgd::step: the guard's backup is {} × {}, the model {nv} × {nh}",
                g.backup.n_visible(),
                g.backup.n_hidden()
            )));
        }
        // the same arithmetic, the new values written into the backup's buffers (with the
        // packings the model holds) and checked; then the two models change places, so the
        // backup holds the model before the step, its packings included, without a copy
        let bound = g.bound.min(f32::MAX);
        let (nw, nb, nc, repack) = g.backup.params_mut_repacking(packings);
        let beside = |old, new| Params::Beside { old, new, bound };
        let bad_w = step.apply(beside(rbm.w(), nw), vw, &grad.w, wd, repack);
        let bad_b = step.apply(beside(rbm.b(), nb), vb, &grad.b, 0.0, None);
        let bad_c = step.apply(beside(rbm.c(), nc), vc, &grad.c, 0.0, None);
        std::mem::swap(rbm, &mut g.backup);
        g.bad = bad_w | bad_b | bad_c;
        Ok(())
    }

    /// Folds the training loop's divergence guard into the next step: that step leaves the
    /// model before it in `backup` (a model of the same shape, whose values are overwritten)
    /// and checks every new parameter against `bound` (finite, `|θ| ≤ bound`).
    pub(crate) fn arm_guard(&mut self, backup: Rbm, bound: f32) {
        self.guard = Some(StepGuard {
            backup,
            bound,
            steps: 0,
            bad: false,
        });
    }

    /// Ends [`Sgd::arm_guard`]: the backup back, and what the steps since showed (`None`
    /// when no guard was armed).
    pub(crate) fn disarm_guard(&mut self) -> Option<(Rbm, GuardVerdict)> {
        let g = self.guard.take()?;
        let verdict = match g.steps {
            0 => GuardVerdict::NotStepped,
            1 => GuardVerdict::Checked { bad: g.bad },
            _ => GuardVerdict::Unchecked,
        };
        Some((g.backup, verdict))
    }
}

/// The arithmetic of one [`Sgd::step`] on one parameter block.
#[derive(Debug, Clone, Copy)]
struct Step {
    momentum: f32,
    learning_rate: f32,
}

/// Where a step reads a parameter block and writes its new values.
enum Params<'a> {
    /// Updated in place.
    InPlace(&'a mut [f32]),
    /// Read from `old`, written to `new` and checked against `bound` (the guard).
    Beside {
        old: &'a [f32],
        new: &'a mut [f32],
        bound: f32,
    },
}

impl Step {
    /// `Δ ← m·Δ + η·(g − decay·θ)`, `θ ← θ + Δ` elementwise over a parameter block, in
    /// parallel over fixed chunks (the same bits for any thread count). Without a velocity
    /// (`vel` `None`, momentum 0) `Δ = η·(g − decay·θ)` is not kept. [`Params::Beside`]
    /// checks each new value: true when one is out of bounds (`!(|θ| ≤ bound)`, so NaN too).
    /// With `repack` (`W` only) the chunks are its blocks of rows, each packed as soon as its
    /// new values are written.
    fn apply(
        self,
        params: Params,
        vel: Option<&mut [f32]>,
        g: &[f32],
        decay: f32,
        repack: Option<Repack>,
    ) -> bool {
        let chunk = match &repack {
            Some(r) => r.block_rows() * g.len() / r.rows(),
            None => CHUNK,
        };
        let vel = match vel {
            Some(v) => Either::Left(v.par_chunks_mut(chunk).map(Some)),
            None => {
                Either::Right(rayon::iter::repeat_n((), g.len().div_ceil(chunk)).map(|()| None))
            }
        };
        let written = |k: usize, new: &[f32]| {
            if let Some(r) = &repack {
                r.write(k, new);
            }
        };
        let chunks = g.par_chunks(chunk).zip(vel).enumerate();
        let bad = match params {
            Params::InPlace(theta) => {
                chunks
                    .zip(theta.par_chunks_mut(chunk))
                    .for_each(|((k, (g, v)), t)| {
                        self.in_place(t, v, g, decay);
                        written(k, t);
                    });
                false
            }
            Params::Beside { old, new, bound } => chunks
                .zip(old.par_chunks(chunk))
                .zip(new.par_chunks_mut(chunk))
                .map(|(((k, (g, v)), old), new)| {
                    let bad = self.beside(old, new, v, g, decay, bound);
                    written(k, new);
                    bad
                })
                .reduce(|| false, |a, b| a | b),
        };
        if let Some(r) = repack {
            r.finish();
        }
        bad
    }

    /// [`Step::apply`] in place on one chunk, serially.
    #[inline(always)]
    fn in_place(self, theta: &mut [f32], vel: Option<&mut [f32]>, g: &[f32], decay: f32) {
        let (mom, lr) = (self.momentum, self.learning_rate);
        match vel {
            Some(vel) => {
                for ((t, d), &gi) in theta.iter_mut().zip(vel).zip(g) {
                    *d = mom * *d + lr * (gi - decay * *t);
                    *t += *d;
                }
            }
            None => {
                for (t, &gi) in theta.iter_mut().zip(g) {
                    *t += lr * (gi - decay * *t);
                }
            }
        }
    }

    /// [`Step::apply`] from `old` into `new` on one chunk, serially; true when a new value
    /// is out of bounds.
    #[inline(always)]
    fn beside(
        self,
        old: &[f32],
        new: &mut [f32],
        vel: Option<&mut [f32]>,
        g: &[f32],
        decay: f32,
        bound: f32,
    ) -> bool {
        let (mom, lr) = (self.momentum, self.learning_rate);
        // true for NaN, as the loop's own check (`divergence`)
        #[allow(clippy::neg_cmp_op_on_partial_ord)]
        let out = |x: f32| u32::from(!(x.abs() <= bound));
        let mut bad = 0u32;
        match vel {
            Some(vel) => {
                for (((&t, n), d), &gi) in old.iter().zip(new.iter_mut()).zip(vel).zip(g) {
                    *d = mom * *d + lr * (gi - decay * t);
                    *n = t + *d;
                    bad |= out(*n);
                }
            }
            None => {
                for ((&t, n), &gi) in old.iter().zip(new.iter_mut()).zip(g) {
                    *n = t + lr * (gi - decay * t);
                    bad |= out(*n);
                }
            }
        }
        bad != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::rng_from_seed;

    /// A gradient for `nv × nh` units: `W` ~ N(0, scale²) from `seed`, fixed ramps for the
    /// biases.
    fn random_gradient(nv: usize, nh: usize, scale: f32, seed: u64) -> Gradient {
        let w = Rbm::random(nv, nh, scale, &mut rng_from_seed(seed)).unwrap();
        Gradient {
            w: w.w().to_vec(),
            b: (0..nv).map(|i| i as f32 * 0.1 - 2.0).collect(),
            c: (0..nh).map(|j| 1.0 - j as f32 * 0.01).collect(),
        }
    }

    /// The guarded step (the loop's divergence guard folded in) against the plain step and
    /// the loop's own check: the same model bits, the backup equal to the model before, the
    /// verdict of `divergence`; no step, and several steps, reported as such.
    #[test]
    fn guarded_step_equals_plain_step_and_the_loops_check() {
        use crate::rbm::train::guard::divergence;
        // more parameters than one parallel chunk, so the flag is reduced across chunks
        let (nv, nh) = (300, 70);
        let rbm0 = Rbm::random(nv, nh, 0.5, &mut rng_from_seed(1)).unwrap();
        let grad = random_gradient(nv, nh, 3.0, 2);
        for (params, bound) in [0.5, 0.0]
            .map(|m| {
                SgdParams::new()
                    .learning_rate(0.3)
                    .momentum(m)
                    .weight_decay(0.01)
            })
            .into_iter()
            .flat_map(|p| [f32::INFINITY, 100.0, 2.0, 0.5].map(|b| (p, b)))
        {
            let (mut plain, mut guarded) = (rbm0.clone(), rbm0.clone());
            let (mut s1, mut s2) = (params.check().unwrap(), params.check().unwrap());
            for _ in 0..2 {
                s1.step(&mut plain, &grad).unwrap();
                let before = guarded.clone();
                s2.arm_guard(Rbm::zeros(nv, nh).unwrap(), bound);
                s2.step(&mut guarded, &grad).unwrap();
                let (backup, verdict) = s2.disarm_guard().unwrap();
                assert_eq!(guarded, plain, "bound {bound}");
                assert_eq!(backup, before);
                let bad = divergence(&guarded, bound).is_some();
                assert_eq!(verdict, GuardVerdict::Checked { bad }, "bound {bound}");
            }
        }
        let mut sgd = SgdParams::new().momentum(0.5).check().unwrap();
        let mut rbm = rbm0.clone();
        sgd.arm_guard(rbm0.clone(), 1.0);
        assert_eq!(sgd.disarm_guard().unwrap().1, GuardVerdict::NotStepped);
        sgd.arm_guard(Rbm::zeros(nv, nh).unwrap(), 1.0);
        sgd.step(&mut rbm, &grad).unwrap();
        sgd.step(&mut rbm, &grad).unwrap();
        let (backup, verdict) = sgd.disarm_guard().unwrap();
        assert_eq!((backup, verdict), (rbm0.clone(), GuardVerdict::Unchecked));
        assert!(sgd.disarm_guard().is_none());
        // a backup of another shape is refused, not half written
        sgd.arm_guard(Rbm::zeros(nv, nh + 1).unwrap(), 1.0);
        assert!(matches!(sgd.step(&mut rbm, &grad), Err(Error::Internal(_))));
    }

    /// The packings a step writes block by block as it updates `W`
    /// ([`Rbm::params_mut_repacking`]) against packings made afresh from the new `W`: the
    /// same floats, padding included, for shapes with whole, cut and padded strips of both
    /// widths (`W` of 1,100 rows: 8-column strips), with `W`
    /// alone, `Wᵀ` alone or both packed before the step, guarded (the new values written
    /// beside the old) or not, on 1, 2 and 3 threads; with neither packed before, none is
    /// made.
    #[test]
    fn packings_written_by_the_step_equal_fresh_ones() {
        use crate::linalg::binary::Packed;
        use crate::testutil::on_threads;
        for (nv, nh) in [
            (5, 3),
            (37, 21),
            (785, 33),
            (64, 128),
            (200, 500),
            (1100, 9),
        ] {
            let rbm0 = Rbm::random(nv, nh, 0.5, &mut rng_from_seed(3)).unwrap();
            let grad = random_gradient(nv, nh, 1.0, 4);
            for (had_w, had_wt) in [(true, false), (false, true), (true, true), (false, false)] {
                for guarded in [false, true] {
                    for threads in [1, 2, 3] {
                        let rbm = on_threads(threads, || {
                            let mut rbm = rbm0.clone();
                            // momentum 0 (no velocity) guarded, 0.5 not
                            let m = if guarded { 0.0 } else { 0.5 };
                            let mut sgd = SgdParams::new().momentum(m).check().unwrap();
                            for _ in 0..2 {
                                if had_w {
                                    rbm.packed_w();
                                }
                                if had_wt {
                                    rbm.packed_wt();
                                }
                                if guarded {
                                    sgd.arm_guard(Rbm::zeros(nv, nh).unwrap(), 1e6);
                                }
                                sgd.step(&mut rbm, &grad).unwrap();
                                sgd.disarm_guard();
                            }
                            rbm
                        });
                        let case = format!("{nv} × {nh}, {threads} threads, guard {guarded}");
                        let (w, wt) = rbm.cached_packings();
                        assert_eq!((w.is_some(), wt.is_some()), (had_w, had_wt), "{case}");
                        if let Some(got) = w {
                            let mut want = Packed::default();
                            want.pack(rbm.w(), nv, nh);
                            assert_eq!(got, &want, "W, {case}");
                        }
                        if let Some(got) = wt {
                            let mut want = Packed::default();
                            want.pack_transposed(rbm.w(), nv, nh);
                            assert_eq!(got, &want, "Wᵀ, {case}");
                        }
                    }
                }
            }
        }
    }

    /// Steps against the formula applied element by element with an explicit velocity
    /// (zero at first): the same bits with momentum 0.5, and with momentum 0, where no
    /// velocity is kept.
    #[test]
    fn steps_equal_the_formula_with_and_without_momentum() {
        let (nv, nh, lr, wd) = (70, 300, 0.3, 0.01);
        let rbm0 = Rbm::random(nv, nh, 0.5, &mut rng_from_seed(5)).unwrap();
        let grad = random_gradient(nv, nh, 3.0, 6);
        for mom in [0.5f32, 0.0] {
            let mut sgd = SgdParams::new()
                .learning_rate(lr)
                .momentum(mom)
                .weight_decay(wd)
                .check()
                .unwrap();
            let mut rbm = rbm0.clone();
            let mut want = rbm0.clone();
            let mut vel = Gradient::zeros(nv, nh);
            for _ in 0..3 {
                sgd.step(&mut rbm, &grad).unwrap();
                let (w, b, c) = want.params_mut();
                for (theta, v, g, decay) in [
                    (w, &mut vel.w, &grad.w, wd),
                    (b, &mut vel.b, &grad.b, 0.0),
                    (c, &mut vel.c, &grad.c, 0.0),
                ] {
                    for ((t, d), &gi) in theta.iter_mut().zip(v.iter_mut()).zip(g) {
                        *d = mom * *d + lr * (gi - decay * *t);
                        *t += *d;
                    }
                }
                assert_eq!(rbm, want, "momentum {mom}");
                assert_eq!(sgd.velocity().is_some(), mom > 0.0);
            }
        }
    }

    #[test]
    fn invalid_settings_name_their_field() {
        let field = |p: SgdParams| match p.check() {
            Err(Error::InvalidParam { field, .. }) => field,
            other => panic!("expected an error, got {other:?}"),
        };
        assert_eq!(field(SgdParams::new().learning_rate(0.0)), "learning_rate");
        assert_eq!(
            field(SgdParams::new().learning_rate(f32::NAN)),
            "learning_rate"
        );
        assert_eq!(field(SgdParams::new().momentum(1.0)), "momentum");
        assert_eq!(field(SgdParams::new().weight_decay(-1.0)), "weight_decay");
        assert!(SgdParams::new().check().is_ok());
    }

    #[test]
    fn momentum_and_weight_decay_follow_the_formula() {
        let mut rbm = Rbm::new(1, 1, vec![1.0], vec![1.0], vec![1.0]).unwrap();
        let mut sgd = SgdParams::new()
            .learning_rate(0.1)
            .momentum(0.5)
            .weight_decay(0.2)
            .check()
            .unwrap();
        let g = Gradient {
            w: vec![1.0],
            b: vec![1.0],
            c: vec![-1.0],
        };
        sgd.step(&mut rbm, &g).unwrap();
        // Δw = 0.1·(1 − 0.2·1) = 0.08; Δb = 0.1; Δc = −0.1
        assert!((rbm.w()[0] - 1.08).abs() < 1e-6);
        assert!((rbm.b()[0] - 1.1).abs() < 1e-6 && (rbm.c()[0] - 0.9).abs() < 1e-6);
        sgd.step(&mut rbm, &g).unwrap();
        // Δw = 0.5·0.08 + 0.1·(1 − 0.2·1.08) = 0.1184; Δb = 0.05 + 0.1
        assert!((rbm.w()[0] - 1.1984).abs() < 1e-6);
        assert!((rbm.b()[0] - 1.25).abs() < 1e-6);
        assert!(sgd.step(&mut rbm, &Gradient::zeros(2, 1)).is_err());
        assert!(sgd.set_learning_rate(-1.0).is_err());
    }
}
