//! `rbm fit --resume`: the checkpoint read back and checked (finished runs, another seed,
//! other data or other settings refused, each with what differs).

use crate::exit::UsageError;
use anyhow::Context;
use boltzkit::rbm::file::RbmFile;
use boltzkit::rbm::train::{load_checkpoint, TrainState};
use std::path::Path;

/// The checkpoint metadata key of `rbm fit`'s settings (the `settings` of its `-o` file),
/// which `--resume` compares with the settings given.
pub(super) const CLI_SETTINGS_KEY: &str = "cli_settings";

/// Reads the checkpoint of `--resume`: refused (exit 2) when it is not a checkpoint with loop
/// state, when its run finished, or when its seed or data differ from the ones given
/// (`seed_given`: whether `seed` came from `--seed` or was drawn at random).
pub(super) fn read_resume(
    path: &Path,
    seed: u64,
    seed_given: bool,
    data_sha256: &str,
) -> anyhow::Result<(RbmFile, TrainState)> {
    let (file, state) = load_checkpoint(path)
        .with_context(|| format!("reading the checkpoint {}", path.display()))?;
    let shown = path.display();
    if let Some(stop) = file.metadata.get("stop_reason") {
        return Err(UsageError::new(format!(
            "--resume {shown}: the run it records already finished ({stop}); nothing to resume"
        ))
        .into());
    }
    let Some(state) = state else {
        return Err(UsageError::new(format!(
            "--resume {shown}: not a checkpoint with loop state (write one with `rbm fit \
             --checkpoint FILE --eval-every N`)"
        ))
        .into());
    };
    let meta = |key: &str| file.metadata.get(key).map(String::as_str).unwrap_or("none");
    if meta("seed") != seed.to_string() && !seed_given {
        return Err(UsageError::new(format!(
            "--resume {shown}: the checkpoint's run has seed {0}, and this run was given no \
             --seed (a random one was drawn); add --seed {0} to resume it",
            meta("seed")
        ))
        .into());
    }
    if meta("seed") != seed.to_string() {
        return Err(UsageError::new(format!(
            "--resume {shown}: the checkpoint's seed is {}, the run was given --seed {seed}",
            meta("seed")
        ))
        .into());
    }
    if meta("data_sha256") != data_sha256 {
        return Err(UsageError::new(format!(
            "--resume {shown}: the checkpoint was trained on other data (sha256 {}, --data has \
             {data_sha256})",
            meta("data_sha256")
        ))
        .into());
    }
    Ok((file, state))
}

/// Refuses a `--resume` whose checkpoint recorded other settings (the model file's
/// `settings` entry: the learner's and the run's), naming each that differs.
pub(super) fn check_resumed_settings(
    path: &Path,
    file: &RbmFile,
    settings: &serde_json::Value,
) -> anyhow::Result<()> {
    let saved: serde_json::Value = file
        .metadata
        .get(CLI_SETTINGS_KEY)
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or(serde_json::Value::Null);
    let differ = boltzkit::settings::differences(&saved, settings, "checkpoint");
    if !differ.is_empty() {
        return Err(UsageError::new(format!(
            "--resume {}: the settings differ from the checkpoint's: {}",
            path.display(),
            differ.join(", ")
        ))
        .into());
    }
    Ok(())
}
