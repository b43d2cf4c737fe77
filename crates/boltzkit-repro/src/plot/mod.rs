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
mod tiles;

pub use chart::{chart_panels, line_chart, Chart, Series, PANEL};
pub use contact_map::{contact_map, render_contact_map, ContactMap, MAP_SIZE};
pub use tiles::{image_grid, Normalize, PixelOrder, TileGrid};

use anyhow::Context;
use std::io;
use std::path::Path;

/// An RGB image (8 bits per channel, rows top to bottom).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rgb {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width × height × 3` bytes.
    pub pixels: Vec<u8>,
}

impl Rgb {
    /// The color at column `x`, row `y`.
    pub fn at(&self, x: u32, y: u32) -> [u8; 3] {
        let i = 3 * (y as usize * self.width as usize + x as usize);
        [self.pixels[i], self.pixels[i + 1], self.pixels[i + 2]]
    }

    /// Encodes the image as PNG and writes it to `path` atomically.
    pub fn write_png(&self, path: &Path) -> anyhow::Result<()> {
        boltzkit::io::write_atomic_with(path, |out| {
            let mut enc = png::Encoder::new(out, self.width, self.height);
            enc.set_color(png::ColorType::Rgb);
            enc.set_depth(png::BitDepth::Eight);
            let mut w = enc.write_header().map_err(io::Error::other)?;
            w.write_image_data(&self.pixels).map_err(io::Error::other)?;
            w.finish().map_err(io::Error::other)
        })
        .with_context(|| format!("writing the plot {}", path.display()))
    }
}
