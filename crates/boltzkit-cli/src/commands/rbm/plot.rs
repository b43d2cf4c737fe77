//! `boltzkit rbm plot`: learning curves from a `rbm fit --log` file, or weight filters,
//! samples and reconstructions of a model, as one PNG. The pictures are drawn by
//! `boltzkit_repro::plot` (its `model` module); this file parses the flags and wires.

use super::input::{check_vars, load_binary, sample_memory};
use super::sample::gibbs_samples;
use crate::args::BinarizeArgs;
use crate::args::CommonArgs;
use crate::exit::UsageError;
use crate::report::Summary;
use boltzkit::rbm::file::load_rbm;
use boltzkit::rng::derive_seed;
use boltzkit_repro::plot::model::{draw_metric_log, filters, reconstruction_pairs, tile_shape};
use boltzkit_repro::plot::{image_grid, Normalize, PixelOrder};
use clap::{Args, ValueEnum};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The `--help` text of `rbm plot`.
pub(super) const LONG_ABOUT: &str = "Draw a PNG.\n\n\
--log FILE (the JSONL log of `rbm fit --log`): one learning curve per metric against the \
epoch, a panel each.\n\n\
--model FILE --what filters: the weight columns W[:, j] of the first -n hidden units as \
images, each scaled from its own minimum (black) to its maximum (white).\n\n\
--model FILE --what samples: the visible states of -n block Gibbs chains started from uniform \
random states and run --gibbs-steps steps (the same states as `rbm sample` with the same \
--seed); 0 black, 1 white.\n\n\
--model FILE --what reconstructions: the first -n rows v of --data, each beside its \
mean-field reconstruction p(v = 1 | h = p(h | v)) = σ(b + W·σ(c + Wᵀv)) (deterministic; what \
the reconstruction-error monitor measures).\n\n\
A visible vector is drawn as an H×W image: --shape HxW, by default square when the number of \
visible units is a perfect square; --order row reads pixel (r, c) at r·W + c (MNIST), col at \
c·H + r.\n\n\
Examples:\n  boltzkit rbm plot --log train.jsonl -o curves.png\n  \
boltzkit rbm plot --model m.safetensors --what filters -n 100 -o filters.png\n  \
boltzkit rbm plot --model m.safetensors --what reconstructions --data test.amat.gz -n 20 \
-o recon.png";

/// What `rbm plot --model` draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum What {
    /// Weight columns of the first N hidden units
    Filters,
    /// N Gibbs chains' visible states
    Samples,
    /// N data rows beside their mean-field reconstructions
    Reconstructions,
}

impl What {
    fn name(self) -> &'static str {
        match self {
            What::Filters => "filters",
            What::Samples => "samples",
            What::Reconstructions => "reconstructions",
        }
    }
}

/// `--order`: how a visible vector maps to image pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum OrderArg {
    /// Pixel (r, c) at r·W + c
    Row,
    /// Pixel (r, c) at c·H + r
    Col,
}

#[derive(Debug, Args)]
pub(super) struct PlotArgs {
    /// JSONL metric log of `rbm fit --log`: a learning curve per metric against the epoch
    #[arg(long, value_name = "FILE", conflicts_with = "model")]
    log: Option<PathBuf>,
    /// Logarithmic epoch axis for --log (records at epoch 0 are then left out)
    #[arg(long, requires = "log")]
    log_x: bool,
    /// The model file (safetensors, boltzkit/rbm/v1)
    #[arg(long, value_name = "FILE", requires = "what")]
    model: Option<PathBuf>,
    /// What to draw from --model
    #[arg(long, value_enum, requires = "model")]
    what: Option<What>,
    /// Data whose rows are reconstructed (--what reconstructions)
    #[arg(long, value_name = "FILE")]
    data: Option<PathBuf>,
    #[command(flatten)]
    binarize: BinarizeArgs,
    /// Image shape of a visible vector, HxW [default: square when the visible units are a
    /// perfect square]
    #[arg(long, value_name = "HxW")]
    shape: Option<String>,
    /// Pixel order of a visible vector
    #[arg(long, value_enum, default_value_t = OrderArg::Row)]
    order: OrderArg,
    /// Hidden units (filters), chains (samples) or data rows (reconstructions) to draw
    #[arg(short = 'n', long = "count", value_name = "N", default_value_t = 100,
          value_parser = clap::value_parser!(u64).range(1..))]
    count: u64,
    /// Block Gibbs steps per chain (--what samples)
    #[arg(long, value_name = "K", default_value_t = 1000)]
    gibbs_steps: usize,
    /// Images (pairs, for reconstructions) per row [default: about a square picture]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    cols: Option<u64>,
    /// Screen pixels per image pixel [default: images about 56 pixels high]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=64))]
    scale: Option<u64>,
    /// The PNG to write
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    #[command(flatten)]
    common: CommonArgs,
}

impl PlotArgs {
    pub(super) fn run(self) -> anyhow::Result<()> {
        crate::guard::files(
            &[
                self.log.as_deref(),
                self.model.as_deref(),
                self.data.as_deref(),
            ],
            &[Some(&self.output)],
        )?;
        match (&self.log, &self.model, self.what) {
            (Some(log), _, _) => self.curves(log),
            (None, Some(model), Some(what)) => self.images(model, what),
            _ => Err(UsageError::new(
                "give --log FILE, or --model FILE --what filters|samples|reconstructions",
            )
            .into()),
        }
    }

    /// One chart per metric of the log, against the epoch.
    fn curves(&self, log: &Path) -> anyhow::Result<()> {
        self.common.init_threads()?;
        let drawn = draw_metric_log(log, self.log_x, &self.output)?;
        Summary::new("rbm plot", None)
            .extend(&CurvesSummary {
                what: "curves",
                log: log.display().to_string(),
                records: drawn.records,
                metrics: drawn.metrics,
                skipped: drawn.skipped,
                output: self.output.display().to_string(),
            })?
            .emit(&self.common)
    }

    /// Filters, samples or reconstructions of the model as image tiles.
    fn images(&self, model: &Path, what: What) -> anyhow::Result<()> {
        if what != What::Reconstructions && self.data.is_some() {
            return Err(UsageError::new("--data applies only to --what reconstructions").into());
        }
        let random =
            what == What::Samples || (what == What::Reconstructions && self.binarize.is_random());
        let seed = if random {
            Some(self.common.init()?)
        } else {
            self.common.init_threads()?;
            None
        };
        let rbm = load_rbm(model)?.rbm;
        let (h, w) = tile_shape(self.shape.as_deref(), rbm.n_visible())?;
        let n = usize::try_from(self.count).unwrap_or(usize::MAX);
        let scale = self
            .scale
            .map_or_else(|| (56 / h.max(w)).max(1), |s| s as usize);
        let mut grid = boltzkit_repro::plot::TileGrid::new(h, w)
            .order(match self.order {
                OrderArg::Row => PixelOrder::RowMajor,
                OrderArg::Col => PixelOrder::ColumnMajor,
            })
            .scale(scale)
            .cols(
                self.cols
                    .map_or(0, |c| usize::try_from(c).unwrap_or(usize::MAX)),
            );
        let (mut gibbs_steps, mut data_file) = (None, None);
        let (tiles, count) = match what {
            What::Filters => {
                let k = n.min(rbm.n_hidden());
                (filters(&rbm, k), k)
            }
            What::Samples => {
                grid = grid.normalize(Normalize::Unit);
                let seed = seed.unwrap_or_default();
                gibbs_steps = Some(self.gibbs_steps);
                crate::guard::memory(
                    &format!("rbm plot --what samples -n {}", self.count),
                    sample_memory(self.count, rbm.n_visible() as u64, rbm.n_hidden() as u64),
                )?;
                let v = gibbs_samples(&rbm, n, self.gibbs_steps, seed, self.common.quiet)?;
                (v, n)
            }
            What::Reconstructions => {
                let path = self
                    .data
                    .as_deref()
                    .ok_or_else(|| UsageError::new("--what reconstructions needs --data FILE"))?;
                let binarize = self.binarize.resolve(derive_seed(seed.unwrap_or(0), 2));
                let data = load_binary(path, binarize)?;
                check_vars(path, &data, model, &rbm)?;
                let k = n.min(data.n_samples());
                grid = grid.normalize(Normalize::Unit).group(2);
                data_file = Some(path.display().to_string());
                (reconstruction_pairs(&rbm, &data, k)?, k)
            }
        };
        let (width, height) = image_grid(&self.output, &tiles, &grid)?;
        Summary::new("rbm plot", seed)
            .extend(&ImagesSummary {
                what: what.name(),
                model: model.display().to_string(),
                gibbs_steps,
                data: data_file,
                count,
                shape: format!("{h}x{w}"),
                order: format!("{:?}", self.order).to_lowercase(),
                width,
                height,
                output: self.output.display().to_string(),
            })?
            .emit(&self.common)
    }
}

/// What `rbm plot --log` reports.
#[derive(Serialize)]
struct CurvesSummary {
    what: &'static str,
    log: String,
    records: usize,
    metrics: Vec<String>,
    skipped: Vec<String>,
    output: String,
}

/// What `rbm plot --model` reports (`gibbs_steps` for samples, `data` for reconstructions).
#[derive(Serialize)]
struct ImagesSummary {
    what: &'static str,
    model: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    gibbs_steps: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<String>,
    count: usize,
    shape: String,
    order: String,
    width: u32,
    height: u32,
    output: String,
}
