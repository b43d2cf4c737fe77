//! The contact map of direct coupling analysis: a structure's contacts (gray squares, both
//! triangles) with the top-ranked predicted pairs over them (upper triangle: blue when the pair
//! is a contact, red when not), positions on both axes, row i from the top.

use super::chart::{err, register_fonts, FONT};
use super::rgb::Rgb;
use anyhow::ensure;
use plotters::prelude::*;
use std::path::Path;

/// Size of the picture in pixels.
pub const MAP_SIZE: (u32, u32) = (760, 800);

const CONTACT: RGBColor = RGBColor(190, 190, 190);
const HIT: RGBColor = RGBColor(31, 119, 180);
const MISS: RGBColor = RGBColor(214, 39, 40);

/// What a contact map shows.
#[derive(Debug, Clone, Default)]
pub struct ContactMap {
    /// The title (e.g. the family and the precision).
    pub title: String,
    /// The first and last position on the axes.
    pub range: (i64, i64),
    /// The true contacts `(i, j)`.
    pub contacts: Vec<(i64, i64)>,
    /// The predicted pairs `(i, j, is a contact)`, best first.
    pub predicted: Vec<(i64, i64, bool)>,
}

/// Draws `map` ([`MAP_SIZE`] pixels, white background).
pub fn render_contact_map(map: &ContactMap) -> anyhow::Result<Rgb> {
    let (lo, hi) = map.range;
    ensure!(
        hi > lo,
        "a contact map needs at least two positions, got {lo}..{hi}"
    );
    register_fonts()?;
    let (width, height) = MAP_SIZE;
    let mut pixels = vec![255u8; 3 * width as usize * height as usize];
    {
        let root = BitMapBackend::with_buffer(&mut pixels, (width, height)).into_drawing_area();
        let (x0, x1) = (lo as f64 - 0.5, hi as f64 + 0.5);
        let mut cc = ChartBuilder::on(&root)
            .caption(&map.title, (FONT, 20))
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size(54)
            .build_cartesian_2d(x0..x1, x1..x0)
            .map_err(err)?;
        cc.configure_mesh()
            .x_desc("position j")
            .y_desc("position i")
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 16))
            .x_label_formatter(&|v| format!("{v:.0}"))
            .y_label_formatter(&|v| format!("{v:.0}"))
            .disable_mesh()
            .draw()
            .map_err(err)?;
        let square = |i: i64, j: i64, c: RGBColor| {
            let (x, y) = (j as f64, i as f64);
            Rectangle::new([(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)], c.filled())
        };
        let both = map
            .contacts
            .iter()
            .flat_map(|&(i, j)| [square(i, j, CONTACT), square(j, i, CONTACT)]);
        cc.draw_series(both)
            .map_err(err)?
            .label("contact in the structure")
            .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], CONTACT.filled()));
        let cell = (f64::from(width) - 100.0) / (x1 - x0);
        let radius = (cell * 0.45).clamp(1.5, 6.0).round() as i32;
        for (hit, color, label) in [
            (true, HIT, "predicted, a contact"),
            (false, MISS, "predicted, not a contact"),
        ] {
            let dots = map
                .predicted
                .iter()
                .filter(|p| p.2 == hit)
                .map(|&(i, j, _)| {
                    Circle::new((i.max(j) as f64, i.min(j) as f64), radius, color.filled())
                });
            cc.draw_series(dots)
                .map_err(err)?
                .label(label)
                .legend(move |(x, y)| Circle::new((x + 5, y), 4, color.filled()));
        }
        cc.configure_series_labels()
            .position(SeriesLabelPosition::LowerLeft)
            .label_font((FONT, 14))
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(160, 160, 160))
            .draw()
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(Rgb {
        width,
        height,
        pixels,
    })
}

/// Writes `map` as a PNG.
pub fn contact_map(path: &Path, map: &ContactMap) -> anyhow::Result<()> {
    render_contact_map(map)?.write_png(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_contacts_and_predictions_in_their_colors() {
        let map = ContactMap {
            title: "test".into(),
            range: (1, 20),
            contacts: vec![(2, 15), (3, 16)],
            predicted: vec![(2, 15, true), (5, 12, false)],
        };
        let img = render_contact_map(&map).unwrap();
        assert_eq!((img.width, img.height), MAP_SIZE);
        let count = |c: RGBColor| {
            img.pixels
                .chunks(3)
                .filter(|p| p == &[c.0, c.1, c.2])
                .count()
        };
        assert!(count(CONTACT) > 100, "{}", count(CONTACT));
        assert!(count(HIT) > 20 && count(MISS) > 20);
        let bad = ContactMap {
            range: (3, 3),
            ..map
        };
        assert!(render_contact_map(&bad).is_err());
    }
}
