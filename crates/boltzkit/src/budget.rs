//! What a job may ask of the machine, checked before the work: memory against what is
//! available, work against a year of computing, thread counts against the cores, and large
//! buffers allocated fallibly, so no setting can abort the process or run for ever.
//!
//! The library's entry points (learners, samplers, estimators) call these with their own
//! estimates, so every front end (the CLI, Python) refuses the same sizes with the same line:
//!
//! | item | refuses |
//! |---|---|
//! | [`check_memory`] | an estimate above the memory available ([`available_memory`]): [`Error::Memory`] |
//! | [`check_work`] | more than [`MAX_OPERATIONS`] elementary operations (a year at [`OPERATIONS_PER_SECOND`]): [`Error::TooLarge`] |
//! | [`try_vec`] | a buffer whose allocation fails (or whose size overflows): [`Error::Memory`], never an abort |
//! | [`check_threads`] | more than [`max_threads`] worker threads (four per core) |
//!
//! ```
//! use boltzkit::budget::{check_work, try_vec};
//! assert!(try_vec("the schedule", 1000, 0.0f64).is_ok());
//! let e = try_vec("the schedule", usize::MAX / 2, 0.0f64).unwrap_err();
//! assert!(e.to_string().contains("the schedule needs about"), "{e}");
//! assert!(check_work("AIS", 1e25).is_err());
//! ```

use crate::error::{Error, Result};
pub use crate::units::{human_bytes, human_duration};

/// The environment variable that replaces the machine's available memory (bytes) in
/// [`available_memory`]: for tests that must not depend on the machine they run on.
pub const MEMORY_ENV: &str = "BOLTZKIT_MEMORY_AVAILABLE";

/// What [`check_memory`] assumes when the machine does not say (no `/proc/meminfo`): no job
/// may need more than 256 TiB, past any machine's address space.
const FALLBACK_LIMIT: u64 = 1 << 48;

/// The elementary operations (multiply-adds, random draws) per second assumed by
/// [`check_work`]: a generous figure for one machine, so the refusal errs on the side of
/// running.
pub const OPERATIONS_PER_SECOND: f64 = 1e10;

/// The most elementary operations a job may ask for: a year at [`OPERATIONS_PER_SECOND`].
/// A job above it would not finish in any useful time; it is refused with its estimate.
pub const MAX_OPERATIONS: f64 = OPERATIONS_PER_SECOND * 365.25 * 86_400.0;

/// The memory available to a new job, in bytes: `$BOLTZKIT_MEMORY_AVAILABLE` when set (an
/// integer or a number such as `1e9`), else `MemAvailable` of
/// `/proc/meminfo` (Linux), else `None`.
pub fn available_memory() -> Option<u64> {
    if let Some(bytes) = std::env::var(MEMORY_ENV).ok().and_then(|v| parse_bytes(&v)) {
        return Some(bytes);
    }
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    mem_available(&text)
}

/// A byte count written as an integer (`1000000000`) or a finite non-negative number
/// (`1e9`, `2.5e9`, rounded down); `None` for anything else. `1e9` was once read as no
/// value at all, so a test's limit silently became the machine's.
fn parse_bytes(text: &str) -> Option<u64> {
    let text = text.trim();
    text.parse().ok().or_else(|| {
        let v: f64 = text.parse().ok()?;
        (v.is_finite() && v >= 0.0).then_some(v as u64)
    })
}

/// `MemAvailable` (kB) of a `/proc/meminfo` text, in bytes.
fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb.saturating_mul(1024))
}

/// The limit [`check_memory`] applies and how it was found (`available` or `addressable`).
fn memory_limit() -> (u64, &'static str) {
    match available_memory() {
        Some(bytes) => (bytes, "available"),
        None => (FALLBACK_LIMIT, "addressable"),
    }
}

/// Refuses `need` bytes for `what` (e.g. `"sampling 10^12 chains"`) when the machine has less
/// memory available, with both figures: [`Error::Memory`].
pub fn check_memory(what: &str, need: u64) -> Result<()> {
    let (available, source) = memory_limit();
    if need <= available {
        return Ok(());
    }
    Err(Error::Memory {
        what: what.to_string(),
        needed: need,
        available,
        limit: source,
    })
}

/// Refuses a job of `operations` elementary operations for `what` when it is above
/// [`MAX_OPERATIONS`], with its estimate in operations and in time: [`Error::TooLarge`].
pub fn check_work(what: &str, operations: f64) -> Result<()> {
    if operations <= MAX_OPERATIONS {
        return Ok(());
    }
    Err(Error::TooLarge {
        what: what.to_string(),
        needed: format!(
            "about {operations:.1e} operations ({} at {OPERATIONS_PER_SECOND:.0e} per second)",
            human_duration(operations / OPERATIONS_PER_SECOND)
        ),
        limit: format!("{MAX_OPERATIONS:.1e} (a year); reduce the steps, chains or size"),
    })
}

/// The time `operations` take at [`OPERATIONS_PER_SECOND`], in words, when it is long enough
/// to say (over a minute): `about 3.2 hours at best`. Front ends show it up front (beside a
/// progress bar's label), so a run whose first step will not end soon does not look stuck.
pub fn duration_note(operations: f64) -> Option<String> {
    let seconds = operations / OPERATIONS_PER_SECOND;
    (seconds > 60.0).then(|| format!("about {} at best", human_duration(seconds)))
}

/// A vector of `n` copies of `value`, its memory checked ([`check_memory`]) and allocated
/// fallibly: a size that cannot be allocated is [`Error::Memory`] naming `what`, never an
/// abort of the process.
pub fn try_vec<T: Clone>(what: &str, n: usize, value: T) -> Result<Vec<T>> {
    let mut v = try_with_capacity(what, n)?;
    v.resize(n, value);
    Ok(v)
}

/// An empty vector with room for `n` elements, checked and allocated as by [`try_vec`].
pub fn try_with_capacity<T>(what: &str, n: usize) -> Result<Vec<T>> {
    let bytes = (n as u64).saturating_mul(std::mem::size_of::<T>() as u64);
    check_memory(what, bytes)?;
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        let (available, source) = memory_limit();
        Error::Memory {
            what: what.to_string(),
            needed: bytes,
            available,
            limit: source,
        }
    })?;
    Ok(v)
}

/// The most worker threads a job may ask for: four per available core.
pub fn max_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()) * 4
}

/// Refuses a thread count of 0 or above [`max_threads`]; `field` names the setting
/// (`--threads`, `n_jobs`).
pub fn check_threads(field: &str, n: usize) -> Result<()> {
    let max = max_threads();
    if n == 0 {
        return Err(Error::param(field, "must be at least 1"));
    }
    if n > max {
        return Err(Error::param(
            field,
            format!(
                "{n} threads asked for, at most {max} (four per core of the {} here)",
                max / 4
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_and_units() {
        let text = "MemTotal:       24000000 kB\nMemAvailable:   2048 kB\n";
        assert_eq!(mem_available(text), Some(2048 * 1024));
        assert_eq!(mem_available("MemTotal: 1 kB\n"), None);
        assert_eq!(parse_bytes(" 1000000000 "), Some(1_000_000_000));
        assert_eq!(parse_bytes("1e9"), Some(1_000_000_000));
        assert_eq!(parse_bytes("2.5e3"), Some(2500));
        for bad in ["", "-1", "-1e9", "inf", "NaN", "1 GB"] {
            assert_eq!(parse_bytes(bad), None, "{bad}");
        }
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(48 << 30), "48.0 GiB");
        assert_eq!(human_duration(7200.0), "2.0 hours");
        assert_eq!(human_duration(3.0e12), "9.5e4 years");
    }

    /// A buffer that cannot exist is an error naming it with both figures, not an abort.
    #[test]
    fn impossible_buffers_are_errors() {
        let e = try_vec("the betas", usize::MAX / 4, 0.0f64).unwrap_err();
        let s = e.to_string();
        assert!(matches!(e, Error::Memory { .. }), "{s}");
        assert!(s.starts_with("the betas needs about"), "{s}");
        assert!(s.contains("available") || s.contains("addressable"), "{s}");
        assert_eq!(try_vec("x", 3, 1u8).unwrap(), vec![1, 1, 1]);
    }

    #[test]
    fn long_work_is_said_up_front() {
        assert_eq!(duration_note(1e11), None);
        assert_eq!(
            duration_note(3.6e14).as_deref(),
            Some("about 10.0 hours at best")
        );
    }

    #[test]
    fn work_and_threads() {
        assert!(check_work("w", 1e9).is_ok());
        let e = check_work("rbm eval with 10^12 AIS steps", 1e20).unwrap_err();
        let s = e.to_string();
        assert!(
            s.contains("1.0e20 operations") && s.contains("years"),
            "{s}"
        );
        assert!(check_threads("n_jobs", 1).is_ok());
        assert!(check_threads("n_jobs", 0).is_err());
        let e = check_threads("n_jobs", 100_000).unwrap_err().to_string();
        assert!(e.contains("`n_jobs`") && e.contains("at most"), "{e}");
    }
}
