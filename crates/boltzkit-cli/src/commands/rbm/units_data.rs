//! The data of unit-type RBMs (`--visible-units`): integer codes (0/1 for Bernoulli, states
//! per site for categorical, from a data file or an alignment), real values for Gaussian
//! units (.npy, or comma/tab/space-separated text); sample weights; whether a model file is a
//! unit-type model (`boltzkit/rbm/v2`) without reading its tensors
//! ([`boltzkit::rbm::units::is_unit_model_file`]).

use anyhow::Context;
use boltzkit::data::{read_dataset, read_npy_f64, Dataset, ReadOptions};
use boltzkit::potts::weights::{read_weights, sequence_weights};
use boltzkit::potts::{read_alignment, AlignmentParams};
pub(super) use boltzkit::rbm::units::is_unit_model_file as is_unit_model;
use boltzkit::rbm::units::{self, UnitKind, Units};
use std::path::Path;

/// A data file as read for a layer type: codes (discrete layers) or real rows.
pub(super) enum Source {
    /// Integer codes, one column per unit or site.
    Codes(Dataset),
    /// Real values, `rows × n_vars`.
    Real { rows: Vec<f32>, n_vars: usize },
}

impl Source {
    /// Rows in the file.
    pub(super) fn n_rows(&self) -> usize {
        match self {
            Source::Codes(d) => d.n_samples(),
            Source::Real { rows, n_vars } => rows.len() / n_vars.max(&1),
        }
    }

    /// Columns (units or sites).
    pub(super) fn n_vars(&self) -> usize {
        match self {
            Source::Codes(d) => d.n_vars(),
            Source::Real { n_vars, .. } => *n_vars,
        }
    }
}

/// Whether `path` names an alignment (FASTA, A2M, Stockholm; `.gz` allowed) by its name.
pub(super) fn is_alignment(path: &Path) -> bool {
    let name = path.to_string_lossy().to_ascii_lowercase();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    [
        ".fasta",
        ".fa",
        ".faa",
        ".afa",
        ".a2m",
        ".a3m",
        ".sto",
        ".stockholm",
    ]
    .iter()
    .any(|ext| name.ends_with(ext))
}

/// Reads `path` for a visible layer of `kind`: codes for Bernoulli and categorical units (an
/// alignment over the protein alphabet, gap first, when the name says so), real rows for
/// Gaussian units.
pub(super) fn read_source(path: &Path, kind: UnitKind) -> anyhow::Result<Source> {
    match kind {
        UnitKind::Categorical if is_alignment(path) => {
            let ali = read_alignment(path, &AlignmentParams::default())?;
            Ok(Source::Codes(ali.dataset()?))
        }
        UnitKind::Bernoulli | UnitKind::Categorical => {
            let data = read_dataset(path, &ReadOptions::default())?;
            data.require_nonempty()?;
            Ok(Source::Codes(data))
        }
        UnitKind::Gaussian => read_real(path),
        UnitKind::Relu | UnitKind::Drelu => anyhow::bail!(
            "--visible-units {kind}: visible units are bernoulli, categorical or gaussian"
        ),
    }
}

/// Real rows from a .npy file (any numeric dtype, 1-D as one column) or from text: one row
/// per non-empty line, values separated by commas, tabs or spaces.
fn read_real(path: &Path) -> anyhow::Result<Source> {
    let name = path.to_string_lossy().to_ascii_lowercase();
    let (rows, n_vars) = if name.ends_with(".npy") {
        let (shape, values) = read_npy_f64(path)?;
        let n_vars = match shape.as_slice() {
            [_] => 1,
            [_, d] => *d,
            s => anyhow::bail!(
                "{}: expected a 1-D or 2-D array of real values, found shape {s:?}",
                path.display()
            ),
        };
        (values.iter().map(|&x| x as f32).collect::<Vec<_>>(), n_vars)
    } else {
        let bytes =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        parse_real_text(path, &String::from_utf8_lossy(&bytes))?
    };
    if rows.is_empty() || n_vars == 0 {
        anyhow::bail!("{}: no values", path.display());
    }
    if let Some(i) = rows.iter().position(|x| !x.is_finite()) {
        anyhow::bail!(
            "{}: row {}, column {}: expected a finite value (in f32), found {}",
            path.display(),
            i / n_vars + 1,
            i % n_vars + 1,
            rows[i]
        );
    }
    Ok(Source::Real { rows, n_vars })
}

/// Parses text rows of real numbers; one error line naming the line and column at fault.
fn parse_real_text(path: &Path, text: &str) -> anyhow::Result<(Vec<f32>, usize)> {
    let mut rows = Vec::new();
    let mut width = None;
    for (l, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line
            .split(|c: char| c == ',' || c == '\t' || c.is_whitespace())
            .filter(|f| !f.is_empty())
            .collect();
        if *width.get_or_insert(fields.len()) != fields.len() {
            anyhow::bail!(
                "{}: line {}: expected {} values, found {}",
                path.display(),
                l + 1,
                width.unwrap_or(0),
                fields.len()
            );
        }
        for (c, f) in fields.iter().enumerate() {
            let x: f32 = f.parse().map_err(|_| {
                anyhow::anyhow!(
                    "{}: line {}, column {}: expected a number, found {f:?}",
                    path.display(),
                    l + 1,
                    c + 1
                )
            })?;
            rows.push(x);
        }
    }
    Ok((rows, width.unwrap_or(0)))
}

/// A visible layer of `kind` shaped for `source` (parameters at 0; training refits them):
/// `q` states per site for categorical units (default: each column's cardinality).
pub(super) fn visible_layer(
    kind: UnitKind,
    q: Option<u32>,
    source: &Source,
) -> anyhow::Result<Units> {
    let states: Option<Vec<u32>> = match (kind, source) {
        (UnitKind::Categorical, Source::Codes(d)) => {
            Some(q.map_or_else(|| d.cardinalities().to_vec(), |q| vec![q; d.n_vars()]))
        }
        (UnitKind::Bernoulli, Source::Codes(_)) | (UnitKind::Gaussian, Source::Real { .. }) => None,
        _ => anyhow::bail!("--visible-units {kind}: the data was read for another unit type"),
    };
    Ok(units::visible_layer(
        kind,
        source.n_vars(),
        states.as_deref(),
    )?)
}

/// The state rows of `layer` from `source` (one-hot rows for categorical units), checked.
pub(super) fn state_rows(path: &Path, layer: &Units, source: &Source) -> anyhow::Result<Vec<f32>> {
    if source.n_vars() != layer.n_units() {
        anyhow::bail!(
            "{}: {} columns, the model has {} visible {} units",
            path.display(),
            source.n_vars(),
            layer.n_units(),
            layer.kind()
        );
    }
    let rows = match (layer, source) {
        (Units::Gaussian(_), Source::Real { rows, .. }) => {
            layer.check_states(rows).map(|()| rows.clone())
        }
        (Units::Gaussian(_), _) | (_, Source::Real { .. }) => anyhow::bail!(
            "{}: the model's visible units are {}, which this data does not fit",
            path.display(),
            layer.kind()
        ),
        (_, Source::Codes(d)) => layer.rows_from_codes(d),
    };
    rows.with_context(|| format!("{}", path.display()))
}

/// Sample weights: a file of one weight per row (`--weights`), or 1 / (the sequences at
/// least `identity` identical) of the codes (`--reweight`), or none.
pub(super) fn sample_weights(
    file: Option<&Path>,
    reweight: Option<f64>,
    source: &Source,
) -> anyhow::Result<Option<Vec<f64>>> {
    match (file, reweight, source) {
        (Some(_), Some(_), _) => anyhow::bail!("give --weights FILE or --reweight X, not both"),
        (Some(path), None, _) => Ok(Some(read_weights(path, Some(source.n_rows()))?)),
        (None, Some(x), Source::Codes(d)) => Ok(Some(sequence_weights(d.values().view(), x)?)),
        (None, Some(_), Source::Real { .. }) => {
            anyhow::bail!("--reweight needs integer codes (categorical or bernoulli units)")
        }
        (None, None, _) => Ok(None),
    }
}
