//! A bracket [RAISE, forward AIS] as the protocols' tables show it: CSV fields
//! ([`bracket_csv`] under [`BRACKET_CSV_HEADER`]), Markdown cells, a one-word verdict.

use boltzkit::rbm::loglik::{Bracket, Diagnosis};

/// The CSV columns of [`bracket_csv`].
pub const BRACKET_CSV_HEADER: &str = "raise,raise_se,ais,ais_se,steps,raise_vectors,verdict";

/// A bracket as CSV fields (see [`BRACKET_CSV_HEADER`]); `verdict` is `consistent`,
/// `inverted` or `wide` (the one-line diagnosis, with commas, goes to Markdown and JSON).
pub fn bracket_csv(b: &Bracket) -> String {
    format!(
        "{},{},{},{},{},{},{}",
        b.raise.value,
        b.raise.stderr,
        b.ais.value,
        b.ais.stderr,
        b.steps,
        b.raise_vectors,
        verdict(&b.diagnosis)
    )
}

/// `consistent`, `inverted` or `wide`.
pub fn verdict(d: &Diagnosis) -> &'static str {
    match d {
        Diagnosis::Consistent => "consistent",
        Diagnosis::Inverted { .. } => "inverted",
        Diagnosis::Wide { .. } => "wide",
    }
}

/// Markdown cells of a bracket: `RAISE ± se | AIS ± se | steps | RAISE vectors`.
pub fn bracket_markdown_cells(b: &Bracket) -> String {
    format!(
        "{:.3} ± {:.3} | {:.3} ± {:.3} | {} | {}",
        b.raise.value, b.raise.stderr, b.ais.value, b.ais.stderr, b.steps, b.raise_vectors
    )
}
