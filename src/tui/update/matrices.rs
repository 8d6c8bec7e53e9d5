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
        Action::ToggleCorrelation | Action::ToggleOrder => toggle_view(s, &a),
        Action::MoveCursor(dx, dy) => move_cell(s, dx as i64, dy as i64),
        Action::Up => move_cell(s, 0, -1),
        Action::Down => move_cell(s, 0, 1),
        Action::Top => move_cell(s, 0, i64::MIN / 2),
        Action::Bottom => move_cell(s, 0, i64::MAX / 2),
        _ => {}
    }
    vec![]
}

/// `c` and `o`: an outputs × outputs matrix as correlations, its outputs clustered; the
/// order is the engine's (`inspect::clustered_order`, as `ovk inspect` and the figures use),
/// computed once per matrix.
fn toggle_view(s: &mut State, a: &Action) {
    let Some(f) = &s.result else {
        return;
    };
    let sel = s.matrices.selected;
    let Some((name, m)) = f.outcome.matrices.get(sel) else {
        return;
    };
    let same = super::super::axes::of(&f.outcome.record, name, m.dim()).same;
    if !same || m.nrows() != m.ncols() {
        s.status = format!(
            "{name} is not outputs × outputs: c and o read a square output kernel (L) or metric"
        );
        return;
    }
    if matches!(a, Action::ToggleCorrelation) {
        s.matrices.correlation = !s.matrices.correlation;
        s.status = if s.matrices.correlation {
            format!("{name} as correlations L_ij / √(L_ii L_jj) (c: raw)")
        } else {
            format!("{name} raw (c: correlations)")
        };
        return;
    }
    s.matrices.clustered = !s.matrices.clustered;
    if s.matrices.clustered && s.matrices.order.as_ref().is_none_or(|(i, _)| *i != sel) {
        let o = ovk_core::inspect::clustered_order(m.view());
        s.matrices.order = Some((sel, o.order));
    }
    s.status = if s.matrices.clustered {
        format!("{name}'s outputs clustered: related outputs side by side (o: file order)")
    } else {
        format!("{name}'s outputs in file order (o: clustered)")
    };
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
