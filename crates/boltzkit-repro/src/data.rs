//! The real data sets of the protocols: their files by the data registry
//! (`boltzkit::data::registry`), and a reader that declares every column binary (the 0/1
//! reader is the library's `boltzkit::data::read_binary`).
//!
//! A protocol names the registry files it needs ([`find_data_dir`]); each is fetched into the
//! registry's cache, verified: from the mirror folder given explicitly (`--data-dir`), else
//! [`registry::MIRROR_ENV`] (or its old name [`DATA_DIR_ENV`]), else `shared/data` beside or
//! above the working directory or the executable, else the network. A file no source gives is
//! an error naming what was tried, before any output is created.

use anyhow::Context;
use boltzkit::data::registry::{self, fetch_file, Sources};
use boltzkit::data::{read_dataset, Binarize, Dataset, ReadOptions};
use std::path::{Path, PathBuf};

/// The old name of [`registry::MIRROR_ENV`], still read.
pub const DATA_DIR_ENV: &str = registry::OLD_MIRROR_ENV;

/// Binarized MNIST (Larochelle & Murray): the training rows, relative to the data folder.
pub const BINARIZED_MNIST_TRAIN: &str = "binarized_mnist/binarized_mnist_train.amat.gz";
/// Binarized MNIST: the test rows.
pub const BINARIZED_MNIST_TEST: &str = "binarized_mnist/binarized_mnist_test.amat.gz";
/// Caltech101 Silhouettes split1: the training rows.
pub const CALTECH_TRAIN: &str =
    "caltech101_silhouettes/caltech101_silhouettes_28_split1_train.amat.gz";

/// The registry's cache folder once it holds a verified copy of every file of `needs` (paths
/// in the registry's layout, read with [`local_file`]), fetched with `given` (`--data-dir`)
/// as the mirror folder when given. The error names the file, each source tried and what to
/// do.
pub fn find_data_dir(given: Option<&Path>, needs: &[&str]) -> anyhow::Result<PathBuf> {
    fetch_needs(&Sources::from_env(given)?, given, needs)
}

/// [`find_data_dir`] with the sources given: `sources.cache` once it holds every file of
/// `needs`; `given` is named in the error.
pub fn fetch_needs(
    sources: &Sources,
    given: Option<&Path>,
    needs: &[&str],
) -> anyhow::Result<PathBuf> {
    for rel in needs {
        let (set, file) = registry::file_at(rel)
            .with_context(|| format!("{rel} is not a file of the data registry"))?;
        fetch_file(set, file, sources).with_context(|| match given {
            Some(dir) => format!("the mirror folder of --data-dir is {}", dir.display()),
            None => "give a mirror folder with --data-dir DIR".to_string(),
        })?;
    }
    Ok(sources.cache.clone())
}

/// The file `rel` (a registry path) in the data folder `dir`: `dir/rel`, or its uncompressed
/// form (`rel` without `.gz`) when only that is there, as a download of the content is cached.
pub fn local_file(dir: &Path, rel: &str) -> PathBuf {
    let stored = dir.join(rel);
    match rel.strip_suffix(".gz") {
        Some(plain) if !stored.exists() && dir.join(plain).exists() => dir.join(plain),
        _ => stored,
    }
}

/// Fails naming `path` when it is not a file (checked before any output is created).
pub fn require_file(path: &Path, flag: &str) -> anyhow::Result<()> {
    anyhow::ensure!(path.is_file(), "{flag} {}: no such file", path.display());
    Ok(())
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
    fn a_missing_data_file_names_the_mirror_tried_and_nothing_is_cached() {
        let dir = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        let sources = Sources::new(cache.path())
            .with_mirrors(vec![dir.path().to_path_buf()])
            .with_network(false);
        let e = fetch_needs(&sources, Some(dir.path()), &[BINARIZED_MNIST_TRAIN]).unwrap_err();
        let msg = format!("{e:#}");
        assert!(msg.contains(&dir.path().display().to_string()), "{msg}");
        assert!(msg.contains(BINARIZED_MNIST_TRAIN), "{msg}");
        assert!(msg.contains("--data-dir"), "{msg}");
        assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 0);
    }

    #[test]
    fn local_files_fall_back_to_the_uncompressed_form() {
        let dir = tempfile::tempdir().unwrap();
        let rel = "x/rows.amat.gz";
        assert_eq!(local_file(dir.path(), rel), dir.path().join(rel));
        std::fs::create_dir_all(dir.path().join("x")).unwrap();
        std::fs::write(dir.path().join("x/rows.amat"), "0 1\n").unwrap();
        assert_eq!(local_file(dir.path(), rel), dir.path().join("x/rows.amat"));
        std::fs::write(dir.path().join(rel), "").unwrap();
        assert_eq!(local_file(dir.path(), rel), dir.path().join(rel));
    }
}
