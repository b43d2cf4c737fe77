//! Refusals before any work (an output that is an input, a run that cannot fit in memory, a
//! model under a data file's name, a data file of the wrong width): `boltzkit_repro::guard`.

pub use boltzkit_repro::guard::*;
