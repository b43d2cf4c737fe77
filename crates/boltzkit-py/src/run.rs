//! Running library work from Python: the GIL released, a thread count of the caller's
//! choosing, and Ctrl-C turned into the library's [`Interrupt`] (fits: [`interruptible`],
//! which keeps the last good model; long estimates: [`estimate`], which keeps nothing).
//!
//! A fit runs on a worker thread while the calling thread, which received Python's signals,
//! waits on it 100 ms at a time with the GIL released and calls `check_signals` between
//! waits. On Ctrl-C it sets the learner's interrupt flag; the learner finishes its current
//! update and returns its last good model, which the caller keeps before re-raising the
//! `KeyboardInterrupt`.

use crate::error::IntoPyResult;
use boltzkit::fit::Interrupt;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::time::Duration;

/// How often the waiting thread looks for signals.
const POLL: Duration = Duration::from_millis(100);

/// A pool of `threads` workers, or `None` for rayon's global pool (all cores). A count above
/// the library's bound ([`boltzkit::budget::check_threads`]: four per core) is refused, as by
/// the CLI's `--threads`, rather than starting (and waiting on) that many threads.
fn pool(threads: Option<usize>) -> PyResult<Option<rayon::ThreadPool>> {
    match threads {
        None => Ok(None),
        Some(0) => Err(PyValueError::new_err(
            "n_jobs must be at least 1 (or None, or -1)",
        )),
        Some(n) => {
            boltzkit::budget::check_threads("n_jobs", n).py()?;
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .map(Some)
                .map_err(|e| PyRuntimeError::new_err(format!("starting {n} worker threads: {e}")))
        }
    }
}

/// Runs `work` on a worker of the pool of `threads` workers, or of rayon's global pool: each
/// parallel region inside it then starts on a worker, with no hand-off from an outside
/// thread and back per region (a sleep and a wake-up each: 6-10% of a PCD-1 MNIST epoch,
/// issue 19; the CLI runs its commands the same way).
fn in_pool<R: Send>(pool: Option<&rayon::ThreadPool>, work: impl FnOnce() -> R + Send) -> R {
    match pool {
        Some(p) => p.install(work),
        None => rayon::scope(|_| work()),
    }
}

/// Runs `work` with the GIL released on `threads` workers (short computations: exact
/// scoring, sampling; not interruptible).
pub fn released<R: Send>(
    py: Python<'_>,
    threads: Option<usize>,
    work: impl FnOnce() -> R + Send,
) -> PyResult<R> {
    let pool = pool(threads)?;
    py.detach(|| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            in_pool(pool.as_ref(), work)
        }))
    })
    .map_err(|payload| panic_error(payload.as_ref()))
}

/// A panic inside the library as a Python `RuntimeError` (pyo3 would raise its own
/// `PanicException`, a `BaseException` that `except Exception` does not catch), with the
/// panic's message.
fn panic_error(payload: &(dyn std::any::Any + Send)) -> PyErr {
    let msg = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_string());
    PyRuntimeError::new_err(format!(
        "internal error in boltzkit (a bug: please report it): {msg}"
    ))
}

/// Runs `work` on a worker thread (inside a pool of `threads` workers) while this thread
/// watches for signals. Returns the work's result and, when Ctrl-C arrived meanwhile, the
/// `KeyboardInterrupt` to raise once the result is kept (`flag` was set, so the result is the
/// learner's last good model).
pub fn interruptible<R: Send>(
    py: Python<'_>,
    threads: Option<usize>,
    flag: &Interrupt,
    work: impl FnOnce() -> R + Send,
) -> PyResult<(R, Option<PyErr>)> {
    let pool = pool(threads)?;
    let (tx, rx) = channel();
    std::thread::scope(|s| {
        let worker = s.spawn(|| {
            // `tx` moves into the worker, so a panic there drops it and the wait below sees
            // the channel disconnect (a borrowed `tx` would outlive the panic: the wait would
            // poll forever)
            let tx = tx;
            let r = in_pool(pool.as_ref(), work);
            // the receiver outlives the worker: it is only dropped after the join below
            let _ = tx.send(r);
        });
        let mut rx = Some(rx);
        let mut signal = None;
        let result = loop {
            let receiver = rx.take().expect("the receiver is put back after each wait");
            let (receiver, got) = py.detach(move || {
                let got = receiver.recv_timeout(POLL);
                (receiver, got)
            });
            rx = Some(receiver);
            match got {
                Ok(r) => break Some(r),
                Err(RecvTimeoutError::Timeout) => {
                    if let Err(e) = py.check_signals() {
                        flag.set();
                        signal.get_or_insert(e);
                    }
                }
                Err(RecvTimeoutError::Disconnected) => break None,
            }
        };
        let joined = py.detach(|| worker.join());
        match (result, joined) {
            (Some(r), _) => Ok((r, signal)),
            (None, Err(payload)) => Err(panic_error(payload.as_ref())),
            (None, Ok(())) => Err(PyRuntimeError::new_err(
                "the worker thread stopped without a result (a bug in boltzkit: please report it)",
            )),
        }
    })
}

/// Runs an estimate that may take minutes (AIS, RAISE, the bracket) as [`interruptible`]
/// does, handing `work` the flag Ctrl-C sets: the library stops the estimate at its next
/// temperature with `Error::Interrupted`, and this returns the `KeyboardInterrupt` instead
/// (an interrupted estimate has no figure; nothing is kept).
pub fn estimate<R: Send>(
    py: Python<'_>,
    threads: Option<usize>,
    work: impl FnOnce(&Interrupt) -> boltzkit::Result<R> + Send,
) -> PyResult<R> {
    let flag = Interrupt::new();
    let (result, signal) = interruptible(py, threads, &flag, || work(&flag))?;
    match signal {
        Some(e) => Err(e),
        None => crate::error::IntoPyResult::py(result),
    }
}
