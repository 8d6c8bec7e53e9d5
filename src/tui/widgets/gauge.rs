//! Progress of a run: the chain of phases with the current one lit, and a gauge for the
//! current phase with elapsed time and ETA (when the phase's step count is known).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use ovk_core::methods::Phase;

use super::super::theme::Theme;
use super::fmt_secs;

const PHASES: [Phase; 6] = [
    Phase::Loading,
    Phase::Gram,
    Phase::Decomposition,
    Phase::Iterating,
    Phase::Predicting,
    Phase::Saving,
];

/// The chain's slot of a phase: building a graph or a factor stands where the Gram matrix does,
/// a path of fits where the iterations do.
fn slot(p: Phase) -> Phase {
    match p {
        Phase::Graph | Phase::Factor | Phase::Sums => Phase::Gram,
        Phase::Path => Phase::Iterating,
        p => p,
    }
}

pub struct PhaseGauge<'a> {
    pub phase: Option<Phase>,
    pub done: usize,
    pub total: Option<usize>,
    /// Seconds since the fit began, and since the phase began.
    pub elapsed: f64,
    pub phase_elapsed: f64,
    /// The run is over (fill the gauge).
    pub finished: bool,
    /// The run was cancelled or failed: no ETA, the gauge stays where it stopped.
    pub stopped: bool,
    /// Seconds per step over the latest steps, when known (steps can slow down as a fit
    /// proceeds; the average since the phase began then promises too early an end).
    pub pace: Option<f64>,
    /// What the steps are before any phase began (a sweep's configurations), else "waiting".
    pub idle_label: &'static str,
    /// The floor seconds the fit estimated for the current phase, when it reports no steps
    /// (a Gram matrix, an eigendecomposition): the gauge then moves against that estimate.
    pub estimate: Option<f64>,
    pub theme: &'a Theme,
}

impl PhaseGauge<'_> {
    /// Fraction of the current phase done, when its length is known (by its steps, or by
    /// its estimate).
    pub fn ratio(&self) -> Option<f64> {
        if self.finished {
            return Some(1.0);
        }
        match self.total {
            Some(t) if t > 0 => Some((self.done as f64 / t as f64).clamp(0.0, 1.0)),
            _ => self.against_estimate().map(|(f, _)| f),
        }
    }

    /// A phase without steps against its estimate: the fraction of the estimate elapsed (held
    /// below 1: the estimate is a floor) and the seconds left, `None` once past it.
    pub fn against_estimate(&self) -> Option<(f64, Option<f64>)> {
        if self.finished || self.stopped || self.total.is_some_and(|t| t > 0) {
            return None;
        }
        let e = self.estimate.filter(|e| e.is_finite() && *e > 0.0)?;
        let f = self.phase_elapsed / e;
        Some((f.min(0.99), (f < 1.0).then_some(e - self.phase_elapsed)))
    }

    /// Seconds left in the current phase at the pace so far.
    pub fn eta(&self) -> Option<f64> {
        let t = self.total?;
        if self.done == 0 || self.finished || self.stopped || self.done >= t {
            return None;
        }
        let pace = self
            .pace
            .filter(|p| p.is_finite() && *p >= 0.0)
            .unwrap_or(self.phase_elapsed / self.done as f64);
        Some(pace * (t - self.done) as f64)
    }
}

impl Widget for PhaseGauge<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        if area.height == 0 || area.width == 0 {
            return;
        }
        let current = self
            .phase
            .map(slot)
            .and_then(|p| PHASES.iter().position(|q| *q == p));
        let mut spans = Vec::new();
        for (i, p) in PHASES.iter().enumerate() {
            // the Gram slot names what is being built there now (graph, factor or Gram)
            let p = match self.phase {
                Some(now) if slot(now) == *p => now,
                _ => *p,
            };
            if i > 0 {
                spans.push(Span::styled(" › ", self.theme.dim));
            }
            let style = match current {
                Some(c) if c == i && !self.finished => {
                    self.theme.key.add_modifier(Modifier::REVERSED)
                }
                Some(c) if i < c || self.finished => self.theme.ok,
                _ => self.theme.dim,
            };
            spans.push(Span::styled(p.label(), style));
        }
        Line::from(spans).render(Rect { height: 1, ..area }, buf);
        if area.height < 2 {
            return;
        }
        let label = self.label_for(area.width);
        // The text beside the bar, not over it: over it, it ran into the filled cells
        // ("█████iterations 41554/100000") and was unreadable without colour.
        let row = Rect {
            y: area.y + 1,
            height: 1,
            ..area
        };
        let text_w = label.chars().count() as u16;
        let bar_w = row.width.saturating_sub(text_w + 1);
        let text_x = if bar_w >= MIN_BAR {
            // Drawn here: ratatui's Gauge blanks a cell mid-bar for its (empty) label.
            let filled = (self.ratio().unwrap_or(0.0) * f64::from(bar_w)).round() as u16;
            for i in 0..bar_w {
                let (symbol, style) = if i < filled {
                    ("█", self.theme.gauge)
                } else {
                    ("░", self.theme.dim)
                };
                buf.set_string(row.x + i, row.y, symbol, style);
            }
            row.x + bar_w + 1
        } else {
            row.x
        };
        buf.set_stringn(
            text_x,
            row.y,
            &label,
            row.right().saturating_sub(text_x) as usize,
            self.theme.base,
        );
    }
}

impl PhaseGauge<'_> {
    /// The text beside the bar, the longest of its forms that leaves the bar room in `width`
    /// (at 80 columns a sweep keeps its count and ETA, losing words first).
    fn label_for(&self, width: u16) -> String {
        let forms = self.labels();
        let fits = |l: &String| l.chars().count() as u16 + 1 + MIN_BAR <= width;
        forms
            .iter()
            .find(|l| fits(l))
            .or(forms.last())
            .cloned()
            .unwrap_or_default()
    }

    /// The label's forms, longest first.
    fn labels(&self) -> Vec<String> {
        let steps = match (self.total, self.done) {
            (_, 0) => String::new(),
            (Some(t), d) => format!(" {}/{}", d.min(t), t),
            (None, d) => format!(" {d}"),
        };
        let eta = self
            .eta()
            .map(|e| format!(" · ETA {}", fmt_secs(e)))
            .unwrap_or_default();
        let elapsed = fmt_secs(self.elapsed);
        if self.phase.is_none() && self.done == 0 && !self.finished && !self.stopped {
            // nothing has run: no clock to show
            return vec![self.idle_label.to_string()];
        }
        if self.stopped {
            return match self.phase {
                Some(p) => vec![
                    format!("stopped in {}{steps} · after {elapsed}", p.label()),
                    format!("stopped{steps} · {elapsed}"),
                ],
                // a sweep stopped between its fits: what it had scored
                None if self.done > 0 => vec![
                    format!("stopped after {elapsed} · {}{steps}", self.idle_label),
                    format!("stopped{steps} · {elapsed}"),
                ],
                None => vec![format!("stopped after {elapsed}")],
            };
        }
        if self.finished {
            return vec![
                format!("done{steps} · elapsed {elapsed}"),
                format!("done · {elapsed}"),
            ];
        }
        let phase = self.phase.map_or(self.idle_label, |p| p.label());
        let short = self.phase.map_or_else(
            || self.idle_label.split(':').next().unwrap_or("").to_string(),
            |p| p.label().to_string(),
        );
        if let (Some((f, left)), Some(e)) = (self.against_estimate(), self.estimate) {
            let est = match left {
                Some(l) => format!("about {} left (estimate)", fmt_secs(l)),
                None => format!("past its {} estimate", fmt_secs(e)),
            };
            let pct = (f * 100.0).floor();
            return vec![
                format!("{phase} ~{pct:.0}% · {est} · elapsed {elapsed}"),
                format!("{phase} · {est} · {elapsed}"),
                format!("{phase} · {est}"),
            ];
        }
        vec![
            format!("{phase}{steps} · elapsed {elapsed}{eta}"),
            format!("{phase}{steps} · {elapsed}{eta}"),
            format!("{short}{steps}{eta}"),
            format!("{}{eta}", steps.trim_start()),
        ]
    }
}

/// Below this width the bar is dropped and the text alone says how far the run is.
const MIN_BAR: u16 = 8;
