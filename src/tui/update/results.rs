//! Run and Results panes: scrolling the trace, notes, records and details; and `e`, which
//! exports what the current pane shows as CSV.

use super::super::action::Action;
use super::super::diag;
use super::super::effect::Effect;
use super::super::export;
use super::super::state::{Pane, State};
use super::super::widgets::record_table::{self, RecordTable};
use super::{delta, moved, replay, run};

pub(super) fn on_key(s: &mut State, a: Action) -> Vec<Effect> {
    if s.pane == Pane::Results {
        if let Some(effects) = diagnostics_key(s, &a) {
            return effects;
        }
    }
    if let Some(d) = delta(&a) {
        if let (Pane::Run, Some(sw)) = (s.pane, &s.run.sweep) {
            // A sweep's table: the cursor starts on the best row.
            let len = sw.plan.points.len() as i64;
            let cur = s.scroll.trace.or(sw.best().map(|b| b.index)).unwrap_or(0) as i64;
            s.scroll.trace = Some(cur.saturating_add(d).clamp(0, (len - 1).max(0)) as usize);
        } else if s.pane == Pane::Run {
            let len = s.run_trace().len();
            // Down to (or past) the end follows the newest record again.
            let cur = s.scroll.trace.unwrap_or(len.saturating_sub(1)) as i64;
            let next = cur.saturating_add(d);
            s.scroll.trace = (next < len as i64 - 1).then(|| next.max(0) as usize);
        } else {
            let len = records(s).map_or(0, |t| t.rows.len());
            let cur = s.scroll.records.unwrap_or(0) as i64;
            s.scroll.records = Some(cur.saturating_add(d).clamp(0, len.max(1) as i64 - 1) as usize);
        }
        return vec![];
    }
    match a {
        Action::Column(d) if s.pane == Pane::Results => {
            let last = records(s).map_or(0, |t| t.headers.len().saturating_sub(2));
            s.scroll.record_cols =
                (s.scroll.record_cols as i64 + d as i64).clamp(0, last as i64) as usize;
            vec![]
        }
        Action::ScrollNotes(d) => {
            let v = if s.pane == Pane::Run {
                &mut s.scroll.notes
            } else {
                &mut s.scroll.details
            };
            *v = (*v as i64 + d as i64).max(0) as usize;
            vec![]
        }
        Action::Enter if s.pane == Pane::Run => run::start(s),
        Action::Space => {
            replay::toggle_play(s);
            vec![]
        }
        _ => vec![],
    }
}

/// The finished run's λ path or sweep table, if it has one.
fn records(s: &State) -> Option<RecordTable> {
    s.result
        .as_ref()
        .and_then(|f| record_table::from_details(&f.outcome.record.details))
}

/// `e`: the current pane's matrix, table or chart data as a CSV file.
pub(super) fn export(s: &mut State) -> Vec<Effect> {
    match export::current(s) {
        Ok((name, text)) => {
            s.status = format!("exporting {name}…");
            vec![Effect::Export {
                name,
                text,
                inputs: export::inputs(s),
            }]
        }
        Err(why) => {
            s.status = why;
            vec![]
        }
    }
}

/// The diagnostics view's keys: `d` shows or hides it, `p` switches the part, j k move the
/// cursor over its classes, labels or outputs. `None`: not a diagnostics key.
fn diagnostics_key(s: &mut State, a: &Action) -> Option<Vec<Effect>> {
    match a {
        Action::ToggleDiagnostics if s.result.is_none() => {
            s.status = "no results yet — the diagnostics come with a finished fit".into()
        }
        Action::ToggleDiagnostics => {
            s.diag.shown = !s.diag.shown;
            s.status = if s.diag.shown {
                format!(
                    "{} diagnostics — p: train/test · j k: move · d: summary",
                    s.diag.part()
                )
            } else {
                "summary — d: per-output diagnostics".into()
            };
        }
        Action::TogglePart if s.diag.shown => {
            s.diag.train = !s.diag.train;
            s.status = format!("{} diagnostics", s.diag.part());
        }
        Action::TogglePart => {
            s.status = "d shows the diagnostics first; p then picks the part".into()
        }
        a if s.diag.shown && delta(a).is_some() => {
            let len = s
                .result
                .as_ref()
                .and_then(|f| diag::of(&f.outcome, s.diag.part()).ok())
                .map_or(0, |d| diag::rows(&d));
            s.diag.row = moved(s.diag.row, delta(a).unwrap_or(0), len);
        }
        _ => return None,
    }
    Some(vec![])
}
