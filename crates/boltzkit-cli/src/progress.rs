//! Progress bars and spinners on stderr (live on a terminal, periodic lines otherwise):
//! [`boltzkit_repro::cli::terminal`].

pub use boltzkit_repro::cli::terminal::{bar, spinner};
