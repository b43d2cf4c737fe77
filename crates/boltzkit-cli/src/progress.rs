//! Progress bars on stderr, hidden when stderr is not a terminal or under `--quiet`.
//!
//! The helpers return plain [`indicatif::ProgressBar`]s: call `inc`, `set_message`, and
//! `finish_and_clear` when done; print beside a live bar with `bar.suspend(|| eprintln!(..))`.
//! A hidden bar accepts the same calls and draws nothing, so commands never branch on it.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

/// True when progress should be drawn: not `--quiet` and stderr is a terminal.
pub fn visible(quiet: bool) -> bool {
    !quiet && std::io::stderr().is_terminal()
}

/// A bar counting to `len` (e.g. epochs, samples), labelled `message`.
#[allow(dead_code)] // for the training commands (fsll, fvbm, rbm); `gen` needs only a spinner
pub fn bar(len: u64, message: &str, quiet: bool) -> ProgressBar {
    if !visible(quiet) {
        let pb = ProgressBar::hidden();
        pb.set_length(len);
        return pb;
    }
    let style = ProgressStyle::with_template(
        "{msg:>12} [{elapsed_precise}] {wide_bar:.cyan/blue} {human_pos}/{human_len} (eta {eta})",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ");
    ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr())
        .with_style(style)
        .with_message(message.to_string())
}

/// A spinner for work of unknown length, labelled `message`; it ticks by itself.
pub fn spinner(message: &str, quiet: bool) -> ProgressBar {
    if !visible(quiet) {
        return ProgressBar::hidden();
    }
    let style = ProgressStyle::with_template("{spinner} {msg} [{elapsed_precise}]")
        .unwrap_or_else(|_| ProgressStyle::default_spinner());
    let pb = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
        .with_style(style)
        .with_message(message.to_string());
    pb.enable_steady_tick(Duration::from_millis(120));
    pb
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_bars_are_hidden_but_count() {
        let pb = bar(10, "epochs", true);
        assert!(pb.is_hidden());
        pb.inc(3);
        assert_eq!(pb.position(), 3);
        assert_eq!(pb.length(), Some(10));
        assert!(spinner("sampling", true).is_hidden());
    }

    #[test]
    fn bars_follow_the_terminal() {
        let drawn = std::io::stderr().is_terminal();
        assert_eq!(bar(5, "x", false).is_hidden(), !drawn);
        let s = spinner("x", false);
        assert_eq!(s.is_hidden(), !drawn);
        s.finish_and_clear();
    }
}
