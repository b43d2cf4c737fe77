//! Any model file, whichever family wrote it: [`AnyModel`], one variant per family, above
//! the families (it imports them; none imports it). A new family adds its files and one
//! variant here (with its `format` in [`AnyModel::load`] and its name in [`AnyModel::kind`]).

use crate::error::{Error, Result};
use crate::fsll::FsllModel;
use crate::fvbm::{self, Fvbm};
use crate::io::load_tensors;
use crate::model::Model;
use crate::potts::{self, Potts};
use crate::rbm::frank_wolfe::{file as fw_file, FwModel};
use crate::rbm::Rbm;
use std::path::Path;

/// Any boltzkit model file, read by its `format` metadata.
#[derive(Debug, Clone)]
pub enum AnyModel {
    /// `boltzkit/fsll/v1`.
    Fsll(FsllModel),
    /// The FVBM format.
    Fvbm(Fvbm),
    /// `boltzkit/rbm/v1` (a standard Frank-Wolfe model is written as one).
    Rbm(Rbm),
    /// `boltzkit/fw-rbm/v1`: a fractional Frank-Wolfe model.
    FrankWolfe(FwModel),
    /// `boltzkit/potts/v1`.
    Potts(Potts),
}

impl AnyModel {
    /// Reads any model file written by boltzkit, dispatching on its `format`.
    pub fn load(path: &Path) -> Result<Self> {
        let file = load_tensors(path)?;
        let format = file.meta("format")?.to_string();
        match format.as_str() {
            crate::fsll::FORMAT => Ok(AnyModel::Fsll(FsllModel::load(path)?)),
            fvbm::FORMAT => Ok(AnyModel::Fvbm(Fvbm::load(path)?)),
            crate::rbm::file::RBM_FORMAT => Ok(AnyModel::Rbm(Rbm::load(path)?)),
            fw_file::FW_FORMAT => Ok(AnyModel::FrankWolfe(fw_file::load_fw_model(path)?)),
            potts::FORMAT => Ok(AnyModel::Potts(Potts::load(path)?)),
            other => Err(Error::Model {
                path: path.to_path_buf(),
                reason: format!("unknown format `{other}`"),
            }),
        }
    }

    /// The family's name: `fsll`, `fvbm`, `rbm`, `frank-wolfe` or `potts`.
    pub fn kind(&self) -> &'static str {
        match self {
            AnyModel::Fsll(_) => "fsll",
            AnyModel::Fvbm(_) => "fvbm",
            AnyModel::Rbm(_) => "rbm",
            AnyModel::FrankWolfe(_) => "frank-wolfe",
            AnyModel::Potts(_) => "potts",
        }
    }
}
