//! Run and Results panes: scrolling the trace, notes, records and details; and `e`, which
//! exports what the current pane shows as CSV.

use super::super::action::Action;
use super::super::effect::Effect;
use super::super::export;
use super::super::state::{Pane, State};
use super::{delta, replay, run};

pub(super) fn on_key(s: &mut State, a: Action) -> Vec<Effect> {
    if let Some(d) = delta(&a) {
        if let (Pane::Run, Some(sw)) = (s.pane, &s.run.sweep) {
            // A sweep's table: the cursor starts on the best row.
            let len = sw.plan.values.len() as i64;
            let cur = s.scroll.trace.or(sw.best().map(|b| b.index)).unwrap_or(0) as i64;
            s.scroll.trace = Some(cur.saturating_add(d).clamp(0, (len - 1).max(0)) as usize);
        } else if s.pane == Pane::Run {
            let len = s.run_trace().len();
            // Down to (or past) the end follows the newest record again.
            let cur = s.scroll.trace.unwrap_or(len.saturating_sub(1)) as i64;
            let next = cur.saturating_add(d);
            s.scroll.trace = (next < len as i64 - 1).then(|| next.max(0) as usize);
        } else {
            let len = s
                .result
                .as_ref()
                .and_then(|f| {
                    super::super::widgets::record_table::from_details(&f.outcome.record.details)
                })
                .map_or(0, |t| t.rows.len());
            let cur = s.scroll.records.unwrap_or(0) as i64;
            s.scroll.records = Some(cur.saturating_add(d).clamp(0, len.max(1) as i64 - 1) as usize);
        }
        return vec![];
    }
    match a {
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
