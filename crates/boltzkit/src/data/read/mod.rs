//! Reading data files into a [`Dataset`](crate::data::Dataset) (see [`read_dataset`]): this
//! face only declares and re-exports; the readers import their siblings (`source`, `collect`,
//! `options`), never it.

mod collect;
mod dataset;
mod idx;
pub(crate) mod npy;
mod options;
mod source;
mod text;

pub use dataset::read_dataset;
pub use npy::read_npy_f64;
pub use options::{Binarize, ReadOptions};
pub(crate) use source::{load, name_and_gz, parse_error};

#[cfg(test)]
pub(crate) mod tests;
