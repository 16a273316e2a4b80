//! SVG plots drawn with plotters' SVG backend: text goes out as SVG
//! `<text>` elements, so no system font is needed to draw or to view them.

use plotters::prelude::*;

use super::series::{Figure, Series};
use crate::LabError;

const SIZE: (u32, u32) = (760, 400);

/// Tableau's ten colours: distinct on screen and in print (Palette99's
/// yellow vanished on white).
const COLOURS: [RGBColor; 10] = [
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

/// A series' line label: the flow or link, with the scheme when several
/// schemes share the plot.
fn label(s: &Series, several_schemes: bool) -> String {
    if several_schemes {
        format!("{} {}", s.scheme, s.entity)
    } else {
        s.entity.clone()
    }
}

/// Points to draw: the series itself, or the CDF of its values.
fn drawn(f: &Figure, s: &Series) -> Vec<(f64, f64)> {
    if !f.cdf {
        return s.points.clone();
    }
    let mut v: Vec<f64> = s.points.iter().map(|p| p.1).collect();
    v.sort_by(f64::total_cmp);
    let n = v.len() as f64;
    v.iter()
        .enumerate()
        .map(|(i, x)| (*x, (i + 1) as f64 / n))
        .collect()
}

/// The SVG text of one figure (an empty frame saying so when no series
/// has a point, e.g. stamped rates under a scheme that stamps none).
pub fn svg(f: &Figure) -> Result<String, LabError> {
    let err = |e: &dyn std::fmt::Display| LabError::Plot {
        file: format!("{}.svg", f.stem),
        msg: e.to_string(),
    };
    let schemes: std::collections::BTreeSet<&str> =
        f.series.iter().map(|s| s.scheme.as_str()).collect();
    let lines: Vec<(String, Vec<(f64, f64)>)> = f
        .series
        .iter()
        .map(|s| (label(s, schemes.len() > 1), drawn(f, s)))
        .filter(|(_, p)| !p.is_empty())
        .collect();
    let pts = lines.iter().flat_map(|(_, p)| p.iter());
    let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    for &(x, y) in pts {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y1 = y1.max(y);
    }
    if !x0.is_finite() {
        (x0, x1) = (0.0, 1.0);
    } else if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    let y1 = if y1 > 0.0 { y1 * 1.08 } else { 1.0 };
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let caption = if lines.is_empty() {
            format!("{} (no data in this run)", f.title)
        } else {
            f.title.to_string()
        };
        let mut chart = ChartBuilder::on(&root)
            .caption(caption, ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(36)
            .y_label_area_size(56)
            .build_cartesian_2d(x0..x1, 0.0..y1)
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc(f.x_label)
            .y_desc(f.y_label)
            .draw()
            .map_err(|e| err(&e))?;
        for (i, (name, p)) in lines.iter().enumerate() {
            let color = COLOURS[i % COLOURS.len()];
            chart
                .draw_series(LineSeries::new(p.iter().copied(), color.stroke_width(2)))
                .map_err(|e| err(&e))?
                .label(name.clone())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], color));
        }
        if !lines.is_empty() {
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .position(if f.cdf {
                    SeriesLabelPosition::LowerRight
                } else {
                    SeriesLabelPosition::UpperRight
                })
                .draw()
                .map_err(|e| err(&e))?;
        }
        root.present().map_err(|e| err(&e))?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::series::Series;

    fn figure(series: Vec<Series>) -> Figure {
        Figure {
            stem: "t",
            title: "T",
            column: "v",
            x_label: "time (s)",
            y_label: "v",
            cdf: false,
            plotted: true,
            series,
        }
    }

    #[test]
    fn an_empty_or_single_point_figure_still_draws_a_frame() {
        let empty = svg(&figure(Vec::new())).unwrap();
        assert!(empty.starts_with("<svg") && empty.contains("no data in this run"));
        let one = Series {
            scheme: "s".into(),
            entity: "e".into(),
            points: vec![(2.0, 3.0)],
        };
        assert!(svg(&figure(vec![one])).unwrap().starts_with("<svg"));
    }
}
