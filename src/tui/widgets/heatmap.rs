//! A matrix as a heatmap of half-block characters: each screen cell shows two matrix rows,
//! `▀` with foreground = upper cell and background = lower cell. Colours follow a diverging
//! scale centred on 0 (limits ±max|value|), explained by `Legend`.

use ndarray::Array2;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::Widget;

use super::super::theme::Theme;
use super::fmt_num;

/// The largest |value| (the colour scale's half-width); 1 for an all-zero matrix.
pub fn scale_of(m: &Array2<f64>) -> f64 {
    let a = m
        .iter()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |a, v| a.max(v.abs()));
    if a > 0.0 {
        a
    } else {
        1.0
    }
}

/// How big one matrix entry is drawn: `w` screen columns by `h` half-lines (the widget draws
/// half-blocks). Zoom levels keep `h` even, so every row starts on a line of its own and its
/// label can sit beside it; only the dense overview packs two rows into one line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CellSize {
    pub w: u16,
    pub h: u16,
}

impl CellSize {
    /// One column and half a line per entry: two rows per line.
    pub const DENSE: CellSize = CellSize { w: 1, h: 1 };

    /// Zoom level `z` (1–8): `z` columns by half as many whole lines, at least one — a
    /// terminal cell is about twice as tall as it is wide, so the entries stay roughly square
    /// and each level is larger than the one below.
    pub fn zoom(z: u16) -> CellSize {
        let z = z.max(1);
        CellSize {
            w: z,
            h: 2 * z.div_ceil(2),
        }
    }

    /// Whether one screen line shows two matrix rows.
    pub fn dense(self) -> bool {
        self.h < 2
    }
}

/// How many matrix rows and columns fit in `area` with entries of size `cell`.
pub fn capacity(area: Rect, cell: CellSize) -> (usize, usize) {
    (
        (area.height as usize * 2) / cell.h.max(1) as usize,
        area.width as usize / cell.w.max(1) as usize,
    )
}

/// The first row/column to show so that `cursor` stays visible in a window of `fit` cells.
pub fn offset(cursor: usize, fit: usize, len: usize) -> usize {
    if fit == 0 || len <= fit {
        0
    } else {
        cursor.saturating_sub(fit - 1).min(len - fit)
    }
}

pub struct Heatmap<'a> {
    pub matrix: &'a Array2<f64>,
    pub cell: CellSize,
    pub cursor: Option<(usize, usize)>,
    /// First matrix row and column drawn.
    pub origin: (usize, usize),
    pub theme: &'a Theme,
}

impl Widget for Heatmap<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let area = area.intersection(buf.area);
        if area.is_empty() {
            return;
        }
        let (nr, nc) = self.matrix.dim();
        let (w, h) = (self.cell.w.max(1) as usize, self.cell.h.max(1) as usize);
        let scale = scale_of(self.matrix);
        let cell = |r: usize, c: usize| -> Option<f64> {
            (r < nr && c < nc).then(|| self.matrix[[r, c]] / scale)
        };
        for sy in 0..area.height as usize {
            for sx in 0..area.width as usize {
                let c = self.origin.1 + sx / w;
                let top = cell(self.origin.0 + (2 * sy) / h, c);
                let bottom = cell(self.origin.0 + (2 * sy + 1) / h, c);
                if top.is_none() && bottom.is_none() {
                    continue;
                }
                let pos = (area.x + sx as u16, area.y + sy as u16);
                let Some(target) = buf.cell_mut(pos) else {
                    continue;
                };
                match (
                    top.and_then(|t| self.theme.diverging(t)),
                    bottom.and_then(|b| self.theme.diverging(b)),
                ) {
                    (Some(fg), bg) => {
                        target.set_symbol("▀");
                        target.set_fg(fg);
                        target.set_bg(bg.unwrap_or(Color::Reset));
                    }
                    (None, Some(bg)) => {
                        target.set_symbol(" ");
                        target.set_bg(bg);
                    }
                    (None, None) => {
                        // No colour: one character by magnitude of the upper cell.
                        target.set_symbol(Theme::ramp(top.or(bottom).unwrap_or(0.0)));
                    }
                }
            }
        }
        if let Some((r, c)) = self.cursor {
            if r < self.origin.0 || c < self.origin.1 {
                return;
            }
            // The middle column of the entry, on the first line of its row.
            let sx = (c - self.origin.1) * w + (w - 1) / 2;
            let sy = ((r - self.origin.0) * h) / 2;
            if sx < area.width as usize && sy < area.height as usize {
                if let Some(t) = buf.cell_mut((area.x + sx as u16, area.y + sy as u16)) {
                    t.set_symbol("◆");
                    t.set_style(
                        Style::default()
                            .fg(Color::Black)
                            .bg(Color::White)
                            .add_modifier(Modifier::BOLD),
                    );
                    if self.theme.mode == super::super::theme::ColorMode::None {
                        t.set_style(Style::default().add_modifier(Modifier::REVERSED));
                    }
                }
            }
        }
    }
}

/// The colour scale: `−max ███ 0 ███ +max`.
pub struct Legend<'a> {
    pub scale: f64,
    pub theme: &'a Theme,
}

impl Widget for Legend<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let area = area.intersection(buf.area);
        if area.is_empty() {
            return;
        }
        let lo = format!("−{} ", fmt_num(self.scale));
        let hi = format!(" +{}", fmt_num(self.scale));
        let fixed = lo.chars().count() + hi.chars().count();
        let w = area.width as usize;
        let y = area.y;
        if w < fixed + 3 {
            buf.set_stringn(
                area.x,
                y,
                format!("±{}", fmt_num(self.scale)),
                w,
                self.theme.base,
            );
            return;
        }
        let bar = w - fixed;
        buf.set_string(area.x, y, &lo, self.theme.base);
        let x0 = area.x + lo.chars().count() as u16;
        for i in 0..bar {
            let t = if bar == 1 {
                0.0
            } else {
                -1.0 + 2.0 * i as f64 / (bar - 1) as f64
            };
            if let Some(cell) = buf.cell_mut((x0 + i as u16, y)) {
                match self.theme.diverging(t) {
                    Some(c) => {
                        cell.set_symbol(" ");
                        cell.set_bg(c);
                    }
                    None => {
                        cell.set_symbol(Theme::ramp(t));
                    }
                }
            }
        }
        // The centre mark: 0.
        let mid = x0 + (bar / 2) as u16;
        if let Some(cell) = buf.cell_mut((mid, y)) {
            cell.set_symbol("0");
            cell.set_fg(Color::Black);
        }
        buf.set_string(x0 + bar as u16, y, &hi, self.theme.base);
    }
}

/// The strongest off-diagonal entries by |value| (upper triangle for symmetric matrices).
pub fn strongest(m: &Array2<f64>, k: usize) -> Vec<(usize, usize, f64)> {
    let (nr, nc) = m.dim();
    let symmetric = nr == nc
        && (0..nr).all(|i| {
            (0..i).all(|j| (m[[i, j]] - m[[j, i]]).abs() <= 1e-9 * (1.0 + m[[i, j]].abs()))
        });
    let mut all: Vec<(usize, usize, f64)> = Vec::new();
    for i in 0..nr {
        for j in 0..nc {
            if i == j || (symmetric && j < i) || !m[[i, j]].is_finite() {
                continue;
            }
            all.push((i, j, m[[i, j]]));
        }
    }
    top_by_magnitude(all, k)
}

/// The entries of largest |value| anywhere (diagonal included): for matrices whose rows and
/// columns index different things, where "off-diagonal" means nothing.
pub fn largest(m: &Array2<f64>, k: usize) -> Vec<(usize, usize, f64)> {
    let all: Vec<(usize, usize, f64)> = m
        .indexed_iter()
        .filter(|(_, v)| v.is_finite())
        .map(|((i, j), v)| (i, j, *v))
        .collect();
    top_by_magnitude(all, k)
}

/// The k entries of largest |value|, largest first: a selection, then a sort of those k only
/// (drawn every frame; a 10 × 10⁵ coefficient matrix has 10⁶ entries).
fn top_by_magnitude(mut all: Vec<(usize, usize, f64)>, k: usize) -> Vec<(usize, usize, f64)> {
    let by_magnitude = |a: &(usize, usize, f64), b: &(usize, usize, f64)| {
        b.2.abs()
            .total_cmp(&a.2.abs())
            .then((a.0, a.1).cmp(&(b.0, b.1)))
    };
    if k == 0 {
        return Vec::new();
    }
    if all.len() > k {
        all.select_nth_unstable_by(k - 1, by_magnitude);
        all.truncate(k);
    }
    all.sort_by(by_magnitude);
    all
}

/// The view that shows the whole `nr`×`nc` matrix in `area`: the largest zoom level up to 4
/// that fits, else level 0 — the dense overview, two rows per line — with the block sizes
/// (rows, columns) it needs (1×1 when the matrix fits densely). Each axis is reduced only as
/// much as it must be: a 445×6 matrix keeps its 6 columns.
pub fn fit_zoom(area: Rect, nr: usize, nc: usize) -> (u16, (usize, usize)) {
    for z in (1..=4u16).rev() {
        let (r, c) = capacity(area, CellSize::zoom(z));
        if nr <= r && nc <= c {
            return (z, (1, 1));
        }
    }
    let (r, c) = capacity(area, CellSize::DENSE);
    (
        0,
        (nr.div_ceil(r.max(1)).max(1), nc.div_ceil(c.max(1)).max(1)),
    )
}

/// The entry size of zoom level `level` (0: the dense overview).
pub fn cell_size(level: u16) -> CellSize {
    if level == 0 {
        CellSize::DENSE
    } else {
        CellSize::zoom(level)
    }
}

/// Each `kr`×`kc` block of `m` as its entry of largest |value| (sign kept), so an isolated
/// strong entry stays visible in the overview.
pub fn overview(m: &Array2<f64>, (kr, kc): (usize, usize)) -> Array2<f64> {
    let (kr, kc) = (kr.max(1), kc.max(1));
    let (nr, nc) = m.dim();
    let mut out: Array2<f64> = Array2::zeros((nr.div_ceil(kr), nc.div_ceil(kc)));
    for ((i, j), v) in m.indexed_iter() {
        let o = &mut out[[i / kr, j / kc]];
        if v.is_finite() && v.abs() > o.abs() {
            *o = *v;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::theme::ColorMode;
    use ndarray::array;

    #[test]
    fn half_blocks_carry_two_rows() {
        let m = array![[1.0, -1.0], [-1.0, 1.0]];
        let theme = Theme::new(ColorMode::TrueColor);
        let area = Rect::new(0, 0, 2, 1);
        let mut buf = Buffer::empty(area);
        Heatmap {
            matrix: &m,
            cell: CellSize::DENSE,
            cursor: None,
            origin: (0, 0),
            theme: &theme,
        }
        .render(area, &mut buf);
        let c = &buf[(0, 0)];
        assert_eq!(c.symbol(), "▀");
        assert_eq!(Some(c.fg), theme.diverging(1.0));
        assert_eq!(Some(c.bg), theme.diverging(-1.0));
    }

    #[test]
    fn strongest_skips_diagonal_and_mirror() {
        let m = array![[5.0, 0.2, -0.9], [0.2, 5.0, 0.1], [-0.9, 0.1, 5.0]];
        let s = strongest(&m, 2);
        assert_eq!(s, vec![(0, 2, -0.9), (0, 1, 0.2)]);
    }

    #[test]
    fn largest_selects_the_top_k_by_magnitude_ties_in_reading_order() {
        let m = array![[1.0, -3.0, 2.0, 0.5], [3.0, f64::NAN, -2.0, 0.0]];
        assert_eq!(largest(&m, 3), vec![(0, 1, -3.0), (1, 0, 3.0), (0, 2, 2.0)]);
        assert_eq!(largest(&m, 0), vec![]);
        assert_eq!(largest(&m, 99).len(), 7, "NaN left out");
        // the same as sorting everything, on a wide matrix
        let w = Array2::from_shape_fn((3, 500), |(i, j)| ((i * 31 + j * 17) % 101) as f64 - 50.0);
        let mut all: Vec<(usize, usize, f64)> =
            w.indexed_iter().map(|((i, j), v)| (i, j, *v)).collect();
        all.sort_by(|a, b| b.2.abs().total_cmp(&a.2.abs()));
        all.truncate(25);
        assert_eq!(largest(&w, 25), all);
    }

    #[test]
    fn overview_keeps_the_strongest_entry_of_each_block() {
        let mut m = Array2::zeros((576, 576));
        m[[300, 17]] = -3.0;
        m[[301, 18]] = 1.0;
        let (z, (kr, kc)) = fit_zoom(Rect::new(0, 0, 80, 20), 576, 576);
        assert_eq!(z, 0);
        assert!(kr >= 15 && kc >= 8, "{kr} {kc}");
        let o = overview(&m, (kr, kc));
        assert!(o.nrows() * kr >= 576 && o.nrows() <= 40 && o.ncols() <= 80);
        assert_eq!(o[[300 / kr, 17 / kc]], -3.0);
        assert_eq!(fit_zoom(Rect::new(0, 0, 80, 20), 10, 10), (4, (1, 1)));
        // Two rows per line before blocks: 30 rows fit densely in 20 lines, not at zoom 1.
        assert_eq!(fit_zoom(Rect::new(0, 0, 80, 20), 30, 30), (0, (1, 1)));
        // A tall matrix keeps its columns.
        assert_eq!(fit_zoom(Rect::new(0, 0, 40, 20), 445, 6).1 .1, 1);
    }

    #[test]
    fn each_zoom_level_is_larger_and_keeps_rows_on_whole_lines() {
        let mut last = CellSize::DENSE;
        for z in 1..=8 {
            let c = CellSize::zoom(z);
            let larger = c.w >= last.w && c.h >= last.h && (c.w, c.h) != (last.w, last.h);
            assert!(larger && c.h.is_multiple_of(2), "{z}: {c:?}");
            last = c;
        }
    }

    #[test]
    fn offset_keeps_cursor_visible() {
        assert_eq!(offset(0, 5, 20), 0);
        assert_eq!(offset(7, 5, 20), 3);
        assert_eq!(offset(19, 5, 20), 15);
        assert_eq!(offset(3, 0, 20), 0);
    }
}
