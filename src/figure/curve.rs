//! Curves: the convergence trace, the λ path, a sweep's score over one setting — each series a
//! line of points, optionally with ± sd bars, on log axes where the values span decades.

use ovk_core::session::SessionRecord;
use ovk_core::{OvkError, Result};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{DrawResult, Paint};

/// One line of a curve.
pub struct Series {
    pub label: String,
    /// (x, y, sd) — sd 0 draws no bar.
    pub points: Vec<(f64, f64, f64)>,
}

/// A figure of lines over a shared x axis.
pub struct Curve {
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    pub log_x: bool,
    pub log_y: bool,
    pub series: Vec<Series>,
    /// An x to mark with a vertical line (the chosen λ, the best value).
    pub mark_x: Option<f64>,
}

/// The objective of every recorded iteration.
pub fn trace(r: &SessionRecord) -> Result<Curve> {
    let points: Vec<(f64, f64, f64)> = r
        .trace
        .iter()
        .filter(|t| t.objective.is_finite())
        .map(|t| (t.iter as f64, t.objective, 0.0))
        .collect();
    if points.is_empty() {
        return Err(OvkError::input(format!(
            "session {} has no finite objective in its trace to draw",
            r.id
        )));
    }
    let log_y = points.iter().all(|p| p.1 > 0.0) && spans_decades(points.iter().map(|p| p.1));
    Ok(Curve {
        title: format!("convergence of {} ({})", r.name, r.config.method),
        x_desc: "iteration".into(),
        y_desc: "objective".into(),
        log_x: false,
        log_y,
        series: vec![Series {
            label: "objective".into(),
            points,
        }],
        mark_x: None,
    })
}

/// Train and validation MSE along lowrank-okl's λ path, the kept λ marked.
pub fn lambda_path(r: &SessionRecord) -> Result<Curve> {
    let rows = r
        .details
        .get("path")
        .and_then(|p| p.as_array())
        .filter(|p| !p.is_empty())
        .ok_or_else(|| {
            OvkError::input(format!(
                "session {} has no λ path (a lowrank-okl run without a fixed λ has one)",
                r.id
            ))
        })?;
    let column = |key: &str| -> Vec<(f64, f64, f64)> {
        rows.iter()
            .filter_map(|p| Some((p["lambda"].as_f64()?, p[key].as_f64()?, 0.0)))
            .filter(|(l, v, _)| *l > 0.0 && v.is_finite())
            .collect()
    };
    let mut series = vec![Series {
        label: "train MSE".into(),
        points: column("train_mse"),
    }];
    let validation = column("validation_mse");
    if !validation.is_empty() {
        series.push(Series {
            label: "validation MSE".into(),
            points: validation,
        });
    }
    Ok(Curve {
        title: format!("λ path of {}", r.name),
        x_desc: "λ".into(),
        y_desc: "MSE".into(),
        log_x: true,
        log_y: false,
        series,
        mark_x: r
            .config
            .params
            .0
            .get("lambda")
            .and_then(|v| v.to_string().parse().ok())
            .or_else(|| r.details.get("lambda").and_then(|v| v.as_f64())),
    })
}

/// Positive values over more than two decades read better on a log axis.
pub fn spans_decades(values: impl Iterator<Item = f64>) -> bool {
    let (lo, hi) = values.fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    lo > 0.0 && hi / lo > 100.0
}

fn bounds(values: impl Iterator<Item = f64>, log: bool) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && (!log || *v > 0.0))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if log {
        (lo / 1.3, hi * 1.3)
    } else {
        let pad = ((hi - lo) * 0.06).max(hi.abs().max(1e-12) * 1e-3);
        (lo - pad, hi + pad)
    }
}

fn chart_builder<'a, 'b, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    title: &str,
) -> ChartBuilder<'a, 'b, DB> {
    let mut b = ChartBuilder::on(area);
    b.caption(title, ("sans-serif", 18))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(80);
    b
}

const COLOURS: [RGBColor; 4] = [
    RGBColor(33, 102, 172),
    RGBColor(178, 24, 43),
    RGBColor(27, 120, 55),
    RGBColor(118, 42, 131),
];

impl Paint for Curve {
    fn paint<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        let all = || self.series.iter().flat_map(|s| s.points.iter());
        let x = bounds(all().map(|p| p.0), self.log_x);
        let y = bounds(all().flat_map(|p| [p.1 - p.2, p.1 + p.2]), self.log_y);
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let builder = |area| chart_builder(area, &self.title);
        // four shapes of axes, one body of drawing
        macro_rules! body {
            ($chart:expr) => {{
                let mut chart = $chart.map_err(|e| e.to_string())?;
                chart
                    .configure_mesh()
                    .x_desc(self.x_desc.as_str())
                    .y_desc(self.y_desc.as_str())
                    .label_style(("sans-serif", 13))
                    .draw()
                    .map_err(|e| e.to_string())?;
                for (k, s) in self.series.iter().enumerate() {
                    let c = COLOURS[k % COLOURS.len()];
                    let pts: Vec<(f64, f64)> = s.points.iter().map(|p| (p.0, p.1)).collect();
                    chart
                        .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))
                        .map_err(|e| e.to_string())?
                        .label(s.label.as_str())
                        .legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2))
                        });
                    chart
                        .draw_series(pts.iter().map(|&p| Circle::new(p, 3, c.filled())))
                        .map_err(|e| e.to_string())?;
                    chart
                        .draw_series(
                            s.points.iter().filter(|p| p.2 > 0.0).map(|p| {
                                PathElement::new(vec![(p.0, p.1 - p.2), (p.0, p.1 + p.2)], c)
                            }),
                        )
                        .map_err(|e| e.to_string())?;
                }
                if let Some(m) = self.mark_x {
                    chart
                        .draw_series(std::iter::once(PathElement::new(
                            vec![(m, y.0), (m, y.1)],
                            BLACK.mix(0.5).stroke_width(1),
                        )))
                        .map_err(|e| e.to_string())?;
                }
                chart
                    .configure_series_labels()
                    .background_style(WHITE.mix(0.85))
                    .border_style(BLACK)
                    .label_font(("sans-serif", 13))
                    .draw()
                    .map_err(|e| e.to_string())?;
            }};
        }
        match (self.log_x, self.log_y) {
            (false, false) => body!(builder(root).build_cartesian_2d(x.0..x.1, y.0..y.1)),
            (true, false) => {
                body!(builder(root).build_cartesian_2d((x.0..x.1).log_scale(), y.0..y.1))
            }
            (false, true) => {
                body!(builder(root).build_cartesian_2d(x.0..x.1, (y.0..y.1).log_scale()))
            }
            (true, true) => {
                body!(builder(root)
                    .build_cartesian_2d((x.0..x.1).log_scale(), (y.0..y.1).log_scale()))
            }
        }
        Ok(())
    }
}
