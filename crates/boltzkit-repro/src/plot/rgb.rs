//! [`Rgb`]: the image every plot draws into, written as PNG.

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
