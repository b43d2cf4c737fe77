//! Progress on stderr: live bars on a terminal; when stderr is not a terminal (a log file, a
//! pipe, CI), a plain line with the same content once the work has run 5 s and then every
//! 10 s, so a long run is never silent for 30 s; nothing under `--quiet`.
//!
//! The helpers return plain [`indicatif::ProgressBar`]s: call `inc`, `set_message`, and
//! `finish_and_clear` when done; print beside a live bar with `bar.suspend(|| eprintln!(..))`.
//! A hidden bar accepts the same calls and draws nothing, so commands never branch on it.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle, TermLike};
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Seconds between two progress lines when stderr is not a terminal (the first comes after
/// half of it); `$BOLTZKIT_PROGRESS_SECS` replaces it (tests use a fraction of a second), as
/// it does for the `repro` commands' heartbeat.
const LOG_EVERY_S: f64 = 10.0;

/// Where progress goes: a live terminal, periodic lines, or nowhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Live,
    Lines,
    Hidden,
}

/// True when progress is drawn live: not `--quiet` and stderr is a terminal.
pub fn visible(quiet: bool) -> bool {
    mode(quiet) == Mode::Live
}

fn mode(quiet: bool) -> Mode {
    if quiet {
        Mode::Hidden
    } else if std::io::stderr().is_terminal() {
        Mode::Live
    } else {
        Mode::Lines
    }
}

/// The interval of [`Mode::Lines`].
fn log_every() -> Duration {
    let s = std::env::var("BOLTZKIT_PROGRESS_SECS")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .unwrap_or(LOG_EVERY_S);
    Duration::from_secs_f64(s)
}

/// A [`TermLike`] that turns indicatif's redraws into a line on stderr when one is due: the
/// first after half an interval, then one per interval. The bar ticks every second, so a
/// line comes even while one step of the work takes minutes.
#[derive(Debug)]
struct Lines {
    every: Duration,
    state: Mutex<LinesState>,
}

#[derive(Debug)]
struct LinesState {
    start: Instant,
    last: Option<Instant>,
    buffer: String,
}

impl Lines {
    fn new(every: Duration) -> Self {
        Lines {
            every,
            state: Mutex::new(LinesState {
                start: Instant::now(),
                last: None,
                buffer: String::new(),
            }),
        }
    }

    fn push(&self, s: &str) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if !st.buffer.is_empty() && !s.is_empty() {
            st.buffer.push(' ');
        }
        st.buffer.push_str(s.trim());
    }

    /// The line to print now, if one is due (and the redraw had any text).
    fn due_line(&self, now: Instant) -> Option<String> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let text = std::mem::take(&mut st.buffer);
        let due = match st.last {
            None => now.duration_since(st.start) >= self.every / 2,
            Some(t) => now.duration_since(t) >= self.every,
        };
        if !due || text.is_empty() {
            return None;
        }
        st.last = Some(now);
        Some(text)
    }
}

impl TermLike for Lines {
    fn width(&self) -> u16 {
        100
    }
    fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn write_line(&self, s: &str) -> std::io::Result<()> {
        self.push(s);
        Ok(())
    }
    fn write_str(&self, s: &str) -> std::io::Result<()> {
        self.push(s);
        Ok(())
    }
    fn clear_line(&self) -> std::io::Result<()> {
        Ok(())
    }
    fn flush(&self) -> std::io::Result<()> {
        if let Some(line) = self.due_line(Instant::now()) {
            eprintln!("{line}");
        }
        Ok(())
    }
}

/// `pb` drawing periodic lines on stderr ([`Mode::Lines`]).
fn as_lines(pb: ProgressBar) -> ProgressBar {
    pb.set_draw_target(ProgressDrawTarget::term_like(Box::new(Lines::new(
        log_every(),
    ))));
    pb.enable_steady_tick(Duration::from_secs(1).min(log_every() / 4));
    pb
}

/// The bar's time left: unknown before the first step ends (indicatif's `{eta}` says `0s`
/// there, which reads as "done" on a run that has not finished one step).
fn eta_known(state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write) {
    let _ = if state.pos() == 0 {
        w.write_str("unknown until the first step ends")
    } else {
        write!(w, "{:#}", indicatif::HumanDuration(state.eta()))
    };
}

/// A bar counting to `len` (e.g. epochs, samples), labelled `message`.
pub fn bar(len: u64, message: &str, quiet: bool) -> ProgressBar {
    let mode = mode(quiet);
    if mode == Mode::Hidden {
        let pb = ProgressBar::hidden();
        pb.set_length(len);
        return pb;
    }
    let template = match mode {
        Mode::Live => {
            "{msg:>12} [{elapsed_precise}] {wide_bar:.cyan/blue} {human_pos}/{human_len} (eta {eta_known})"
        }
        _ => "progress: {msg} {human_pos}/{human_len} after {elapsed} (eta {eta_known})",
    };
    let style = ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .with_key("eta_known", eta_known)
        .progress_chars("=> ");
    let pb = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr())
        .with_style(style)
        .with_message(message.to_string());
    match mode {
        Mode::Lines => as_lines(pb),
        _ => pb,
    }
}

/// A spinner for work of unknown length, labelled `message`; it ticks by itself.
pub fn spinner(message: &str, quiet: bool) -> ProgressBar {
    let mode = mode(quiet);
    if mode == Mode::Hidden {
        return ProgressBar::hidden();
    }
    let template = match mode {
        Mode::Live => "{spinner} {msg} [{elapsed_precise}]",
        _ => "progress: {msg}, running for {elapsed}",
    };
    let style =
        ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_spinner());
    let pb = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
        .with_style(style)
        .with_message(message.to_string());
    match mode {
        Mode::Lines => as_lines(pb),
        _ => {
            pb.enable_steady_tick(Duration::from_millis(120));
            pb
        }
    }
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
    fn lines_come_after_half_an_interval_then_once_per_interval() {
        let lines = Lines::new(Duration::from_secs(10));
        let t0 = lines.state.lock().unwrap().start;
        lines.push("progress: epochs 1/9");
        assert_eq!(lines.due_line(t0 + Duration::from_secs(4)), None);
        lines.push("progress: epochs 2/9");
        assert_eq!(
            lines.due_line(t0 + Duration::from_secs(5)).as_deref(),
            Some("progress: epochs 2/9")
        );
        lines.push("progress: epochs 3/9");
        assert_eq!(lines.due_line(t0 + Duration::from_secs(14)), None);
        lines.push("progress: epochs 4/9");
        assert_eq!(
            lines.due_line(t0 + Duration::from_secs(15)).as_deref(),
            Some("progress: epochs 4/9")
        );
        // an empty redraw (finish_and_clear) prints nothing
        assert_eq!(lines.due_line(t0 + Duration::from_secs(60)), None);
    }
}
