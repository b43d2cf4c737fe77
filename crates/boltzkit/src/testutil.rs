//! Helpers shared by the unit tests of every module.

/// Runs `f` inside a fresh rayon pool of `threads` workers (the determinism tests compare
/// the bits of 1, 2 and 3 threads).
pub fn on_threads<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a test thread pool")
        .install(f)
}
