//! A matrix as a heatmap: a diverging colour scale centred on zero (blue below, red above),
//! row and column labels, a colour bar; the best cell of a sweep's grid can be marked.

use ndarray::Array2;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{DrawResult, Paint};

/// A heatmap ready to draw.
pub struct Heatmap {
    pub title: String,
    pub values: Array2<f64>,
    pub row_labels: Vec<String>,
    pub col_labels: Vec<String>,
    /// The colour scale's ends: symmetric around 0 (±1 for correlations).
    pub range: (f64, f64),
    /// A cell to outline (a sweep's best).
    pub mark: Option<(usize, usize)>,
    /// Axis titles (a sweep's settings), when the labels are not outputs.
    pub axes: Option<(String, String)>,
}

impl Heatmap {
    pub fn new(
        title: String,
        values: Array2<f64>,
        row_labels: Vec<String>,
        col_labels: Vec<String>,
        correlation: bool,
    ) -> Heatmap {
        let top = values
            .iter()
            .filter(|v| v.is_finite())
            .fold(0.0f64, |a, v| a.max(v.abs()));
        let top = if correlation || top == 0.0 { 1.0 } else { top };
        Heatmap {
            title,
            values,
            row_labels,
            col_labels,
            range: (-top, top),
            mark: None,
            axes: None,
        }
    }
}

/// Blue (−) through white (0) to red (+); grey for a value that is not a number.
pub fn diverging(v: f64, (lo, hi): (f64, f64)) -> RGBColor {
    if !v.is_finite() {
        return RGBColor(190, 190, 190);
    }
    let t = if hi > lo {
        ((v - lo) / (hi - lo)).clamp(0.0, 1.0)
    } else {
        0.5
    };
    let (blue, red) = ((33.0, 102.0, 172.0), (178.0, 24.0, 43.0));
    let mix = |a: f64, b: f64, s: f64| (a + (b - a) * s).round() as u8;
    if t < 0.5 {
        let s = t / 0.5;
        RGBColor(
            mix(blue.0, 255.0, s),
            mix(blue.1, 255.0, s),
            mix(blue.2, 255.0, s),
        )
    } else {
        let s = (t - 0.5) / 0.5;
        RGBColor(
            mix(255.0, red.0, s),
            mix(255.0, red.1, s),
            mix(255.0, red.2, s),
        )
    }
}

/// At most this many labels on an axis; beyond, every k-th.
const MAX_LABELS: usize = 60;

impl Paint for Heatmap {
    fn paint<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        let e = |e: &dyn std::fmt::Display| e.to_string();
        root.fill(&WHITE).map_err(|x| e(&x))?;
        let (w, _) = root.dim_in_pixel();
        let (main, bar) = root.split_horizontally(w.saturating_sub(110));
        let (rows, cols) = self.values.dim();
        let longest = |l: &[String]| l.iter().map(|s| s.chars().count()).max().unwrap_or(1);
        let font = (12 - (rows.max(cols) / 30).min(5) as i32).max(7);
        let label_px = |l: &[String]| (longest(l) as i32 * font * 6 / 10 + 12).clamp(24, 260);
        let mut chart = ChartBuilder::on(&main)
            .caption(&self.title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(if self.col_labels == self.row_labels {
                40
            } else {
                label_px(&self.col_labels)
            })
            .y_label_area_size(label_px(&self.row_labels) + 24)
            .build_cartesian_2d(-0.5..cols as f64 - 0.5, -0.5..rows as f64 - 0.5)
            .map_err(|x| e(&x))?;
        let every = |n: usize| n.div_ceil(MAX_LABELS).max(1);
        let (cl, rl) = (&self.col_labels, &self.row_labels);
        // cells are centred on whole numbers, so a tick names the cell it sits under; columns
        // carry their position (names would have to be turned on their side), rows "k name"
        let index = |v: f64, n: usize| {
            let k = v.round();
            (k >= 0.0 && (k as usize) < n && (k - v).abs() < 1e-9).then_some(k as usize)
        };
        let same = cl == rl;
        let col_of = |v: &f64| match index(*v, cols) {
            Some(j) if j % every(cols) == 0 && same => (j + 1).to_string(),
            Some(j) if j % every(cols) == 0 => cl[j].clone(),
            _ => String::new(),
        };
        // row 0 is drawn at the top
        let row_of = |v: &f64| match index(*v, rows) {
            Some(k) if (rows - 1 - k) % every(rows) == 0 && same => {
                format!("{} {}", rows - k, rl[rows - 1 - k])
            }
            Some(k) if (rows - 1 - k) % every(rows) == 0 => rl[rows - 1 - k].clone(),
            _ => String::new(),
        };
        let mut mesh = chart.configure_mesh();
        mesh.disable_mesh()
            .x_labels(cols.min(MAX_LABELS * 2) + 1)
            .y_labels(rows.min(MAX_LABELS * 2) + 1)
            .x_label_formatter(&col_of)
            .y_label_formatter(&row_of)
            .label_style(("sans-serif", font));
        if let Some((x, y)) = &self.axes {
            mesh.x_desc(x.as_str()).y_desc(y.as_str());
        }
        mesh.draw().map_err(|x| e(&x))?;
        let range = self.range;
        chart
            .draw_series(self.values.indexed_iter().map(|((i, j), &v)| {
                let (x, y) = (j as f64, (rows - 1 - i) as f64);
                Rectangle::new(
                    [(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)],
                    diverging(v, range).filled(),
                )
            }))
            .map_err(|x| e(&x))?;
        if let Some((i, j)) = self.mark {
            let (x, y) = (j as f64, (rows - 1 - i) as f64);
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)],
                    BLACK.stroke_width(3),
                )))
                .map_err(|x| e(&x))?;
        }
        colour_bar(&bar, range)
    }
}

/// A vertical bar of the colour scale with its values.
fn colour_bar<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (lo, hi): (f64, f64),
) -> DrawResult {
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let mut chart = ChartBuilder::on(area)
        .margin_top(60)
        .margin_bottom(140)
        .margin_right(8)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..1.0, lo..hi)
        .map_err(|x| e(&x))?;
    chart
        .configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .y_labels(5)
        .y_label_formatter(&|v| format!("{v:.3}"))
        .label_style(("sans-serif", 11))
        .draw()
        .map_err(|x| e(&x))?;
    let steps = 100;
    chart
        .draw_series((0..steps).map(|k| {
            let a = lo + (hi - lo) * k as f64 / steps as f64;
            let b = lo + (hi - lo) * (k + 1) as f64 / steps as f64;
            Rectangle::new(
                [(0.0, a), (1.0, b)],
                diverging((a + b) / 2.0, (lo, hi)).filled(),
            )
        }))
        .map_err(|x| e(&x))?;
    Ok(())
}
