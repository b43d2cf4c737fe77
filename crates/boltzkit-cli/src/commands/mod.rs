//! The command tree: one noun per module, one enum variant per noun.
//!
//! To add a noun `foo`: write `commands/foo.rs` with a `#[derive(clap::Args)] pub struct
//! FooArgs` (holding its verbs as a `#[command(subcommand)]` enum) and `impl FooArgs { pub fn
//! run(self) -> anyhow::Result<()> }`, then add `pub mod foo;`, a documented variant
//! `Foo(foo::FooArgs)` to [`Command`] and its arm in [`Command::run`]. Leaf commands flatten
//! [`crate::args::CommonArgs`], call `common.init()` for the seed and end with a
//! [`crate::report::Summary`].

pub mod gen;

use clap::Subcommand;

/// The nouns of `boltzkit <noun> <verb>`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Generate synthetic datasets and their exact distributions
    #[command(
        long_about = "Generate synthetic datasets (Ising grids, random Bayesian networks) and, \
                      for small models, their exact distribution over all states.\n\n\
                      Example:\n  boltzkit gen ising --rows 5 --cols 4 --samples 1000 -o ising.npy \
                      --truth ising-p.npy"
    )]
    Gen(gen::GenArgs),
}

impl Command {
    /// Runs the chosen command.
    pub fn run(self) -> anyhow::Result<()> {
        match self {
            Command::Gen(args) => args.run(),
        }
    }
}
