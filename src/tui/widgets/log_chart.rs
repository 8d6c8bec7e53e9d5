//! Line charts whose axes switch to log₁₀ when the data span two decades or more (ratatui's
//! `Chart` has no log axis: the data are transformed and the tick labels written here), with
//! min/max decimation so a long trace costs no more than the chart's width.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
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
    /// What the chart says when no series has a point.
    pub empty: &'a str,
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

/// Bounds and at most `max_ticks` (≥ 2) evenly spaced labels, the first and last at the
/// bounds, of one axis over (already transformed) values. A log axis is labelled at whole
/// decades; whole-number data (iterations) get whole-number ticks, a single point standing
/// between its neighbours; data ≥ 0 never get a negative tick.
fn axis(values: &[f64], log: bool, pad: bool, max_ticks: usize) -> ([f64; 2], Vec<String>) {
    let max_ticks = max_ticks.max(2);
    let integral = !log && values.iter().all(|v| v.fract() == 0.0);
    let non_negative = !log && values.iter().all(|v| *v >= 0.0);
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() || !hi.is_finite() {
        return ([0.0, 1.0], vec!["0".into(), "1".into()]);
    }
    let (lo, hi, n) = if log || integral {
        let (mut a, mut b) = (lo.floor(), hi.ceil());
        if b <= a {
            // One value: a decade above it, or the whole numbers either side.
            if !log {
                a -= 1.0;
            }
            b = a + if log { 1.0 } else { 2.0 };
        }
        if non_negative && a < 0.0 {
            b -= a;
            a = 0.0;
        }
        // Whole ticks at both ends: as many intervals as divide the span.
        let span = (b - a) as usize;
        let n = (1..max_ticks)
            .rev()
            .find(|k| span.is_multiple_of(*k))
            .unwrap_or(1)
            + 1;
        (a, b, n)
    } else {
        let (lo, hi) = if hi > lo && !pad {
            (lo, hi)
        } else if hi > lo {
            let pad = 0.05 * (hi - lo);
            (lo - pad, hi + pad)
        } else {
            let pad = if lo == 0.0 { 1.0 } else { 0.05 * lo.abs() };
            (lo - pad, hi + pad)
        };
        let lo = if non_negative { lo.max(0.0) } else { lo };
        (lo, hi, max_ticks.min(3))
    };
    let label = |v: f64| {
        if log {
            format!("1e{}", v.round() as i64)
        } else if integral {
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

/// Where the x labels go on a plot `width` columns wide starting at column `left`: each centred
/// on its tick (ticks evenly spaced, the first at the left edge, the last at the right one),
/// kept inside `[min, max)`. `None` when two would touch.
fn place_x(labels: &[String], left: u16, width: u16, (min, max): (u16, u16)) -> Option<Vec<u16>> {
    let n = labels.len();
    let mut at = Vec::with_capacity(n);
    let mut free = min;
    for (i, l) in labels.iter().enumerate() {
        let w = l.chars().count() as u16;
        let tick = left + ((width.saturating_sub(1) as usize * i) / (n - 1).max(1)) as u16;
        let x = tick
            .saturating_sub(w / 2)
            .min(max.saturating_sub(w))
            .max(min);
        if x < free || x + w > max {
            return None;
        }
        at.push(x);
        free = x + w + 1;
    }
    Some(at)
}

/// The series' names, each after a sample of its line, for the title: a legend that covers
/// no data.
fn legend(series: &[Series]) -> Vec<Span<'static>> {
    series
        .iter()
        .filter(|s| !s.name.is_empty())
        .flat_map(|s| {
            [
                Span::styled(" ━━ ", s.style),
                Span::raw(format!("{} ", s.name)),
            ]
        })
        .collect()
}

/// Below this many plot rows a chart cannot be read: its y labels would share a line.
const MIN_PLOT_ROWS: u16 = 2;

impl Widget for LogChart<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let area = area.intersection(buf.area);
        if area.is_empty() {
            return;
        }
        let mut title = vec![Span::styled(format!(" {} ", self.title), self.theme.title)];
        if self.series.len() > 1 {
            title.extend(legend(&self.series));
        }
        let block = Block::bordered()
            .title(Line::from(title))
            .border_style(self.theme.border);
        let inner = block.inner(area);
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
        // The x axis and its labels take two rows under the plot.
        let rows = inner.height.saturating_sub(2);
        let note = if finite.iter().all(|p| p.is_empty()) {
            Some(self.empty.to_string())
        } else if rows < MIN_PLOT_ROWS || inner.width < 20 {
            Some(format!(
                "too small to plot ({}×{})",
                area.width, area.height
            ))
        } else {
            None
        };
        if let Some(note) = note {
            Paragraph::new(Line::styled(note, self.theme.dim))
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
        // Ratatui puts y label i on row i·(rows−1)/(n−1), rounded down: only when n−1 divides
        // rows−1 are the labels evenly spaced, and never more than one to a row.
        let (yb, yl) = (2..=(rows as usize).min(6))
            .rev()
            .map(|k| axis(&ys, log_y, true, k))
            .find(|(_, l)| (rows as usize - 1).is_multiple_of(l.len() - 1))
            .unwrap_or_else(|| axis(&ys, log_y, true, 2));
        // The plot's columns as ratatui lays them out: y labels (at most a third of the
        // width), the y axis, then the plot.
        let label_w = yl.iter().map(|l| l.chars().count()).max().unwrap_or(0) as u16;
        let left = inner.x + label_w.min(inner.width / 3) + 1;
        let plot_w = inner.right().saturating_sub(left);
        // Ratatui spaces x labels by slots, not by value (a log axis's decades came out
        // uneven), so they are written here at their ticks, as many as fit.
        let (xb, xl, xat) = (2..=6)
            .rev()
            .find_map(|k| {
                let (b, l) = axis(&xs, log_x, false, k);
                let at = place_x(&l, left, plot_w, (inner.x, inner.right()))?;
                Some((b, l, at))
            })
            .unwrap_or_else(|| (axis(&xs, log_x, false, 2).0, Vec::new(), Vec::new()));
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
                    .marker(Marker::Braille)
                    .graph_type(GraphType::Line)
                    .style(s.style)
                    .data(d)
            })
            .collect();
        // Blank x labels keep ratatui's rows for the axis and its labels.
        Chart::new(datasets)
            .block(block)
            .x_axis(Axis::default().bounds(xb).labels(["", ""]))
            .y_axis(Axis::default().bounds(yb).labels(yl))
            .legend_position(None)
            .render(area, buf);
        let y = inner.bottom() - 1;
        for (l, x) in xl.iter().zip(xat) {
            buf.set_string(x, y, l, Style::default());
        }
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
        let (b, l) = axis(&[-3.2, 0.4], true, true, 6);
        assert_eq!(b, [-4.0, 1.0]);
        assert_eq!(l, ["1e-4", "1e-3", "1e-2", "1e-1", "1e0", "1e1"]);
        // Fewer ticks: still whole decades, a whole step apart.
        let (b, l) = axis(&[-3.2, 0.4], true, true, 3);
        assert_eq!(b, [-4.0, 1.0]);
        assert_eq!(l, ["1e-4", "1e1"]);
    }

    #[test]
    fn iterations_get_whole_ticks_and_one_point_reads_as_itself() {
        assert_eq!(
            axis(&[1.0], false, false, 6),
            ([0.0, 2.0], vec!["0".into(), "1".into(), "2".into()])
        );
        assert_eq!(axis(&[0.0], false, false, 6).1, ["0", "1", "2"]);
        assert_eq!(
            axis(&[1.0, 11.0], false, false, 6).1,
            ["1", "3", "5", "7", "9", "11"]
        );
        assert_eq!(axis(&[1.0, 8.0], false, false, 3).1, ["1", "8"]);
    }

    #[test]
    fn x_labels_sit_at_their_ticks_or_not_at_all() {
        let l: Vec<String> = ["1e-4", "1e-3", "1e-2", "1e-1", "1e0"]
            .map(String::from)
            .to_vec();
        // Ticks at 10, 30, 50, 70, 90: every decade 20 columns from the last.
        let at = place_x(&l, 10, 81, (0, 100)).unwrap();
        assert_eq!(at, [8, 28, 48, 68, 89]);
        assert_eq!(place_x(&l, 10, 15, (0, 30)), None);
    }

    #[test]
    fn y_labels_never_share_a_row_and_tiny_charts_say_so() {
        let theme = Theme::new(crate::tui::theme::ColorMode::None);
        let chart = |h: u16| {
            let area = Rect::new(0, 0, 60, h);
            let mut buf = Buffer::empty(area);
            LogChart {
                title: "Residual / step".into(),
                x_label: "iteration".into(),
                y_label: "residual".into(),
                series: vec![Series {
                    name: "residual".into(),
                    points: (1..=50).map(|i| (i as f64, 10f64.powi(-i / 5))).collect(),
                    style: Style::default(),
                }],
                empty: "no data yet",
                theme: &theme,
            }
            .render(area, &mut buf);
            (0..h)
                .map(|y| (0..60).map(|x| buf[(x, y)].symbol()).collect::<String>())
                .collect::<Vec<_>>()
        };
        let small = chart(5);
        assert!(small.join("\n").contains("too small to plot"), "{small:#?}");
        for h in 6..12 {
            let rows = chart(h);
            // Left of the y axis: nothing, or one whole label; the labels evenly spaced.
            let labels: Vec<(usize, String)> = rows[1..rows.len() - 3]
                .iter()
                .map(|r| {
                    r.chars()
                        .skip(1)
                        .take_while(|c| *c != '│')
                        .collect::<String>()
                })
                .map(|l| l.trim().to_string())
                .enumerate()
                .filter(|(_, l)| !l.is_empty())
                .collect();
            assert!(labels.len() >= 2, "{rows:#?}");
            for (_, l) in &labels {
                let whole = l
                    .strip_prefix("1e")
                    .is_some_and(|e| e.parse::<i32>().is_ok());
                assert!(whole, "{l} in {rows:#?}");
            }
            let gaps: Vec<usize> = labels.windows(2).map(|w| w[1].0 - w[0].0).collect();
            assert!(gaps.iter().all(|g| *g == gaps[0]), "{rows:#?}");
        }
    }
}
