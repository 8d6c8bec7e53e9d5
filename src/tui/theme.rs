//! Named styles and colour maps. The colour depth is decided once from the environment:
//! `NO_COLOR` (any non-empty value) → no colour at all, `COLORTERM=truecolor|24bit` → RGB,
//! otherwise the 16 ANSI colours every terminal has (sent as classic codes where `TERM` claims
//! no 256 colours: `sgr.rs`).

use ratatui::style::{Color, Modifier, Style};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorMode {
    TrueColor,
    Ansi16,
    None,
}

impl ColorMode {
    /// Read `NO_COLOR` and `COLORTERM`.
    pub fn detect() -> ColorMode {
        Self::from_env(
            std::env::var("NO_COLOR").ok().as_deref(),
            std::env::var("COLORTERM").ok().as_deref(),
        )
    }

    pub fn from_env(no_color: Option<&str>, colorterm: Option<&str>) -> ColorMode {
        if no_color.is_some_and(|v| !v.is_empty()) {
            return ColorMode::None;
        }
        match colorterm.map(|s| s.to_ascii_lowercase()) {
            Some(s) if s == "truecolor" || s == "24bit" => ColorMode::TrueColor,
            _ => ColorMode::Ansi16,
        }
    }
}

/// Every style the panes use, by role rather than by colour.
#[derive(Debug, Clone, Copy)]
pub struct Theme {
    pub mode: ColorMode,
    pub base: Style,
    pub title: Style,
    pub tab: Style,
    pub tab_active: Style,
    pub border: Style,
    pub border_focus: Style,
    pub selected: Style,
    pub dim: Style,
    pub key: Style,
    pub ok: Style,
    pub warn: Style,
    pub error: Style,
    pub status_bar: Style,
    pub gauge: Style,
    /// Chart series: current run, previous run (overlay), second series, third series.
    pub series: [Style; 4],
}

impl Theme {
    pub fn new(mode: ColorMode) -> Theme {
        let c = |color: Color| match mode {
            ColorMode::None => Style::default(),
            _ => Style::default().fg(color),
        };
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let rev = Style::default().add_modifier(Modifier::REVERSED);
        Theme {
            mode,
            base: Style::default(),
            title: c(Color::Cyan).add_modifier(Modifier::BOLD),
            tab: c(Color::Gray),
            tab_active: match mode {
                ColorMode::None => rev.add_modifier(Modifier::BOLD),
                _ => Style::default()
                    .fg(Color::Black)
                    .bg(Color::Cyan)
                    .add_modifier(Modifier::BOLD),
            },
            border: c(Color::DarkGray),
            border_focus: c(Color::Cyan),
            selected: match mode {
                ColorMode::None => rev,
                _ => Style::default().bg(Color::Blue).fg(Color::White),
            },
            dim: match mode {
                ColorMode::None => Style::default().add_modifier(Modifier::DIM),
                _ => c(Color::DarkGray),
            },
            key: c(Color::Yellow).add_modifier(Modifier::BOLD),
            ok: c(Color::Green),
            warn: c(Color::Yellow),
            error: match mode {
                ColorMode::None => bold,
                _ => c(Color::Red).add_modifier(Modifier::BOLD),
            },
            status_bar: match mode {
                ColorMode::None => rev,
                _ => Style::default().bg(Color::DarkGray).fg(Color::White),
            },
            gauge: c(Color::Green),
            series: [
                c(Color::Cyan),
                c(Color::DarkGray),
                c(Color::Magenta),
                c(Color::Yellow),
            ],
        }
    }

    /// A diverging colour for `t` in [−1, 1]: blue below 0, neutral at 0, red above.
    /// `None` when the theme has no colour (the heatmap then uses a character ramp).
    pub fn diverging(&self, t: f64) -> Option<Color> {
        let t = if t.is_finite() {
            t.clamp(-1.0, 1.0)
        } else {
            0.0
        };
        match self.mode {
            ColorMode::None => None,
            ColorMode::TrueColor => {
                // coolwarm-like: (59,76,192) → (221,221,221) → (180,4,38)
                let (lo, mid, hi) = (
                    (59.0, 76.0, 192.0),
                    (221.0, 221.0, 221.0),
                    (180.0, 4.0, 38.0),
                );
                let (a, b, s) = if t < 0.0 { (mid, lo, -t) } else { (mid, hi, t) };
                let mix = |x: f64, y: f64| (x + (y - x) * s).round().clamp(0.0, 255.0) as u8;
                Some(Color::Rgb(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2)))
            }
            ColorMode::Ansi16 => {
                const NEG: [Color; 3] = [Color::Cyan, Color::LightBlue, Color::Blue];
                const POS: [Color; 3] = [Color::Yellow, Color::LightRed, Color::Red];
                let level = |s: f64| ((s * 3.0).ceil() as usize).clamp(1, 3) - 1;
                Some(if t.abs() < 0.08 {
                    Color::Gray
                } else if t < 0.0 {
                    NEG[level(-t)]
                } else {
                    POS[level(t)]
                })
            }
        }
    }

    /// Characters for colourless heatmaps: shades for positive values, a different family
    /// for negative ones, so the sign survives `NO_COLOR` (the legend shows both).
    pub fn ramp(t: f64) -> &'static str {
        const POS: [&str; 5] = [" ", "░", "▒", "▓", "█"];
        const NEG: [&str; 5] = [" ", "·", "-", "=", "#"];
        let s = if t.is_finite() { t.abs().min(1.0) } else { 0.0 };
        let i = ((s * 4.0).round() as usize).min(4);
        if t < 0.0 {
            NEG[i]
        } else {
            POS[i]
        }
    }
}

impl Default for Theme {
    fn default() -> Self {
        Theme::new(ColorMode::Ansi16)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_color_wins_and_truecolor_is_detected() {
        assert_eq!(
            ColorMode::from_env(Some("1"), Some("truecolor")),
            ColorMode::None
        );
        assert_eq!(
            ColorMode::from_env(Some(""), Some("truecolor")),
            ColorMode::TrueColor
        );
        assert_eq!(
            ColorMode::from_env(None, Some("24bit")),
            ColorMode::TrueColor
        );
        assert_eq!(ColorMode::from_env(None, None), ColorMode::Ansi16);
    }

    #[test]
    fn diverging_is_neutral_at_zero_and_signed() {
        let t = Theme::new(ColorMode::TrueColor);
        assert_eq!(t.diverging(0.0), Some(Color::Rgb(221, 221, 221)));
        let Some(Color::Rgb(r, _, b)) = t.diverging(-1.0) else {
            panic!()
        };
        assert!(b > r);
        let Some(Color::Rgb(r, _, b)) = t.diverging(1.0) else {
            panic!()
        };
        assert!(r > b);
        assert_eq!(Theme::new(ColorMode::None).diverging(0.5), None);
    }
}
