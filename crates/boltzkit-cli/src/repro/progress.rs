//! The command line's side of [`boltzkit_repro::Progress`]: the protocols' stages as
//! indicatif bars on a terminal, and, when stderr is not a terminal, one line per stage and a
//! line at least every [`HEARTBEAT_SECS`] seconds while one runs (`BOLTZKIT_PROGRESS_SECS`
//! overrides the period), so that a long run in a log is never silent. Notes (a finished
//! trial's figures) go to stderr unless `--quiet`.

use crate::progress;
use boltzkit_repro::Progress;
use indicatif::ProgressBar;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Seconds between two progress lines when stderr is not a terminal.
pub const HEARTBEAT_SECS: f64 = 20.0;

/// The current stage.
struct Stage {
    bar: ProgressBar,
    label: String,
    message: String,
    len: Option<u64>,
    pos: u64,
    since: Instant,
    active: bool,
}

/// Progress of a `repro` command on stderr (see the module docs).
pub struct ReproProgress {
    quiet: bool,
    lines: bool,
    stage: Arc<Mutex<Stage>>,
    heartbeat: Option<(Sender<()>, JoinHandle<()>)>,
}

impl ReproProgress {
    /// Bars on a terminal, lines otherwise, nothing but errors under `--quiet`.
    pub fn new(quiet: bool) -> Self {
        let lines = !quiet && !progress::visible(quiet);
        let stage = Arc::new(Mutex::new(Stage {
            bar: ProgressBar::hidden(),
            label: String::new(),
            message: String::new(),
            len: None,
            pos: 0,
            since: Instant::now(),
            active: false,
        }));
        let heartbeat = lines.then(|| {
            let every = std::env::var("BOLTZKIT_PROGRESS_SECS")
                .ok()
                .and_then(|s| s.parse::<f64>().ok())
                .filter(|s| s.is_finite() && *s > 0.0)
                .unwrap_or(HEARTBEAT_SECS);
            let (tx, rx) = mpsc::channel::<()>();
            let shared = Arc::clone(&stage);
            let handle = std::thread::spawn(move || {
                let period = Duration::from_secs_f64(every);
                while let Err(RecvTimeoutError::Timeout) = rx.recv_timeout(period) {
                    let s = shared.lock().unwrap_or_else(|e| e.into_inner());
                    if s.active {
                        eprintln!("{}", status_line(&s));
                    }
                }
            });
            (tx, handle)
        });
        ReproProgress {
            quiet,
            lines,
            stage,
            heartbeat,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Stage> {
        self.stage.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// `label: pos/len message (N s)`.
fn status_line(s: &Stage) -> String {
    let count = match s.len {
        Some(n) => format!(" {}/{n}", s.pos),
        None => String::new(),
    };
    let msg = if s.message.is_empty() {
        String::new()
    } else {
        format!(" {}", s.message)
    };
    format!(
        "{}:{count}{msg} ({:.0} s)",
        s.label,
        s.since.elapsed().as_secs_f64()
    )
}

impl Progress for ReproProgress {
    fn stage(&self, label: &str, len: Option<u64>) {
        let mut s = self.lock();
        s.bar.finish_and_clear();
        s.bar = match len {
            // off a terminal this type writes the lines itself
            Some(n) => progress::bar(n, label, self.quiet || self.lines),
            None => progress::spinner(label, self.quiet || self.lines),
        };
        s.label = label.to_string();
        s.message.clear();
        s.len = len;
        s.pos = 0;
        s.since = Instant::now();
        s.active = true;
        if self.lines {
            eprintln!("{}", status_line(&s));
        }
    }

    fn advance(&self, n: u64) {
        let mut s = self.lock();
        s.pos += n;
        s.bar.inc(n);
    }

    fn set_position(&self, pos: u64) {
        let mut s = self.lock();
        s.pos = pos;
        s.bar.set_position(pos);
    }

    fn message(&self, text: &str) {
        let mut s = self.lock();
        s.message = text.to_string();
        if s.len.is_some() {
            s.bar.set_message(text.to_string());
        } else {
            s.bar.set_message(format!("{}: {text}", s.label));
        }
    }

    fn note(&self, line: &str) {
        if self.quiet {
            return;
        }
        let s = self.lock();
        s.bar.suspend(|| eprintln!("{line}"));
    }

    fn finish(&self) {
        let mut s = self.lock();
        s.bar.finish_and_clear();
        s.active = false;
    }
}

impl Drop for ReproProgress {
    fn drop(&mut self) {
        self.lock().bar.finish_and_clear();
        if let Some((tx, handle)) = self.heartbeat.take() {
            drop(tx);
            let _ = handle.join();
        }
    }
}

/// [`Progress`] as the commands outside `repro` draw it: a plain bar (a spinner for a stage
/// of unknown length) per stage, which off a terminal writes a line only once the stage has
/// run a while ([`progress::bar`]); notes go to stderr unless `--quiet`.
pub struct Bars {
    quiet: bool,
    bar: Mutex<ProgressBar>,
}

impl Bars {
    /// No stage yet.
    pub fn new(quiet: bool) -> Self {
        Bars {
            quiet,
            bar: Mutex::new(ProgressBar::hidden()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, ProgressBar> {
        self.bar.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Progress for Bars {
    fn stage(&self, label: &str, len: Option<u64>) {
        let mut bar = self.lock();
        bar.finish_and_clear();
        *bar = match len {
            Some(n) => progress::bar(n, label, self.quiet),
            None => progress::spinner(label, self.quiet),
        };
    }

    fn advance(&self, n: u64) {
        self.lock().inc(n);
    }

    fn set_position(&self, pos: u64) {
        self.lock().set_position(pos);
    }

    fn note(&self, line: &str) {
        if !self.quiet {
            self.lock().suspend(|| eprintln!("{line}"));
        }
    }

    fn finish(&self) {
        self.lock().finish_and_clear();
    }
}

impl Drop for Bars {
    fn drop(&mut self) {
        self.lock().finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_count_and_describe_themselves() {
        let p = ReproProgress::new(true);
        p.stage("runs", Some(4));
        p.advance(3);
        p.message("d=5 rep 1");
        assert_eq!(
            status_line(&p.lock()).split(" (").next(),
            Some("runs: 3/4 d=5 rep 1")
        );
        p.set_position(1);
        assert_eq!(p.lock().pos, 1);
        p.finish();
        assert!(!p.lock().active);
        let bars = Bars::new(true);
        bars.stage("runs", Some(3));
        bars.advance(2);
        assert_eq!(bars.lock().position(), 2);
    }
}
