//! Metrics on explicit distributions: KL divergence and entropy.

use crate::error::{Error, Result};

/// `KL(p‖q) = Σ_x p(x) (ln p(x) − ln q(x))` in nats, with `0 ln 0 = 0`, given `ln q`.
///
/// Fails when the lengths differ, or when `p` puts mass where `q` has none (`+∞`).
pub fn kl_divergence(p: &[f64], log_q: &[f64]) -> Result<f64> {
    if p.len() != log_q.len() {
        return Err(Error::Shape {
            op: "kl_divergence".into(),
            expected: format!("{} states", p.len()),
            found: format!("{} states", log_q.len()),
        });
    }
    let mut kl = 0.0;
    for (x, (&px, &lq)) in p.iter().zip(log_q).enumerate() {
        if px > 0.0 {
            if lq == f64::NEG_INFINITY {
                return Err(Error::Numerical {
                    context: "kl_divergence".into(),
                    detail: format!("state {x} has p = {px} but q = 0: KL is infinite"),
                });
            }
            kl += px * (px.ln() - lq);
        }
    }
    Ok(kl)
}

/// Shannon entropy `−Σ p ln p` in nats.
pub fn entropy(p: &[f64]) -> f64 {
    -p.iter()
        .filter(|&&v| v > 0.0)
        .map(|&v| v * v.ln())
        .sum::<f64>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kl_of_known_pair() {
        let p = [0.5, 0.5];
        let q = [0.25f64.ln(), 0.75f64.ln()];
        let expect = 0.5 * (0.5f64 / 0.25).ln() + 0.5 * (0.5f64 / 0.75).ln();
        assert!((kl_divergence(&p, &q).unwrap() - expect).abs() < 1e-15);
        assert_eq!(kl_divergence(&p, &[0.5f64.ln(); 2]).unwrap(), 0.0);
        assert!(kl_divergence(&p, &[0.0, f64::NEG_INFINITY]).is_err());
        assert!((entropy(&p) - 2f64.ln()).abs() < 1e-15);
    }
}
