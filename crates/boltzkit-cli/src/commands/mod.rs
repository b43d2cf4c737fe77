//! The command tree: one noun per module, one enum variant per noun.
//!
//! To add a noun `foo`: write `commands/foo.rs` with a `#[derive(clap::Args)] pub struct
//! FooArgs` (holding its verbs as a `#[command(subcommand)]` enum) and `impl FooArgs { pub fn
//! run(self) -> anyhow::Result<()> }`, then add `pub mod foo;`, a documented variant
//! `Foo(foo::FooArgs)` to [`Command`] and its arm in [`Command::run`]. Leaf commands flatten
//! [`crate::args::CommonArgs`], call `common.init()` for the seed and end with a
//! [`crate::report::Summary`].

pub mod bench;
pub mod data;
pub mod demo;
pub mod fsll;
pub mod fvbm;
pub mod gen;
pub mod lab;
pub mod potts;
pub mod rbm;
pub mod repro;

use clap::Subcommand;

/// The nouns of `boltzkit <noun> <verb>`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Generate synthetic datasets and their exact distributions
    #[command(
        long_about = "Generate synthetic datasets (Ising grids, random Bayesian networks, \
                      random FVBMs, Artificial Modes, bars & stripes) and, \
                      for small models, their exact distribution over all states.\n\n\
                      Example:\n  boltzkit gen ising --rows 5 --cols 4 --samples 1000 -o ising.npy \
                      --truth ising-p.npy"
    )]
    Gen(gen::GenArgs),

    /// The five systems in about a minute on generated data, each checked against an exact answer
    #[command(
        long_about = "Run one small seeded case of each system on generated data, each checked \
                      against an exact answer or the paper: FSLL (KL to the truth), FVBM by Newton \
                      and BSLM (existence, standard errors, coverage), CD-12 against S-DCP, the \
                      bracket [RAISE, AIS] around an exact log-likelihood, pop-CD against CD-1, and \
                      Frank-Wolfe. About a minute on 2 cores; --quick takes seconds. A table on \
                      stdout, progress on stderr, --json for one object, -o DIR for one PNG per row; \
                      each row names the repro command of its full experiment.\n\nExamples:\n  \
                      boltzkit demo\n  boltzkit demo --quick --json\n  boltzkit demo -o demo-figures"
    )]
    Demo(demo::DemoArgs),

    /// Full-span log-linear models: fit, eval, sample
    #[command(
        long_about = "Full-span log-linear models (Takabatake & Akaho): an n-th order \
                      Boltzmann machine over finite discrete variables learned greedily under an \
                      MDL cost.\n\nExample:\n  boltzkit fsll fit --data ising.npy --truth p.npy -o m.safetensors"
    )]
    Fsll(fsll::FsllArgs),

    /// Fully visible Boltzmann machines: fit, eval, sample, tests
    #[command(
        long_about = "Fully visible Boltzmann machines (Ising models) P(x) ∝ exp(½ xᵀMx + bᵀx) \
                      in the spin (±1) or binary (0/1) convention: maximum pseudo-likelihood \
                      (BSLM, gradient ascent, Newton), exact maximum likelihood, PCD, and Wald \
                      tests from sandwich standard errors.\n\nExample:\n  boltzkit fvbm fit \
                      --data x.npy --algo bslm -o m.safetensors"
    )]
    Fvbm(fvbm::FvbmArgs),

    /// Restricted Boltzmann machines: fit, eval, sample, plot
    #[command(
        long_about = "Restricted Boltzmann machines with binary units, trained by CD-k, \
                      PCD-k, the centered gradient, S-DCP or centered S-DCP (Upadhya & Sastry), \
                      pop-CD-k or parallel tempering (Krause, Fischer & Igel); \
                      exact or AIS log-likelihoods; Gibbs sampling; PNG plots.\n\nExample:\n  boltzkit rbm \
                      fit --data bas.csv --algo sdcp --hidden 4 -o m.safetensors"
    )]
    Rbm(rbm::RbmArgs),

    /// Potts models of sequence alignments: direct coupling analysis (fit, scores, contacts, ...)
    #[command(
        long_about = "Potts models of multiple sequence alignments and direct coupling analysis \
                      (DCA): fit by pseudo-likelihood (plmc's by default), coupling scores, \
                      contact precision against a structure with a PNG map, Gibbs samples \
                      checked against the data, energies, sequence weights.\n\nExample:\n  \
                      boltzkit potts fit --data PF00014_mgap6.fasta.gz -o pf14.safetensors \
                      --couplings pf14.couplings\n  boltzkit potts contacts --couplings \
                      pf14.couplings --distances PF00014_struct.dat --png pf14.png"
    )]
    Potts(potts::PottsArgs),

    /// Experiments on estimators: gradient bias and variance against the exact gradient
    #[command(
        long_about = "Experiments on the estimators themselves. `lab gradient`: squared bias \
                      and variance of RBM gradient estimators (CD-k, PCD-k, pop-CD-k, S-DCP, \
                      PT) against the exact gradient, as Table 1 of the pop-CD paper.\n\n\
                      Example:\n  boltzkit lab gradient --data bas4.csv --estimators \
                      cd-1,popcd-1 --seed 1"
    )]
    Lab(lab::LabArgs),

    /// Reproduce a paper's experiments from scratch
    #[command(
        long_about = "Reproduce a paper's experiments from scratch, with fixed, \
                      recorded seeds.\n\nExample:\n  boltzkit repro fsll -o fsll-table1.json"
    )]
    Repro(repro::ReproArgs),

    /// Time the hot paths on real shapes (the boltzkit side of BENCHMARKS.md's comparisons)
    #[command(
        long_about = "Time the library's hot paths on real shapes: RBM training epochs, AIS, \
                      exact ln Z. Each verb repeats its work and reports the minimum and the \
                      median wall time.\n\nExample:\n  boltzkit bench exact-logz --visible 784 \
                      --hidden 25"
    )]
    Bench(bench::BenchArgs),

    /// The public data sets by name: list them, fetch verified copies, print their paths
    #[command(
        long_about = "The public data sets the papers use, by name: binarized MNIST, MNIST, \
                      Caltech101 Silhouettes, binary alphadigits, the DEBD density-estimation \
                      sets, protein alignments. Each file has its original URL, size, SHA-256 \
                      and licence (`data list NAME`). Files go to a cache (BOLTZKIT_DATA, else \
                      the platform's cache directory), copied from a mirror folder \
                      (BOLTZKIT_DATA_MIRROR or --mirror) or downloaded, and are checked; a \
                      corrupted cached copy is fetched again. Every --data FILE (and --test, \
                      --valid) also takes NAME[:split].\n\nExamples:\n  boltzkit data list\n  \
                      boltzkit data fetch binarized_mnist --mirror ../shared/data\n  \
                      boltzkit rbm fit --data binarized_mnist --hidden 100 -o m.safetensors"
    )]
    Data(data::DataArgs),
}

impl Command {
    /// Runs the chosen command.
    pub fn run(self) -> anyhow::Result<()> {
        match self {
            Command::Gen(args) => args.run(),
            Command::Demo(args) => args.run(),
            Command::Fsll(args) => args.run(),
            Command::Fvbm(args) => args.run(),
            Command::Rbm(args) => args.run(),
            Command::Lab(args) => args.run(),
            Command::Potts(args) => args.run(),
            Command::Repro(args) => args.run(),
            Command::Bench(args) => args.run(),
            Command::Data(args) => args.run(),
        }
    }
}
