//! Where registry files come from: the cache, mirror folders, the network ([`Sources`]), and
//! [`fetch_file`], which puts a verified copy in the cache.

use super::http;
use super::sets::{DataFile, DataSet, UrlServes};
use crate::error::{Error, Result};
use crate::io::{sha256_bytes, sha256_file, write_atomic};
use flate2::read::MultiGzDecoder;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The environment variable naming the cache folder (default: the platform's cache
/// directory, e.g. `~/.cache/boltzkit` on Linux).
pub const CACHE_ENV: &str = "BOLTZKIT_DATA";
/// The environment variable naming mirror folders (several joined by the platform's path
/// separator, `:` on Unix), searched before the network.
pub const MIRROR_ENV: &str = "BOLTZKIT_DATA_MIRROR";
/// The old name of [`MIRROR_ENV`] (the data folder of the `repro` protocols), still read.
pub const OLD_MIRROR_ENV: &str = "BOLTZKIT_DATA_DIR";
/// Set to anything but `0` or the empty string to never use the network.
pub const OFFLINE_ENV: &str = "BOLTZKIT_OFFLINE";

/// Where [`fetch_file`] looks for a file, in order: the cache (also where copies go), the
/// mirror folders, the network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sources {
    /// The cache folder: verified files in the registry's layout (itself usable as a mirror).
    pub cache: PathBuf,
    /// Folders in the registry's layout (`binarized_mnist/...`, `debd/nltcs/...`), such as a
    /// copy of the cache of another machine.
    pub mirrors: Vec<PathBuf>,
    /// Whether the file's URL may be downloaded.
    pub network: bool,
}

impl Sources {
    /// The cache folder `cache`, no mirror, the network allowed.
    pub fn new(cache: impl Into<PathBuf>) -> Self {
        Sources {
            cache: cache.into(),
            mirrors: Vec::new(),
            network: true,
        }
    }

    /// The same sources with `mirrors` in place of the current mirror folders.
    pub fn with_mirrors(mut self, mirrors: Vec<PathBuf>) -> Self {
        self.mirrors = mirrors;
        self
    }

    /// The same sources with the network allowed or not.
    pub fn with_network(mut self, network: bool) -> Self {
        self.network = network;
        self
    }

    /// The sources the environment gives: the cache [`CACHE_ENV`] (else the platform's cache
    /// directory); the mirrors `mirror` when given (a command's flag), else [`MIRROR_ENV`],
    /// else [`OLD_MIRROR_ENV`], else every folder `shared/data` beside the working directory
    /// or the executable or above them (how a checkout of this repository finds its sibling
    /// `../shared/data`); the network unless [`OFFLINE_ENV`] is set.
    pub fn from_env(mirror: Option<&Path>) -> Result<Self> {
        let cache = match std::env::var_os(CACHE_ENV).filter(|v| !v.is_empty()) {
            Some(dir) => PathBuf::from(dir),
            None => dirs::cache_dir()
                .map(|d| d.join("boltzkit"))
                .ok_or_else(|| {
                    Error::param(
                        CACHE_ENV,
                        "this platform has no cache directory: set BOLTZKIT_DATA to a folder",
                    )
                })?,
        };
        let from_var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(|v| std::env::split_paths(&v).collect::<Vec<_>>())
        };
        let mirrors = match mirror {
            Some(dir) => vec![dir.to_path_buf()],
            None => from_var(MIRROR_ENV)
                .or_else(|| from_var(OLD_MIRROR_ENV))
                .unwrap_or_else(default_mirrors),
        };
        let network = std::env::var_os(OFFLINE_ENV).is_none_or(|v| v.is_empty() || v == "0");
        Ok(Sources {
            cache,
            mirrors,
            network,
        })
    }
}

/// The folders `shared/data` under every ancestor of the running executable, then of the
/// working directory, that exist.
pub fn default_mirrors() -> Vec<PathBuf> {
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
    let mut out: Vec<PathBuf> = Vec::new();
    for start in &starts {
        for a in start.ancestors() {
            let c = a.join("shared").join("data");
            if c.is_dir() && !out.contains(&c) {
                out.push(c);
            }
        }
    }
    out
}

/// Where a fetched file came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A verified copy already in the cache.
    Cache,
    /// Copied from this mirror folder.
    Mirror(PathBuf),
    /// Downloaded from this URL.
    Network(String),
}

/// A file in the cache, verified, and how it got there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// Its path in the cache.
    pub path: PathBuf,
    /// Where it came from.
    pub origin: Origin,
    /// A copy that was in the cache with a wrong size or checksum and was replaced: its path
    /// and what was wrong.
    pub replaced: Option<String>,
}

impl std::fmt::Display for Fetched {
    /// How the file got to the cache, in words (`copied from the mirror DIR`, ...).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.origin {
            Origin::Cache => write!(f, "already cached")?,
            Origin::Mirror(dir) => write!(f, "copied from the mirror {}", dir.display())?,
            Origin::Network(url) => write!(f, "downloaded from {url}")?,
        }
        if let Some(why) = &self.replaced {
            write!(f, ", replacing a corrupted copy ({why})")?;
        }
        Ok(())
    }
}

/// One form of a file: its path relative to a data folder, size and SHA-256.
#[derive(Clone, Copy)]
struct Form<'a> {
    rel: &'a str,
    size: u64,
    sha256: &'a str,
}

/// The forms in which `file` may sit in a data folder: as stored, and (for a `.gz` file)
/// uncompressed, as a download of its content is kept.
fn forms(file: &DataFile) -> Vec<Form<'_>> {
    let mut out = vec![Form {
        rel: &file.path,
        size: file.size,
        sha256: &file.sha256,
    }];
    if let (Some(rel), Some(size), Some(sha256)) = (
        file.content_path(),
        file.content_size,
        file.content_sha256.as_deref(),
    ) {
        out.push(Form { rel, size, sha256 });
    }
    out
}

/// What a file on disk is, against a form.
enum Check {
    Missing,
    Good,
    Bad(String),
}

fn check_on_disk(path: &Path, form: Form<'_>) -> Result<Check> {
    let meta = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Check::Missing),
        Err(e) => return Err(Error::io(path, e)),
    };
    if !meta.is_file() {
        return Ok(Check::Bad("not a regular file".into()));
    }
    if meta.len() != form.size {
        return Ok(Check::Bad(format!(
            "{} bytes, expected {}",
            meta.len(),
            form.size
        )));
    }
    let sha = sha256_file(path)?;
    Ok(if sha == form.sha256 {
        Check::Good
    } else {
        Check::Bad(format!("sha256 {sha}, expected {}", form.sha256))
    })
}

/// Checks downloaded or copied bytes against a form: `None` when they match.
fn check_bytes(bytes: &[u8], form: Form<'_>) -> Option<String> {
    if bytes.len() as u64 != form.size {
        return Some(format!("{} bytes, expected {}", bytes.len(), form.size));
    }
    let sha = sha256_bytes(bytes);
    (sha != form.sha256).then(|| format!("sha256 {sha}, expected {}", form.sha256))
}

/// Writes verified bytes into the cache at `rel` (atomically: a reader never sees half).
fn store(sources: &Sources, rel: &str, bytes: &[u8]) -> Result<PathBuf> {
    let path = sources.cache.join(rel);
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    write_atomic(&path, bytes)?;
    Ok(path)
}

/// Puts a verified copy of `file` (of the data set `set`) in the cache and returns its path.
///
/// In order: a copy in the cache whose size and SHA-256 match is used as it is (nothing is
/// downloaded twice); one that does not match is removed and fetched again (reported in
/// [`Fetched::replaced`]); the first mirror holding the file with the recorded checksum is
/// copied; the URL is downloaded and checked ([`UrlServes`]). When every source fails the
/// error says, in one line, what was tried and how to give a mirror.
pub fn fetch_file(set: &DataSet, file: &DataFile, sources: &Sources) -> Result<Fetched> {
    let forms = forms(file);
    let mut replaced = None;
    for &form in &forms {
        let path = sources.cache.join(form.rel);
        match check_on_disk(&path, form)? {
            Check::Good => {
                return Ok(Fetched {
                    path,
                    origin: Origin::Cache,
                    replaced: None,
                })
            }
            Check::Missing => {}
            Check::Bad(why) => {
                fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
                replaced = Some(format!("{}: {why}", path.display()));
            }
        }
    }
    let mut faults = Vec::new();
    for mirror in &sources.mirrors {
        for &form in &forms {
            let src = mirror.join(form.rel);
            let bytes = match fs::read(&src) {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => {
                    faults.push(format!("{}: {e}", src.display()));
                    continue;
                }
            };
            match check_bytes(&bytes, form) {
                None => {
                    return Ok(Fetched {
                        path: store(sources, form.rel, &bytes)?,
                        origin: Origin::Mirror(mirror.clone()),
                        replaced,
                    })
                }
                Some(why) => faults.push(format!("{}: {why}", src.display())),
            }
        }
    }
    let network = download(file, sources, &mut faults)?;
    if let Some((url, rel, bytes)) = network {
        return Ok(Fetched {
            path: store(sources, rel, &bytes)?,
            origin: Origin::Network(url),
            replaced,
        });
    }
    Err(not_found(set, file, sources, &faults))
}

/// Downloads `file` from its URLs when the sources allow it: the URL, the path to cache the
/// bytes at, and the verified bytes; `None` (with each failure in `faults`) when none served
/// them.
fn download<'f>(
    file: &'f DataFile,
    sources: &Sources,
    faults: &mut Vec<String>,
) -> Result<Option<(String, &'f str, Vec<u8>)>> {
    if !sources.network {
        faults.push(format!("the network is off ({OFFLINE_ENV} is set)"));
        return Ok(None);
    }
    let content = match (
        file.content_path(),
        file.content_size,
        file.content_sha256.as_deref(),
    ) {
        (Some(rel), Some(size), Some(sha256)) => Some(Form { rel, size, sha256 }),
        _ => None,
    };
    let stored = Form {
        rel: &file.path,
        size: file.size,
        sha256: &file.sha256,
    };
    let form = match (file.url_serves, content) {
        (UrlServes::File, _) => stored,
        (UrlServes::Content | UrlServes::Gzip, Some(c)) => c,
        (UrlServes::Content | UrlServes::Gzip, None) => {
            return Err(Error::Internal(format!(
                "registry file {} is served as content but has no content checksum",
                file.path
            )))
        }
        (UrlServes::Source, _) => {
            faults.push(format!(
                "no URL serves this file: it was {} (source {})",
                file.derivation.as_deref().unwrap_or("converted"),
                file.url
            ));
            return Ok(None);
        }
    };
    for url in std::iter::once(&file.url).chain(&file.alt_urls) {
        // a gzip of the content is at most a little larger than the content
        let limit = form.size + form.size / 8 + (1 << 20);
        let got = http::get(url, limit).and_then(|bytes| match file.url_serves {
            UrlServes::Gzip => gunzip(&bytes, limit),
            _ => Ok(bytes),
        });
        match got {
            Ok(bytes) => match check_bytes(&bytes, form) {
                None => return Ok(Some((url.clone(), form.rel, bytes))),
                Some(why) => faults.push(format!("{url} gave {why}")),
            },
            Err(why) => faults.push(format!("{url}: {why}")),
        }
    }
    Ok(None)
}

/// The content of a gzip download, at most `limit` bytes.
fn gunzip(bytes: &[u8], limit: u64) -> std::result::Result<Vec<u8>, String> {
    let mut out = Vec::new();
    MultiGzDecoder::new(bytes)
        .take(limit)
        .read_to_end(&mut out)
        .map_err(|e| format!("not a gzip file: {e}"))?;
    Ok(out)
}

/// The one-line error of a file no source gave.
fn not_found(set: &DataSet, file: &DataFile, sources: &Sources, faults: &[String]) -> Error {
    let mirrors = if sources.mirrors.is_empty() {
        format!("no mirror folder was given ({MIRROR_ENV})")
    } else {
        let list: Vec<String> = sources
            .mirrors
            .iter()
            .map(|m| m.display().to_string())
            .collect();
        format!("not in the mirror folders {}", list.join(", "))
    };
    let faults = if faults.is_empty() {
        String::new()
    } else {
        format!(" ({})", faults.join("; "))
    };
    Error::DataSet {
        name: format!("{} ({})", set.name, file.path),
        reason: format!(
            "not in the cache {}, {mirrors}, and not downloaded{faults}; to use a copy of the \
             files, set {MIRROR_ENV}=DIR to a folder holding {} (the registry's layout; \
             `boltzkit data fetch --mirror DIR` also takes one)",
            sources.cache.display(),
            file.path
        ),
    }
}

/// The content of a `.gz` file's bytes (for the registry's tests).
#[cfg(test)]
pub(super) fn tests_gunzip(bytes: &[u8]) -> Vec<u8> {
    gunzip(bytes, u64::MAX).unwrap()
}
