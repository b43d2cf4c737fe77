//! `boltzkit potts weights`: sequence weights, written as plmc's weights file.

use super::input::AlignmentFlags;
use crate::args::CommonArgs;
use crate::guard;
use crate::report::Summary;
use boltzkit::potts::weights::{sequence_weights, write_weights, DEFAULT_IDENTITY};
use clap::Args;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Debug, Args)]
pub(super) struct WeightsArgs {
    /// The alignment (FASTA, A2M, Stockholm; .gz read transparently)
    #[arg(long, value_name = "FILE")]
    data: PathBuf,
    #[command(flatten)]
    alignment: AlignmentFlags,
    /// Identity threshold θ: neighbours share at least this fraction of the sites
    #[arg(long, value_name = "θ", default_value_t = DEFAULT_IDENTITY)]
    identity: f64,
    /// Where to write the weights (one per sequence of the file; 0 for dropped ones)
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Serialize)]
struct WeightsSummary<'a> {
    data: &'a std::path::Path,
    sequences: usize,
    kept: usize,
    sites: usize,
    identity: f64,
    n_eff: f64,
    weights_s: f64,
    output: &'a std::path::Path,
}

impl WeightsArgs {
    pub(super) fn run(self) -> anyhow::Result<()> {
        self.common.init_threads()?;
        guard::distinct_files(&[Some(&self.data)], &[Some(&self.output)])?;
        let ali = self.alignment.read(&self.data, None)?;
        let start = Instant::now();
        let kept = sequence_weights(ali.codes.view(), self.identity)?;
        let seconds = start.elapsed().as_secs_f64();
        write_weights(&self.output, &ali.spread(&kept, 0.0)?)?;
        let summary = WeightsSummary {
            data: &self.data,
            sequences: ali.n_read,
            kept: ali.n_sequences(),
            sites: ali.n_sites(),
            identity: self.identity,
            n_eff: kept.iter().sum(),
            weights_s: seconds,
            output: &self.output,
        };
        Summary::new("potts weights", None)
            .extend(&summary)?
            .emit(&self.common)
    }
}
