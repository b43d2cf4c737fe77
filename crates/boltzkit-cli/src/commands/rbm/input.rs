//! What the `rbm` verbs share: data files of 0/1 values read (after `--binarize`), widths
//! checked against the training data or the model, the memory `rbm sample` needs.

use crate::guard;
use boltzkit::data::{Binarize, Dataset};
use boltzkit::rbm::{GibbsChains, Rbm};
use std::path::{Path, PathBuf};

/// Reads a data file of 0/1 values (after the binarization, if any).
pub(crate) fn load_binary(path: &Path, binarize: Binarize) -> anyhow::Result<Dataset> {
    Ok(boltzkit::data::read_binary(path, binarize)?)
}

/// [`load_binary`] of an optional file (`--valid`, `--test`).
pub(crate) fn load_optional(
    path: Option<&PathBuf>,
    binarize: Binarize,
) -> anyhow::Result<Option<Dataset>> {
    path.map(|p| load_binary(p, binarize)).transpose()
}

/// Refuses `--valid`/`--test` files (flag, path, data) whose width differs from `train`'s.
pub(crate) fn check_widths(
    train: &Dataset,
    others: &[(&str, Option<&PathBuf>, Option<&Dataset>)],
) -> anyhow::Result<()> {
    for (flag, path, data) in others {
        if let (Some(path), Some(data)) = (path, data) {
            guard::same_width(flag, path, data.n_vars(), train.n_vars())?;
        }
    }
    Ok(())
}

/// Bytes `rbm sample` (and `rbm plot --what samples`) need for `n` chains: the chains, the
/// starting states and the written rows.
pub(crate) fn sample_memory(n: u64, nv: u64, nh: u64) -> u64 {
    GibbsChains::memory_estimate(n, nv, nh)
        .saturating_add(Dataset::memory_estimate(n, nv).saturating_mul(9))
}

/// Refuses data (`path`) whose width is not the visible layer of the model `rbm` read from
/// `model`, naming both files.
pub(crate) fn check_vars(
    path: &Path,
    data: &Dataset,
    model: &Path,
    rbm: &Rbm,
) -> anyhow::Result<()> {
    if data.n_vars() != rbm.n_visible() {
        anyhow::bail!(
            "{}: {} variables per row, but the model {} has {} visible units: data and model \
             must have the same width",
            path.display(),
            data.n_vars(),
            model.display(),
            rbm.n_visible()
        );
    }
    Ok(())
}
