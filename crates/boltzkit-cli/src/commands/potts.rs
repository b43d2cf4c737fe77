//! `boltzkit potts`: Potts models of sequence alignments and direct coupling analysis (DCA).

use clap::{Args, Subcommand};

mod contacts;
mod energy;
mod fit;
mod input;
mod sample;
pub(super) mod scores;
mod weights;

/// `boltzkit potts <verb>`.
#[derive(Debug, Args)]
pub struct PottsArgs {
    #[command(subcommand)]
    verb: PottsVerb,
}

#[derive(Debug, Subcommand)]
enum PottsVerb {
    /// Fit a Potts model to an alignment by pseudo-likelihood (plmc's DCA by default)
    #[command(long_about = fit::LONG_ABOUT)]
    Fit(fit::FitArgs),
    /// Coupling scores of a model: APC-corrected Frobenius norms, plmc's couplings file
    #[command(
        long_about = "Coupling scores of a fitted model: the Frobenius norm of each pair's \
        couplings in the zero-sum gauge (--exclude-gap leaves the gap's row and column out, \
        PlmDCA's choice), APC-corrected unless --no-apc, written as plmc's / EVcouplings' \
        couplings file (`i A_i j A_j 0 score`, positions and focus letters as the fit's \
        alignment gave them) and, with --matrix, as an L × L matrix (.npy or text).\n\n\
        Example:\n  boltzkit potts scores --model pf14.safetensors -o pf14.couplings"
    )]
    Scores(scores::ScoresArgs),
    /// Contact precision of the top L/5, L/2, L, 2L pairs against a structure; PNG map
    #[command(
        long_about = "Precision of the predicted contacts against a structure's distances \
        (a text file with columns `i j … distance`, positions as in the couplings file): the \
        pairs at |i − j| ≥ --min-separation (default 5) are ranked by score and the top L/5, \
        L/2, L and 2L checked for a distance below --cutoff Å (default 8). Scores come from a \
        model (--model) or a couplings file (--couplings, plmc's too). --png draws the contact \
        map: the structure's contacts in gray, the top --top pairs (default L) over them.\n\n\
        Example:\n  boltzkit potts contacts --couplings pf14.couplings --distances \
        PF00014_struct.dat --png pf14.png"
    )]
    Contacts(contacts::ContactsArgs),
    /// Sample sequences from a model by Gibbs sampling; compare their statistics to data
    #[command(
        long_about = "Draw sequences from a model (exact for tiny models, Gibbs chains \
        otherwise: --burn-in sweeps, then one sequence every --thin sweeps per chain) into a \
        FASTA file (.fasta/.fa/.a2m) or a data file (.npy, .csv, ...). With --check ALIGNMENT \
        (read with the alignment flags, weighted as --identity says) it reports Pearson's r \
        between the samples' and the weighted alignment's one-site frequencies, two-site \
        frequencies and connected correlations: the generative check of a DCA model.\n\n\
        Example:\n  boltzkit potts sample --model pf14.safetensors -n 5000 -o s.fasta \
        --check PF00014_mgap6.fasta.gz --seed 1"
    )]
    Sample(sample::SampleArgs),
    /// Statistical energies of the sequences of an alignment under a model
    #[command(
        long_about = "The statistical energy E(s) = −Σ h_i(s_i) − Σ J_ij(s_i, s_j) of every \
        sequence of an alignment (read with the same flags as the fit's), lower is more \
        probable: `name energy` lines to -o (or stdout).\n\n\
        Example:\n  boltzkit potts energy --model pf14.safetensors --data variants.fasta -o e.txt"
    )]
    Energy(energy::EnergyArgs),
    /// Sequence weights of an alignment, written as plmc's weights file
    #[command(
        long_about = "Sequence weights 1 / (number of sequences at identity ≥ --identity, \
        itself included), plmc's, one per line in plmc's format (0 for sequences the \
        alignment flags dropped), and the effective number of sequences.\n\n\
        Example:\n  boltzkit potts weights --data DHFR.a2m --focus DYR_ECOLI --skip-unknown \
        -o w.txt"
    )]
    Weights(weights::WeightsArgs),
}

impl PottsArgs {
    /// Runs the chosen verb.
    pub fn run(self) -> anyhow::Result<()> {
        match self.verb {
            PottsVerb::Fit(a) => a.run(),
            PottsVerb::Scores(a) => a.run(),
            PottsVerb::Contacts(a) => a.run(),
            PottsVerb::Sample(a) => a.run(),
            PottsVerb::Energy(a) => a.run(),
            PottsVerb::Weights(a) => a.run(),
        }
    }
}
