//! `boltzkit repro <paper>`: regenerate a paper's tables from scratch.

pub mod fsll;
