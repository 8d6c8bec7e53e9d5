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
        Phase::Graph | Phase::Factor => Phase::Gram,
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
    pub theme: &'a Theme,
}

impl PhaseGauge<'_> {
    /// Fraction of the current phase done, when its length is known.
    pub fn ratio(&self) -> Option<f64> {
        if self.finished {
            return Some(1.0);
        }
        match self.total {
            Some(t) if t > 0 => Some((self.done as f64 / t as f64).clamp(0.0, 1.0)),
            _ => None,
        }
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
        // Step counts mean something only in the iterating phase.
        let steps = match (self.total, self.done) {
            (_, 0) => String::new(),
            (Some(t), d) => format!(" {}/{}", d.min(t), t),
            (None, d) => format!(" {d}"),
        };
        let eta = self
            .eta()
            .map(|e| format!(" · ETA {}", fmt_secs(e)))
            .unwrap_or_default();
        let phase = if self.finished {
            "done"
        } else if self.stopped {
            "stopped in"
        } else {
            self.phase.map_or(self.idle_label, |p| p.label())
        };
        let label = if self.phase.is_none() && self.done == 0 && !self.finished && !self.stopped {
            // nothing has run: no clock to show
            self.idle_label.to_string()
        } else if self.stopped {
            format!(
                "{phase} {}{steps} · after {}",
                self.phase.map_or("—", |p| p.label()),
                fmt_secs(self.elapsed)
            )
        } else {
            format!("{phase}{steps} · elapsed {}{eta}", fmt_secs(self.elapsed))
        };
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

/// Below this width the bar is dropped and the text alone says how far the run is.
const MIN_BAR: u16 = 8;
