//! Sec. 5 of Nguyen & Wood (BSLM): for d = 5, 10, 15, 20, draw a truth with `b` and upper `M`
//! i.i.d. N(0, 0.5), sample n = 16,000 observations exactly, start BSLM from a point drawn the
//! same way, run to τ = 1e-5, and report the per-sweep log-PL traces (monotone?) and the
//! average MSE of the estimate over the repetitions. Whether the MPLE exists is decided exactly
//! by the separation LP (`boltzkit::fvbm::separation::check`); the MSE is compared with the
//! sandwich variance only where it does.
//!
//! Plan → run → result: [`BslmPlan`] → [`run`] → [`BslmReport`]; [`markdown`],
//! [`trace_csv`], [`results_json`] and [`write_figure1`] write it.

use crate::plot::{chart_panels, Chart, Series};
use crate::Progress;
use anyhow::Context;
use boltzkit::estimate::stats::mean;
use boltzkit::fit::Learner;
use boltzkit::fvbm::{exact, inference, Convention, Fvbm, MpleParams, StopReason};
use boltzkit::rng::{derive_seed, rng_from_seed};
use serde::Serialize;
use std::path::Path;

/// The seed `repro bslm` uses unless told otherwise.
pub const SEED: u64 = 2016;

/// The paper's average MSE over five repetitions, per d (Sec. 5).
pub const PAPER_MSE: [(usize, f64); 4] =
    [(5, 2.09e-6), (10, 5.96e-7), (15, 4.64e-7), (20, 2.89e-7)];

/// The variance of the truth and of the starting point (Sec. 5).
pub const VARIANCE: f64 = 0.5;

/// The paper's value for `d`, if it reports one.
pub fn paper_mse(d: usize) -> Option<f64> {
    PAPER_MSE.iter().find(|(k, _)| *k == d).map(|&(_, v)| v)
}

/// One BSLM run.
#[derive(Debug, Clone, Serialize)]
pub struct BslmRun {
    /// Number of units.
    pub d: usize,
    /// Repetition index (0-based).
    pub rep: usize,
    /// The seed of the truth, the data and the starting point.
    pub seed: u64,
    /// Sweeps until the stop.
    pub sweeps: usize,
    /// The log-PL after every sweep (`[0]` at the start).
    pub trace: Vec<f64>,
    /// True when the trace never decreases (beyond round-off).
    pub monotone: bool,
    /// False when the MPLE does not exist for the data (the separation LP finds a recession
    /// direction).
    pub mple_exists: bool,
    /// True when BSLM's own path showed runaway parameters (the heuristic second line of
    /// defence; the LP decides).
    pub runaway_seen: bool,
    /// Seconds of the existence check (Stiemke's certificate, else the separation LP).
    pub existence_seconds: f64,
    /// Mean squared error of `θ̂` against the truth.
    pub mse: f64,
    /// Mean sandwich variance `mean_a SE_a²` (the MSE one expects; `None` when the MPLE does
    /// not exist).
    pub mean_se2: Option<f64>,
    /// Why BSLM stopped.
    pub stop: StopReason,
    /// Seconds of the fit.
    pub seconds: f64,
}

/// Runs one repetition at dimension `d`.
pub fn run_one(d: usize, rep: usize, n: usize, tau: f64, seed: u64) -> anyhow::Result<BslmRun> {
    let run_seed = derive_seed(seed, (d * 1000 + rep) as u64);
    let mut rng = rng_from_seed(run_seed);
    let conv = Convention::Spin;
    let truth = Fvbm::random(d, VARIANCE, conv, &mut rng)?;
    let data = exact::sample(&truth, n, &mut rng)?;
    let init = Fvbm::random(d, VARIANCE, conv, &mut rng)?;
    let params = MpleParams {
        convention: conv,
        tau,
        init: Some(init),
        // Sec. 5's stopping rule alone (relative gain below τ), not the library's default
        // first-order stop
        ..MpleParams::paper()
    };
    let fit = params.check()?.fit(&data)?;
    let (t, e) = (truth.theta(), fit.model.theta());
    let mse = t.iter().zip(&e).map(|(a, b)| (a - b).powi(2)).sum::<f64>() / t.len() as f64;
    let Some((exists, existence_seconds)) = fit
        .record
        .existence
        .as_ref()
        .map(|e| (e.exists(), e.seconds))
    else {
        anyhow::bail!("the separation LP did not run");
    };
    let mean_se2 = if exists {
        let inf = inference::sandwich(&fit.model, &data, 0.0)?;
        Some(inf.std_error.iter().map(|s| s * s).sum::<f64>() / inf.std_error.len() as f64)
    } else {
        None
    };
    Ok(BslmRun {
        d,
        rep,
        seed: run_seed,
        sweeps: fit.record.iterations,
        monotone: fit.record.is_monotone(),
        mple_exists: exists,
        runaway_seen: fit.record.runaway.is_some(),
        existence_seconds,
        mse,
        mean_se2,
        stop: fit.record.stop,
        seconds: fit.record.seconds,
        trace: fit.record.objective,
    })
}

/// The trace of a run as CSV: `sweep,log_pl`.
pub fn trace_csv(run: &BslmRun) -> String {
    let mut s = String::from("sweep,log_pl\n");
    for (i, v) in run.trace.iter().enumerate() {
        s.push_str(&format!("{i},{v:.12e}\n"));
    }
    s
}

/// The paper's Figure 1 as charts: per d (one column each), the log-PL against the sweep, one
/// line per repetition (top row), and log10 of its gain per sweep (bottom row; the paper's
/// dashed lines; sweeps without a gain are left out).
pub fn figure1_charts(runs: &[BslmRun]) -> Vec<Chart> {
    let mut dims: Vec<usize> = runs.iter().map(|r| r.d).collect();
    dims.sort_unstable();
    dims.dedup();
    let panel = |d: usize, title: String, y: &str, f: &dyn Fn(&BslmRun) -> Vec<(f64, f64)>| {
        runs.iter()
            .filter(|r| r.d == d)
            .fold(Chart::new(title).x_label("sweep").y_label(y), |c, r| {
                c.series(Series::new(format!("rep {}", r.rep), f(r)))
            })
    };
    let log_pl = |r: &BslmRun| {
        let t = r.trace.iter().enumerate();
        t.map(|(i, &v)| (i as f64, v)).collect()
    };
    let gain = |r: &BslmRun| {
        let t = r.trace.windows(2).enumerate();
        t.map(|(i, w)| ((i + 1) as f64, (w[1] - w[0]).log10()))
            .collect()
    };
    let top = dims
        .iter()
        .map(|&d| panel(d, format!("d = {d}: log-PL"), "log-PL", &log_pl));
    let bottom = dims.iter().map(|&d| {
        let title = format!("d = {d}: log10 gain per sweep");
        panel(d, title, "log10 gain", &gain)
    });
    top.chain(bottom).collect()
}

/// Writes [`figure1_charts`] as one PNG (a column per d).
pub fn write_figure1(path: &Path, runs: &[BslmRun]) -> anyhow::Result<()> {
    let charts = figure1_charts(runs);
    chart_panels(path, &charts, (charts.len() / 2).max(1))
}

/// Per-d summary: runs, monotone runs, runs where the MPLE exists, average MSE (all runs and
/// runs with an MPLE), mean sandwich variance, the paper's MSE, sweeps and time.
#[derive(Debug, Clone, Serialize)]
pub struct BslmRow {
    /// Number of units.
    pub d: usize,
    /// Runs.
    pub runs: usize,
    /// Runs with a monotone trace.
    pub monotone: usize,
    /// Runs where the MPLE exists.
    pub exists: usize,
    /// Average MSE over all runs.
    pub mse_all: f64,
    /// Average MSE over the runs where the MPLE exists.
    pub mse_exists: Option<f64>,
    /// Average sandwich variance over the runs where the MPLE exists.
    pub mean_se2: Option<f64>,
    /// The paper's average MSE.
    pub paper_mse: Option<f64>,
    /// Mean sweeps.
    pub mean_sweeps: f64,
    /// Mean milliseconds per sweep.
    pub ms_per_sweep: f64,
}

/// Groups runs by d.
pub fn rows(runs: &[BslmRun]) -> Vec<BslmRow> {
    let mut dims: Vec<usize> = runs.iter().map(|r| r.d).collect();
    dims.dedup();
    dims.into_iter()
        .map(|d| {
            let rs: Vec<&BslmRun> = runs.iter().filter(|r| r.d == d).collect();
            let ok: Vec<&&BslmRun> = rs.iter().filter(|r| r.mple_exists).collect();
            let sweeps: usize = rs.iter().map(|r| r.sweeps).sum();
            let secs: f64 = rs.iter().map(|r| r.seconds).sum();
            BslmRow {
                d,
                runs: rs.len(),
                monotone: rs.iter().filter(|r| r.monotone).count(),
                exists: ok.len(),
                mse_all: mean(&rs.iter().map(|r| r.mse).collect::<Vec<_>>()).unwrap_or(f64::NAN),
                mse_exists: mean(&ok.iter().map(|r| r.mse).collect::<Vec<_>>()),
                mean_se2: mean(&ok.iter().filter_map(|r| r.mean_se2).collect::<Vec<_>>()),
                paper_mse: paper_mse(d),
                mean_sweeps: sweeps as f64 / rs.len() as f64,
                ms_per_sweep: 1e3 * secs / sweeps.max(1) as f64,
            }
        })
        .collect()
}

/// The per-d table as Markdown.
pub fn markdown(rows: &[BslmRow]) -> String {
    let opt = |v: Option<f64>| v.map_or("—".to_string(), |x| format!("{x:.3e}"));
    let mut s = String::from(
        "| d | runs | monotone | MPLE exists | avg MSE (all) | avg MSE (MPLE exists) | \
         mean SE² (sandwich) | paper avg MSE | mean sweeps | ms/sweep |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {:.3e} | {} | {} | {} | {:.0} | {:.3} |\n",
            r.d,
            r.runs,
            r.monotone,
            r.exists,
            r.mse_all,
            opt(r.mse_exists),
            opt(r.mean_se2),
            opt(r.paper_mse),
            r.mean_sweeps,
            r.ms_per_sweep
        ));
    }
    s
}

/// What `repro bslm` runs.
#[derive(Debug, Clone, PartialEq)]
pub struct BslmPlan {
    /// Seed of every truth, data set and start [default: [`SEED`]].
    pub seed: u64,
    /// Repetitions per d [default: 5].
    pub reps: usize,
    /// Dimensions d, each in 2..=[`exact::MAX_EXACT_UNITS`] (exact sampling) [default: 5, 10,
    /// 15, 20].
    pub dims: Vec<usize>,
    /// Observations per data set [default: 16,000].
    pub samples: usize,
    /// Stopping tolerance τ on the log-PL gain per sweep [default: 1e-5].
    pub tau: f64,
}

impl Default for BslmPlan {
    fn default() -> Self {
        BslmPlan {
            seed: SEED,
            reps: 5,
            dims: vec![5, 10, 15, 20],
            samples: 16_000,
            tau: 1e-5,
        }
    }
}

impl BslmPlan {
    /// Checks the settings.
    pub fn check(&self) -> boltzkit::Result<()> {
        if let Some(&d) = self
            .dims
            .iter()
            .find(|&&d| !(2..=exact::MAX_EXACT_UNITS).contains(&d))
        {
            return Err(boltzkit::Error::param(
                "--dims",
                format!(
                    "each d must lie in 2..={} (exact sampling), found {d}",
                    exact::MAX_EXACT_UNITS
                ),
            ));
        }
        if !(self.tau.is_finite() && self.tau >= 0.0) {
            return Err(boltzkit::Error::param(
                "--tau",
                "must be a finite number ≥ 0",
            ));
        }
        if self.reps == 0 || self.samples == 0 {
            return Err(boltzkit::Error::param(
                "--reps/--samples",
                "must be at least 1",
            ));
        }
        Ok(())
    }

    /// The dimensions in increasing order, each once.
    pub fn sorted_dims(&self) -> Vec<usize> {
        let mut dims = self.dims.clone();
        dims.sort_unstable();
        dims.dedup();
        dims
    }
}

/// Everything `repro bslm` found.
#[derive(Debug, Clone, Serialize)]
pub struct BslmReport {
    /// Repetitions per d.
    pub reps: usize,
    /// Dimensions, increasing.
    pub dims: Vec<usize>,
    /// Observations per data set.
    pub samples: usize,
    /// Stopping tolerance.
    pub tau: f64,
    /// True when every log-PL trace is monotone.
    pub all_monotone: bool,
    /// Runs where the MPLE does not exist.
    pub mple_missing: usize,
    /// The per-d summary.
    pub rows: Vec<BslmRow>,
    /// [`markdown`] of the rows.
    pub markdown: String,
    /// Every run (traces included; in [`results_json`], not in the summary).
    #[serde(skip)]
    pub runs: Vec<BslmRun>,
}

/// Runs every (d, repetition), one progress step each with a note of its figures.
pub fn run(plan: &BslmPlan, progress: &dyn Progress) -> anyhow::Result<BslmReport> {
    plan.check()?;
    let dims = plan.sorted_dims();
    progress.stage("runs", Some((dims.len() * plan.reps) as u64));
    let mut runs = Vec::new();
    for &d in &dims {
        for rep in 0..plan.reps {
            progress.message(&format!("d={d} rep {rep}"));
            let run = run_one(d, rep, plan.samples, plan.tau, plan.seed)
                .with_context(|| format!("d = {d}, repetition {rep}"))?;
            progress.note(&format!(
                "d={d:>2} rep={rep} sweeps={:>6} stop={:?} monotone={} mple_exists={} mse={:.3e}{}",
                run.sweeps,
                run.stop,
                run.monotone,
                run.mple_exists,
                run.mse,
                if run.mple_exists {
                    ""
                } else {
                    "  (the MPLE does not exist for this data set: the estimate drifts)"
                }
            ));
            runs.push(run);
            progress.advance(1);
        }
    }
    progress.finish();
    let rows = rows(&runs);
    Ok(BslmReport {
        reps: plan.reps,
        dims,
        samples: plan.samples,
        tau: plan.tau,
        all_monotone: runs.iter().all(|r| r.monotone),
        mple_missing: runs.iter().filter(|r| !r.mple_exists).count(),
        markdown: markdown(&rows),
        rows,
        runs,
    })
}

/// The JSON file `bslm.json`: the settings, the rows and every run (without its trace).
pub fn results_json(report: &BslmReport, seed: u64) -> anyhow::Result<String> {
    let runs_json: Vec<serde_json::Value> = report
        .runs
        .iter()
        .map(|r| {
            serde_json::json!({"d": r.d, "rep": r.rep, "seed": r.seed,
                "sweeps": r.sweeps, "stop": r.stop, "monotone": r.monotone,
                "mple_exists": r.mple_exists, "mse": r.mse,
                "mean_se2": r.mean_se2, "seconds": r.seconds})
        })
        .collect();
    Ok(serde_json::to_string_pretty(&serde_json::json!({
        "seed": seed, "reps": report.reps, "dims": report.dims, "samples": report.samples,
        "tau": report.tau, "rows": report.rows, "runs": runs_json,
    }))?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_run_is_monotone_and_reproducible() {
        let a = run_one(4, 0, 2000, 1e-5, 9).unwrap();
        let b = run_one(4, 0, 2000, 1e-5, 9).unwrap();
        assert!(a.monotone);
        assert_eq!(a.trace, b.trace);
        assert_eq!(a.trace.len(), a.sweeps + 1);
        assert!(a.trace.last().unwrap() > &a.trace[0]);
        let csv = trace_csv(&a);
        assert_eq!(csv.lines().count(), a.trace.len() + 1);
        let rs = rows(&[a.clone(), b]);
        assert_eq!(rs.len(), 1);
        assert_eq!((rs[0].runs, rs[0].monotone), (2, 2));
        assert!((rs[0].mse_all - a.mse).abs() < 1e-15);
        assert!(paper_mse(4).is_none() && paper_mse(10) == Some(5.96e-7));
        let md = markdown(&rs);
        assert_eq!(md.lines().count(), 3);
    }

    #[test]
    fn figure1_has_a_column_per_d_and_a_line_per_repetition() {
        let a = run_one(3, 0, 500, 1e-5, 9).unwrap();
        let b = BslmRun {
            rep: 1,
            ..a.clone()
        };
        let c = run_one(4, 0, 500, 1e-5, 9).unwrap();
        let charts = figure1_charts(&[a.clone(), b, c]);
        let titles: Vec<&str> = charts.iter().map(|c| c.title.as_str()).collect();
        assert_eq!(
            titles,
            [
                "d = 3: log-PL",
                "d = 4: log-PL",
                "d = 3: log10 gain per sweep",
                "d = 4: log10 gain per sweep"
            ]
        );
        assert_eq!(charts[0].series.len(), 2, "a line per repetition");
        assert_eq!(charts[1].series.len(), 1);
        assert_eq!(charts[0].series[0].points.len(), a.trace.len());
        assert_eq!(charts[2].series[0].points.len(), a.trace.len() - 1);
        let dir = tempfile::tempdir().unwrap();
        let png = dir.path().join("fig1.png");
        write_figure1(&png, &[a]).unwrap();
        let file = std::fs::File::open(&png).unwrap();
        let info = png::Decoder::new(std::io::BufReader::new(file))
            .read_info()
            .unwrap()
            .info()
            .clone();
        let (w, h) = crate::plot::PANEL;
        let plan = BslmPlan {
            dims: vec![1],
            ..BslmPlan::default()
        };
        assert!(plan.check().is_err());
        assert_eq!((info.width, info.height), (w, 2 * h));
    }
}
