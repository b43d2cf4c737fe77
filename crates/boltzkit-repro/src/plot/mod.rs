//! PNG plots: line charts (learning curves, traces) and image tiles (weight filters, samples,
//! reconstructions).
//!
//! | item | what it draws |
//! |---|---|
//! | [`Chart`], [`Series`], [`line_chart`] | one line chart: series with optional ± bands, labelled reference lines, legend |
//! | [`chart_panels`] | several charts in one PNG, `cols` panels per row |
//! | [`TileGrid`], [`image_grid`] | grayscale tiles (e.g. columns of W as images) in a grid |
//! | [`ContactMap`], [`contact_map`] | a structure's contacts with the top predicted pairs over them (DCA) |
//! | [`model`] | `rbm plot`'s pictures: a metric log's curves, an RBM's filters and reconstructions |
//!
//! Charts are drawn by `plotters` into an RGB buffer, text in the DejaVu Sans font compiled into
//! the binary (no system font is read); tiles are painted directly. Every PNG is encoded by the
//! `png` crate and written atomically ([`boltzkit::io::write_atomic_with`]).
//!
//! ```text
//! let chart = Chart::new("ATLL, shifting bar 9/1")
//!     .x_label("epoch")
//!     .y_label("ATLL (nats)")
//!     .series(Series::new("CD-12", points).band(sd))
//!     .v_line(epoch90, "CD-12 reaches 90% of its max", Some(0))
//!     .h_line(-(9f64).ln(), "bound −ln 9");
//! line_chart(Path::new("atll.png"), &chart)?;
//! ```

mod chart;
mod contact_map;
pub mod model;
mod rgb;
mod tiles;

pub use chart::{chart_panels, line_chart, Chart, Series, PANEL};
pub use contact_map::{contact_map, render_contact_map, ContactMap, MAP_SIZE};
pub use rgb::Rgb;
pub use tiles::{image_grid, Normalize, PixelOrder, TileGrid};
