//! The real data sets of the protocols: where `shared/data` is, and binary readers.
//!
//! The data live in a folder `shared/data` next to the repository (see its README). A run finds
//! it, in this order: the folder given explicitly (`--data-dir`); the environment variable
//! [`DATA_DIR_ENV`]; `shared/data` under any ancestor of the running executable or of the
//! working directory. The first candidate that holds every file the run needs wins; when none
//! does, the error lists each path tried, before any output is created.

use anyhow::Context;
use boltzkit::data::{read_dataset, Binarize, Dataset, ReadOptions};
use std::path::{Path, PathBuf};

/// The environment variable that overrides the search for `shared/data`.
pub const DATA_DIR_ENV: &str = "BOLTZKIT_DATA_DIR";

/// Binarized MNIST (Larochelle & Murray): the training rows, relative to the data folder.
pub const BINARIZED_MNIST_TRAIN: &str = "binarized_mnist/binarized_mnist_train.amat.gz";
/// Binarized MNIST: the test rows.
pub const BINARIZED_MNIST_TEST: &str = "binarized_mnist/binarized_mnist_test.amat.gz";
/// Caltech101 Silhouettes split1: the training rows.
pub const CALTECH_TRAIN: &str =
    "caltech101_silhouettes/caltech101_silhouettes_28_split1_train.amat.gz";

/// Where to look for the data folder when none is given: `shared/data` under every ancestor of
/// the running executable, then of the working directory.
pub fn default_search_starts() -> Vec<PathBuf> {
    let mut starts = Vec::new();
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        starts.push(dir);
    }
    if let Ok(cwd) = std::env::current_dir() {
        starts.push(cwd);
    }
    starts
}

/// The candidates for the data folder, in order: `given`, else the value of
/// [`DATA_DIR_ENV`] (`env`), else `shared/data` under every ancestor of each start.
pub fn candidates(given: Option<&Path>, env: Option<&Path>, starts: &[PathBuf]) -> Vec<PathBuf> {
    if let Some(dir) = given.or(env) {
        return vec![dir.to_path_buf()];
    }
    let mut out: Vec<PathBuf> = Vec::new();
    for start in starts {
        for a in start.ancestors() {
            let c = a.join("shared").join("data");
            if !out.contains(&c) {
                out.push(c);
            }
        }
    }
    out
}

/// The data folder holding every file of `needs` (paths relative to it): the first of
/// [`candidates`] that does, with `given` (`--data-dir`), the environment and
/// [`default_search_starts`]. The error names each folder tried and the files looked for.
pub fn find_data_dir(given: Option<&Path>, needs: &[&str]) -> anyhow::Result<PathBuf> {
    let env = std::env::var_os(DATA_DIR_ENV).map(PathBuf::from);
    let tried = candidates(given, env.as_deref(), &default_search_starts());
    if let Some(dir) = tried
        .iter()
        .find(|d| needs.iter().all(|f| d.join(f).is_file()))
    {
        return Ok(dir.clone());
    }
    let how = if given.is_some() {
        "in the folder of --data-dir"
    } else if env.is_some() {
        "in the folder of BOLTZKIT_DATA_DIR"
    } else {
        "in shared/data beside the repository (searched upward from the executable and from the \
         working directory)"
    };
    let tried: Vec<String> = tried.iter().map(|d| d.display().to_string()).collect();
    anyhow::bail!(
        "the data files {} were not found {how}; tried: {}; give --data-dir DIR or set {DATA_DIR_ENV}",
        needs.join(", "),
        tried.join(", ")
    )
}

/// Fails naming `path` when it is not a file (checked before any output is created).
pub fn require_file(path: &Path, flag: &str) -> anyhow::Result<()> {
    anyhow::ensure!(path.is_file(), "{flag} {}: no such file", path.display());
    Ok(())
}

/// Reads a data file of 0/1 values (after the binarization, if any); a column holding other
/// values or an empty file is an error naming the file.
pub fn read_binary(path: &Path, binarize: Binarize) -> anyhow::Result<Dataset> {
    let opts = ReadOptions::default().with_binarize(binarize);
    let data = read_dataset(path, &opts)?;
    if let Some(j) = data.cardinalities().iter().position(|&k| k != 2) {
        anyhow::bail!(
            "{}: an RBM needs 0/1 data, but column {} holds values up to {} (see --binarize)",
            path.display(),
            j + 1,
            data.cardinalities()[j] - 1
        );
    }
    data.require_nonempty()?;
    Ok(data)
}

/// Reads `path` (binarized as asked) and declares every column binary.
pub fn read_as_binary(path: &Path, binarize: Binarize) -> anyhow::Result<Dataset> {
    let d = read_dataset(path, &ReadOptions::default().with_binarize(binarize))
        .with_context(|| format!("reading {}", path.display()))?;
    let n = d.n_vars();
    Ok(d.with_cardinalities(vec![2; n])?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_prefer_the_given_folder_then_the_environment_then_ancestors() {
        let given = Path::new("/x/data");
        let env = Path::new("/y/data");
        let starts = [PathBuf::from("/a/b/target/release"), PathBuf::from("/a/c")];
        assert_eq!(candidates(Some(given), Some(env), &starts), [given]);
        assert_eq!(candidates(None, Some(env), &starts), [env]);
        let c = candidates(None, None, &starts);
        assert_eq!(c[0], Path::new("/a/b/target/release/shared/data"));
        assert!(c.contains(&PathBuf::from("/a/shared/data")));
        assert!(c.contains(&PathBuf::from("/a/c/shared/data")));
        assert_eq!(
            c.iter()
                .filter(|p| *p == Path::new("/a/shared/data"))
                .count(),
            1
        );
    }

    #[test]
    fn a_missing_data_folder_names_the_paths_tried() {
        let dir = tempfile::tempdir().unwrap();
        let e = find_data_dir(Some(dir.path()), &[BINARIZED_MNIST_TRAIN]).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains(&dir.path().display().to_string()), "{msg}");
        assert!(msg.contains(BINARIZED_MNIST_TRAIN), "{msg}");
    }
}
