//! `boltzkit demo`: one small seeded case of each system on generated data, each checked
//! against an exact answer or the paper's figure, in about a minute ([`DemoPlan::quick`]: a
//! few seconds).
//!
//! | row | what runs | figure | reference | check |
//! |---|---|---|---|---|
//! | `fsll` | the greedy MDL learner on the 5×4 Ising grid, 1,000 samples | exact `KL(p*‖p_θ)` | Table 1 of the FSLL paper | within 3× the paper's median |
//! | `fvbm` | MPLE by Newton and by BSLM on a simulated `d = 10` set | coverage of the true `θ` by `θ̂ ± 1.96 SE` | 95% | the solvers agree, the MPLE exists, coverage ≥ 85% |
//! | `rbm-sdcp` | CD-12 and S-DCP (d = 3, K′ = 4) on shifting bar 9/1 | S-DCP's exact ATLL | CD-12's | S-DCP above CD-12, which stays near −3.15 |
//! | `rbm-bracket` | RAISE and forward AIS on the pop-CD model of the next row | exact log-likelihood | the bracket's ends | RAISE ≤ exact ≤ AIS within 3 SE |
//! | `popcd` | pop-CD-1 and CD-1 at η = 0.1 on Artificial Modes | pop-CD's final exact LL | CD-1's | CD-1 falls from its best, pop-CD does not |
//! | `frank-wolfe` | Frank-Wolfe growing an RBM on Artificial Modes | exact LL of the grown model | the base-rate (independent) model | above it, gap and selected size reported |
//!
//! Plan → run → result: [`DemoPlan`] → [`run`] → [`DemoReport`] ([`table`], [`write_charts`]).

use crate::fsll::{kl_to_truth, Table1Row};
use crate::plot::{line_chart, Chart, Series};
use crate::popcd::{curve_run, CurveSettings, PaperData, EVAL_EVERY};
use crate::Progress;
use anyhow::Context;
use boltzkit::data::synth::{ArtificialModes, ShiftingBar};
use boltzkit::data::Dataset;
use boltzkit::estimate::Method;
use boltzkit::fit::{Control, Learner, Run};
use boltzkit::fsll::{FsllParams, Progress as FsllProgress};
use boltzkit::fvbm::{self, inference, newton, Convention, Fvbm, MpleParams};
use boltzkit::rbm::ais::AisSchedule;
use boltzkit::rbm::frank_wolfe::FwParams;
use boltzkit::rbm::loglik::{average_log_likelihood, LogLikParams, LogLikelihood};
use boltzkit::rbm::train::{
    Algorithm, CheckedRbmParams, ExactLogLikelihood, RbmParams, TrainParams,
};
use boltzkit::rbm::{base_rate_biases, exact, Rbm};
use boltzkit::rng::{derive_rng, derive_seed};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The seed `boltzkit demo` uses unless told otherwise.
pub const SEED: u64 = 1;

/// What to run.
#[derive(Debug, Clone, PartialEq)]
pub struct DemoPlan {
    /// The seed of every row [default: [`SEED`]].
    pub seed: u64,
    /// Shorter runs (for CI): fewer samples, epochs and iterations; the same checks.
    pub quick: bool,
}

impl Default for DemoPlan {
    fn default() -> Self {
        DemoPlan {
            seed: SEED,
            quick: false,
        }
    }
}

/// One row of the demo: one system, its figure, the reference and the check between them.
#[derive(Debug, Clone, Serialize)]
pub struct DemoRow {
    /// The row's name (`fsll`, `fvbm`, `rbm-sdcp`, `rbm-bracket`, `popcd`, `frank-wolfe`).
    pub system: &'static str,
    /// What ran, in a few words.
    pub what: String,
    /// What the figure is.
    pub figure_name: String,
    /// The figure.
    pub figure: f64,
    /// What the reference is.
    pub reference_name: String,
    /// The reference.
    pub reference: f64,
    /// An interval the figure must lie in, when the check is one (the bracket's ends, each
    /// widened by 3 standard errors).
    pub bounds: Option<[f64; 2]>,
    /// The check, in words, with the numbers it compared.
    pub check: String,
    /// Whether the check holds.
    pub passed: bool,
    /// Seconds the row took.
    pub seconds: f64,
    /// The command that runs the full experiment behind the row.
    pub repro: &'static str,
}

/// Everything the demo measured: its rows and a learning curve (or trace) per row.
#[derive(Debug, Clone, Serialize)]
pub struct DemoReport {
    /// The seed.
    pub seed: u64,
    /// Whether the runs were shortened.
    pub quick: bool,
    /// One row per system.
    pub rows: Vec<DemoRow>,
    /// One chart per row, written as PNG by [`write_charts`].
    #[serde(skip)]
    pub charts: Vec<(&'static str, Chart)>,
}

impl DemoReport {
    /// Whether every row's check holds.
    pub fn all_passed(&self) -> bool {
        self.rows.iter().all(|r| r.passed)
    }
}

/// Runs every row; one progress step per row.
pub fn run(plan: &DemoPlan, progress: &dyn Progress) -> anyhow::Result<DemoReport> {
    let mut report = DemoReport {
        seed: plan.seed,
        quick: plan.quick,
        rows: Vec::new(),
        charts: Vec::new(),
    };
    progress.stage("demo", Some(6));
    type Step = fn(&DemoPlan, &mut DemoReport, &dyn Progress) -> anyhow::Result<()>;
    let steps: [(&str, Step); 5] = [
        ("FSLL on the 5×4 Ising grid", fsll_row),
        ("FVBM by Newton and BSLM", fvbm_row),
        ("CD-12 and S-DCP on shifting bar", sdcp_row),
        (
            "pop-CD and CD-1 on Artificial Modes, then the bracket",
            popcd_rows,
        ),
        ("Frank-Wolfe on Artificial Modes", fw_row),
    ];
    for (label, step) in steps {
        progress.message(label);
        step(plan, &mut report, progress).with_context(|| format!("demo: {label}"))?;
    }
    progress.finish();
    Ok(report)
}

/// FSLL on Ising5x4S (Table 1 of the FSLL paper): the exact KL to the truth, the median of
/// three sample draws (one when quick).
fn fsll_row(
    plan: &DemoPlan,
    report: &mut DemoReport,
    progress: &dyn Progress,
) -> anyhow::Result<()> {
    let start = Instant::now();
    let row = Table1Row::ALL[0];
    let trials = if plan.quick { 1 } else { 3 };
    let learner = FsllParams::default().check()?;
    let mut kls = Vec::new();
    let mut curve = Vec::new();
    for t in 0..trials {
        let (truth, data) = row.generate(plan.seed, t as u64)?;
        let mut costs = Vec::new();
        let run = Run::new().observe(|p: &mut FsllProgress| {
            costs.push((p.iteration as f64, p.cost));
            Ok(Control::Continue)
        });
        let fit = learner.fit_with(&data, run)?;
        kls.push(kl_to_truth(&fit.model, truth.probs())?);
        if t == 0 {
            curve = costs;
        }
    }
    let kl = boltzkit::estimate::stats::median(&kls).unwrap_or(f64::NAN);
    let paper = row.paper().kl_truth;
    let passed = kl <= 3.0 * paper;
    report.rows.push(DemoRow {
        system: "fsll",
        what: format!(
            "greedy MDL learner, 5×4 Ising grid (J = 1/2), {} samples, median of {trials}",
            row.n_samples()
        ),
        figure_name: "KL(p*‖p_θ), exact (nats)".into(),
        figure: kl,
        reference_name: "paper's Table 1 (median of 10)".into(),
        reference: paper,
        bounds: None,
        check: format!("{kl:.4} ≤ 3 × {paper} (sampling noise of 1,000 rows)"),
        passed,
        seconds: start.elapsed().as_secs_f64(),
        repro: "boltzkit repro fsll",
    });
    report.charts.push((
        "fsll",
        Chart::new("FSLL on Ising5x4S: the MDL cost per iteration")
            .x_label("iteration")
            .y_label("cost (Eq. 7, nats)")
            .series(Series::new("cost", curve)),
    ));
    progress.advance(1);
    Ok(())
}

/// MPLE of a simulated `d = 10` FVBM by Newton and by BSLM: the same maximizer, its existence,
/// and the coverage of the true parameters by the sandwich intervals.
fn fvbm_row(
    plan: &DemoPlan,
    report: &mut DemoReport,
    progress: &dyn Progress,
) -> anyhow::Result<()> {
    let start = Instant::now();
    let (d, n) = (10, if plan.quick { 4_000 } else { 16_000 });
    let seed = derive_seed(plan.seed, 2);
    let truth = Fvbm::random(d, 0.1, Convention::Spin, &mut derive_rng(seed, 0))?;
    let data = fvbm::exact::sample(&truth, n, &mut derive_rng(seed, 1))?;
    let newton = newton::NewtonParams::default().check()?.fit(&data)?;
    let mut trace = Vec::new();
    let run = Run::new().observe(|p: &mut fvbm::Progress| {
        trace.push((p.iteration as f64, p.objective / n as f64));
        Ok(Control::Continue)
    });
    let bslm = MpleParams::default().check()?.fit_with(&data, run)?;
    let gap = newton
        .model
        .theta()
        .iter()
        .zip(bslm.model.theta())
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    let exists = newton.record.mple_exists() == Some(true);
    let inf = inference::sandwich(&newton.model, &data, 0.0)?;
    let covered = truth
        .theta()
        .iter()
        .zip(inf.estimate.iter().zip(&inf.std_error))
        .filter(|(t, (e, se))| (*t - *e).abs() <= 1.96 * *se)
        .count();
    let coverage = covered as f64 / inf.estimate.len() as f64;
    let passed = exists && gap < 1e-4 && coverage >= 0.85;
    report.rows.push(DemoRow {
        system: "fvbm",
        what: format!(
            "MPLE by Newton ({} iterations) and BSLM ({} sweeps), d = {d}, {n} samples",
            newton.record.iterations, bslm.record.iterations
        ),
        figure_name: "coverage of the true θ by θ̂ ± 1.96 SE".into(),
        figure: coverage,
        reference_name: "nominal".into(),
        reference: 0.95,
        bounds: None,
        check: format!(
            "MPLE exists: {exists}; max |θ_Newton − θ_BSLM| = {gap:.1e} < 1e-4; {covered} of {} \
             covered ≥ 85%",
            inf.estimate.len()
        ),
        passed,
        seconds: start.elapsed().as_secs_f64(),
        repro: "boltzkit repro bslm",
    });
    let newton_pl = newton.record.final_objective() / n as f64;
    report.charts.push((
        "fvbm",
        Chart::new("FVBM d = 10: BSLM's log-pseudo-likelihood per sample, Newton's optimum")
            .x_label("sweep")
            .y_label("log-PL / n")
            .series(Series::new("BSLM", trace))
            .h_line(newton_pl, "Newton"),
    ));
    progress.advance(1);
    Ok(())
}

/// An exact-ATLL curve of one learner on `data`: `(epoch, ATLL)` every `every` epochs.
fn exact_curve(
    learner: &CheckedRbmParams,
    data: &Dataset,
    every: usize,
) -> anyhow::Result<(Rbm, Vec<(f64, f64)>)> {
    let run = learner
        .run()
        .observe_every(ExactLogLikelihood::new("ll", data.clone()), every);
    let fit = learner.fit_with(data, run)?;
    let curve = fit
        .record
        .history
        .iter()
        .filter_map(|r| r.metrics.get("ll").map(|&ll| (r.epoch as f64, ll)))
        .collect();
    Ok((fit.model, curve))
}

/// CD-12 and S-DCP (d = 3, K′ = 4) on shifting bar 9/1 (Sec. 4 of the S-DCP paper): 4 hidden
/// units, full batch, η = 0.3, both from the same start in each trial; the mean final exact
/// ATLL over the trials.
fn sdcp_row(
    plan: &DemoPlan,
    report: &mut DemoReport,
    progress: &dyn Progress,
) -> anyhow::Result<()> {
    let start = Instant::now();
    let data = ShiftingBar::paper().dataset()?;
    let (epochs, trials) = if plan.quick { (3_000, 2) } else { (5_000, 4) };
    let every = epochs / 50;
    let learner = |algorithm: Algorithm, trial: u64| {
        let train = TrainParams::new()
            .epochs(epochs)
            .full_batch()
            .learning_rate(0.3)
            .algorithm(algorithm)
            .seed(derive_seed(derive_seed(plan.seed, 3), trial));
        RbmParams::new(4).train(train).check()
    };
    let mut curves: Vec<Vec<Vec<(f64, f64)>>> = vec![Vec::new(), Vec::new()];
    let algorithms = [Algorithm::Cd { k: 12 }, Algorithm::Sdcp { inner: 3, k: 4 }];
    for trial in 0..trials {
        for (a, &algorithm) in algorithms.iter().enumerate() {
            curves[a].push(exact_curve(&learner(algorithm, trial)?, &data, every)?.1);
        }
    }
    let mean_curve = |runs: &[Vec<(f64, f64)>]| -> Vec<(f64, f64)> {
        (0..runs[0].len())
            .map(|i| {
                let ll = runs.iter().map(|c| c[i].1).sum::<f64>() / runs.len() as f64;
                (runs[0][i].0, ll)
            })
            .collect()
    };
    let (cd, sdcp) = (mean_curve(&curves[0]), mean_curve(&curves[1]));
    let last = |c: &[(f64, f64)]| c.last().map_or(f64::NAN, |p| p.1);
    let (cd_ll, sdcp_ll) = (last(&cd), last(&sdcp));
    let passed = sdcp_ll > cd_ll + 0.1 && (-3.3..=-3.0).contains(&cd_ll);
    report.rows.push(DemoRow {
        system: "rbm-sdcp",
        what: format!(
            "CD-12 and S-DCP (d = 3, K′ = 4), shifting bar 9/1, 4 hidden, {epochs} epochs, mean \
             of {trials} trials"
        ),
        figure_name: "S-DCP's mean exact ATLL".into(),
        figure: sdcp_ll,
        reference_name: "CD-12's mean exact ATLL".into(),
        reference: cd_ll,
        bounds: None,
        check: format!(
            "S-DCP {sdcp_ll:.3} > CD-12 {cd_ll:.3} + 0.1; CD-12 stuck near −3.15 (in [−3.3, −3.0]); \
             the bound is −ln 9 = {:.3}",
            -(9f64.ln())
        ),
        passed,
        seconds: start.elapsed().as_secs_f64(),
        repro: "boltzkit repro sdcp --small",
    });
    report.charts.push((
        "rbm-sdcp",
        Chart::new("Shifting bar 9/1: mean exact ATLL, CD-12 against S-DCP")
            .x_label("epoch")
            .y_label("ATLL (nats)")
            .series(Series::new("CD-12", cd))
            .series(Series::new("S-DCP (3, 4)", sdcp))
            .h_line(-(9f64.ln()), "−ln 9"),
    ));
    progress.advance(1);
    Ok(())
}

/// pop-CD-1 against CD-1 at η = 0.1 on Artificial Modes (Sec. 4.1 of the pop-CD paper), then
/// the bracket [RAISE, forward AIS] of the pop-CD model against its exact log-likelihood.
fn popcd_rows(
    plan: &DemoPlan,
    report: &mut DemoReport,
    progress: &dyn Progress,
) -> anyhow::Result<()> {
    let start = Instant::now();
    let seed = derive_seed(plan.seed, 4);
    let data = ArtificialModes::paper().sample(&mut derive_rng(seed, 0))?;
    let iterations = if plan.quick { 2_000 } else { 10_000 };
    let settings = CurveSettings {
        data: vec![(PaperData::Modes, data.clone())],
        lrs: vec![0.1],
        algos: vec![
            Algorithm::Cd { k: 1 },
            Algorithm::PopCd { k: 1, loo: false },
        ],
        trials: 0..1,
        iterations: Some(iterations),
        seed,
    };
    let cd = curve_run(&settings, 0, 0, 0, 0)?;
    let pop = curve_run(&settings, 0, 0, 1, 0)?;
    let best = |ll: &[f64]| ll.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let last = |ll: &[f64]| ll.last().copied().unwrap_or(f64::NAN);
    let (cd_best, cd_last) = (best(&cd.ll), last(&cd.ll));
    let (pop_best, pop_last) = (best(&pop.ll), last(&pop.ll));
    let passed = cd_best - cd_last > 1.0 && pop_best - pop_last < 0.5 && pop_last > cd_last;
    report.rows.push(DemoRow {
        system: "popcd",
        what: format!(
            "pop-CD-1 and CD-1, Artificial Modes, 16 hidden, η = 0.1, {iterations} updates"
        ),
        figure_name: "pop-CD's final exact LL".into(),
        figure: pop_last,
        reference_name: "CD-1's final exact LL".into(),
        reference: cd_last,
        bounds: None,
        check: format!(
            "CD-1 falls {:.2} nats below its best {cd_best:.3} (> 1); pop-CD ends {:.2} below its \
             best (< 0.5) and above CD-1",
            cd_best - cd_last,
            pop_best - pop_last
        ),
        passed,
        seconds: start.elapsed().as_secs_f64(),
        repro: "boltzkit repro popcd --part curves",
    });
    let points = |ll: &[f64]| -> Vec<(f64, f64)> {
        ll.iter()
            .enumerate()
            .filter(|(_, v)| v.is_finite())
            .map(|(i, &v)| ((i * EVAL_EVERY) as f64, v))
            .collect()
    };
    report.charts.push((
        "popcd",
        Chart::new("Artificial Modes, η = 0.1: exact log-likelihood")
            .x_label("update")
            .y_label("average LL (nats)")
            .series(Series::new("CD-1", points(&cd.ll)))
            .series(Series::new("pop-CD-1", points(&pop.ll))),
    ));
    progress.advance(1);
    bracket_row(plan, report, &settings, &data, progress)
}

/// The bracket of the pop-CD model of [`popcd_rows`] (retrained: `curve_run` keeps no model)
/// against its exact log-likelihood.
fn bracket_row(
    plan: &DemoPlan,
    report: &mut DemoReport,
    settings: &CurveSettings,
    data: &Dataset,
    progress: &dyn Progress,
) -> anyhow::Result<()> {
    let start = Instant::now();
    let train = TrainParams::new()
        .epochs(settings.iterations.unwrap_or(2_000) / settings.per_epoch(0))
        .batch_size(500)
        .learning_rate(0.1)
        .algorithm(Algorithm::PopCd { k: 1, loo: false })
        .seed(derive_seed(plan.seed, 5));
    let rbm = RbmParams::new(16).train(train).check()?.fit(data)?.model;
    let truth = exact::average_log_likelihood(&rbm, data)?;
    let steps = if plan.quick { 1_000 } else { 5_000 };
    let params = LogLikParams::new(Method::Bracket)
        .schedule(AisSchedule::linear(steps)?)
        .chains(100)
        .raise_vectors(Some(if plan.quick { 200 } else { 1_000 }))
        .seed(derive_seed(plan.seed, 6));
    let LogLikelihood::Bracket(b) = average_log_likelihood(&rbm, data, &params)? else {
        anyhow::bail!("a bracket was asked for");
    };
    let low_ok = b.raise.value - 3.0 * b.raise.stderr <= truth;
    let high_ok = b.ais.value + 3.0 * b.ais.stderr >= truth;
    report.rows.push(DemoRow {
        system: "rbm-bracket",
        what: format!(
            "RAISE ({} vectors) and forward AIS (100 chains), {steps} linear steps, 16 × 16 \
             pop-CD model",
            b.raise_vectors
        ),
        figure_name: "exact average LL".into(),
        figure: truth,
        reference_name: "the bracket's middle".into(),
        reference: 0.5 * (b.raise.value + b.ais.value),
        bounds: Some([
            b.raise.value - 3.0 * b.raise.stderr,
            b.ais.value + 3.0 * b.ais.stderr,
        ]),
        check: format!(
            "RAISE {:.3} ± {:.3} ≤ exact {truth:.3} ≤ AIS {:.3} ± {:.3} (within 3 SE)",
            b.raise.value, b.raise.stderr, b.ais.value, b.ais.stderr
        ),
        passed: low_ok && high_ok,
        seconds: start.elapsed().as_secs_f64(),
        repro: "boltzkit rbm eval --method bracket --convergence 1000",
    });
    let x = [0.0, 1.0, 2.0];
    report.charts.push((
        "rbm-bracket",
        Chart::new("The bracket [RAISE, forward AIS] around the exact log-likelihood")
            .x_label("RAISE, exact, AIS")
            .y_label("average LL (nats)")
            .series(Series::new(
                "estimate",
                vec![(x[0], b.raise.value), (x[1], truth), (x[2], b.ais.value)],
            ))
            .h_line(truth, "exact"),
    ));
    progress.advance(1);
    Ok(())
}

/// Frank-Wolfe growing an RBM on Artificial Modes with a validation set: the exact
/// log-likelihood of the grown model against the base-rate model's.
fn fw_row(plan: &DemoPlan, report: &mut DemoReport, progress: &dyn Progress) -> anyhow::Result<()> {
    let start = Instant::now();
    let seed = derive_seed(plan.seed, 7);
    let modes = ArtificialModes::paper();
    let train = modes.sample(&mut derive_rng(seed, 0))?;
    let valid = modes.sample(&mut derive_rng(seed, 1))?;
    let units = if plan.quick { 6 } else { 20 };
    let params = FwParams::new()
        .max_units(units)
        .eval_every(1)
        .seed(derive_seed(seed, 2));
    let fit = params
        .check()?
        .fit_validated(&train, Some(&valid), Run::new())?;
    let rbm = fit.model.to_rbm()?;
    let ll = exact::average_log_likelihood(&rbm, &train)?;
    // one hidden unit with zero weights: the independent model with base-rate biases
    let mut independent = Rbm::zeros(train.n_vars(), 1)?;
    independent
        .params_mut()
        .1
        .copy_from_slice(&base_rate_biases(&train)?);
    let base = exact::average_log_likelihood(&independent, &train)?;
    let last_gap = fit.record.evaluations.last().and_then(|e| e.gap);
    let passed = ll > base + 1.0;
    report.rows.push(DemoRow {
        system: "frank-wolfe",
        what: format!(
            "Frank-Wolfe, Artificial Modes, {} units grown, selected size {}",
            fit.model.n_units(),
            fit.record
                .selected_units
                .map_or("none".to_string(), |u| u.to_string())
        ),
        figure_name: "exact average LL of the grown model".into(),
        figure: ll,
        reference_name: "the base-rate (independent) model".into(),
        reference: base,
        bounds: None,
        check: format!(
            "{ll:.3} > {base:.3} + 1; last train − validation gap {}",
            last_gap.map_or("n/a".to_string(), |g| format!("{g:.4}"))
        ),
        passed,
        seconds: start.elapsed().as_secs_f64(),
        repro: "boltzkit repro frank-wolfe",
    });
    let curve: Vec<(f64, f64)> = fit
        .record
        .evaluations
        .iter()
        .map(|e| (e.units as f64, e.train_nfe))
        .collect();
    report.charts.push((
        "frank-wolfe",
        Chart::new("Frank-Wolfe on Artificial Modes: mean ln p̃(v) of the data per unit")
            .x_label("hidden units")
            .y_label("mean ln p̃(v)")
            .series(Series::new("train", curve)),
    ));
    progress.advance(1);
    Ok(())
}

/// The rows as a compact text table: system, figure, reference, check, seconds.
pub fn table(report: &DemoReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<12} {:>10} {:>10}  {:<4} {:>6}  check",
        "system", "figure", "reference", "ok", "s"
    );
    for r in &report.rows {
        let _ = writeln!(
            s,
            "{:<12} {:>10.4} {:>10.4}  {:<4} {:>6.2}  {}",
            r.system,
            r.figure,
            r.reference,
            if r.passed { "yes" } else { "NO" },
            r.seconds,
            r.check
        );
    }
    s
}

/// What each row ran and the command behind it, one line per row.
pub fn legend(report: &DemoReport) -> String {
    let mut s = String::new();
    for r in &report.rows {
        let _ = writeln!(
            s,
            "{:<12} {}: {} vs {}. Full experiment: `{}`",
            r.system, r.what, r.figure_name, r.reference_name, r.repro
        );
    }
    s
}

/// Writes one PNG per row (`demo-{system}.png`) into `dir`; returns the paths.
pub fn write_charts(dir: &Path, report: &DemoReport) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut paths = Vec::new();
    for (name, chart) in &report.charts {
        let path = dir.join(format!("demo-{name}.png"));
        line_chart(&path, chart)?;
        paths.push(path);
    }
    Ok(paths)
}
