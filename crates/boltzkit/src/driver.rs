//! The one loop driver of the learners, argmin's executor habit: FSLL's Algorithm 1 (one
//! basis function per iteration), Frank-Wolfe (one hidden unit per iteration) and RBM
//! training (one epoch per step, its mini-batches applied by an
//! [`Engine`](crate::rbm::train::engine::Engine)). The learner says how to take a step and what
//! its observers see ([`Stepper`]), [`drive`] runs the steps and does what each loop did by
//! hand: the learner's own limits and the interrupt before every step, the observers' `start`
//! (by the learner on its initial state, [`Stepper::begin`], or on the first observation) and
//! then each observer at its period, the learner's stops that read what the observers
//! measured, and the count of steps taken.
//!
//! ```
//! use boltzkit::driver::{drive, Stepper};
//! use boltzkit::fit::{Control, Count, Fit, Learner, Run, StopReason};
//! use boltzkit::data::Dataset;
//!
//! /// Halves a number until it is below 1: a learner of one step kind.
//! struct Halve;
//! impl Learner for Halve {
//!     type Model = f64;
//!     type Record = ();
//!     type Progress<'p> = f64;
//!     fn fit_with(&self, _: &Dataset, mut run: Run<'_, Self>) -> boltzkit::Result<Fit<f64, ()>> {
//!         let mut x = Halving { x: 40.0, steps: 0 };
//!         let driven = drive(&mut x, &mut run)?;
//!         assert_eq!((driven.stop, driven.steps), (StopReason::Converged, 6));
//!         Ok(Fit { model: x.x, record: () })
//!     }
//! }
//! struct Halving { x: f64, steps: usize }
//! impl Stepper for Halving {
//!     type Learner = Halve;
//!     fn limit(&self) -> Option<StopReason> {
//!         (self.steps == 100).then_some(StopReason::MaxIterations)
//!     }
//!     fn done(&self) -> Count { Count::iterations(self.steps) }
//!     fn step(&mut self) -> boltzkit::Result<Option<StopReason>> {
//!         if self.x < 1.0 { return Ok(Some(StopReason::Converged)); }
//!         self.x /= 2.0;
//!         self.steps += 1;
//!         Ok(None)
//!     }
//!     fn at(&self) -> usize { self.steps }
//!     fn with_progress<R>(
//!         &mut self,
//!         f: impl for<'p> FnOnce(&mut f64) -> boltzkit::Result<R>,
//!     ) -> boltzkit::Result<R> {
//!         f(&mut self.x)
//!     }
//! }
//! let data = Dataset::binary(ndarray::array![[0u8]]).unwrap();
//! let mut seen = Vec::new();
//! let run = Halve.run().observe_every(|x: &mut f64| { seen.push(*x); Ok(Control::Continue) }, 2);
//! assert_eq!(Halve.fit_with(&data, run).unwrap().model, 0.625);
//! assert_eq!(seen, vec![10.0, 2.5, 0.625]); // after steps 2, 4 and 6
//! ```

use crate::error::Result;
use crate::fit::{Count, Learner, Run, StopReason};

/// A learner's steps, as [`drive`] takes them.
pub trait Stepper {
    /// The learner whose [`Run`] observes the steps.
    type Learner: Learner;

    /// Why the run ends before another step by the learner's own limits (iterations, units),
    /// if it does; asked before every step, before the interrupt.
    fn limit(&self) -> Option<StopReason>;

    /// The work done so far, as an interrupt reports it ("interrupted after 12 units").
    fn done(&self) -> Count;

    /// Takes one step; `Some` ends the run at once, unobserved (e.g. converged: no step was
    /// worth taking).
    fn step(&mut self) -> Result<Option<StopReason>>;

    /// The step number the observers' periods count, after the step just taken.
    fn at(&self) -> usize;

    /// Calls `f` with the progress after the step just taken; the driver asks only when an
    /// observer is due at [`Stepper::at`] (or their `start` is).
    fn with_progress<R>(
        &mut self,
        f: impl for<'p> FnOnce(&mut <Self::Learner as Learner>::Progress<'p>) -> Result<R>,
    ) -> Result<R>;

    /// The learner's own stops after the observers saw the step (they may read the figures the
    /// observers added; `observed` is the first observer's stop, if any); none by default.
    /// They win over an observer's stop.
    fn after_observers(&mut self, _observed: Option<&StopReason>) -> Result<Option<StopReason>> {
        Ok(None)
    }

    /// What the learner does before the first step; by default nothing, and the observers'
    /// `start` sees the progress after the first step (a learner with no model before it).
    fn begin(&mut self, _run: &mut Run<'_, Self::Learner>) -> Result<Begin> {
        Ok(Begin::AtFirstStep)
    }
}

/// What [`Stepper::begin`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum Begin {
    /// Nothing: the observers' `start` is the driver's, on the first step.
    AtFirstStep,
    /// The learner called the observers' `start` (and observed its initial state).
    Started,
    /// The learner started the observers and one of them ended the run before any step.
    Stopped(StopReason),
}

/// How a driven run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Driven {
    /// Why it stopped.
    pub stop: StopReason,
    /// Steps taken (each one observed by the observers due at it).
    pub steps: usize,
}

/// Runs `stepper` under `run` until a stop: first [`Stepper::begin`]; before every step the
/// learner's limit, then the interrupt ([`StopReason::Interrupted`] after [`Stepper::done`]);
/// after every step the observers due (their `start` first, on the first step, unless the
/// learner began them), then the learner's own stops ([`Stepper::after_observers`]), then the
/// first observer's stop. The observers' `finish` is the learner's to call, with the progress
/// of its final figures.
pub fn drive<S: Stepper>(stepper: &mut S, run: &mut Run<'_, S::Learner>) -> Result<Driven> {
    let mut steps = 0;
    let mut start_pending = match stepper.begin(run)? {
        Begin::AtFirstStep => true,
        Begin::Started => false,
        Begin::Stopped(stop) => return Ok(Driven { stop, steps }),
    };
    let stop = loop {
        if let Some(stop) = stepper.limit() {
            break stop;
        }
        if run.interrupted() {
            break StopReason::Interrupted {
                after: stepper.done(),
            };
        }
        if let Some(stop) = stepper.step()? {
            break stop;
        }
        steps += 1;
        let at = stepper.at();
        let observed = if start_pending || run.due(at) {
            stepper.with_progress(|progress| {
                if std::mem::take(&mut start_pending) {
                    run.start(progress)?;
                }
                run.observe_at(at, progress)
            })?
        } else {
            None
        };
        if let Some(stop) = stepper.after_observers(observed.as_ref())? {
            break stop;
        }
        if let Some(stop) = observed {
            break stop;
        }
    };
    Ok(Driven { stop, steps })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Dataset;
    use crate::fit::{Control, Fit, Interrupt, Observer};

    /// Counts to `limit`, converging at `converge_at`, stopping itself after `own_stop_at`.
    struct Counter {
        limit: usize,
        converge_at: usize,
        own_stop_at: usize,
    }

    struct Counting<'c> {
        c: &'c Counter,
        n: usize,
    }

    impl Learner for Counter {
        type Model = usize;
        type Record = Vec<String>;
        type Progress<'p> = usize;

        fn fit_with(&self, _: &Dataset, mut run: Run<'_, Self>) -> Result<Fit<usize, Vec<String>>> {
            let mut s = Counting { c: self, n: 0 };
            let d = drive(&mut s, &mut run)?;
            assert_eq!(d.steps, s.n);
            Ok(Fit {
                model: s.n,
                record: vec![d.stop.to_string()],
            })
        }
    }

    impl Stepper for Counting<'_> {
        type Learner = Counter;
        fn limit(&self) -> Option<StopReason> {
            (self.n >= self.c.limit).then_some(StopReason::MaxIterations)
        }
        fn done(&self) -> Count {
            Count::iterations(self.n)
        }
        fn step(&mut self) -> Result<Option<StopReason>> {
            if self.n == self.c.converge_at {
                return Ok(Some(StopReason::Converged));
            }
            self.n += 1;
            Ok(None)
        }
        fn at(&self) -> usize {
            self.n
        }
        fn with_progress<R>(
            &mut self,
            f: impl for<'p> FnOnce(&mut usize) -> Result<R>,
        ) -> Result<R> {
            let mut n = self.n;
            f(&mut n)
        }
        fn after_observers(&mut self, _: Option<&StopReason>) -> Result<Option<StopReason>> {
            Ok(
                (self.n == self.c.own_stop_at).then(|| StopReason::EarlyStopped {
                    after: Count::iterations(self.n),
                    detail: "own".into(),
                }),
            )
        }
    }

    /// Records its calls; stops the run at `stop_at`, raises `raise` at `raise_at`.
    struct Log<'a> {
        calls: &'a std::cell::RefCell<Vec<String>>,
        stop_at: usize,
        raise: Option<(Interrupt, usize)>,
    }

    impl Observer<usize> for Log<'_> {
        fn start(&mut self, p: &mut usize) -> Result<()> {
            self.calls.borrow_mut().push(format!("start {p}"));
            Ok(())
        }
        fn observe(&mut self, p: &mut usize) -> Result<Control> {
            self.calls.borrow_mut().push(format!("{p}"));
            if let Some((flag, at)) = &self.raise {
                if *p == *at {
                    flag.set();
                }
            }
            Ok(if *p == self.stop_at {
                Control::Stop(StopReason::EarlyStopped {
                    after: Count::iterations(*p),
                    detail: "observer".into(),
                })
            } else {
                Control::Continue
            })
        }
    }

    fn fit(
        c: &Counter,
        every: usize,
        stop_at: usize,
        raise_at: Option<usize>,
    ) -> (usize, String, Vec<String>) {
        let data = Dataset::binary(ndarray::array![[0u8]]).unwrap();
        let calls = std::cell::RefCell::new(Vec::new());
        let flag = Interrupt::new();
        let log = Log {
            calls: &calls,
            stop_at,
            raise: raise_at.map(|at| (flag.clone(), at)),
        };
        let run = c.run().observe_every(log, every).interrupt(flag.clone());
        let f = c.fit_with(&data, run).unwrap();
        (f.model, f.record[0].clone(), calls.into_inner())
    }

    #[test]
    fn drives_to_each_stop_in_order() {
        let plain = Counter {
            limit: 5,
            converge_at: 99,
            own_stop_at: 99,
        };
        // the limit, observers at their period, `start` once before the first observation
        let (n, stop, calls) = fit(&plain, 2, 99, None);
        assert_eq!(
            (n, stop.as_str()),
            (5, "reached the maximum number of iterations")
        );
        assert_eq!(calls, ["start 1", "2", "4"]);
        // convergence ends the run unobserved
        let conv = Counter {
            converge_at: 3,
            ..plain
        };
        let (n, stop, calls) = fit(&conv, 1, 99, None);
        assert_eq!((n, stop.as_str(), calls.len()), (3, "converged", 4));
        // an observer's stop, after the step it saw
        let (n, stop, _) = fit(&plain, 1, 2, None);
        assert_eq!(
            (n, stop.as_str()),
            (2, "stopped early after iteration 2: observer")
        );
        // the learner's own stop wins over the observer's at the same step
        let own = Counter {
            own_stop_at: 2,
            ..plain
        };
        let (n, stop, _) = fit(&own, 1, 2, None);
        assert_eq!(
            (n, stop.as_str()),
            (2, "stopped early after iteration 2: own")
        );
        // an interrupt raised during step 3's observation stops before step 4
        let (n, stop, calls) = fit(&plain, 1, 99, Some(3));
        assert_eq!(n, 3);
        assert_eq!(
            stop,
            StopReason::Interrupted {
                after: Count::iterations(3)
            }
            .to_string()
        );
        assert_eq!(calls, ["start 1", "1", "2", "3"]);
        // the limit is asked before the interrupt
        let (n, stop, _) = fit(&plain, 1, 99, Some(5));
        assert_eq!(
            (n, stop.as_str()),
            (5, "reached the maximum number of iterations")
        );
    }
}
