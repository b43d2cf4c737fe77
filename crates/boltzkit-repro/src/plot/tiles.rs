//! Grayscale image tiles in a grid: weight filters (columns of W), samples, and data beside its
//! reconstructions (tiles grouped in pairs).

use super::rgb::Rgb;
use anyhow::ensure;
use std::path::Path;

/// Largest width or height of a tile image, in pixels.
pub const MAX_SIDE: usize = 16_384;

/// Color between tiles (slate blue, distinct from any gray value).
const SEPARATOR: [u8; 3] = [70, 90, 120];

/// Color of a non-finite value.
const NOT_FINITE: [u8; 3] = [255, 0, 255];

/// How a tile's `h × w` pixels are stored in its slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PixelOrder {
    /// Pixel `(r, c)` at `r·w + c` (C order; MNIST).
    #[default]
    RowMajor,
    /// Pixel `(r, c)` at `c·h + r` (Fortran/MATLAB order).
    ColumnMajor,
}

/// How values become gray levels (black = low, white = high).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Normalize {
    /// Each tile's minimum is black and its maximum white (weight filters); a constant tile is
    /// mid gray.
    #[default]
    PerTile,
    /// 0 is black and 1 white, values clamped to [0, 1] (samples, probabilities).
    Unit,
}

/// The layout of [`image_grid`]: tile shape, pixel order, columns, gray scale, magnification
/// and grouping.
///
/// Tiles are laid out in cells of `group` tiles side by side (2 puts a data row beside its
/// reconstruction), `cols` cells per row, rows filled left to right, top to bottom. Tiles in
/// a cell are one separator apart, cells three (with `group` > 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TileGrid {
    /// Tile height in pixels (before scaling).
    pub tile_h: usize,
    /// Tile width in pixels (before scaling).
    pub tile_w: usize,
    /// How each tile's pixels are stored.
    pub order: PixelOrder,
    /// Cells per row; 0 picks about a square image.
    pub cols: usize,
    /// Gray scale.
    pub normalize: Normalize,
    /// Each pixel becomes `scale × scale` image pixels (≥ 1).
    pub scale: usize,
    /// Tiles per cell (≥ 1).
    pub group: usize,
}

impl TileGrid {
    /// Tiles of `tile_h × tile_w`, row-major, per-tile gray scale, scale 1, no grouping, about
    /// square.
    pub fn new(tile_h: usize, tile_w: usize) -> Self {
        TileGrid {
            tile_h,
            tile_w,
            order: PixelOrder::RowMajor,
            cols: 0,
            normalize: Normalize::PerTile,
            scale: 1,
            group: 1,
        }
    }

    /// Sets the pixel order.
    pub fn order(mut self, order: PixelOrder) -> Self {
        self.order = order;
        self
    }

    /// Sets the cells per row (0: about square).
    pub fn cols(mut self, cols: usize) -> Self {
        self.cols = cols;
        self
    }

    /// Sets the gray scale.
    pub fn normalize(mut self, normalize: Normalize) -> Self {
        self.normalize = normalize;
        self
    }

    /// Sets the magnification.
    pub fn scale(mut self, scale: usize) -> Self {
        self.scale = scale;
        self
    }

    /// Sets the tiles per cell.
    pub fn group(mut self, group: usize) -> Self {
        self.group = group;
        self
    }

    /// Separator width inside a cell and between cells.
    fn spacing(&self) -> (usize, usize) {
        let pad = (self.scale / 2).clamp(1, 4);
        (pad, if self.group > 1 { 3 * pad } else { pad })
    }

    /// Cells per row for `cells` cells: `cols`, or about a square image when 0.
    fn cols_for(&self, cells: usize) -> usize {
        if self.cols > 0 {
            return self.cols.min(cells);
        }
        let aspect = self.tile_h as f64 / (self.group * self.tile_w) as f64;
        ((cells as f64 * aspect).sqrt().ceil() as usize).clamp(1, cells)
    }
}

/// Paints `tiles` (`n × tile_h·tile_w` values, tile after tile) as a grid of gray images.
///
/// `n` must be a whole number of tiles; with `group` > 1 a last incomplete cell is allowed.
pub fn render_tiles(tiles: &[f32], grid: &TileGrid) -> anyhow::Result<Rgb> {
    let (th, tw, s) = (grid.tile_h, grid.tile_w, grid.scale);
    ensure!(th > 0 && tw > 0, "tiles need a positive height and width");
    ensure!(
        s > 0 && grid.group > 0,
        "scale and group must be at least 1"
    );
    let size = th * tw;
    ensure!(
        !tiles.is_empty() && tiles.len().is_multiple_of(size),
        "{} values are not a whole, non-zero number of {th}×{tw} tiles",
        tiles.len()
    );
    let n = tiles.len() / size;
    let cells = n.div_ceil(grid.group);
    let cols = grid.cols_for(cells);
    let rows = cells.div_ceil(cols);
    let (pad, gap) = grid.spacing();
    let cell_w = grid.group * tw * s + (grid.group - 1) * pad;
    let width = gap + cols * (cell_w + gap);
    let height = gap + rows * (th * s + gap);
    ensure!(
        width <= MAX_SIDE && height <= MAX_SIDE,
        "the image would be {width} × {height} pixels (at most {MAX_SIDE} a side): fewer tiles \
         or a smaller scale"
    );
    let mut pixels: Vec<u8> = SEPARATOR
        .iter()
        .copied()
        .cycle()
        .take(3 * width * height)
        .collect();
    for (t, tile) in tiles.chunks_exact(size).enumerate() {
        let (cell, k) = (t / grid.group, t % grid.group);
        let x0 = gap + (cell % cols) * (cell_w + gap) + k * (tw * s + pad);
        let y0 = gap + (cell / cols) * (th * s + gap);
        let (lo, hi) = match grid.normalize {
            Normalize::Unit => (0.0, 1.0),
            Normalize::PerTile => tile
                .iter()
                .filter(|v| v.is_finite())
                .fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &v| {
                    (a.min(v), b.max(v))
                }),
        };
        for r in 0..th {
            for c in 0..tw {
                let v = tile[match grid.order {
                    PixelOrder::RowMajor => r * tw + c,
                    PixelOrder::ColumnMajor => c * th + r,
                }];
                let rgb = if !v.is_finite() {
                    NOT_FINITE
                } else {
                    let g = if hi > lo {
                        ((v - lo) / (hi - lo)).clamp(0.0, 1.0)
                    } else {
                        0.5
                    };
                    [(g * 255.0).round() as u8; 3]
                };
                for y in y0 + r * s..y0 + (r + 1) * s {
                    let row = 3 * (y * width + x0 + c * s);
                    for px in pixels[row..row + 3 * s].chunks_exact_mut(3) {
                        px.copy_from_slice(&rgb);
                    }
                }
            }
        }
    }
    Ok(Rgb {
        width: width as u32,
        height: height as u32,
        pixels,
    })
}

/// Writes `tiles` as a PNG grid (see [`render_tiles`]); returns its width and height.
pub fn image_grid(path: &Path, tiles: &[f32], grid: &TileGrid) -> anyhow::Result<(u32, u32)> {
    let img = render_tiles(tiles, grid)?;
    img.write_png(path)?;
    Ok((img.width, img.height))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 3×2 tile with a single bright pixel at (row 0, col 1), row-major.
    fn corner_tile() -> Vec<f32> {
        vec![0.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    }

    #[test]
    fn layout_size_and_orientation() {
        let grid = TileGrid::new(3, 2).scale(2).cols(2);
        let tiles: Vec<f32> = [corner_tile(), corner_tile(), corner_tile()].concat();
        let img = render_tiles(&tiles, &grid).unwrap();
        // pad = gap = 1; 2 cells per row of 4 px, 2 rows of 6 px
        assert_eq!((img.width, img.height), (1 + 2 * 5, 1 + 2 * 7));
        assert_eq!(img.at(0, 0), SEPARATOR);
        // tile 0 at x0 = 1, y0 = 1: (row 0, col 1) is white, (row 0, col 0) black
        assert_eq!(img.at(1 + 2, 1), [255; 3]);
        assert_eq!(img.at(1 + 3, 2), [255; 3]);
        assert_eq!(img.at(1, 1), [0; 3]);
        assert_eq!(img.at(1, 1 + 4), [0; 3], "bottom-left pixel is dark");
        // tile 2 starts the second row at y0 = 1 + 7
        assert_eq!(img.at(3, 8), [255; 3]);
        // the missing fourth tile is background
        assert_eq!(img.at(6 + 2, 8), SEPARATOR);
    }

    #[test]
    fn column_major_transposes_the_reading() {
        // column-major: index c·h + r; value at index 1 is (row 1, col 0)
        let grid = TileGrid::new(3, 2).order(PixelOrder::ColumnMajor);
        let img = render_tiles(&corner_tile(), &grid).unwrap();
        assert_eq!(img.at(1, 1 + 1), [255; 3]);
        assert_eq!(img.at(2, 1), [0; 3]);
    }

    #[test]
    fn normalization_per_tile_and_unit() {
        let tile = vec![-2.0, 0.0, 2.0, 2.0];
        let img = render_tiles(&tile, &TileGrid::new(2, 2)).unwrap();
        assert_eq!(img.at(1, 1), [0; 3]);
        assert_eq!(img.at(2, 1), [128; 3]);
        assert_eq!(img.at(1, 2), [255; 3]);
        let unit = TileGrid::new(2, 2).normalize(Normalize::Unit);
        let img = render_tiles(&[0.25, 1.5, -1.0, f32::NAN], &unit).unwrap();
        assert_eq!(img.at(1, 1), [64; 3]);
        assert_eq!(img.at(2, 1), [255; 3]);
        assert_eq!(img.at(1, 2), [0; 3]);
        assert_eq!(img.at(2, 2), NOT_FINITE);
        let flat = render_tiles(&[3.0; 4], &TileGrid::new(2, 2)).unwrap();
        assert_eq!(flat.at(1, 1), [128; 3]);
    }

    #[test]
    fn pairs_are_grouped_with_a_wider_gap() {
        let grid = TileGrid::new(1, 1)
            .group(2)
            .cols(2)
            .normalize(Normalize::Unit);
        let img = render_tiles(&[1.0, 0.0, 1.0, 0.0], &grid).unwrap();
        // gap 3, pad 1: cells of 1 + 1 + 1 = 3 px
        assert_eq!((img.width, img.height), (3 + 2 * 6, 3 + 4));
        assert_eq!(img.at(3, 3), [255; 3]);
        assert_eq!(img.at(4, 3), SEPARATOR);
        assert_eq!(img.at(5, 3), [0; 3]);
        assert_eq!(img.at(9, 3), [255; 3]);
    }

    #[test]
    fn automatic_columns_give_about_a_square() {
        let grid = TileGrid::new(4, 4);
        assert_eq!(grid.cols_for(100), 10);
        assert_eq!(grid.clone().group(2).cols_for(50), 5);
        assert_eq!(grid.cols_for(1), 1);
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        assert!(render_tiles(&[1.0; 5], &TileGrid::new(2, 2)).is_err());
        assert!(render_tiles(&[], &TileGrid::new(2, 2)).is_err());
        assert!(render_tiles(&[1.0; 4], &TileGrid::new(2, 2).scale(0)).is_err());
        assert!(render_tiles(&[1.0; 4], &TileGrid::new(0, 2)).is_err());
        let huge = TileGrid::new(2, 2).scale(10_000);
        let e = render_tiles(&[1.0; 4], &huge).unwrap_err().to_string();
        assert!(e.contains("at most"), "{e}");
    }

    #[test]
    fn image_grid_writes_a_png_of_the_reported_size() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.png");
        let (w, h) = image_grid(&p, &[0.0, 1.0, 1.0, 0.0], &TileGrid::new(2, 2).scale(3)).unwrap();
        let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&p).unwrap()));
        let reader = decoder.read_info().unwrap();
        assert_eq!((reader.info().width, reader.info().height), (w, h));
        assert_eq!((w, h), (2 + 6, 2 + 6));
    }
}
