//! `--binarize`, shared by every command that reads data for a model.

use boltzkit::data::Binarize;
use clap::Args;

/// `--binarize`, shared by every command that reads data for a model; add with
/// `#[command(flatten)]`.
#[derive(Clone, Copy, PartialEq, Args)]
pub struct BinarizeArgs {
    /// Conversion of grayscale data to 0/1: none, threshold:T (v > T is 1) or stochastic
    #[arg(long, value_name = "HOW", default_value = "none", value_parser = parse_binarize)]
    binarize: BinarizeArg,
}

/// The value of `--binarize`: none, threshold:T or stochastic.
#[derive(Debug, Clone, Copy, PartialEq)]
enum BinarizeArg {
    None,
    Threshold(f64),
    Stochastic,
}

impl BinarizeArgs {
    /// The reader's binarization; `seed` drives the stochastic one.
    pub fn resolve(self, seed: u64) -> Binarize {
        match self.binarize {
            BinarizeArg::None => Binarize::None,
            BinarizeArg::Threshold(t) => Binarize::Threshold(t),
            BinarizeArg::Stochastic => Binarize::Stochastic { seed },
        }
    }

    /// Whether reading with it draws random numbers (then the command needs a seed).
    pub fn is_random(self) -> bool {
        self.binarize == BinarizeArg::Stochastic
    }
}

/// Prints as the value does (`None`, `Threshold(127.0)`), as model settings record it.
impl std::fmt::Debug for BinarizeArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.binarize.fmt(f)
    }
}

fn parse_binarize(s: &str) -> Result<BinarizeArg, String> {
    match s {
        "none" => Ok(BinarizeArg::None),
        "stochastic" => Ok(BinarizeArg::Stochastic),
        _ => match s.strip_prefix("threshold:") {
            Some(t) => t
                .parse::<f64>()
                .ok()
                .filter(|t| t.is_finite())
                .map(BinarizeArg::Threshold)
                .ok_or_else(|| format!("`{t}` is not a finite number")),
            None => Err("expected none, threshold:T or stochastic".into()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binarize_values() {
        assert_eq!(parse_binarize("none"), Ok(BinarizeArg::None));
        assert_eq!(
            parse_binarize("threshold:-0.5"),
            Ok(BinarizeArg::Threshold(-0.5))
        );
        assert!(parse_binarize("threshold:nan").is_err());
        assert!(parse_binarize("half").is_err());
        let b = BinarizeArgs {
            binarize: BinarizeArg::Threshold(127.0),
        };
        assert_eq!(format!("{b:?}"), "Threshold(127.0)");
        assert_eq!(b.resolve(1), Binarize::Threshold(127.0));
        assert!(!b.is_random());
    }
}
