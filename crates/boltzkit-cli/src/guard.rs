//! Refusals before any work: an output that is one of the inputs, a run that cannot fit in
//! memory, a model written under a data file's name, a data file of the wrong width.
//!
//! Every command calls these right after parsing (and, for widths and memory that depend on
//! a file's shape, right after reading it), so nothing is overwritten, allocated or trained
//! in vain. Each refusal is a [`UsageError`] (the command line exits 2) of one line that
//! names the flag or file.

use std::path::{Path, PathBuf};

pub use boltzkit_repro::UsageError;

pub use boltzkit::budget::max_threads;

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

/// The checks of a command's files before any work: every output can be written
/// ([`boltzkit::io::check_output`]: one line naming the file and what is wrong, exit 1) and
/// none is an input or another output ([`distinct_files`], exit 2).
pub fn files(inputs: &[Option<&Path>], outputs: &[Option<&Path>]) -> anyhow::Result<()> {
    for path in outputs.iter().flatten() {
        boltzkit::io::check_output(path)?;
    }
    distinct_files(inputs, outputs)
}

/// The checks of a command that writes a model: every `(flag, path)` of `models` ends in
/// `.safetensors` ([`model_output`]), and every output (`models` and `others`) can be written
/// and is no input or other output ([`files`]).
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
    files(inputs, &outputs)
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
/// library's `memory_estimate` functions, summed by the command). The line is the library's
/// ([`boltzkit::budget::check_memory`], as Python's `MemoryError`); the command exits 2.
pub fn memory(what: &str, need: u64) -> anyhow::Result<()> {
    boltzkit::budget::check_memory(what, need).map_err(|e| UsageError::new(e.to_string()).into())
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
    fn widths_must_match() {
        assert!(same_width("--valid", Path::new("v.csv"), 4, 4).is_ok());
        let err = same_width("--valid", Path::new("v.csv"), 3, 4).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--valid v.csv: 3 variables, but the training data have 4"
        );
    }
}
