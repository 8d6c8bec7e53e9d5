//! Line charts whose axes switch to log₁₀ when the data span two decades or more (ratatui's
//! `Chart` has no log axis: the data are transformed and the tick labels written here), with
//! min/max decimation so a long trace costs no more than the chart's width.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Chart, Dataset, GraphType, Paragraph, Widget};

use super::super::theme::Theme;
use super::fmt_num;

pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub style: Style,
}

pub struct LogChart<'a> {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
    pub theme: &'a Theme,
}

/// Whether positive values spanning ≥ 2 decades are better read on a log scale.
pub fn wants_log(values: impl Iterator<Item = f64>) -> bool {
    let (mut lo, mut hi, mut n) = (f64::INFINITY, 0.0f64, 0);
    for v in values {
        if !v.is_finite() {
            continue;
        }
        if v <= 0.0 {
            return false;
        }
        lo = lo.min(v);
        hi = hi.max(v);
        n += 1;
    }
    n >= 2 && hi / lo >= 100.0
}

/// Keep at most ~2·`width` points: the min and max of each bucket of consecutive points.
pub fn decimate(points: &[(f64, f64)], width: usize) -> Vec<(f64, f64)> {
    let cap = (2 * width).max(2);
    if points.len() <= cap {
        return points.to_vec();
    }
    let per = points.len().div_ceil(width.max(1));
    let mut out = Vec::with_capacity(cap + 2);
    for chunk in points.chunks(per) {
        let mut lo = chunk[0];
        let mut hi = chunk[0];
        for p in chunk {
            if p.1 < lo.1 {
                lo = *p;
            }
            if p.1 > hi.1 {
                hi = *p;
            }
        }
        if lo.0 <= hi.0 {
            out.push(lo);
            if hi != lo {
                out.push(hi);
            }
        } else {
            out.push(hi);
            out.push(lo);
        }
    }
    out
}

/// Bounds and labels of one axis over (already transformed) values: whole numbers label
/// whole-number data (iterations), and data ≥ 0 never get a negative tick.
fn axis(values: &[f64], log: bool, pad: bool) -> ([f64; 2], Vec<String>) {
    let integral = !log && values.iter().all(|v| v.fract() == 0.0);
    let non_negative = !log && values.iter().all(|v| *v >= 0.0);
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() || !hi.is_finite() {
        return ([0.0, 1.0], vec!["0".into(), "1".into()]);
    }
    let (lo, hi) = if log {
        let (a, b) = (lo.floor(), hi.ceil());
        (a, if b > a { b } else { a + 1.0 })
    } else if hi > lo && !pad {
        (lo, hi)
    } else if hi > lo {
        let pad = 0.05 * (hi - lo);
        (lo - pad, hi + pad)
    } else {
        let pad = if lo == 0.0 { 1.0 } else { 0.05 * lo.abs() };
        (lo - pad, hi + pad)
    };
    let lo = if non_negative { lo.max(0.0) } else { lo };
    let n = if log && ((hi - lo) as usize) < 5 {
        (hi - lo) as usize + 1
    } else {
        3
    };
    let label = |v: f64| {
        if log {
            if (v - v.round()).abs() < 1e-9 {
                format!("1e{}", v.round() as i64)
            } else {
                format!("{:.1e}", 10f64.powf(v))
            }
        } else if integral && hi - lo >= 2.0 {
            format!("{}", v.round() as i64)
        } else {
            fmt_num(v)
        }
    };
    let labels = (0..n)
        .map(|i| label(lo + (hi - lo) * i as f64 / (n - 1) as f64))
        .collect();
    ([lo, hi], labels)
}

impl Widget for LogChart<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let area = area.intersection(buf.area);
        if area.is_empty() {
            return;
        }
        let block = Block::bordered()
            .title(Span::styled(format!(" {} ", self.title), self.theme.title))
            .border_style(self.theme.border);
        let finite: Vec<Vec<(f64, f64)>> = self
            .series
            .iter()
            .map(|s| {
                s.points
                    .iter()
                    .copied()
                    .filter(|(x, y)| x.is_finite() && y.is_finite())
                    .collect()
            })
            .collect();
        if finite.iter().all(|p| p.is_empty()) {
            Paragraph::new(Line::styled("no data yet", self.theme.dim))
                .block(block)
                .render(area, buf);
            return;
        }
        let log_x = wants_log(finite.iter().flatten().map(|p| p.0));
        let log_y = wants_log(finite.iter().flatten().map(|p| p.1));
        let t = |v: f64, log: bool| if log { v.log10() } else { v };
        let width = area.width.saturating_sub(10) as usize;
        let data: Vec<Vec<(f64, f64)>> = finite
            .iter()
            .map(|pts| {
                let tr: Vec<(f64, f64)> = pts
                    .iter()
                    .map(|&(x, y)| (t(x, log_x), t(y, log_y)))
                    .collect();
                decimate(&tr, width.max(1))
            })
            .collect();
        let xs: Vec<f64> = data.iter().flatten().map(|p| p.0).collect();
        let ys: Vec<f64> = data.iter().flatten().map(|p| p.1).collect();
        let (xb, xl) = axis(&xs, log_x, false);
        let (yb, yl) = axis(&ys, log_y, true);
        let suffix = |log: bool| if log { " (log)" } else { "" };
        // Axis names go in the title: inside the plot ratatui draws them over the curve.
        let block = block.title_bottom(Line::styled(
            format!(
                " y: {}{} · x: {}{} ",
                self.y_label,
                suffix(log_y),
                self.x_label,
                suffix(log_x)
            ),
            self.theme.dim,
        ));
        let datasets: Vec<Dataset> = self
            .series
            .iter()
            .zip(&data)
            .map(|(s, d)| {
                Dataset::default()
                    .name(s.name.clone())
                    .marker(Marker::Braille)
                    .graph_type(GraphType::Line)
                    .style(s.style)
                    .data(d)
            })
            .collect();
        // Unnamed series (a pane that draws its own legend) get no legend box.
        let many = self.series.len() > 1 && self.series.iter().any(|s| !s.name.is_empty());
        let mut chart = Chart::new(datasets)
            .block(block)
            .x_axis(Axis::default().bounds(xb).labels(xl))
            .y_axis(Axis::default().bounds(yb).labels(yl));
        if many {
            chart =
                chart.hidden_legend_constraints((Constraint::Ratio(1, 2), Constraint::Ratio(2, 3)));
        } else {
            chart = chart.legend_position(None);
        }
        chart.render(area, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_only_for_positive_decades() {
        assert!(wants_log([1.0, 1e-3].into_iter()));
        assert!(!wants_log([1.0, 0.5].into_iter()));
        assert!(!wants_log([1.0, -1e-3].into_iter()));
    }

    #[test]
    fn decimation_keeps_extremes() {
        let pts: Vec<(f64, f64)> = (0..1000)
            .map(|i| (i as f64, if i == 517 { 99.0 } else { 0.0 }))
            .collect();
        let d = decimate(&pts, 50);
        assert!(d.len() <= 100);
        assert!(d.iter().any(|p| p.1 == 99.0));
    }

    #[test]
    fn log_axis_labels_are_powers() {
        let (b, l) = axis(&[-3.2, 0.4], true, true);
        assert_eq!(b, [-4.0, 1.0]);
        assert_eq!(l.first().map(String::as_str), Some("1e-4"));
        assert_eq!(l.last().map(String::as_str), Some("1e1"));
    }
}
