//! # boltzkit
//!
//! Learning and evaluating Boltzmann machines and their relatives on discrete data.
//!
//! | module | what it holds |
//! |---|---|
//! | [`data`] | [`data::Dataset`], readers (npy, csv/tsv, IDX, amat; gzip), writers, generators |
//! | [`fit`] | [`fit::StopReason`], the one stop vocabulary of every learner |
//! | [`fsll`] | the full-span log-linear model and its greedy MDL learner (Takabatake & Akaho) |
//! | [`fvbm`] | fully visible Boltzmann machines: exact engine, Gibbs, MPLE (BSLM, GA, Newton), sandwich SEs, exact MLE |
//! | [`rbm`] | restricted Boltzmann machines: model, block Gibbs, exact and AIS log Z, CD / PCD / S-DCP |
//! | [`model`] | [`model::Model`], the one shape of every model: per-row log-probabilities, `ln Z` as an [`estimate::Estimate`], sampling, files |
//! | [`optim`] | the shared L-BFGS minimizer |
//! | [`classify`] | multinomial logistic regression (the readout that scores learned features) |
//! | [`io`] | model files (safetensors), metric logs (JSONL), atomic writes |
//! | [`rng`] | the one named generator and per-task seed derivation |
//! | [`error`] | the one [`Error`] type |
//!
//! Data flows one way: a file or generator gives a `Dataset`; a learner takes it with its
//! settings and returns a model plus a training record; estimators take a model (and data) and
//! return numbers; `io` writes models and records.
#![deny(missing_docs)]

pub mod classify;
pub mod data;
pub mod error;
pub mod estimate;
pub mod fit;
pub mod fsll;
pub mod fvbm;
pub mod io;
pub mod linalg;
pub mod model;
pub mod optim;
pub mod rbm;
pub mod rng;

pub use error::{Error, Result};
