//! # boltzkit
//!
//! Learning and evaluating Boltzmann machines and their relatives on discrete data.
//!
//! | module | what it holds |
//! |---|---|
//! | [`data`] | [`data::Dataset`], readers (npy, csv/tsv, IDX, amat; gzip), writers, generators |
//! | [`fit`] | the one fit shape: [`fit::Learner`] (checked settings that fit), [`fit::Fit`], [`fit::Run`] with [`fit::Observer`]s, [`fit::StopReason`] |
//! | [`driver`] | the one loop driver of the step-by-step learners (FSLL, Frank-Wolfe): limits, interrupt, observers at their period |
//! | [`fsll`] | the full-span log-linear model and its greedy MDL learner (Takabatake & Akaho) |
//! | [`fvbm`] | fully visible Boltzmann machines: exact engine, Gibbs, MPLE (BSLM, GA, Newton), sandwich SEs, exact MLE |
//! | [`rbm`] | restricted Boltzmann machines: model, block Gibbs, exact and AIS log Z, CD / PCD / S-DCP |
//! | [`model`] | [`model::Model`], the one shape of every model: per-row log-probabilities, `ln Z` as an [`estimate::Estimate`], sampling, files |
//! | [`potts`] | Potts models of sequence alignments (DCA): alignments, sequence weights |
//! | [`any_model`] | [`any_model::AnyModel`]: any model file, one variant per family (above the families) |
//! | [`optim`] | the shared L-BFGS minimizer |
//! | [`potts`] | Potts models (`q_i` states per site): model, exact enumeration, files |
//! | [`provenance`] | what a model file records of the fit that made it (CLI and Python alike) |
//! | [`settings`] | the one settings schema: every learner's `XParams` serialized under stable names, overlaid by flags, passed from Python |
//! | [`cpu`] | the one CPU-feature detection the SIMD kernels dispatch on |
//! | [`budget`] | sizes checked before work: memory, a year of operations, threads; fallible buffers |
//! | [`classify`] | multinomial logistic regression (the readout that scores learned features) |
//! | [`io`] | model files (safetensors), metric logs (JSONL), atomic writes |
//! | [`rng`] | the one named generator and per-task seed derivation |
//! | [`error`] | the one [`Error`] type |
//!
//! Data flows one way: a file or generator gives a `Dataset`; a learner (a family's settings
//! after `check()`, a [`fit::Learner`]) fits it and returns a [`fit::Fit`]: the model plus a
//! serializable record (why it stopped: [`fit::StopReason`]);
//! every model answers the same questions through [`model::Model`] (per-row log-probabilities,
//! `ln Z` and likelihoods as an [`estimate::Estimate`], samples, files).
//!
//! # Quick start
//!
//! Each family in a few lines: fit, score, sample. Scores are exact here (small models); for
//! large RBMs `LogPartition::Auto` switches to AIS and the [`estimate::Estimate`] carries its
//! standard error.
//!
//! A full-span log-linear model learned by the greedy MDL algorithm (Takabatake & Akaho):
//!
//! ```
//! use boltzkit::data::synth::IsingGrid;
//! use boltzkit::fit::Learner;
//! use boltzkit::fsll::FsllParams;
//! use boltzkit::model::{LogPartition, Model, Sampling};
//! use boltzkit::rng::rng_from_seed;
//! let truth = IsingGrid::new(3, 3, 0.5).distribution()?;
//! let data = truth.sample(2000, &mut rng_from_seed(1))?;
//! let model = FsllParams::default().check()?.fit(&data)?.model;
//! let ll = model.log_likelihood(&data, &LogPartition::Exact)?;
//! assert!(ll.is_exact() && ll.value < 0.0);
//! let x = model.sample(10, &Sampling::Auto, &mut rng_from_seed(2))?;
//! assert_eq!(x.n_vars(), 9);
//! # Ok::<(), boltzkit::Error>(())
//! ```
//!
//! A fully visible Boltzmann machine by maximum pseudo-likelihood (Newton), with standard
//! errors:
//!
//! ```
//! use boltzkit::fit::Learner;
//! use boltzkit::fvbm::{inference, newton, Convention, Fvbm};
//! use boltzkit::model::{LogPartition, Model, Sampling};
//! use boltzkit::rng::rng_from_seed;
//! let truth = Fvbm::random(6, 0.3, Convention::Spin, &mut rng_from_seed(3))?;
//! let data = truth.sample(4000, &Sampling::Auto, &mut rng_from_seed(4))?;
//! let fit = newton::NewtonParams::default().check()?.fit(&data)?;
//! let per_row = fit.model.log_probs(&data, &LogPartition::Exact)?.0;
//! assert_eq!(per_row.len(), 4000);
//! let se = inference::sandwich(&fit.model, &data, 0.0)?.std_error;
//! assert!(se.iter().all(|s| s.is_finite() && *s > 0.0));
//! # Ok::<(), boltzkit::Error>(())
//! ```
//!
//! A restricted Boltzmann machine by PCD-1 (any trainer by its name: `cd-1`, `sdcp-3-4`,
//! `popcd-1`, `pt-10`, ...):
//!
//! ```
//! use boltzkit::data::synth::BarsAndStripes;
//! use boltzkit::fit::Learner;
//! use boltzkit::model::{LogPartition, Model, Sampling};
//! use boltzkit::rbm::train::{RbmParams, TrainParams};
//! use boltzkit::rng::rng_from_seed;
//! let data = BarsAndStripes::new(3, false)?.dataset()?;
//! let train = TrainParams::new().algorithm("pcd-1".parse()?).epochs(50)
//!     .full_batch().learning_rate(0.1).seed(5);
//! let rbm = RbmParams::new(6).train(train).check()?.fit(&data)?.model;
//! let ll = rbm.log_likelihood(&data, &LogPartition::Auto)?; // exact: 6 hidden units
//! assert!(ll.is_exact());
//! let x = rbm.sample(20, &Sampling::Gibbs { steps: 100 }, &mut rng_from_seed(6))?;
//! assert_eq!(x.n_samples(), 20);
//! # Ok::<(), boltzkit::Error>(())
//! ```
//!
//! An infinite RBM grown by Frank-Wolfe (Ping, Liu & Ihler), one hidden unit per iteration:
//!
//! ```
//! use boltzkit::data::synth::BarsAndStripes;
//! use boltzkit::fit::Learner;
//! use boltzkit::model::{LogPartition, Model};
//! use boltzkit::rbm::frank_wolfe::FwParams;
//! let data = BarsAndStripes::new(3, false)?.dataset()?;
//! let params = FwParams::new().max_units(3).samples(200).eval_every(0).seed(1);
//! let fit = params.check()?.fit(&data)?;
//! assert_eq!(fit.model.n_units(), 3);
//! let ll = fit.model.log_likelihood(&data, &LogPartition::Exact)?;
//! assert!(ll.value.is_finite());
//! # Ok::<(), boltzkit::Error>(())
//! ```
#![deny(missing_docs)]

pub mod any_model;
pub mod budget;
pub mod classify;
pub mod cpu;
pub mod data;
pub mod driver;
pub mod error;
pub mod estimate;
pub mod fit;
pub mod fsll;
pub mod fvbm;
pub mod io;
pub mod linalg;
pub mod model;
pub mod optim;
pub mod potts;
pub mod provenance;
pub mod rbm;
pub mod rng;
pub mod settings;
mod units;
pub mod warm;

#[cfg(test)]
mod testutil;

pub use error::{Error, Result};
