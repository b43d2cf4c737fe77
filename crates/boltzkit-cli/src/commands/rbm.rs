//! `boltzkit rbm`: train, evaluate and sample restricted Boltzmann machines.

use clap::{Args, Subcommand};

mod eval;
mod features;
mod fit;
mod fw;
mod fw_flags;
mod input;
mod plot;
mod resume;
mod sample;
mod units;
mod units_couplings;
mod units_data;
mod units_eval;
mod units_flags;

/// `boltzkit rbm <verb>`.
#[derive(Debug, Args)]
pub struct RbmArgs {
    #[command(subcommand)]
    verb: RbmVerb,
}

// parsed once per process: the size of the largest verb's flags does not matter
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
enum RbmVerb {
    /// Train an RBM on 0/1 data (CD, PCD, CG, S-DCP, CS-DCP, pop-CD, PT)
    #[command(
        long_about = "Train a binary restricted Boltzmann machine on 0/1 data with CD-k, \
        PCD-k, the centered gradient (cg), S-DCP, centered S-DCP (csdcp), pop-CD-k (popcd: \
        CD-k with importance-weighted negative samples, Eq. 8 of Krause et al.; --loo for Eq. 9) \
        or parallel tempering (pt: --replicas M at inverse temperatures uniform in [0, 1], --k \
        tempered steps and exchange rounds per update). The --log file carries pop-CD's \
        effective sample size (popcd_ess) and PT's exchange rates (pt_swap_rate_*). Without --model the \
        model starts from the initialization of Sec. 4.1 of the S-DCP paper (W ~ N(0, 0.01²), \
        c = 0, b = logit of the data means). Prints the stop reason, the exact average \
        log-likelihood when the smaller layer has at most 25 units (or with --eval exact, up \
        to 30), and the wall time. A run \
        that diverges exits 1 but still writes the last good model to -o.\n\n\
        Example:\n  boltzkit rbm fit --data bas.csv --algo sdcp --hidden 4 --epochs 200 \
        --lr 0.1 --batch-size 0 --k 1 --inner 3 -o m.safetensors --seed 1"
    )]
    Fit(fit::FitArgs),
    /// Average log-likelihood of data under a model: exact, or the bracket [RAISE, AIS]
    #[command(
        long_about = "Evaluate a model on data: the average log-likelihood (nats per \
        sample). exact: ln Z by enumerating the smaller layer (≤ 30 units; the default for such \
        models). bracket (the default for larger models): the interval [RAISE, forward AIS], \
        each end with its standard error, and a one-line diagnosis when the interval is \
        inverted beyond 3 standard errors (the annealing chain has not reached the model; \
        with --convergence, an inversion that persists as the steps double means the chain is \
        not mixing: use --method exact for a layer of ≤ 30 units, more chains or a tempered \
        transition, not more steps) or wider than --max-width. Forward AIS (ais) anneals from the base-rate model: on average it \
        underestimates ln Z, so its log-likelihood is optimistic. RAISE (raise, Burda, Grosse & \
        Salakhutdinov 2015) anneals each test vector back to the base model (--raise-chains \
        chains per vector, on --raise-vectors of them at random if given): on average it is \
        below the log-likelihood of the annealing model (forward AIS's own chain), which \
        approaches the model's as the steps grow. --convergence K reports the bracket at K, \
        2K, 4K, ... steps up to the schedule's, so you see whether the ends meet. \
        reverse-ais-from-data pools reverse chains started at data rows into one ln Z: neither \
        a bound nor consistent, kept for comparison.\n\n\
        Examples:\n  boltzkit rbm eval --model m.safetensors --data bas.csv --method exact\n  \
        boltzkit rbm eval --model mnist.safetensors --data test.amat.gz --raise-vectors 1000 --json\n  \
        boltzkit rbm eval --model mnist.safetensors --data test.amat.gz --convergence 500"
    )]
    Eval(eval::EvalArgs),
    /// Draw samples from a model by block Gibbs sampling
    #[command(
        long_about = "Draw samples from a model: one block Gibbs chain per sample, started \
        from uniform random visible states (unit-type models: the visible layer's own \
        independent model), run for --gibbs-steps steps. Gaussian visible units: --sampler \
        gibbs-langevin follows each Gibbs step by --langevin-steps Metropolis-adjusted \
        Langevin steps on p(v) (Liao et al. 2022).\n\n\
        Example:\n  boltzkit rbm sample --model m.safetensors -n 1000 -o s.npy --seed 3"
    )]
    Sample(sample::SampleArgs),
    /// Hidden features E[h | v] of a data file (for downstream classifiers)
    #[command(
        long_about = "Write the hidden features E[h_j | v] = σ(c_j + vᵀW_j) of every row of a \
        data file as a samples × hidden .npy (f64), e.g. for the classification error of \
        Figure 2 of the Frank-Wolfe paper.\n\n\
        Example:\n  boltzkit rbm features --model m.safetensors --data x.amat -o f.npy"
    )]
    Features(features::FeaturesArgs),
    /// Draw learning curves, weight filters, samples or reconstructions as a PNG
    #[command(long_about = plot::LONG_ABOUT)]
    Plot(plot::PlotArgs),
    /// Effective couplings of a model with categorical visible units, scored for contacts
    #[command(
        long_about = "Write the contact scores of a model with categorical (Potts) visible \
        units: PGM's effective couplings (Tubiana, Cocco & Monasson 2019), the mixed second \
        differences of ln p(v) averaged over the data rows, in the zero-sum gauge, scored by \
        their Frobenius norm with APC as plmc's couplings file; rank them against a structure \
        with `boltzkit potts contacts --couplings`.\n\n\
        Example:\n  boltzkit rbm couplings --model kunitz.safetensors --data PF00014.fasta.gz \
        --reweight 0.8 -o rbm.couplings"
    )]
    Couplings(units_couplings::CouplingsArgs),
}

impl RbmArgs {
    /// Runs the chosen verb.
    pub fn run(self) -> anyhow::Result<()> {
        match self.verb {
            RbmVerb::Fit(a) if a.units.is_unit_pair() => units::fit(a),
            RbmVerb::Fit(a) if a.is_frank_wolfe() => {
                a.units.refuse_on_binary()?;
                fw::fit(a)
            }
            RbmVerb::Fit(a) => {
                a.units.refuse_on_binary()?;
                a.run()
            }
            RbmVerb::Eval(a) if units_data::is_unit_model(&a.model) => units_eval::eval(a),
            RbmVerb::Eval(a) => {
                a.units.refuse_on_binary()?;
                a.run()
            }
            RbmVerb::Sample(a) if units_data::is_unit_model(&a.model) => units_eval::sample(a),
            RbmVerb::Sample(a) => a.run(),
            RbmVerb::Features(a) => a.run(),
            RbmVerb::Plot(a) => a.run(),
            RbmVerb::Couplings(a) => a.run(),
        }
    }
}
