//! [`UsageError`]: a setting refused after parsing, which the command line reports as a usage
//! error (exit 2). The protocols' own checks return it (e.g. `--repeats 0`); the command line's
//! refusals before any work (`boltzkit-cli`'s `guard`) return it too.

use std::fmt;

/// A usage error found after parsing (e.g. `--truth` with too many variables): the command
/// line exits 2.
///
/// Return it as `Err(UsageError::new("...").into())` or with `anyhow::bail!(UsageError::new(..))`;
/// context added on top keeps the exit status.
#[derive(Debug)]
pub struct UsageError(String);

impl UsageError {
    /// A usage error with this message (name the flag and the allowed values).
    pub fn new(message: impl Into<String>) -> Self {
        UsageError(message.into())
    }
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}
