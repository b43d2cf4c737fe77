//! Line charts drawn by `plotters` into an RGB buffer: series with optional ± bands, vertical
//! and horizontal reference lines, a legend in the emptiest corner; one chart per PNG or a grid
//! of panels.

use super::rgb::Rgb;
use anyhow::{bail, ensure, Context};
use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::types::RangedCoordf64;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use std::path::Path;
use std::sync::OnceLock;

/// Size of one chart (one panel of [`chart_panels`]) in pixels.
pub const PANEL: (u32, u32) = (800, 500);

/// Font family name under which the embedded DejaVu Sans is registered.
pub(super) const FONT: &str = "sans-serif";

/// Line colors, in order of the series (matplotlib's `tab10`).
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// Color of reference lines not tied to a series.
const REF_COLOR: RGBColor = RGBColor(60, 60, 60);

/// One line: a name for the legend, `(x, y)` points in order, and optionally a ± band.
///
/// Non-finite points break the line (and the band) into pieces; they are not drawn.
#[derive(Debug, Clone, Default)]
pub struct Series {
    /// Legend entry.
    pub name: String,
    /// The points, in drawing order.
    pub points: Vec<(f64, f64)>,
    /// Half-widths of a band `y ± band[i]` drawn as a translucent area (e.g. the standard
    /// deviation over trials); one per point.
    pub band: Option<Vec<f64>>,
}

impl Series {
    /// A line named `name` through `points`.
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Series {
            name: name.into(),
            points,
            band: None,
        }
    }

    /// Adds the band `y ± half_widths[i]` (one value per point, each ≥ 0).
    #[allow(dead_code)] // for the mean ± sd curves of the repro commands (sdcp, pop-CD)
    pub fn band(mut self, half_widths: Vec<f64>) -> Self {
        self.band = Some(half_widths);
        self
    }
}

/// A labelled reference line at a fixed x (vertical) or y (horizontal).
#[derive(Debug, Clone)]
pub struct RefLine {
    /// Where the line is, in data units.
    pub at: f64,
    /// Legend entry (e.g. "epoch reaching 90% of max", "bound −ln 9").
    pub label: String,
    /// Draw it in the color of this series (index into [`Chart::series`]); else dark gray.
    pub series: Option<usize>,
}

/// A line chart: title, axis labels, optional log-scale x, series and reference lines.
///
/// The legend lists the series and then the reference lines; it is left out when the chart
/// has a single series and no reference line. It goes in the corner holding the fewest points.
#[derive(Debug, Clone, Default)]
pub struct Chart {
    /// Title above the plot.
    pub title: String,
    /// Label of the x axis.
    pub x_label: String,
    /// Label of the y axis.
    pub y_label: String,
    /// Logarithmic x axis (points with x ≤ 0 are then left out).
    pub log_x: bool,
    /// The lines.
    pub series: Vec<Series>,
    /// Vertical reference lines (dashed).
    pub v_lines: Vec<RefLine>,
    /// Horizontal reference lines (dashed).
    pub h_lines: Vec<RefLine>,
}

impl Chart {
    /// An empty chart titled `title`.
    pub fn new(title: impl Into<String>) -> Self {
        Chart {
            title: title.into(),
            ..Chart::default()
        }
    }

    /// Sets the x axis label.
    pub fn x_label(mut self, label: impl Into<String>) -> Self {
        self.x_label = label.into();
        self
    }

    /// Sets the y axis label.
    pub fn y_label(mut self, label: impl Into<String>) -> Self {
        self.y_label = label.into();
        self
    }

    /// Makes the x axis logarithmic (base 10) when `on`.
    pub fn log_x(mut self, on: bool) -> Self {
        self.log_x = on;
        self
    }

    /// Adds a series.
    pub fn series(mut self, series: Series) -> Self {
        self.series.push(series);
        self
    }

    /// Adds a dashed vertical line at `x`, in the color of series `series` if given.
    #[allow(dead_code)] // for the repro curves (e.g. the epoch reaching 90% of the maximum)
    pub fn v_line(mut self, x: f64, label: impl Into<String>, series: Option<usize>) -> Self {
        self.v_lines.push(RefLine {
            at: x,
            label: label.into(),
            series,
        });
        self
    }

    /// Adds a dashed horizontal line at `y` in dark gray.
    #[allow(dead_code)] // for the repro curves (e.g. the bound −ln 9)
    pub fn h_line(mut self, y: f64, label: impl Into<String>) -> Self {
        self.h_lines.push(RefLine {
            at: y,
            label: label.into(),
            series: None,
        });
        self
    }

    /// Whether `x` can be drawn on this chart's x axis.
    fn x_ok(&self, x: f64) -> bool {
        x.is_finite() && (!self.log_x || x > 0.0)
    }

    /// Checks the bands and reference lines, and that there is something to draw.
    fn check(&self) -> anyhow::Result<()> {
        let name = &self.title;
        for s in &self.series {
            if let Some(b) = &s.band {
                ensure!(
                    b.len() == s.points.len(),
                    "chart `{name}`, series `{}`: {} band values for {} points",
                    s.name,
                    b.len(),
                    s.points.len()
                );
                ensure!(
                    b.iter().all(|&w| w >= 0.0 || w.is_nan()),
                    "chart `{name}`, series `{}`: a band half-width is negative",
                    s.name
                );
            }
        }
        for r in self.v_lines.iter().chain(&self.h_lines) {
            if let Some(i) = r.series.filter(|&i| i >= self.series.len()) {
                bail!(
                    "chart `{name}`: reference line `{}` names series {i} of {}",
                    r.label,
                    self.series.len()
                );
            }
        }
        let drawable = self
            .series
            .iter()
            .flat_map(|s| &s.points)
            .any(|&(x, y)| self.x_ok(x) && y.is_finite());
        ensure!(
            drawable,
            "chart `{name}` has no finite point to draw{}",
            if self.log_x {
                " (log x needs x > 0)"
            } else {
                ""
            }
        );
        Ok(())
    }

    /// The axis ranges: every drawable point, band edge and reference line, y padded by 5%.
    fn bounds(&self) -> ((f64, f64), (f64, f64)) {
        let mut xs = Vec::new();
        let mut ys = Vec::new();
        for s in &self.series {
            for (i, &(x, y)) in s.points.iter().enumerate() {
                if self.x_ok(x) && y.is_finite() {
                    xs.push(x);
                    let w = s.band.as_ref().map_or(0.0, |b| b[i]);
                    if w.is_finite() {
                        ys.extend([y - w, y + w]);
                    } else {
                        ys.push(y);
                    }
                }
            }
        }
        xs.extend(self.v_lines.iter().map(|r| r.at).filter(|&x| self.x_ok(x)));
        ys.extend(self.h_lines.iter().map(|r| r.at).filter(|y| y.is_finite()));
        let (mut x0, mut x1) = min_max(&xs);
        if x0 == x1 {
            if self.log_x {
                (x0, x1) = (x0 / 2.0, x1 * 2.0);
            } else {
                (x0, x1) = (x0 - 0.5, x1 + 0.5);
            }
        }
        let (y0, y1) = min_max(&ys);
        let pad = if y1 > y0 {
            0.05 * (y1 - y0)
        } else if y0 != 0.0 {
            0.1 * y0.abs()
        } else {
            0.5
        };
        ((x0, x1), (y0 - pad, y1 + pad))
    }

    /// The legend's size as a fraction of the plot area (about 8 pixels per character and
    /// 19 per entry, in a plot area of about 690 × 390 pixels).
    fn legend_size(&self) -> (f64, f64) {
        let refs = self.v_lines.iter().chain(&self.h_lines).map(|r| &r.label);
        let labels = self.series.iter().map(|s| &s.name).chain(refs);
        let (n, longest) = labels.fold((0, 0), |(n, l), s| (n + 1, l.max(s.chars().count())));
        let w = (44 + 8 * longest) as f64 / 690.0;
        let h = (12 + 19 * n) as f64 / 390.0;
        (w.min(1.0), h.min(1.0))
    }

    /// The legend corner: the one whose legend-sized box covers the fewest points and band
    /// edges, a reference line through it counting as 5 points; ties go to lower right, upper
    /// right, lower left, upper left.
    fn legend_corner(&self, (x0, x1): (f64, f64), (y0, y1): (f64, f64)) -> SeriesLabelPosition {
        let fx = |x: f64| {
            if self.log_x {
                (x.ln() - x0.ln()) / (x1.ln() - x0.ln())
            } else {
                (x - x0) / (x1 - x0)
            }
        };
        let fy = |y: f64| (y - y0) / (y1 - y0);
        let (bw, bh) = self.legend_size();
        // corners: upper left, upper right, lower left, lower right
        let in_u = |c: usize, u: f64| {
            if c.is_multiple_of(2) {
                u <= bw
            } else {
                u >= 1.0 - bw
            }
        };
        let in_v = |c: usize, v: f64| if c < 2 { v >= 1.0 - bh } else { v <= bh };
        let mut cost = [0usize; 4];
        for s in &self.series {
            for (i, &(x, y)) in s.points.iter().enumerate() {
                if !(self.x_ok(x) && y.is_finite()) {
                    continue;
                }
                let w = s.band.as_ref().map_or(0.0, |b| b[i]);
                let ys: &[f64] = if w > 0.0 { &[y, y - w, y + w] } else { &[y] };
                for (c, total) in cost.iter_mut().enumerate() {
                    let hits = ys.iter().filter(|&&y| in_v(c, fy(y))).count();
                    *total += if in_u(c, fx(x)) { hits } else { 0 };
                }
            }
        }
        for (c, total) in cost.iter_mut().enumerate() {
            let v_hits = self
                .v_lines
                .iter()
                .filter(|r| self.x_ok(r.at) && in_u(c, fx(r.at)));
            let h_hits = self.h_lines.iter().filter(|r| in_v(c, fy(r.at)));
            *total += 5 * (v_hits.count() + h_hits.count());
        }
        let best = (0..4)
            .min_by_key(|&c| (cost[c], [3, 1, 2, 0][c]))
            .unwrap_or(3);
        [
            SeriesLabelPosition::UpperLeft,
            SeriesLabelPosition::UpperRight,
            SeriesLabelPosition::LowerLeft,
            SeriesLabelPosition::LowerRight,
        ][best]
            .clone()
    }
}

fn min_max(v: &[f64]) -> (f64, f64) {
    v.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        })
}

/// Registers the embedded DejaVu Sans (regular and bold) once per process.
pub(super) fn register_fonts() -> anyhow::Result<()> {
    static DONE: OnceLock<bool> = OnceLock::new();
    let ok = *DONE.get_or_init(|| {
        let regular =
            plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
        let bold = plotters::style::register_font(FONT, FontStyle::Bold, dejavu::sans::bold());
        regular.is_ok() && bold.is_ok()
    });
    ensure!(ok, "the embedded DejaVu Sans font could not be loaded");
    Ok(())
}

/// Draws `charts` in a grid of `cols` panels per row, each [`PANEL`] pixels, on white.
pub fn render_charts(charts: &[Chart], cols: usize) -> anyhow::Result<Rgb> {
    ensure!(!charts.is_empty(), "no chart to draw");
    ensure!(cols > 0, "a grid of charts needs at least one column");
    for c in charts {
        c.check()?;
    }
    register_fonts()?;
    let cols = cols.min(charts.len());
    let rows = charts.len().div_ceil(cols);
    let (width, height) = (PANEL.0 * cols as u32, PANEL.1 * rows as u32);
    let mut pixels = vec![255u8; 3 * width as usize * height as usize];
    {
        let root = BitMapBackend::with_buffer(&mut pixels, (width, height)).into_drawing_area();
        let panels = root.split_evenly((rows, cols));
        for (chart, area) in charts.iter().zip(&panels) {
            draw_chart(area, chart).with_context(|| format!("drawing chart `{}`", chart.title))?;
        }
        root.present().map_err(err)?;
    }
    Ok(Rgb {
        width,
        height,
        pixels,
    })
}

/// Writes one chart as a PNG of [`PANEL`] pixels.
pub fn line_chart(path: &Path, chart: &Chart) -> anyhow::Result<()> {
    render_charts(std::slice::from_ref(chart), 1)?.write_png(path)
}

/// Writes several charts as one PNG, `cols` panels per row (fewer when there are fewer
/// charts), each [`PANEL`] pixels.
pub fn chart_panels(path: &Path, charts: &[Chart], cols: usize) -> anyhow::Result<()> {
    render_charts(charts, cols)?.write_png(path)
}

type Area<'a> = DrawingArea<BitMapBackend<'a>, plotters::coord::Shift>;

/// A plotters error as an `anyhow` one (its error types borrow nothing but are not `Sync`).
pub(super) fn err(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow::anyhow!("{e}")
}

fn draw_chart(area: &Area<'_>, chart: &Chart) -> anyhow::Result<()> {
    let (xr, yr) = chart.bounds();
    let mut builder = ChartBuilder::on(area);
    builder
        .caption(&chart.title, (FONT, 22))
        .margin(14)
        .x_label_area_size(48)
        .y_label_area_size(78);
    if chart.log_x {
        let cc = builder
            .build_cartesian_2d((xr.0..xr.1).log_scale(), yr.0..yr.1)
            .map_err(err)?;
        draw_into(cc, chart, xr, yr)
    } else {
        let cc = builder
            .build_cartesian_2d(xr.0..xr.1, yr.0..yr.1)
            .map_err(err)?;
        draw_into(cc, chart, xr, yr)
    }
}

/// Tick labels: up to 4 significant digits, exponent form for very large or small values.
fn tick(v: &f64) -> String {
    let a = v.abs();
    if a != 0.0 && !(1e-3..1e5).contains(&a) {
        format!("{v:.2e}")
    } else {
        let s = format!("{v:.4}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        if s == "-0" {
            "0".into()
        } else {
            s.into()
        }
    }
}

fn draw_into<'a, X>(
    mut cc: ChartContext<'a, BitMapBackend<'a>, Cartesian2d<X, RangedCoordf64>>,
    chart: &Chart,
    xr: (f64, f64),
    yr: (f64, f64),
) -> anyhow::Result<()>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let mut mesh = cc.configure_mesh();
    mesh.x_desc(chart.x_label.as_str())
        .y_desc(chart.y_label.as_str())
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 16))
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .max_light_lines(2)
        .light_line_style(RGBColor(238, 238, 238))
        .bold_line_style(RGBColor(215, 215, 215));
    mesh.draw().map_err(err)?;

    let color = |i: usize| PALETTE[i % PALETTE.len()];
    for (i, s) in chart.series.iter().enumerate() {
        let c = color(i);
        if let Some(band) = &s.band {
            for piece in finite_runs(chart, s, Some(band)) {
                let mut poly: Vec<(f64, f64)> = piece.iter().map(|&(x, y, w)| (x, y + w)).collect();
                poly.extend(piece.iter().rev().map(|&(x, y, w)| (x, y - w)));
                cc.draw_series(std::iter::once(Polygon::new(poly, c.mix(0.2).filled())))
                    .map_err(err)?;
            }
        }
        let mut labelled = false;
        for piece in finite_runs(chart, s, None) {
            let line = LineSeries::new(piece.iter().map(|&(x, y, _)| (x, y)), c.stroke_width(2));
            let drawn = cc.draw_series(line).map_err(err)?;
            if !labelled {
                drawn.label(s.name.as_str()).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 24, y)], c.stroke_width(2))
                });
                labelled = true;
            }
        }
    }
    let ref_style = |r: &RefLine| r.series.map_or(REF_COLOR, color).stroke_width(2);
    for r in chart.v_lines.iter().filter(|r| chart.x_ok(r.at)) {
        let style = ref_style(r);
        let pts = [(r.at, yr.0), (r.at, yr.1)];
        cc.draw_series(DashedLineSeries::new(pts, 8, 5, style))
            .map_err(err)?
            .label(r.label.as_str())
            .legend(move |(x, y)| DashedPathElement::new(vec![(x, y), (x + 24, y)], 6, 3, style));
    }
    for r in chart.h_lines.iter().filter(|r| r.at.is_finite()) {
        let style = ref_style(r);
        let pts = [(xr.0, r.at), (xr.1, r.at)];
        cc.draw_series(DashedLineSeries::new(pts, 8, 5, style))
            .map_err(err)?
            .label(r.label.as_str())
            .legend(move |(x, y)| DashedPathElement::new(vec![(x, y), (x + 24, y)], 6, 3, style));
    }
    if chart.series.len() + chart.v_lines.len() + chart.h_lines.len() > 1 {
        cc.configure_series_labels()
            .position(chart.legend_corner(xr, yr))
            .label_font((FONT, 15))
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(160, 160, 160))
            .draw()
            .map_err(err)?;
    }
    Ok(())
}

/// The maximal runs of drawable points of `s` as `(x, y, band half-width)`; with `band`, a
/// point whose half-width is not finite also ends a run.
fn finite_runs(chart: &Chart, s: &Series, band: Option<&[f64]>) -> Vec<Vec<(f64, f64, f64)>> {
    let mut runs = vec![Vec::new()];
    for (i, &(x, y)) in s.points.iter().enumerate() {
        let w = band.map_or(0.0, |b| b[i]);
        if chart.x_ok(x) && y.is_finite() && w.is_finite() {
            runs.last_mut().expect("starts non-empty").push((x, y, w));
        } else if !runs.last().expect("starts non-empty").is_empty() {
            runs.push(Vec::new());
        }
    }
    runs.retain(|r| !r.is_empty());
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(f: impl Fn(f64) -> f64) -> Vec<(f64, f64)> {
        (0..50).map(|i| (f64::from(i), f(f64::from(i)))).collect()
    }

    #[test]
    fn a_chart_has_the_panel_size_and_draws_its_series_in_their_colors() {
        let chart = Chart::new("two curves")
            .x_label("epoch")
            .y_label("value")
            .series(Series::new("up", curve(|x| x)))
            .series(Series::new("down", curve(|x| 50.0 - x)).band(vec![3.0; 50]))
            .h_line(25.0, "middle")
            .v_line(10.0, "ten", Some(0));
        let img = render_charts(&[chart], 1).unwrap();
        assert_eq!((img.width, img.height), PANEL);
        let count = |c: RGBColor| {
            img.pixels
                .chunks_exact(3)
                .filter(|p| p == &[c.0, c.1, c.2])
                .count()
        };
        assert!(count(PALETTE[0]) > 200, "first series drawn");
        assert!(count(PALETTE[1]) > 200, "second series drawn");
        // the translucent band: pixels tinted toward the second color, neither white nor it
        let tint = PALETTE[1].mix(0.2);
        let band = RGBColor(
            (255.0 + (f64::from(PALETTE[1].0) - 255.0) * tint.3) as u8,
            (255.0 + (f64::from(PALETTE[1].1) - 255.0) * tint.3) as u8,
            (255.0 + (f64::from(PALETTE[1].2) - 255.0) * tint.3) as u8,
        );
        let near = img
            .pixels
            .chunks_exact(3)
            .filter(|p| {
                p.iter()
                    .zip([band.0, band.1, band.2])
                    .all(|(&a, b)| a.abs_diff(b) <= 2)
            })
            .count();
        assert!(near > 1000, "band area drawn ({near} pixels)");
        // text (title, labels) is drawn in black-ish pixels
        let dark = img
            .pixels
            .chunks_exact(3)
            .filter(|p| p.iter().all(|&v| v < 60))
            .count();
        assert!(dark > 500, "text and axes drawn ({dark} dark pixels)");
    }

    #[test]
    fn panels_tile_the_image_and_each_panel_is_drawn() {
        let charts: Vec<Chart> = (0..3)
            .map(|k| {
                Chart::new(format!("d = {k}"))
                    .log_x(k == 2)
                    .series(Series::new(
                        "s",
                        curve(|x| (x + 1.0).ln() * f64::from(k + 1)),
                    ))
            })
            .collect();
        let img = render_charts(&charts, 2).unwrap();
        assert_eq!((img.width, img.height), (2 * PANEL.0, 2 * PANEL.1));
        let colored_in = |x0: u32, y0: u32| {
            (y0..y0 + PANEL.1)
                .flat_map(|y| (x0..x0 + PANEL.0).map(move |x| (x, y)))
                .filter(|&(x, y)| img.at(x, y) == [PALETTE[0].0, PALETTE[0].1, PALETTE[0].2])
                .count()
        };
        assert!(colored_in(0, 0) > 100);
        assert!(colored_in(PANEL.0, 0) > 100);
        assert!(colored_in(0, PANEL.1) > 100, "log-x panel drawn");
        assert_eq!(
            colored_in(PANEL.0, PANEL.1),
            0,
            "the fourth cell stays empty"
        );
    }

    #[test]
    fn non_finite_points_break_the_line_and_bad_input_is_an_error() {
        let mut pts = curve(|x| x);
        pts[20].1 = f64::NAN;
        let chart = Chart::new("gap").series(Series::new("s", pts.clone()));
        assert_eq!(finite_runs(&chart, &chart.series[0], None).len(), 2);
        assert!(render_charts(&[chart], 1).is_ok());

        let nan = Chart::new("nothing").series(Series::new("s", vec![(0.0, f64::NAN)]));
        let e = render_charts(&[nan], 1).unwrap_err().to_string();
        assert!(e.contains("no finite point"), "{e}");
        let log0 = Chart::new("log")
            .log_x(true)
            .series(Series::new("s", vec![(0.0, 1.0)]));
        assert!(render_charts(&[log0], 1).is_err());
        let short = Chart::new("band").series(Series::new("s", pts).band(vec![1.0; 3]));
        let e = render_charts(&[short], 1).unwrap_err().to_string();
        assert!(e.contains("3 band values for 50 points"), "{e}");
        let negative =
            Chart::new("neg").series(Series::new("s", curve(|x| x)).band(vec![-1.0; 50]));
        assert!(render_charts(&[negative], 1).is_err());
        let bad_ref = Chart::new("ref")
            .series(Series::new("s", curve(|x| x)))
            .v_line(1.0, "x", Some(4));
        assert!(render_charts(&[bad_ref], 1).is_err());
        assert!(render_charts(&[], 1).is_err());
    }

    #[test]
    fn written_png_decodes_to_the_rendered_pixels() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.png");
        let chart = Chart::new("one").series(Series::new("s", curve(|x| x * x)));
        line_chart(&path, &chart).unwrap();
        let decoder =
            png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&path).unwrap()));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), PANEL);
        assert_eq!(info.color_type, png::ColorType::Rgb);
        assert_eq!(buf, render_charts(&[chart], 1).unwrap().pixels);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn legend_goes_to_the_emptiest_corner_and_ticks_are_short() {
        let corner = |c: &Chart| {
            let (xr, yr) = c.bounds();
            format!("{:?}", c.legend_corner(xr, yr))
        };
        let rising = Chart::new("r")
            .series(Series::new("a", curve(|x| x)))
            .series(Series::new("b", curve(|x| x + 1.0)));
        assert_eq!(corner(&rising), "LowerRight");
        let falling = Chart::new("f")
            .series(Series::new("a", curve(|x| -x)))
            .series(Series::new("b", curve(|x| 1.0 - x)));
        assert_eq!(corner(&falling), "UpperRight");
        // a reference line through the empty lower right sends the legend to the upper left
        let marked = rising.clone().v_line(48.0, "late", None);
        assert_eq!(corner(&marked), "UpperLeft");
        assert_eq!(tick(&0.25), "0.25");
        assert_eq!(tick(&-3.0), "-3");
        assert_eq!(tick(&123456.0), "1.23e5");
        assert_eq!(tick(&-0.0), "0");
    }
}
