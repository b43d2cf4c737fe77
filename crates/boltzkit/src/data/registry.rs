//! Data sets by name: the registry of the public data sets the papers use, with each file's
//! original URL, size, SHA-256 and licence, and the one way to get a file on disk.
//!
//! The registry is `registry.json` beside this file, embedded at compile time: binarized
//! MNIST, MNIST, Caltech101 Silhouettes, binary alphadigits, the DEBD density-estimation sets
//! and the protein alignments of direct coupling analysis. Each [`DataFile`] names its path
//! relative to a data folder (the same layout in the cache and in a mirror), what it holds
//! ([`FileKind`]), its split, its size and SHA-256, and where it came from ([`DataFile::url`],
//! with [`UrlServes`] saying how the URL's bytes relate to the file).
//!
//! [`fetch_file`] gets a file into the cache ([`Sources`]): a verified copy already there is
//! used as it is (a file is never downloaded twice), one whose size or SHA-256 is wrong is
//! replaced; else the first mirror folder holding it with the recorded checksum is copied;
//! else it is downloaded from its URL and checked. [`resolve`] turns `NAME[:split]` into the
//! path of that split's rows (what `--data NAME[:split]` of the CLI and
//! `boltzkit.datasets.load` read).
//!
//! ```
//! use boltzkit::data::registry;
//! let mnist = registry::find("binarized_mnist").unwrap();
//! assert_eq!(mnist.splits(), ["train", "valid", "test"]);
//! let test = mnist.primary(Some("test")).unwrap();
//! assert_eq!(test.size, 416_083);
//! assert!(registry::find("no-such-set").is_err());
//! ```

mod fetch;
mod http;
mod resolve;
mod sets;

pub use fetch::{
    default_mirrors, fetch_file, Fetched, Origin, Sources, CACHE_ENV, MIRROR_ENV, OFFLINE_ENV,
    OLD_MIRROR_ENV,
};
pub use resolve::resolve;
pub use sets::{datasets, file_at, find, parse_spec, DataFile, DataSet, FileKind, UrlServes};

#[cfg(test)]
mod tests;
