//! `boltzkit repro <paper>`: regenerate a paper's tables from scratch.

pub mod bslm;
pub mod frank_wolfe;
pub mod fsll;
pub mod popcd;
pub mod sdcp;
