//! Exit status and the one-line error message.

pub use crate::guard::UsageError;

/// Exit status of a failure at run time (unreadable data, I/O, divergence).
pub const RUNTIME_FAILURE: u8 = 1;
/// Exit status of a usage error (flags that do not make sense together or out of range).
pub const USAGE_ERROR: u8 = 2;

/// The exit status for `err`: 130 after an interrupt ([`crate::interrupt::Interrupted`]), 2 when
/// a [`UsageError`], an invalid library setting ([`boltzkit::Error::InvalidParam`], which names
/// a user-facing setting) or a size the library refused up front ([`boltzkit::Error::Memory`],
/// [`boltzkit::Error::TooLarge`]: settings asking for more than the machine has) is in its
/// chain, else 1.
pub fn code(err: &anyhow::Error) -> u8 {
    if err
        .chain()
        .any(|cause| cause.is::<crate::interrupt::Interrupted>())
    {
        return crate::interrupt::EXIT_INTERRUPTED;
    }
    let usage = err.chain().any(|cause| {
        cause.is::<UsageError>()
            || matches!(
                cause.downcast_ref::<boltzkit::Error>(),
                Some(
                    boltzkit::Error::InvalidParam { .. }
                        | boltzkit::Error::Memory { .. }
                        | boltzkit::Error::TooLarge { .. }
                )
            )
    });
    if usage {
        USAGE_ERROR
    } else {
        RUNTIME_FAILURE
    }
}

/// `err` with its context chain joined by `: ` (like `{:#}`), on one line: newlines become
/// `; `, and a cause whose text its parent's message already ends with is not repeated
/// (e.g. `boltzkit::Error::Io` prints its `source` and also returns it from `source()`). An
/// operating-system error reads in words, without Rust's "(os error N)" ([`plain_io`]).
///
/// [`plain_io`]: boltzkit::error::plain_io
pub fn one_line(err: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in err.chain() {
        let text = match cause.downcast_ref::<std::io::Error>() {
            Some(io) => boltzkit::error::plain_io(io),
            None => cause.to_string(),
        };
        if parts.last().is_some_and(|prev| prev.ends_with(&text)) {
            continue;
        }
        parts.push(text);
    }
    parts
        .join(": ")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

/// A flag-value error of clap in plain words: Rust's integer parser says `invalid digit found
/// in string` for `--epochs 1e3` or `--hidden 2.5`, which names neither the rule nor a fix.
pub fn clearer_parse_error(text: &str) -> String {
    text.replace(
        "invalid digit found in string",
        "expected a whole number written in digits (such as 1000: no decimal point, exponent, \
         sign or separator)",
    )
    .replace(
        "number too large to fit in target type",
        "the number is too large for this setting",
    )
    .replace(
        "cannot parse integer from empty string",
        "expected a whole number, found nothing",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn usage_errors_exit_2_through_context() {
        let e = anyhow::Error::new(UsageError::new("--truth needs at most 28 variables"))
            .context("gen bn");
        assert_eq!(code(&e), USAGE_ERROR);
        let e = anyhow::Error::new(boltzkit::Error::param("rows", "must be at least 1"));
        assert_eq!(code(&e), USAGE_ERROR);
    }

    #[test]
    fn other_errors_exit_1() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        let e = anyhow::Error::new(boltzkit::Error::io("/x/y.npy", io));
        assert_eq!(code(&e), RUNTIME_FAILURE);
        let e: anyhow::Result<()> = Err(anyhow::anyhow!("boom")).context("writing");
        assert_eq!(code(&e.unwrap_err()), RUNTIME_FAILURE);
    }

    #[test]
    fn integer_parse_errors_say_what_is_expected() {
        let clap = "error: invalid value '1e3' for '--epochs <N>': invalid digit found in string";
        let clear = clearer_parse_error(clap);
        assert!(
            clear.contains("'1e3' for '--epochs <N>': expected a whole number"),
            "{clear}"
        );
        assert_eq!(clearer_parse_error("other"), "other");
    }

    #[test]
    fn message_is_one_line_with_context() {
        let e = anyhow::anyhow!("line one\nline two").context("writing out.npy");
        assert_eq!(one_line(&e), "writing out.npy: line one; line two");
    }

    #[test]
    fn a_source_already_in_the_message_is_not_repeated() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file");
        let e = anyhow::Error::new(boltzkit::Error::io("/x/y.npy", io)).context("cannot write");
        assert_eq!(one_line(&e), "cannot write: /x/y.npy: No such file");
    }

    #[test]
    fn an_os_error_is_named_once_in_words() {
        let io = std::io::Error::from_raw_os_error(2);
        let e = anyhow::Error::new(boltzkit::Error::io("/x/nope.csv", io));
        let line = one_line(&e);
        assert!(!line.contains("os error"), "{line}");
        assert_eq!(line.matches("No such file").count(), 1, "{line}");
    }
}
