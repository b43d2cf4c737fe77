//! Ctrl-C and SIGTERM for training commands: the first signal asks the run to stop after its
//! current update (the command then writes the last good model and its log, says so in one
//! line and exits 130); a second one exits at once with 130.

use boltzkit::fit::{Interrupt, StopReason};
use std::fmt;
use std::path::Path;
use std::sync::OnceLock;

/// Exit status of a run ended by an interrupt (128 + SIGINT, as shells report it).
pub const EXIT_INTERRUPTED: u8 = 130;

/// The process's interrupt flag, with the signal handler installed on first use (so commands
/// that never ask keep the default behaviour: Ctrl-C ends them at once).
pub fn flag() -> Interrupt {
    static FLAG: OnceLock<Interrupt> = OnceLock::new();
    FLAG.get_or_init(|| {
        let flag = Interrupt::new();
        let handler_flag = flag.clone();
        let installed = ctrlc::set_handler(move || {
            if handler_flag.is_set() {
                eprintln!("interrupted again: exiting now");
                std::process::exit(i32::from(EXIT_INTERRUPTED));
            }
            eprintln!(
                "interrupt: finishing the current update, then writing the last good model \
                 (interrupt again to exit at once)"
            );
            handler_flag.set();
        });
        if let Err(e) = installed {
            eprintln!("warning: no interrupt handler ({e}); Ctrl-C will end the run at once");
        }
        flag
    })
    .clone()
}

/// The error a training command returns after an interrupted run wrote its last good model:
/// exit status [`EXIT_INTERRUPTED`].
#[derive(Debug)]
pub struct Interrupted(pub String);

impl fmt::Display for Interrupted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Interrupted {}

/// After a run wrote what it had: [`Interrupted`] when `stop` says the run was interrupted,
/// naming where the last good model went (`output`, when one was asked for).
pub fn interrupted_after(stop: &StopReason, output: Option<&Path>) -> Result<(), Interrupted> {
    match (stop, output) {
        (StopReason::Interrupted { after }, Some(path)) => Err(Interrupted(format!(
            "interrupted after {after}; wrote the last good model to {}",
            path.display()
        ))),
        (StopReason::Interrupted { after }, None) => Err(Interrupted(format!(
            "interrupted after {after} (no -o given: nothing written)"
        ))),
        _ => Ok(()),
    }
}
