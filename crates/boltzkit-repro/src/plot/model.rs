//! The pictures of `boltzkit rbm plot`: the learning curves of a metric log, and an RBM's
//! weight filters and mean-field reconstructions as tiles.

use super::{chart_panels, line_chart, Chart, Series};
use crate::UsageError;
use boltzkit::data::Dataset;
use boltzkit::io::MetricLog;
use boltzkit::rbm::monitor::mean_field_reconstruction;
use boltzkit::rbm::Rbm;
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::Path;

/// What [`draw_metric_log`] drew.
#[derive(Debug, Clone, Serialize)]
pub struct CurvesDrawn {
    /// Records read from the log.
    pub records: usize,
    /// The metrics drawn, a panel each, in name order with the learning rate (`lr`) last.
    pub metrics: Vec<String>,
    /// The metrics with no finite value to draw.
    pub skipped: Vec<String>,
}

/// Draws one learning curve per metric of a JSONL metric log (`rbm fit --log`) against the
/// epoch into the PNG `output`: one chart, or panels two to a row. With `log_x` the epoch
/// axis is logarithmic and records at epoch 0 are left out.
pub fn draw_metric_log(log: &Path, log_x: bool, output: &Path) -> anyhow::Result<CurvesDrawn> {
    let records = MetricLog::read(log)?;
    let names: BTreeSet<&String> = records.iter().flat_map(|r| r.metrics.keys()).collect();
    let drawable = |name: &str| {
        records
            .iter()
            .any(|r| r.metrics.get(name).is_some_and(|v| v.is_finite()) && (!log_x || r.epoch > 0))
    };
    // measurements in name order, then the learning-rate schedule
    let (mut shown, skipped): (Vec<&String>, Vec<&String>) =
        names.into_iter().partition(|n| drawable(n));
    shown.sort_by_key(|n| *n == "lr");
    if shown.is_empty() {
        anyhow::bail!(
            "{}: no metric has a finite value to draw ({} records{})",
            log.display(),
            records.len(),
            if log_x { ", epochs > 0" } else { "" }
        );
    }
    let charts: Vec<Chart> = shown
        .iter()
        .map(|&name| {
            let points = records
                .iter()
                .map(|r| {
                    let v = r.metrics.get(name).copied().unwrap_or(f64::NAN);
                    (r.epoch as f64, v)
                })
                .collect();
            Chart::new(name.as_str())
                .x_label("epoch")
                .y_label(name.as_str())
                .log_x(log_x)
                .series(Series::new(name.as_str(), points))
        })
        .collect();
    if charts.len() == 1 {
        line_chart(output, &charts[0])?;
    } else {
        chart_panels(output, &charts, 2)?;
    }
    Ok(CurvesDrawn {
        records: records.len(),
        metrics: shown.into_iter().cloned().collect(),
        skipped: skipped.into_iter().cloned().collect(),
    })
}

/// The image shape `(H, W)` of a visible vector of `n_visible` units: `--shape HxW`, or the
/// square; anything else is a [`UsageError`] naming `--shape`.
pub fn tile_shape(shape: Option<&str>, n_visible: usize) -> anyhow::Result<(usize, usize)> {
    let Some(text) = shape else {
        let side = (n_visible as f64).sqrt().round() as usize;
        if side * side == n_visible {
            return Ok((side, side));
        }
        let h = (1..=side)
            .rev()
            .find(|h| n_visible.is_multiple_of(*h))
            .unwrap_or(1);
        return Err(UsageError::new(format!(
            "the model has {n_visible} visible units, not a perfect square: give --shape HxW \
             (e.g. --shape {h}x{})",
            n_visible / h
        ))
        .into());
    };
    let parsed = text
        .split_once(['x', 'X', '×'])
        .and_then(|(h, w)| Some((h.trim().parse().ok()?, w.trim().parse().ok()?)))
        .filter(|&(h, w): &(usize, usize)| h > 0 && w > 0);
    let Some((h, w)) = parsed else {
        return Err(UsageError::new(format!(
            "--shape `{text}`: expected HxW with positive whole numbers, e.g. 28x28"
        ))
        .into());
    };
    if h.checked_mul(w) != Some(n_visible) {
        return Err(UsageError::new(format!(
            "--shape {h}x{w} has {} pixels, the model has {n_visible} visible units",
            h.saturating_mul(w)
        ))
        .into());
    }
    Ok((h, w))
}

/// The weight columns `W[:, j]`, `j < k`, one after another: a tile per hidden unit.
pub fn filters(rbm: &Rbm, k: usize) -> Vec<f32> {
    let (nv, nh) = (rbm.n_visible(), rbm.n_hidden());
    (0..k)
        .flat_map(|j| (0..nv).map(move |i| rbm.w()[i * nh + j]))
        .collect()
}

/// The first `k` data rows, each followed by its [`mean_field_reconstruction`]: tiles in
/// pairs.
pub fn reconstruction_pairs(rbm: &Rbm, data: &Dataset, k: usize) -> anyhow::Result<Vec<f32>> {
    anyhow::ensure!(
        data.n_vars() == rbm.n_visible() && k <= data.n_samples(),
        "reconstructions: {k} rows of {} variables asked of {} rows for {} visible units",
        data.n_vars(),
        data.n_samples(),
        rbm.n_visible()
    );
    Ok((0..k)
        .flat_map(|s| {
            let v: Vec<u8> = data.sample(s).iter().copied().collect();
            let r = mean_field_reconstruction(rbm, &v);
            v.into_iter()
                .map(f32::from)
                .chain(r.into_iter().map(|x| x as f32))
                .collect::<Vec<f32>>()
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_default_to_squares_and_bad_ones_are_usage_errors() {
        assert_eq!(tile_shape(None, 784).unwrap(), (28, 28));
        assert_eq!(tile_shape(None, 9).unwrap(), (3, 3));
        assert_eq!(tile_shape(Some("20x16"), 320).unwrap(), (20, 16));
        assert_eq!(tile_shape(Some("2×3"), 6).unwrap(), (2, 3));
        let e = tile_shape(None, 320).unwrap_err();
        assert!(e.is::<UsageError>());
        assert!(e.to_string().contains("--shape 16x20"), "{e}");
        for bad in ["5x5", "0x9", "abc", "3x", "x3", "-3x-3"] {
            let e = tile_shape(Some(bad), 9).unwrap_err();
            assert!(e.is::<UsageError>(), "{bad}");
            assert!(!e.to_string().contains('\n'));
        }
        assert!(tile_shape(Some("99999999999x99999999999"), 9).is_err());
    }

    #[test]
    fn filters_are_weight_columns_and_pairs_interleave() {
        // W = [[1, 2], [3, 4], [5, 6]]: 3 visible × 2 hidden
        let rbm = Rbm::new(3, 2, vec![1., 2., 3., 4., 5., 6.], vec![0.; 3], vec![0.; 2]).unwrap();
        assert_eq!(filters(&rbm, 2), vec![1., 3., 5., 2., 4., 6.]);
        assert_eq!(filters(&rbm, 1), vec![1., 3., 5.]);
        let data = Dataset::from_flat(vec![1, 0, 1, 0, 0, 0], 3, vec![2; 3]).unwrap();
        let pairs = reconstruction_pairs(&rbm, &data, 2).unwrap();
        assert_eq!(pairs.len(), 12);
        assert_eq!(&pairs[..3], &[1., 0., 1.]);
        assert_eq!(&pairs[6..9], &[0., 0., 0.]);
        // v = 0: p(h|v) = ½, p(v_i|h) = σ(½ Σ_j W_ij)
        let sig = |x: f32| 1.0 / (1.0 + (-x).exp());
        for (i, &p) in pairs[9..].iter().enumerate() {
            let row = &rbm.w()[2 * i..2 * i + 2];
            assert!((p - sig(0.5 * (row[0] + row[1]))).abs() < 1e-6);
        }
    }
}
