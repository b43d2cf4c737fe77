//! The fuzz targets' one harness: every boltzkit reader and model loader takes a path, so a
//! target writes its input to a file named like the format asks (`in.csv`, `in.npy.gz`, ...)
//! in a per-process directory and calls the reader on it. Errors are expected; only a panic,
//! an abort or a sanitizer report is a finding.

use boltzkit::data::{read_dataset, Binarize, ReadOptions};
use std::path::PathBuf;
use std::sync::OnceLock;

/// The per-process scratch directory (removed by nobody: it holds one file per name).
fn scratch() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("boltzkit-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("creating the fuzz scratch directory");
        dir
    })
}

/// `bytes` written to a scratch file called `name`; its path.
pub fn as_file(name: &str, bytes: &[u8]) -> PathBuf {
    let path = scratch().join(name);
    std::fs::write(&path, bytes).expect("writing the fuzz input");
    path
}

/// Reads `bytes` as a data file called `name`, plain and with a threshold binarization (the
/// two paths through the value collector).
pub fn read_data(name: &str, bytes: &[u8]) {
    let path = as_file(name, bytes);
    let _ = read_dataset(&path, &ReadOptions::default());
    let _ = read_dataset(
        &path,
        &ReadOptions::default().with_binarize(Binarize::Threshold(0.5)),
    );
}

/// Loads `bytes` as a model file with every loader (each checks its own `format`).
pub fn load_model(bytes: &[u8]) {
    let path = as_file("model.safetensors", bytes);
    let _ = boltzkit::rbm::file::load_rbm(&path);
    let _ = boltzkit::rbm::frank_wolfe::file::load_fw_model(&path);
    let _ = boltzkit::fsll::FsllModel::load(&path);
    let _ = boltzkit::fvbm::Fvbm::load(&path);
}
