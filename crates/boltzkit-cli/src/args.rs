//! Flags every command shares (`--seed`, `--json`, `--threads`, `-q/--quiet`), renamed
//! flags' aliases, and (re-exported) `crate::repro::BinarizeArgs`, the `--binarize` of
//! every command that reads data for a model.

pub use crate::repro::BinarizeArgs;
use anyhow::Context;
use clap::Args;
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

/// Flags shared by every command; add to a command's flags with `#[command(flatten)]`.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Common options")]
pub struct CommonArgs {
    /// Seed of the random generator; when absent one is picked from the clock. The seed is
    /// printed (`seed: N`) and recorded in the --json summary
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Print one JSON object summarizing the run (paths, settings, seed, metrics, wall
    /// seconds) on stdout
    #[arg(long)]
    pub json: bool,

    /// Worker threads [default: all cores; at most 4 per core]; results do not depend on it
    #[arg(long, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<usize>,

    /// No progress bars, seed line or human summary on stderr (errors are still printed)
    #[arg(short, long)]
    pub quiet: bool,
}

impl CommonArgs {
    /// Prepares a randomized run: sets the thread count ([`CommonArgs::init_threads`]),
    /// resolves the seed (`--seed`, or one drawn from the clock) and prints `seed: N` on
    /// stderr unless `--quiet`. Returns the seed.
    pub fn init(&self) -> anyhow::Result<u64> {
        self.init_threads()?;
        let seed = self.seed.unwrap_or_else(clock_seed);
        if !self.quiet {
            eprintln!("seed: {seed}");
        }
        Ok(seed)
    }

    /// Sets the size of rayon's global pool from `--threads` (once per process; without
    /// `--threads` rayon uses all cores). For commands that use no randomness.
    pub fn init_threads(&self) -> anyhow::Result<()> {
        set_up_pool(self.threads)
    }
}

/// Stack of each worker of the global pool, the command's own thread included.
const WORKER_STACK: usize = 8 << 20;

/// Sizes rayon's global pool: `threads` workers, or all cores when `None` (rayon's default).
/// Takes effect once per process; later calls return the first call's outcome. `main` calls
/// it with the command's `--threads` before running the command on the pool.
pub fn set_up_pool(threads: Option<usize>) -> anyhow::Result<()> {
    static POOL: OnceLock<Result<(), String>> = OnceLock::new();
    let result = POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            // 0: rayon's default (RAYON_NUM_THREADS, else one per core)
            .num_threads(threads.unwrap_or(0))
            // the command itself runs on a worker: give it the main thread's stack (8 MiB)
            // rather than a spawned thread's 2 MiB
            .stack_size(WORKER_STACK)
            .build_global()
            .map_err(|e| e.to_string())
    });
    result
        .clone()
        .map_err(anyhow::Error::msg)
        .context("setting up the worker threads")
}

impl crate::repro::Common for CommonArgs {
    fn init(&self) -> anyhow::Result<u64> {
        CommonArgs::init(self)
    }
    fn init_threads(&self) -> anyhow::Result<()> {
        CommonArgs::init_threads(self)
    }
}

/// A seed from the clock and the process id, small enough to retype (below 2^32).
fn clock_seed() -> u64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let pid = u64::from(std::process::id());
    boltzkit::rng::mix64(nanos ^ pid.rotate_left(32)) >> 32
}

fn parse_threads(s: &str) -> Result<usize, String> {
    let n: usize = s
        .parse()
        .map_err(|_| format!("`{s}` is not a whole number"))?;
    if n == 0 {
        return Err("must be at least 1".into());
    }
    let max = crate::guard::max_threads();
    if n > max {
        return Err(format!(
            "{n} is more than 4 threads per core ({max} on this machine)"
        ));
    }
    Ok(n)
}

/// The value of a renamed flag: `new` (`--{new_name}`), else the old spelling's `old`
/// (`--{old_name}`, kept as a hidden alias) with a warning on stderr. Both given is a usage
/// error.
pub fn renamed<T>(
    new: Option<T>,
    old: Option<T>,
    new_name: &str,
    old_name: &str,
) -> anyhow::Result<Option<T>> {
    match (new, old) {
        (Some(_), Some(_)) => Err(crate::exit::UsageError::new(format!(
            "--{old_name} is the old name of --{new_name}; give only --{new_name}"
        ))
        .into()),
        (None, Some(v)) => {
            eprintln!("warning: --{old_name} is renamed --{new_name}; the old name will go");
            Ok(Some(v))
        }
        (new, None) => Ok(new),
    }
}

/// `--ais-chains N --ais-steps K` of the commands that run forward AIS on a saved model
/// (`rbm eval`, `bench ais`), with their old names `--chains` / `--steps` kept hidden.
#[derive(Debug, Clone, Copy, Args)]
pub struct AisFlags {
    /// Forward AIS chains (rbm eval reverse-ais-from-data: its data-row starts) [default: 100]
    #[arg(long, value_name = "N")]
    ais_chains: Option<usize>,
    /// Steps of a linear AIS schedule [default: the standard 14,500-step schedule]
    #[arg(long, value_name = "N")]
    ais_steps: Option<usize>,
    /// The old name of --ais-chains
    #[arg(long = "chains", value_name = "N", hide = true)]
    chains_alias: Option<usize>,
    /// The old name of --ais-steps
    #[arg(long = "steps", value_name = "N", hide = true)]
    steps_alias: Option<usize>,
}

impl AisFlags {
    /// `(chains, steps)`: the chains (default `EvalParams`') and the linear steps (`None`: the standard
    /// schedule), warning on an old name and refusing both names at once.
    pub fn resolve(self) -> anyhow::Result<(usize, Option<usize>)> {
        let chains = renamed(self.ais_chains, self.chains_alias, "ais-chains", "chains")?
            .unwrap_or(boltzkit::rbm::eval_settings::EvalParams::default().ais_chains);
        let steps = renamed(self.ais_steps, self.steps_alias, "ais-steps", "steps")?;
        Ok((chains, steps))
    }
}

impl crate::repro::AisChoice for AisFlags {
    fn resolve(self) -> anyhow::Result<(usize, Option<usize>)> {
        AisFlags::resolve(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_must_be_positive_integers() {
        assert_eq!(parse_threads("3"), Ok(3));
        assert!(parse_threads("0").is_err());
        assert!(parse_threads("-1").is_err());
        assert!(parse_threads("many").is_err());
        let max = crate::guard::max_threads();
        assert_eq!(parse_threads(&max.to_string()), Ok(max));
        let err = parse_threads(&(max + 1).to_string()).unwrap_err();
        assert!(err.contains("4 threads per core"), "{err}");
    }

    #[test]
    fn renamed_flags_take_either_spelling_but_not_both() {
        assert_eq!(
            renamed(Some(1), None, "chains", "samples").unwrap(),
            Some(1)
        );
        assert_eq!(
            renamed(None, Some(2), "chains", "samples").unwrap(),
            Some(2)
        );
        assert_eq!(
            renamed::<u8>(None, None, "chains", "samples").unwrap(),
            None
        );
        assert!(renamed(Some(1), Some(2), "chains", "samples").is_err());
    }

    #[test]
    fn given_seed_is_used_and_clock_seeds_vary() {
        let a = CommonArgs {
            seed: Some(42),
            quiet: true,
            ..Default::default()
        };
        assert_eq!(a.init().unwrap(), 42);
        let b = CommonArgs {
            quiet: true,
            ..Default::default()
        };
        let seeds: std::collections::HashSet<u64> = (0..8)
            .map(|_| {
                std::thread::sleep(std::time::Duration::from_micros(50));
                b.init().unwrap()
            })
            .collect();
        assert!(seeds.len() > 1, "clock seeds should differ: {seeds:?}");
        assert!(seeds.iter().all(|&s| s < 1 << 32));
    }
}
