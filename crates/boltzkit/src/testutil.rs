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

/// The shared data directory (`BOLTZKIT_DATA_DIR`, else `shared/data` beside the checkout or
/// one of its parents), or `None` with a note when there is none: real-data tests then skip.
pub fn shared_data() -> Option<std::path::PathBuf> {
    use std::path::{Path, PathBuf};
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let from_env = std::env::var_os("BOLTZKIT_DATA_DIR").map(PathBuf::from);
    let found = from_env
        .into_iter()
        .chain(
            crate_dir
                .ancestors()
                .skip(1)
                .take(4)
                .map(|a| a.join("shared/data")),
        )
        .find(|p| p.is_dir());
    if found.is_none() {
        eprintln!("note: shared/data not found beside the checkout; skipping real-data test");
    }
    found
}
