//! What the `potts` verbs share: the alignment flags, the weighting flags, reading an
//! alignment (a bad one is a usage error: exit 2, one line) and loading a model.

use crate::exit::UsageError;
use boltzkit::potts::dca::{DcaInfo, Weighting};
use boltzkit::potts::{
    read_alignment, Alignment, AlignmentFormat, AlignmentParams, Alphabet, Potts,
};
use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};

/// The format flag's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum FormatArg {
    /// `>name` then letters; lowercase read as uppercase
    Fasta,
    /// FASTA whose lowercase letters and '.' mark insert columns (dropped)
    A2m,
    /// Stockholm 1.0
    Stockholm,
}

impl From<FormatArg> for AlignmentFormat {
    fn from(f: FormatArg) -> Self {
        match f {
            FormatArg::Fasta => AlignmentFormat::Fasta,
            FormatArg::A2m => AlignmentFormat::A2m,
            FormatArg::Stockholm => AlignmentFormat::Stockholm,
        }
    }
}

/// How an alignment is read (`--alphabet`, `--format`, `--focus`, the gap filters).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Alignment")]
pub(super) struct AlignmentFlags {
    /// Alphabet: protein (-ACDEFGHIKLMNPQRSTVWY, gap first as plmc), rna (-ACGU), dna (-ACGT),
    /// or the letters in code order (e.g. `_*^`)
    #[arg(long, value_name = "NAME|LETTERS", default_value = "protein")]
    alphabet: String,
    /// File format [default: Stockholm by content, A2M for *.a2m, else FASTA]
    #[arg(long, value_enum)]
    format: Option<FormatArg>,
    /// Focus sequence (plmc's -f): keep only the columns where it has an uppercase,
    /// non-gap letter; positions are reported relative to its NAME/START-END region
    #[arg(long, value_name = "ID")]
    focus: Option<String>,
    /// Drop sequences with more than this fraction of gaps in the kept columns
    #[arg(long, value_name = "F", default_value_t = 1.0)]
    max_sequence_gaps: f64,
    /// Then drop columns with more than this fraction of gaps
    #[arg(long, value_name = "F", default_value_t = 1.0)]
    max_column_gaps: f64,
    /// Drop sequences with letters outside the alphabet (plmc's behaviour) instead of
    /// refusing the file
    #[arg(long)]
    skip_unknown: bool,
}

impl AlignmentFlags {
    /// The library's settings (an invalid alphabet or fraction is a usage error).
    pub(super) fn params(&self) -> anyhow::Result<AlignmentParams> {
        let params = AlignmentParams {
            alphabet: Alphabet::parse(&self.alphabet)?,
            format: self.format.map(Into::into),
            focus: self.focus.clone(),
            max_sequence_gaps: self.max_sequence_gaps,
            max_column_gaps: self.max_column_gaps,
            skip_unknown: self.skip_unknown,
        };
        params.check()?;
        Ok(params)
    }

    /// Reads `path` with these flags, or with `alphabet` when given (a model's).
    pub(super) fn read(
        &self,
        path: &Path,
        alphabet: Option<Alphabet>,
    ) -> anyhow::Result<Alignment> {
        let mut params = self.params()?;
        if let Some(a) = alphabet {
            params.alphabet = a;
        }
        read(path, &params)
    }

    /// [`Self::read`] with these flags, refusing what no model can be fitted to (fewer than
    /// two sequences, a column of gaps only), a usage error too.
    pub(super) fn read_fittable(&self, path: &Path) -> anyhow::Result<Alignment> {
        let ali = self.read(path, None)?;
        ali.check_fittable(path).map_err(usage)?;
        Ok(ali)
    }
}

/// Reads an alignment; a malformed one (ragged, unknown letters, empty, duplicate names, an
/// absent focus) is a usage error, exit 2, its one line naming file, line and sequence.
pub(super) fn read(path: &Path, params: &AlignmentParams) -> anyhow::Result<Alignment> {
    read_alignment(path, params).map_err(usage)
}

/// A fault of the input file ([`boltzkit::Error::Parse`]) as a usage error (exit 2).
fn usage(e: boltzkit::Error) -> anyhow::Error {
    match e {
        boltzkit::Error::Parse { .. } => UsageError::new(e.to_string()).into(),
        other => anyhow::Error::new(other),
    }
}

/// How the sequences are weighted (`--identity`, `--no-weights`, `--weights`).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Sequence weights")]
pub(super) struct WeightFlags {
    /// Weight each sequence by 1 / (sequences at identity ≥ θ, itself included), plmc's
    #[arg(long, value_name = "θ", default_value_t = boltzkit::potts::weights::DEFAULT_IDENTITY,
          conflicts_with_all = ["no_weights", "weights"])]
    identity: f64,
    /// Every sequence weighs 1 (plmc's -t -1)
    #[arg(long, conflicts_with = "weights")]
    no_weights: bool,
    /// Weights from a file, one per sequence of the alignment file (plmc's -w format)
    #[arg(long, value_name = "FILE")]
    weights: Option<PathBuf>,
}

impl WeightFlags {
    /// The weighting asked for.
    pub(super) fn weighting(&self) -> Weighting {
        match (&self.weights, self.no_weights) {
            (Some(path), _) => Weighting::File(path.clone()),
            (None, true) => Weighting::Uniform,
            (None, false) => Weighting::Identity(self.identity),
        }
    }

    /// The weights file, if one is read (an input the outputs must not overwrite).
    pub(super) fn file(&self) -> Option<&Path> {
        self.weights.as_deref()
    }
}

/// A Potts model file and the DCA info it records (none for a model not fitted to an
/// alignment).
pub(super) fn load_model(path: &Path) -> anyhow::Result<(Potts, Option<DcaInfo>)> {
    let model = Potts::load(path)?;
    let info = DcaInfo::read(path)?;
    Ok((model, info))
}
