//! Matrices pane: which matrix, its zoom (each matrix starts fitted to the screen), the cell
//! cursor.

use super::super::action::Action;
use super::super::effect::Effect;
use super::super::state::State;
use super::moved;

/// The fitted view is at most zoom 4, so four steps reach at most 8 columns per entry.
const MAX_ZOOM_STEPS: u16 = 4;

pub(super) fn on_key(s: &mut State, a: Action) -> Vec<Effect> {
    match a {
        Action::NextMatrix | Action::PrevMatrix => {
            let n = s.result.as_ref().map_or(0, |f| f.outcome.matrices.len());
            if n > 0 {
                let d = if matches!(a, Action::NextMatrix) {
                    1
                } else {
                    n - 1
                };
                s.matrices.selected = (s.matrices.selected + d) % n;
                s.matrices.cursor = (0, 0);
                // A zoom chosen for a 10×10 matrix means nothing for a 576×576 one.
                s.matrices.zoom = 0;
            }
        }
        // Steps above the fitted view, which depends on the screen: from wherever it is, +
        // enlarges and − shrinks back down to it.
        Action::Zoom(d) => {
            let z = s.matrices.zoom as i32 + d;
            s.matrices.zoom = z.clamp(0, MAX_ZOOM_STEPS as i32) as u16;
        }
        Action::ZoomFit => s.matrices.zoom = 0,
        Action::MoveCursor(dx, dy) => move_cell(s, dx as i64, dy as i64),
        Action::Up => move_cell(s, 0, -1),
        Action::Down => move_cell(s, 0, 1),
        Action::Top => move_cell(s, 0, i64::MIN / 2),
        Action::Bottom => move_cell(s, 0, i64::MAX / 2),
        _ => {}
    }
    vec![]
}

fn move_cell(s: &mut State, dx: i64, dy: i64) {
    let Some((nr, nc)) = s
        .result
        .as_ref()
        .and_then(|f| f.outcome.matrices.get(s.matrices.selected))
        .map(|(_, m)| m.dim())
    else {
        return;
    };
    let (r, c) = s.matrices.cursor;
    s.matrices.cursor = (moved(r, dy, nr), moved(c, dx, nc));
}
