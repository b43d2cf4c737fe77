//! Refusals before any work: an output that is one of the inputs, a run that cannot fit in
//! memory, a model written under a data file's name, a data file of the wrong width.
//!
//! Every command calls these right after parsing (and, for widths and memory that depend on
//! a file's shape, right after reading it), so nothing is overwritten, allocated or trained
//! in vain. Each refusal is a [`UsageError`] (the command line exits 2) of one line that
//! names the flag or file.

use std::fmt;
use std::path::{Path, PathBuf};

/// A usage error found after parsing (e.g. `--truth` with too many variables): the command
/// line exits 2.
///
/// Return it as `Err(UsageError::new("...").into())` or with `anyhow::bail!(UsageError::new(..))`;
/// context added on top keeps the exit status.
#[derive(Debug)]
pub struct UsageError(String);

impl UsageError {
    /// A usage error with this message (name the flag and the allowed values).
    pub fn new(message: impl Into<String>) -> Self {
        UsageError(message.into())
    }
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// The environment variable that replaces the machine's available memory (bytes) in
/// [`memory`]: for tests that must not depend on the machine they run on.
pub const MEMORY_ENV: &str = "BOLTZKIT_MEMORY_AVAILABLE";

/// What [`memory`] assumes when the machine does not say (no `/proc/meminfo`): no run may
/// need more than 256 TiB, past any machine's address space.
const FALLBACK_LIMIT: u64 = 1 << 48;

/// Refuses when one of `outputs` is the same file as one of `inputs` or as another output:
/// same path after resolving links and `..`, or, for an output that does not exist yet, the
/// same resolved parent directory and name. `None` entries (flags not given) are skipped.
pub fn distinct_files(inputs: &[Option<&Path>], outputs: &[Option<&Path>]) -> anyhow::Result<()> {
    let ins: Vec<(&Path, PathBuf)> = inputs.iter().flatten().map(|p| (*p, identity(p))).collect();
    let outs: Vec<(&Path, PathBuf)> = outputs
        .iter()
        .flatten()
        .map(|p| (*p, identity(p)))
        .collect();
    for (i, (out, out_id)) in outs.iter().enumerate() {
        if let Some((input, _)) = ins.iter().find(|(_, id)| id == out_id) {
            return Err(UsageError::new(format!(
                "the output {} is the input {}: writing it would destroy the input; choose \
                 another output path",
                out.display(),
                input.display()
            ))
            .into());
        }
        if let Some((other, _)) = outs[..i].iter().find(|(_, id)| id == out_id) {
            return Err(UsageError::new(format!(
                "two outputs are the same file ({} and {}); give each its own path",
                other.display(),
                out.display()
            ))
            .into());
        }
    }
    Ok(())
}

/// The checks of a command that writes a model: every `(flag, path)` of `models` ends in
/// `.safetensors` ([`model_output`]), and no output (`models` and `others`) is an input or
/// another output ([`distinct_files`]).
pub fn model_files(
    inputs: &[Option<&Path>],
    models: &[(&str, Option<&Path>)],
    others: &[Option<&Path>],
) -> anyhow::Result<()> {
    for (flag, path) in models {
        if let Some(path) = path {
            model_output(flag, path)?;
        }
    }
    let outputs: Vec<Option<&Path>> = models
        .iter()
        .map(|(_, p)| *p)
        .chain(others.iter().copied())
        .collect();
    distinct_files(inputs, &outputs)
}

/// The path by which `path` is compared: canonical when it exists, else its canonical parent
/// joined with its name (or the path as given when even the parent does not exist: then it
/// cannot be an existing input either).
fn identity(path: &Path) -> PathBuf {
    if let Ok(p) = path.canonicalize() {
        return p;
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match (parent.canonicalize(), path.file_name()) {
        (Ok(dir), Some(name)) => dir.join(name),
        _ => path.to_path_buf(),
    }
}

/// Refuses a model output whose name does not end in `.safetensors` (e.g. `-o model.npy`,
/// which every data reader would later misread). `flag` names the option, e.g. `-o`.
pub fn model_output(flag: &str, path: &Path) -> anyhow::Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if name.ends_with(".safetensors") {
        return Ok(());
    }
    Err(UsageError::new(format!(
        "{flag} {}: model files are safetensors and must end in .safetensors (.npy, .csv, \
         .amat are data formats)",
        path.display()
    ))
    .into())
}

/// Refuses a data file (`--valid`, `--test`, ...) whose number of variables differs from the
/// training data's.
pub fn same_width(flag: &str, path: &Path, width: usize, expected: usize) -> anyhow::Result<()> {
    if width == expected {
        return Ok(());
    }
    Err(UsageError::new(format!(
        "{flag} {}: {width} variables, but the training data have {expected}",
        path.display()
    ))
    .into())
}

/// Refuses a run whose settings need more memory than the machine has available. `what`
/// says which settings (e.g. `"--hidden 1000000000"`), `need` is the estimate in bytes (the
/// library's `memory_estimate` functions, summed by the command).
pub fn memory(what: &str, need: u64) -> anyhow::Result<()> {
    let (available, source) = match available_memory() {
        Some(bytes) => (bytes, "available"),
        None => (FALLBACK_LIMIT, "addressable"),
    };
    if need <= available {
        return Ok(());
    }
    Err(UsageError::new(format!(
        "{what} needs about {} of memory, but this machine has {} {source}; reduce the size",
        human_bytes(need),
        human_bytes(available)
    ))
    .into())
}

/// The memory available to a new run, in bytes: `$BOLTZKIT_MEMORY_AVAILABLE` when set, else
/// `MemAvailable` of `/proc/meminfo` (Linux), else `None`.
pub fn available_memory() -> Option<u64> {
    if let Some(bytes) = std::env::var(MEMORY_ENV)
        .ok()
        .and_then(|v| v.trim().parse().ok())
    {
        return Some(bytes);
    }
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    mem_available(&text)
}

/// `MemAvailable` (kB) of a `/proc/meminfo` text, in bytes.
fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb.saturating_mul(1024))
}

/// Bytes in binary units with three significant figures: `48.0 GiB`, `512 B`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// The most `--threads` a command accepts: four per available core.
pub fn max_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()) * 4
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_file_is_refused_existing_or_not() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("d.csv");
        std::fs::write(&data, "0,1\n").unwrap();
        let other = dir.path().join("m.safetensors");
        assert!(distinct_files(&[Some(&data)], &[Some(&other)]).is_ok());
        // the same file under another spelling
        let twisted = dir.path().join("sub/../d.csv");
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let err = distinct_files(&[Some(&data)], &[Some(&twisted)]).unwrap_err();
        assert!(err.to_string().contains("is the input"), "{err}");
        // an output that does not exist yet, named twice
        let fresh = dir.path().join("new.npy");
        let again = dir.path().join("sub/../new.npy");
        assert!(distinct_files(&[None], &[Some(&fresh), Some(&again)]).is_err());
        assert!(distinct_files(&[None], &[Some(&fresh), None]).is_ok());
    }

    #[test]
    fn model_outputs_need_the_safetensors_extension() {
        assert!(model_output("-o", Path::new("m.safetensors")).is_ok());
        assert!(model_output("-o", Path::new("dir/M.SafeTensors")).is_ok());
        let err = model_output("-o", Path::new("model.npy")).unwrap_err();
        assert!(err.to_string().starts_with("-o model.npy:"), "{err}");
    }

    #[test]
    fn meminfo_and_units() {
        let text = "MemTotal:       24000000 kB\nMemAvailable:   2048 kB\n";
        assert_eq!(mem_available(text), Some(2048 * 1024));
        assert_eq!(mem_available("MemTotal: 1 kB\n"), None);
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(48 << 30), "48.0 GiB");
        assert_eq!(human_bytes(3 << 40), "3.0 TiB");
    }

    #[test]
    fn widths_must_match() {
        assert!(same_width("--valid", Path::new("v.csv"), 4, 4).is_ok());
        let err = same_width("--valid", Path::new("v.csv"), 3, 4).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--valid v.csv: 3 variables, but the training data have 4"
        );
    }
}
