//! One file per pane; each draws itself from the state into the body area.

mod charts;
mod data;
mod diagnostics;
mod kernel;
mod matrices;
mod method;
mod results;
mod run;
mod sessions;

use ratatui::layout::Rect;
use ratatui::text::Span;
use ratatui::widgets::Block;
use ratatui::Frame;

use super::state::{Pane, State};
use super::theme::Theme;

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
