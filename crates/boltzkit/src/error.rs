//! The one error type of the library.
//!
//! Every fallible function returns [`Result<T>`]. Variants carry the data a user needs to find
//! the fault: the file, the row and column, what was expected and what was found.

use std::path::PathBuf;

/// Result alias used throughout boltzkit.
pub type Result<T> = std::result::Result<T, Error>;

/// Everything that can go wrong in boltzkit.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An operating-system error while reading or writing `path` (in words, without Rust's
    /// "(os error N)" suffix: see [`plain_io`]).
    #[error("{path}: {}", plain_io(source))]
    Io {
        /// The file involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },

    /// A data or model file whose content is malformed.
    #[error("{path}{}: expected {expected}, found {found}", location(*.row, *.column))]
    Parse {
        /// The file involved.
        path: PathBuf,
        /// 1-based row (line or sample) where the fault is, when known.
        row: Option<usize>,
        /// 1-based column (variable) where the fault is, when known.
        column: Option<usize>,
        /// What the reader expected.
        expected: String,
        /// What it found instead.
        found: String,
    },

    /// A file format that is not supported (by extension or by content).
    #[error("{path}: unsupported format: {reason}")]
    UnsupportedFormat {
        /// The file involved.
        path: PathBuf,
        /// Why it is not supported.
        reason: String,
    },

    /// Arrays or datasets whose shapes do not fit together.
    #[error("shape mismatch in {op}: expected {expected}, found {found}")]
    Shape {
        /// The operation that checked the shapes.
        op: String,
        /// The expected shape.
        expected: String,
        /// The shape found.
        found: String,
    },

    /// A setting outside its valid range.
    #[error("invalid setting `{field}`: {reason}")]
    InvalidParam {
        /// The name of the setting (as the user spells it).
        field: String,
        /// Why the value is not allowed.
        reason: String,
    },

    /// A dataset that cannot be used for the requested job (empty, wrong cardinalities, ...).
    #[error("invalid data: {0}")]
    InvalidData(String),

    /// A problem too large for the requested exact computation.
    #[error("too large: {what} needs {needed}, limit is {limit}")]
    TooLarge {
        /// What was being built.
        what: String,
        /// The size it needs.
        needed: String,
        /// The limit.
        limit: String,
    },

    /// A job that needs more memory than the machine has available (the estimate of
    /// [`crate::budget::check_memory`], or an allocation that failed).
    #[error(
        "{what} needs about {} of memory, but this machine has {} {limit}; reduce the size",
        crate::units::human_bytes(*.needed),
        crate::units::human_bytes(*.available)
    )]
    Memory {
        /// The job and the setting that sizes it.
        what: String,
        /// Bytes it needs.
        needed: u64,
        /// Bytes the machine has.
        available: u64,
        /// `available` (the machine said) or `addressable` (it did not: the address space).
        limit: &'static str,
    },

    /// A numerical failure: NaN or infinity where a finite number is required.
    #[error("numerical failure in {context}: {detail}")]
    Numerical {
        /// Where it happened.
        context: String,
        /// What happened.
        detail: String,
    },

    /// A long computation (an AIS, reverse-AIS or RAISE estimate) stopped because its
    /// [`crate::fit::Interrupt`] was set (Ctrl-C): an interrupted estimate is this error,
    /// never a partial figure.
    #[error("{what} was interrupted (no estimate)")]
    Interrupted {
        /// The computation that stopped.
        what: String,
    },

    /// A broken internal invariant: a bug in boltzkit, never a bad setting or bad data. The
    /// message names the invariant; please report it.
    #[error("internal error (a bug in boltzkit, please report it): {0}")]
    Internal(String),

    /// A data set of the registry ([`crate::data::registry`]) that could not be had: an
    /// unknown name or split, or a file that no source gave with the recorded checksum. The
    /// reason says what was tried and what to do.
    #[error("data set {name}: {reason}")]
    DataSet {
        /// The data set's name (with the file or split concerned, when there is one).
        name: String,
        /// What went wrong and what to do about it.
        reason: String,
    },

    /// A model file that is not what the reader expects.
    #[error("{path}: invalid model file: {reason}")]
    Model {
        /// The file involved.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

fn location(row: Option<usize>, column: Option<usize>) -> String {
    match (row, column) {
        (Some(r), Some(c)) => format!(":{r}: column {c}"),
        (Some(r), None) => format!(":{r}"),
        (None, Some(c)) => format!(": column {c}"),
        (None, None) => String::new(),
    }
}

/// An I/O error's text without the "(os error N)" that the standard library appends to the
/// operating system's own words ("No such file or directory (os error 2)" reads "No such
/// file or directory").
pub fn plain_io(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(i) if text.ends_with(')') => text[..i].to_string(),
        _ => text,
    }
}

impl Error {
    /// An [`Error::Io`] for `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// An [`Error::InvalidParam`] naming `field`.
    pub fn param(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::InvalidParam {
            field: field.into(),
            reason: reason.into(),
        }
    }
}

#[cfg(test)]
mod plain_io_tests {
    use super::*;

    #[test]
    fn io_errors_read_without_the_os_error_number() {
        let e = Error::io("x.npy", std::io::Error::from_raw_os_error(2));
        let text = e.to_string();
        assert!(text.starts_with("x.npy: "), "{text}");
        assert!(!text.contains("os error"), "{text}");
        let custom = Error::io("y", std::io::Error::other("a message (of ours)"));
        assert_eq!(custom.to_string(), "y: a message (of ours)");
    }
}
