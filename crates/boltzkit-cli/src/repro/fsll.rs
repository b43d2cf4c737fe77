//! Table 1 of the FSLL paper (Sec. 3.4, 3.6): the six artificial datasets, learned by FL.

use crate::fsll_run::{fit_with_progress, outcome, FsllOutcome};
use anyhow::Context;
use boltzkit::data::synth::{BayesNet, Distribution, IsingGrid};
use boltzkit::data::Dataset;
use boltzkit::fsll::FsllParams;
use boltzkit::rng::{derive_seed, rng_from_seed};
use serde::Serialize;

/// One of the six datasets of Sec. 3.4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Table1Data {
    /// 5 × 4 Ising grid, J = 1/2.
    Ising5x4,
    /// 20-node Bayesian network, 2 parents each (37 edges).
    Bn20_37,
    /// 20-node Bayesian network, 3 parents each (54 edges).
    Bn20_54,
}

/// A dataset of Table 1 with its size: S = 1,000 samples, L = 100,000.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Table1Row {
    /// The data-generating model.
    pub data: Table1Data,
    /// True for L (100,000 samples), false for S (1,000).
    pub large: bool,
}

/// The paper's FL row of Table 1: KL(p_d‖p_θ), KL(p*‖p_θ), #basis, seconds.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct PaperFigures {
    /// KL(p_d‖p_θ) in nats.
    pub kl_data: f64,
    /// KL(p*‖p_θ) in nats.
    pub kl_truth: f64,
    /// Basis functions.
    pub n_basis: usize,
    /// CPU seconds (Java 8, i7-6700K at 4 GHz, median of three).
    pub seconds: f64,
}

impl Table1Row {
    /// The six rows in the paper's order.
    pub const ALL: [Table1Row; 6] = [
        Table1Row {
            data: Table1Data::Ising5x4,
            large: false,
        },
        Table1Row {
            data: Table1Data::Ising5x4,
            large: true,
        },
        Table1Row {
            data: Table1Data::Bn20_37,
            large: false,
        },
        Table1Row {
            data: Table1Data::Bn20_37,
            large: true,
        },
        Table1Row {
            data: Table1Data::Bn20_54,
            large: false,
        },
        Table1Row {
            data: Table1Data::Bn20_54,
            large: true,
        },
    ];

    /// The paper's name, e.g. `Ising5x4S`.
    pub fn name(&self) -> String {
        let base = match self.data {
            Table1Data::Ising5x4 => "Ising5x4",
            Table1Data::Bn20_37 => "BN20-37",
            Table1Data::Bn20_54 => "BN20-54",
        };
        format!("{base}{}", if self.large { "L" } else { "S" })
    }

    /// Number of samples.
    pub fn n_samples(&self) -> usize {
        if self.large {
            100_000
        } else {
            1_000
        }
    }

    /// The FL figures the paper reports (Table 1).
    pub fn paper(&self) -> PaperFigures {
        let (kl_data, kl_truth, n_basis, seconds) = match (self.data, self.large) {
            (Table1Data::Ising5x4, false) => (2.501, 0.012, 31, 5.0),
            (Table1Data::Ising5x4, true) => (0.476, 0.004, 37, 9.0),
            (Table1Data::Bn20_37, false) => (4.355, 0.317, 39, 5.0),
            (Table1Data::Bn20_37, true) => (0.697, 0.026, 105, 12.0),
            (Table1Data::Bn20_54, false) => (3.288, 0.697, 41, 5.0),
            (Table1Data::Bn20_54, true) => (0.430, 0.057, 192, 23.0),
        };
        PaperFigures {
            kl_data,
            kl_truth,
            n_basis,
            seconds,
        }
    }

    /// The true distribution and a sample of it. The Bayesian network is drawn once per
    /// generator from `(seed, 1000 + parents)`, so S and L share it as in the paper; the
    /// sample of trial `t` comes from `(seed, 100·row + t)`.
    pub fn generate(&self, seed: u64, trial: u64) -> anyhow::Result<(Distribution, Dataset)> {
        let row = Table1Row::ALL
            .iter()
            .position(|r| r.data == self.data && r.large == self.large)
            .expect("a row of the table") as u64;
        let mut rng = rng_from_seed(derive_seed(seed, 100 * row + trial));
        let n = self.n_samples();
        match self.data {
            Table1Data::Ising5x4 => {
                let truth = IsingGrid::ising5x4().distribution()?;
                let data = truth.sample(n, &mut rng)?;
                Ok((truth, data))
            }
            Table1Data::Bn20_37 | Table1Data::Bn20_54 => {
                let k = if self.data == Table1Data::Bn20_37 {
                    2
                } else {
                    3
                };
                let mut net_rng = rng_from_seed(derive_seed(seed, 1000 + k as u64));
                let net = BayesNet::random(20, k, &mut net_rng)?;
                let data = net.sample(n, &mut rng)?;
                Ok((net.distribution()?, data))
            }
        }
    }
}

/// One learned dataset of the reproduction.
#[derive(Debug, Clone, Serialize)]
pub struct Table1Result {
    /// The paper's dataset name.
    pub name: String,
    /// Samples.
    pub samples: usize,
    /// Each trial's figures.
    pub trials: Vec<FsllOutcome>,
    /// Medians over trials.
    pub median: FsllOutcome,
    /// The paper's figures.
    pub paper: PaperFigures,
}

/// Learns `row` for `trials` sample seeds.
pub fn run_row(
    row: Table1Row,
    seed: u64,
    trials: usize,
    params: &FsllParams,
    quiet: bool,
) -> anyhow::Result<Table1Result> {
    let mut outs = Vec::with_capacity(trials);
    for t in 0..trials {
        let (truth, data) = row.generate(seed, t as u64)?;
        let fit = fit_with_progress(&data, params, true)
            .with_context(|| format!("learning {} (trial {t})", row.name()))?;
        let out = outcome(&fit, Some(truth.probs()))?;
        if !quiet {
            eprintln!(
                "{} trial {t}: KL(p_d||p) {:.4}, KL(p*||p) {:.4}, {} basis, {:.3} s",
                row.name(),
                out.kl_data,
                out.kl_truth.unwrap_or(f64::NAN),
                out.n_basis,
                out.learn_s
            );
        }
        outs.push(out);
    }
    Ok(Table1Result {
        name: row.name(),
        samples: row.n_samples(),
        median: median_outcome(&outs),
        trials: outs,
        paper: row.paper(),
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

fn median_outcome(outs: &[FsllOutcome]) -> FsllOutcome {
    let med = |f: &dyn Fn(&FsllOutcome) -> f64| median(outs.iter().map(f).collect());
    FsllOutcome {
        kl_data: med(&|o| o.kl_data),
        kl_truth: outs[0]
            .kl_truth
            .map(|_| med(&|o| o.kl_truth.unwrap_or(f64::NAN))),
        n_basis: med(&|o| o.n_basis as f64).round() as usize,
        cost: med(&|o| o.cost),
        iterations: med(&|o| o.iterations as f64).round() as usize,
        learn_s: med(&|o| o.learn_s),
    }
}

/// Table 1's FL columns as Markdown, ours (medians) next to the paper's.
pub fn markdown(results: &[Table1Result]) -> String {
    let mut s = String::from(
        "| Data | KL(p_d‖p_θ) | KL(p*‖p_θ) | #Basis | Time (s) | paper KL(p_d‖p_θ) | paper KL(p*‖p_θ) | paper #Basis | paper time (s) |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    for r in results {
        s.push_str(&format!(
            "| {} | {:.3} | {:.3} | {} | {:.3} | {:.3} | {:.3} | {} | {} |\n",
            r.name,
            r.median.kl_data,
            r.median.kl_truth.unwrap_or(f64::NAN),
            r.median.n_basis,
            r.median.learn_s,
            r.paper.kl_data,
            r.paper.kl_truth,
            r.paper.n_basis,
            r.paper.seconds
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_have_the_papers_names_and_sizes() {
        let names: Vec<String> = Table1Row::ALL.iter().map(|r| r.name()).collect();
        assert_eq!(
            names,
            [
                "Ising5x4S",
                "Ising5x4L",
                "BN20-37S",
                "BN20-37L",
                "BN20-54S",
                "BN20-54L"
            ]
        );
        assert_eq!(Table1Row::ALL[1].n_samples(), 100_000);
    }

    #[test]
    fn small_and_large_share_the_network() {
        let (a, _) = Table1Row::ALL[2].generate(5, 0).unwrap();
        let (b, _) = Table1Row::ALL[3].generate(5, 1).unwrap();
        assert_eq!(a.probs(), b.probs());
        let (_, d0) = Table1Row::ALL[2].generate(5, 0).unwrap();
        let (_, d1) = Table1Row::ALL[2].generate(5, 1).unwrap();
        assert_ne!(d0, d1, "trials draw different samples");
    }

    #[test]
    fn median_of_even_and_odd() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
