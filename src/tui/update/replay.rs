//! Charts pane (this run or the marked runs, the earlier-run overlay) and trace playback of a
//! saved session: step with ← →, play with Space.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use ovk_core::train::RunOutcome;

use super::super::action::Action;
use super::super::effect::Effect;
use super::super::state::{Replay, State};
use super::{delta, run};

/// How often replay playback advances.
const PLAY_STEP: Duration = Duration::from_millis(80);

pub(super) fn on_key(s: &mut State, a: Action) -> Vec<Effect> {
    match a {
        Action::ToggleOverlay => {
            s.overlay = !s.overlay;
            s.status = match (s.overlay, s.overlay_trace()) {
                (false, _) => "earlier-run overlay off".into(),
                (true, Ok((name, _))) => format!("overlaying '{name}' (grey)"),
                (true, Err(why)) => format!("overlay on, but nothing to draw: {why}"),
            };
            vec![]
        }
        Action::ToggleMarked => {
            let runs = &mut s.sessions.runs;
            runs.chart_marked = !runs.chart_marked;
            s.status = match (runs.chart_marked, runs.marked.len()) {
                (true, 0) => "no run is marked — Space in 8 Sessions marks runs".into(),
                (true, n) => format!("the {n} marked runs' curves (m: this run)"),
                (false, _) => "this run's charts (m: the marked runs)".into(),
            };
            vec![]
        }
        Action::Space => {
            toggle_play(s);
            vec![]
        }
        a => {
            // g / G jump to the ends of a replayed trace.
            if let Some(d) = delta(&a).filter(|d| d.abs() > 1_000_000) {
                step(s, d);
            }
            vec![]
        }
    }
}

/// Replay `outcome` (saved in `dir`): its method and settings fill the read-only form, its
/// result every pane, and the cursor starts at the end of its trace — a session opened during
/// a replay starts whole too, not at the position reached in the one before.
pub fn show_replayed(s: &mut State, outcome: RunOutcome, dir: PathBuf) {
    super::settings::fill_form(s, &outcome.record);
    s.replay = Some(Replay {
        cursor: outcome.record.trace.len().saturating_sub(1),
        playing: false,
        last_step: s.now,
    });
    run::install_result(s, outcome, Some(dir));
}

fn trace_len(s: &State) -> usize {
    s.result
        .as_ref()
        .map_or(0, |f| f.outcome.record.trace.len())
}

pub(super) fn toggle_play(s: &mut State) {
    let len = trace_len(s);
    if let Some(r) = &mut s.replay {
        if !r.playing && r.cursor + 1 >= len {
            r.cursor = 0;
        }
        r.playing = !r.playing;
        r.last_step = s.now;
    }
}

pub(super) fn step(s: &mut State, d: i64) {
    let len = trace_len(s);
    if let Some(r) = &mut s.replay {
        r.playing = false;
        r.cursor = (r.cursor as i64)
            .saturating_add(d)
            .clamp(0, len.saturating_sub(1) as i64) as usize;
    }
}

pub(super) fn tick(s: &mut State, now: Instant) {
    s.now = now;
    let len = trace_len(s);
    if let Some(r) = &mut s.replay {
        if r.playing && now.duration_since(r.last_step) >= PLAY_STEP {
            r.last_step = now;
            r.cursor = (r.cursor + (len / 60).max(1)).min(len.saturating_sub(1));
            if r.cursor + 1 >= len {
                r.playing = false;
            }
        }
    }
}
