//! Keeping the thread pool's workers awake through a hot loop.
//!
//! A rayon worker with nothing to do yields to the OS a few dozen times and then sleeps on a
//! futex; the next parallel region must wake it. On the 2-core virtual machines this project
//! is measured on, a serial gap of 40 µs between two 40 µs regions cost 30-55 µs more per
//! region than a gap of 20 µs (the worker had fallen asleep, and waking it took that long),
//! and a PCD-1 MNIST epoch on 2 threads made about 4,200 futex calls, 3.5 per mini-batch
//! update (`perf stat -e syscalls:sys_enter_futex`, issue 19). [`Warm`] keeps the workers
//! polling for jobs (and running them) while it is held, so short serial stretches and
//! uneven regions do not put them to sleep. Which thread runs a job never changes a result.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `pause` instructions between two polls of an idle worker, so the polls do not hammer the
/// deques the working threads push to and pop from.
const POLL_PAUSES: usize = 64;

/// A polling worker that has found no job for this long goes back to the pool's own idling
/// (and sleeps). Serial stretches of a training epoch or an annealing run are far shorter.
const POLL_IDLE_LIMIT: Duration = Duration::from_millis(5);

/// A worker polls in slices of this length, each a job that hands the polling on as a new
/// job when it ends. A worker that picks a poller up while it waits inside a job of its own
/// (a parallel region of one training among several run in parallel) is back at its own
/// work within a slice, instead of when the `Warm` is dropped.
const POLL_SLICE: Duration = Duration::from_micros(50);

/// What the polling workers and the holder share.
#[derive(Debug, Default)]
struct Shared {
    stop: AtomicBool,
    /// Polling chains alive (one started per worker but the caller).
    polling: AtomicUsize,
    /// Polling chains ever started: the tests' witness that every other worker polled (a
    /// chain may already have ended, idle, when another starts on a loaded machine).
    #[cfg(test)]
    started: AtomicUsize,
}

/// While held, the other workers of the caller's pool poll for jobs instead of sleeping: a
/// hot loop of short parallel regions (a training epoch, an annealing run) pays no wake-up
/// per region. It costs those workers' cores their idle time, so hold it only around such a
/// loop; a worker that finds nothing to do for [`POLL_IDLE_LIMIT`] stops polling anyway.
/// Inert outside a pool's workers (the pool belongs to someone else) and on one thread.
/// Dropping it lets the workers sleep again.
#[derive(Debug)]
pub struct Warm {
    shared: Option<Arc<Shared>>,
}

/// Weights below which a model's hot loop holds no [`Warm`] ([`Warm::for_weights`]): its
/// updates take microseconds, so a broadcast per epoch costs more than the wake-ups it saves,
/// and such small models are the ones trained many side by side (the `repro` commands'
/// trials: `repro sdcp --small --epochs 500` took 10.1-11.4 s with a `Warm` per epoch against
/// 8.9-9.2 s without).
pub const MIN_WEIGHTS: usize = 16_384;

impl Warm {
    /// [`Warm::start`] for the hot loop of a model with `weights` weights, inert below
    /// [`MIN_WEIGHTS`].
    pub fn for_weights(weights: usize) -> Warm {
        if weights < MIN_WEIGHTS {
            return Warm { shared: None };
        }
        Warm::start()
    }

    /// Starts the polling on every worker of the current pool but the calling one.
    pub fn start() -> Warm {
        let Some(driver) = rayon::current_thread_index() else {
            return Warm { shared: None };
        };
        if rayon::current_num_threads() < 2 {
            return Warm { shared: None };
        }
        let shared = Arc::new(Shared::default());
        let poll = Arc::clone(&shared);
        rayon::spawn_broadcast(move |ctx| {
            // the caller meets its own copy only when it looks for work itself (waiting in
            // a region): it starts no chain
            if ctx.index() != driver {
                poll.polling.fetch_add(1, Ordering::AcqRel);
                #[cfg(test)]
                poll.started.fetch_add(1, Ordering::AcqRel);
                Arc::clone(&poll).slice(driver, Instant::now());
            }
        });
        Warm {
            shared: Some(shared),
        }
    }
}

impl Shared {
    /// One slice of a polling chain: run any job the pool has for up to [`POLL_SLICE`], then
    /// hand the chain on as a new job; the chain ends when stopped or idle too long. On the
    /// caller's thread (which may steal the job while it waits) it only hands it on.
    fn slice(self: Arc<Self>, driver: usize, mut idle_since: Instant) {
        if rayon::current_thread_index() != Some(driver) {
            let start = Instant::now();
            while start.elapsed() < POLL_SLICE && !self.stop.load(Ordering::Acquire) {
                match rayon::yield_now() {
                    Some(rayon::Yield::Executed) => idle_since = Instant::now(),
                    Some(rayon::Yield::Idle) => {
                        (0..POLL_PAUSES).for_each(|_| std::hint::spin_loop());
                    }
                    None => break,
                }
            }
        }
        if self.stop.load(Ordering::Acquire) || idle_since.elapsed() >= POLL_IDLE_LIMIT {
            self.polling.fetch_sub(1, Ordering::AcqRel);
            return;
        }
        rayon::spawn(move || self.slice(driver, idle_since));
    }
}

impl Drop for Warm {
    fn drop(&mut self) {
        if let Some(shared) = &self.shared {
            shared.stop.store(true, Ordering::Release);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    /// Waits up to 10 s for `count` to reach `n`.
    fn wait_for(count: &AtomicUsize, n: usize) -> bool {
        let t = Instant::now();
        while count.load(Ordering::Acquire) != n {
            if t.elapsed() > Duration::from_secs(10) {
                return false;
            }
            std::thread::yield_now();
        }
        true
    }

    /// Every other worker polls while a `Warm` is held and stops when it is dropped;
    /// parallel work under it gives the results it gives without, on 1 and 3 threads,
    /// nested and repeated, and the pool stays usable afterwards.
    #[test]
    fn workers_poll_while_held_and_work_is_unchanged() {
        let want: Vec<u64> = (0..10_000u64).map(|i| i * i % 7).collect();
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                for _ in 0..3 {
                    let warm = Warm::start();
                    assert_eq!(warm.shared.is_some(), threads > 1);
                    let shared = warm.shared.clone();
                    if let Some(s) = &shared {
                        assert!(
                            wait_for(&s.started, threads - 1),
                            "the other workers did not poll"
                        );
                    }
                    for _ in 0..50 {
                        let got: Vec<u64> =
                            (0..10_000u64).into_par_iter().map(|i| i * i % 7).collect();
                        assert_eq!(got, want);
                        let (a, b) = rayon::join(
                            || (0..1000u64).into_par_iter().sum::<u64>(),
                            || (0..1000u64).map(|i| i * 2).sum::<u64>(),
                        );
                        assert_eq!((a, b), (499_500, 999_000));
                    }
                    drop(warm);
                    if let Some(s) = &shared {
                        assert!(
                            wait_for(&s.polling, 0),
                            "the workers kept polling after the drop"
                        );
                    }
                }
                let got: Vec<u64> = (0..10_000u64).into_par_iter().map(|i| i * i % 7).collect();
                assert_eq!(got, want);
            });
        }
    }

    /// Outside a pool's workers and below `MIN_WEIGHTS` a `Warm` is inert; a poller idle
    /// for longer than the limit stops polling though the `Warm` is still held.
    #[test]
    fn inert_outside_a_pool_and_pollers_stop_when_idle() {
        assert!(Warm::start().shared.is_none());
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        pool.install(|| {
            assert!(Warm::for_weights(MIN_WEIGHTS - 1).shared.is_none());
            let warm = Warm::for_weights(MIN_WEIGHTS);
            let shared = warm.shared.clone().expect("two workers");
            assert!(wait_for(&shared.started, 1));
            std::thread::sleep(4 * POLL_IDLE_LIMIT);
            assert!(wait_for(&shared.polling, 0), "an idle poller kept polling");
            drop(warm);
        });
    }
}
