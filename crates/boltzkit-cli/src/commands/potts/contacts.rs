//! `boltzkit potts contacts`: precision of predicted contacts against a structure; PNG map.

use super::input::load_model;
use super::scores::ScoreFlags;
use crate::args::CommonArgs;
use crate::exit::UsageError;
use crate::guard;
use crate::report::Summary;
use boltzkit::potts::contacts::{
    contact_precision, ranked_pairs, read_distances, ContactParams, Distances, PrecisionAt,
};
use boltzkit::potts::dca::scored_pairs;
use boltzkit::potts::scores::{read_couplings, PairScore};
use boltzkit_repro::plot::{contact_map, ContactMap};
use clap::{ArgGroup, Args};
use serde::Serialize;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("scores").required(true).args(["model", "couplings"])))]
pub(super) struct ContactsArgs {
    /// The structure's distances: lines `i j … distance` (Å, last column)
    #[arg(long, value_name = "FILE")]
    distances: PathBuf,
    /// Scores from this model file (boltzkit/potts/v1)
    #[arg(long, value_name = "FILE")]
    model: Option<PathBuf>,
    /// Scores from this couplings file (`i A_i j A_j 0 score`, plmc's; or `i j score`)
    #[arg(long, value_name = "FILE")]
    couplings: Option<PathBuf>,
    /// A pair is a contact below this distance (Å)
    #[arg(long, value_name = "Å", default_value_t = 8.0)]
    cutoff: f64,
    /// Rank and count only pairs with |i − j| at least this
    #[arg(long, value_name = "N", default_value_t = 5)]
    min_separation: usize,
    /// The length L of the depths L/5 … 2L [default: the model's sites, or the positions in
    /// the couplings file]
    #[arg(long, value_name = "L")]
    length: Option<usize>,
    /// Draw the contact map into this PNG
    #[arg(long, value_name = "FILE")]
    png: Option<PathBuf>,
    /// Predicted pairs drawn on the map [default: L]
    #[arg(long, value_name = "N")]
    top: Option<usize>,
    #[command(flatten)]
    scores: ScoreFlags,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Serialize)]
struct ContactsSummary<'a> {
    scores: &'a Path,
    distances: &'a Path,
    length: usize,
    cutoff: f64,
    min_separation: usize,
    pairs_ranked: usize,
    pairs_without_distance: usize,
    contacts: usize,
    precision: &'a [PrecisionAt],
    png: Option<&'a Path>,
}

impl ContactsArgs {
    /// The scored pairs and L, from the model or the couplings file.
    fn scores(&self) -> anyhow::Result<(Vec<PairScore>, usize, &Path)> {
        if let Some(path) = &self.model {
            let (model, info) = load_model(path)?;
            let pairs = scored_pairs(&model, info.as_ref(), &self.scores.params())?.pairs;
            return Ok((pairs, model.n_sites(), path));
        }
        let path = self
            .couplings
            .as_deref()
            .ok_or_else(|| UsageError::new("give --model or --couplings"))?;
        let pairs = read_couplings(path)?;
        let sites: BTreeSet<i64> = pairs.iter().flat_map(|p| [p.i, p.j]).collect();
        Ok((pairs, sites.len(), path))
    }

    pub(super) fn run(self) -> anyhow::Result<()> {
        self.common.init_threads()?;
        if let Some(png) = &self.png {
            guard::distinct_files(
                &[
                    Some(&self.distances),
                    self.model.as_deref(),
                    self.couplings.as_deref(),
                ],
                &[Some(png)],
            )?;
        }
        let params = ContactParams {
            cutoff: self.cutoff,
            min_separation: self.min_separation,
        };
        params.check()?;
        let distances = read_distances(&self.distances)?;
        let (pairs, sites, source) = self.scores()?;
        let length = self.length.unwrap_or(sites);
        let report = contact_precision(&pairs, length, &distances, &params)?;
        if let Some(png) = &self.png {
            let top = self.top.unwrap_or(length);
            draw(png, &pairs, &distances, &params, top, &report.precision)?;
        }
        if !self.common.json && !self.common.quiet {
            print_table(&report.precision)?;
        }
        let summary = ContactsSummary {
            scores: source,
            distances: &self.distances,
            length,
            cutoff: self.cutoff,
            min_separation: self.min_separation,
            pairs_ranked: report.pairs_ranked,
            pairs_without_distance: report.pairs_without_distance,
            contacts: report.contacts,
            precision: &report.precision,
            png: self.png.as_deref(),
        };
        let mut s = Summary::new("potts contacts", None);
        s.extend(&summary)?;
        s.emit(&self.common)
    }
}

/// The precision table on stdout.
fn print_table(rows: &[PrecisionAt]) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{:>5} {:>6} {:>6} {:>9}",
        "top", "pairs", "true", "precision"
    )?;
    for r in rows {
        writeln!(
            out,
            "{:>5} {:>6} {:>6} {:>9.3}",
            r.depth, r.ranked, r.true_contacts, r.precision
        )?;
    }
    Ok(())
}

/// The contact map: the structure's contacts and the top `top` predicted pairs.
fn draw(
    path: &Path,
    pairs: &[PairScore],
    distances: &Distances,
    params: &ContactParams,
    top: usize,
    precision: &[PrecisionAt],
) -> anyhow::Result<()> {
    let (ranked, _) = ranked_pairs(pairs, distances, params)?;
    let contacts = distances.contacts(params);
    let positions: Vec<i64> = pairs.iter().flat_map(|p| [p.i, p.j]).collect();
    let range = (
        positions.iter().copied().min().unwrap_or(1),
        positions.iter().copied().max().unwrap_or(1),
    );
    let shown = ranked.len().min(top);
    let hits = ranked[..shown].iter().filter(|(_, c)| *c).count();
    let at_l = precision
        .iter()
        .find(|p| p.depth == "L")
        .map_or(0.0, |p| p.precision);
    let map = ContactMap {
        title: format!(
            "top {shown} pairs: {hits} contacts ({:.0}%), precision at L {:.3}",
            100.0 * hits as f64 / shown.max(1) as f64,
            at_l
        ),
        range,
        contacts,
        predicted: ranked[..shown]
            .iter()
            .map(|(p, c)| (p.i, p.j, *c))
            .collect(),
    };
    contact_map(path, &map)
}
