//! The registry's entries: data sets, their files, and the lookups by name, split and path
//! (the text is `registry.json` beside this file, embedded at compile time).

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// The registry's text, embedded at compile time.
const REGISTRY_JSON: &str = include_str!("registry.json");

/// What a file of a data set holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileKind {
    /// Samples × variables, readable by [`crate::data::read_dataset`].
    Rows,
    /// One label per row of the rows file of the same split (readable as a one-column data
    /// set).
    Labels,
    /// The names of the labels (`<label>\t<name>` per line).
    Names,
    /// The original file the converted ones were made from, kept unmodified.
    Original,
    /// A sequence alignment (FASTA / A2M) of a protein family.
    Alignment,
    /// Residue distances of a reference structure (contact maps).
    Structure,
    /// A reference output of a peer program (couplings, weights).
    Reference,
    /// The licence text of the source.
    Licence,
    /// Other files of the source (documentation, weighted forms, row names).
    Extra,
}

/// How the bytes at [`DataFile::url`] relate to the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UrlServes {
    /// The file itself: its size and SHA-256 check the download.
    File,
    /// The uncompressed content of this `.gz` file: `content_size` and `content_sha256` check
    /// the download, which is cached uncompressed.
    Content,
    /// A gzip of the content, compressed differently from this file: the download is
    /// decompressed, checked against `content_sha256` and cached uncompressed.
    Gzip,
    /// The source this file was converted from (`derivation` says how): no download gives
    /// these bytes, so the file comes from a mirror only.
    Source,
}

/// One file of a data set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DataFile {
    /// The path relative to a data folder (the cache and every mirror share this layout).
    pub path: String,
    /// What the file holds.
    pub kind: FileKind,
    /// The split (`train`, `valid`, `test`, `all`) of a rows or labels file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<String>,
    /// Size in bytes.
    pub size: u64,
    /// SHA-256, 64 lowercase hex digits.
    pub sha256: String,
    /// For a `.gz` file: the size of its uncompressed content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_size: Option<u64>,
    /// For a `.gz` file: the SHA-256 of its uncompressed content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_sha256: Option<String>,
    /// The original public URL.
    pub url: String,
    /// Further URLs serving the same bytes as `url`, tried after it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alt_urls: Vec<String>,
    /// How the URL's bytes relate to this file.
    pub url_serves: UrlServes,
    /// How the file was made from the URL's bytes, when it was converted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub derivation: Option<String>,
}

impl DataFile {
    /// The path of the uncompressed form (the `.gz` suffix dropped), in which a download of
    /// the content is cached; `None` for a file that is not gzipped.
    pub fn content_path(&self) -> Option<&str> {
        self.content_sha256.as_ref()?;
        self.path.strip_suffix(".gz")
    }

    /// The file's name (the last component of its path).
    pub fn file_name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }
}

/// One data set: its files, licence and citation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DataSet {
    /// The name used by `boltzkit data`, `--data NAME` and `boltzkit.datasets.load`.
    pub name: String,
    /// What it is: shapes, splits, pixel order.
    pub title: String,
    /// The licence as the source states it.
    pub licence: String,
    /// What to cite.
    pub citation: String,
    /// Its files.
    pub files: Vec<DataFile>,
}

impl DataSet {
    /// The splits of its rows (or alignment) files, in registry order.
    pub fn splits(&self) -> Vec<&str> {
        self.files
            .iter()
            .filter(|f| f.kind == FileKind::Rows)
            .filter_map(|f| f.split.as_deref())
            .collect()
    }

    /// The file of `kind` and `split` (`None`: a file of that kind without a split).
    pub fn file(&self, kind: FileKind, split: Option<&str>) -> Option<&DataFile> {
        self.files
            .iter()
            .find(|f| f.kind == kind && f.split.as_deref() == split)
    }

    /// The file `--data NAME[:split]` means: the rows of `split` (default `train`, or the only
    /// split), or the alignment of a protein family (which has no split).
    pub fn primary(&self, split: Option<&str>) -> Result<&DataFile> {
        let splits = self.splits();
        if splits.is_empty() {
            if let Some(s) = split {
                return Err(Error::param(
                    "split",
                    format!("data set {} has no splits, `{s}` was given", self.name),
                ));
            }
            return self
                .files
                .iter()
                .find(|f| f.kind == FileKind::Alignment)
                .ok_or_else(|| Error::Internal(format!("data set {} has no rows", self.name)));
        }
        let split = match split {
            Some(s) => s,
            None if splits.contains(&"train") => "train",
            None if splits.len() == 1 => splits[0],
            None => splits[0],
        };
        self.file(FileKind::Rows, Some(split)).ok_or_else(|| {
            Error::param(
                "split",
                format!(
                    "data set {} has the splits {}, not `{split}`",
                    self.name,
                    splits.join(", ")
                ),
            )
        })
    }
}

/// The registry as parsed from `registry.json`.
#[derive(Debug, Deserialize)]
struct Registry {
    format: String,
    datasets: Vec<DataSet>,
}

/// Every data set of the registry, in its order.
pub fn datasets() -> &'static [DataSet] {
    static PARSED: OnceLock<Vec<DataSet>> = OnceLock::new();
    PARSED.get_or_init(|| {
        // the embedded text is part of the build, checked by the tests below: a failure
        // here is a broken build, never user input
        let r: Registry = serde_json::from_str(REGISTRY_JSON)
            .unwrap_or_else(|e| panic!("the embedded data registry does not parse: {e}"));
        assert_eq!(r.format, "boltzkit/data-registry/v1", "registry format");
        r.datasets
    })
}

/// The data set called `name`; an unknown name is an error listing the known ones.
pub fn find(name: &str) -> Result<&'static DataSet> {
    datasets().iter().find(|d| d.name == name).ok_or_else(|| {
        let known: Vec<&str> = datasets().iter().map(|d| d.name.as_str()).collect();
        Error::param(
            "data set",
            format!(
                "no data set is called `{name}`; the registry has {}",
                known.join(", ")
            ),
        )
    })
}

/// The data set and file whose registry path is `path` (e.g.
/// `binarized_mnist/binarized_mnist_train.amat.gz`).
pub fn file_at(path: &str) -> Option<(&'static DataSet, &'static DataFile)> {
    datasets()
        .iter()
        .find_map(|s| s.files.iter().find(|f| f.path == path).map(|f| (s, f)))
}

/// `NAME[:split]` split into the data set and the split, when `NAME` is a registry name
/// (else `None`: the text is a file path, not a name).
pub fn parse_spec(spec: &str) -> Option<(&'static DataSet, Option<&str>)> {
    let (name, split) = match spec.split_once(':') {
        Some((n, s)) => (n, Some(s)),
        None => (spec, None),
    };
    let set = datasets().iter().find(|d| d.name == name)?;
    Some((set, split))
}
