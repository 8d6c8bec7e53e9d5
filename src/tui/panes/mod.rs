//! One file per pane; each draws itself from the state into the body area.

mod charts;
mod data;
mod diagnostics;
mod kernel;
mod matrices;
mod method;
mod predictions;
mod results;
mod run;
mod sessions;

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};
use ratatui::Frame;

use super::state::{Pane, State};
use super::theme::Theme;
use super::widgets::clip;

pub fn draw(frame: &mut Frame, area: Rect, s: &State) {
    match s.pane {
        Pane::Data => data::draw(frame, area, s),
        Pane::Method => method::draw(frame, area, s),
        Pane::Kernel => kernel::draw(frame, area, s),
        Pane::Run => run::draw(frame, area, s),
        Pane::Charts => charts::draw(frame, area, s),
        Pane::Matrices => matrices::draw(frame, area, s),
        Pane::Results => results::draw(frame, area, s),
        Pane::Sessions => sessions::draw(frame, area, s),
    }
}

/// A bordered block with a title; a focused block has the accent border.
pub(crate) fn block<'a>(title: impl Into<String>, theme: &Theme, focused: bool) -> Block<'a> {
    Block::bordered()
        .title(Span::styled(format!(" {} ", title.into()), theme.title))
        .border_style(if focused {
            theme.border_focus
        } else {
            theme.border
        })
}

/// How many characters a block's title has over `area`: its width less the corners and the
/// spaces around the title.
pub(crate) fn title_room(area: Rect) -> usize {
    usize::from(area.width.saturating_sub(4))
}

/// The first of `choices` (the fullest first) that fits as the title of a block over `area`,
/// else the last one clipped with `…`: a title gives up what it can spare, and the border
/// never cuts it off unmarked.
pub(crate) fn fit_title(area: Rect, choices: &[String]) -> String {
    let room = title_room(area);
    choices
        .iter()
        .find(|c| c.chars().count() <= room)
        .cloned()
        .unwrap_or_else(|| clip(choices.last().map_or("", String::as_str), room))
}

/// Wrapped lines in a bordered block, scrolled by `scroll` rows (clamped so that the last row
/// stays at the bottom). Rows are counted as the paragraph wraps them, so the last one is
/// always reachable. The title is `title(Some((first, last, total)))` in rows when not all
/// fit, else `title(None)`.
pub(crate) fn draw_scrolled(
    frame: &mut Frame,
    area: Rect,
    s: &State,
    lines: Vec<Line>,
    scroll: usize,
    title: impl FnOnce(Option<(usize, usize, usize)>) -> String,
) {
    let inner_w = area.width.saturating_sub(2).max(1);
    let text = Paragraph::new(lines).wrap(Wrap { trim: true });
    let total = text.line_count(inner_w);
    let fit = area.height.saturating_sub(2) as usize;
    let top = scroll.min(total.saturating_sub(fit));
    let title = title((total > fit).then(|| (top + 1, (top + fit).min(total), total)));
    frame.render_widget(
        text.scroll((top as u16, 0))
            .block(block(title, &s.theme, false)),
        area,
    );
}

/// A pane, or a part of one, with nothing to show: a dim line saying why, in its block
/// `(title, focused)`.
pub(crate) fn draw_note(
    frame: &mut Frame,
    area: Rect,
    s: &State,
    (title, focused): (&str, bool),
    note: &str,
) {
    frame.render_widget(
        Paragraph::new(Line::styled(note, s.theme.dim)).block(block(title, &s.theme, focused)),
        area,
    );
}

/// What went wrong in the error style, else what to do, dimmed.
pub(crate) fn error_or_hint<'a>(s: &State, error: Option<&str>, hint: &'a str) -> Line<'a> {
    match error {
        Some(e) => Line::styled(e.to_string(), s.theme.error),
        None => Line::styled(hint, s.theme.dim),
    }
}
