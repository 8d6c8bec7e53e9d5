//! Starting, cancelling and following a fit; a finished fit becomes the shown result.

use std::path::PathBuf;

use ovk_core::methods::Phase;
use ovk_core::train::{RunMessage, RunOutcome};

use super::super::effect::Effect;
use super::super::state::{Finished, PreviousRun, RunState, RunStatus, State};
use super::super::verdict::headline;

pub(super) fn start(s: &mut State) -> Vec<Effect> {
    if s.replay.is_some() {
        s.status = "replay is read-only: open the workbench to run".into();
        return vec![];
    }
    if s.is_running() {
        s.status = "a fit is already running (Esc or c in Run cancels it)".into();
        return vec![];
    }
    match s.run_config() {
        Ok(cfg) => {
            s.run = RunState::new();
            s.run.status = RunStatus::Running;
            s.run.started = Some(s.now);
            s.run.config = Some(cfg.clone());
            s.sessions.runs.chart_marked = false;
            s.scroll.trace = None;
            s.scroll.notes = 0;
            s.status = format!("fitting {} on {}…", cfg.method, cfg.data.path.display());
            vec![Effect::StartRun(cfg)]
        }
        Err(why) => {
            s.status = format!("cannot run: {why}");
            vec![]
        }
    }
}

pub(super) fn cancel(s: &mut State) -> Vec<Effect> {
    if s.is_running() {
        s.run.cancelling = true;
        s.status = "cancelling…".into();
        vec![Effect::CancelRun]
    } else {
        s.status = "no fit is running".into();
        vec![]
    }
}

pub(super) fn message(s: &mut State, msg: RunMessage) -> Vec<Effect> {
    match msg {
        RunMessage::Phase { phase, total } => {
            s.run.phase = Some(phase);
            s.run.phase_total = total;
            s.run.phase_started = Some(s.now);
            s.run.phase_done = 0;
        }
        RunMessage::Record(r) => {
            s.run.trace.push(r);
            // a path's steps are its fits, which it counts itself
            if s.run.phase != Some(Phase::Path) {
                s.run.phase_done += 1;
            }
        }
        RunMessage::Step { done, total } => {
            s.run.phase_done = done;
            s.run.phase_total = Some(total);
        }
        RunMessage::SweepRow(row) => super::sweep::row(s, *row),
        RunMessage::Note(n) => {
            s.status = n.clone();
            s.run.notes.push(n);
        }
        RunMessage::Finished(outcome) => {
            s.run.status = RunStatus::Finished;
            s.run.ended = Some(s.now);
            s.run.cancelling = false;
            s.status = match super::sweep::keep_best(s) {
                Some(set) => format!(
                    "finished: {} — {set}, the sweep's best, is now in Kernel (3); s saves the \
                     session",
                    headline(&outcome)
                ),
                None => format!("finished: {} — s saves the session", headline(&outcome)),
            };
            install_result(s, *outcome, None);
        }
        RunMessage::Failed { message, .. } => {
            s.run.status = RunStatus::Failed(message.clone());
            s.run.ended = Some(s.now);
            s.run.cancelling = false;
            s.status = format!("failed: {message}");
            // The status line clips a long message and its advice: Notes shows all of it.
            s.run.notes.push(format!("the fit failed: {message}"));
        }
        RunMessage::Cancelled => {
            s.run.status = RunStatus::Cancelled;
            s.run.ended = Some(s.now);
            s.run.cancelling = false;
            let what = if s.run.sweep.is_some() {
                "sweep stopped, no best refitted (its scored rows stay in Run, e exports them)"
            } else {
                "fit stopped, nothing kept from it"
            };
            s.status = match &s.result {
                Some(f) if f.saved.is_none() => format!(
                    "{what} — the results shown are still those of \
                     '{}' (s saves them)",
                    f.outcome.record.name
                ),
                _ => format!("{what} — r starts a new fit"),
            };
        }
    }
    vec![]
}

/// Make `outcome` the shown result; the one it replaces becomes the overlay curve.
pub(super) fn install_result(s: &mut State, outcome: RunOutcome, saved: Option<PathBuf>) {
    if let Some(old) = s.result.take() {
        let r = old.outcome.record;
        s.previous = Some(PreviousRun {
            name: r.name,
            method: r.method,
            dataset: r.config.data.path,
            trace: r.trace,
        });
    }
    s.matrices.selected = 0;
    s.matrices.cursor = (0, 0);
    s.matrices.zoom = 0;
    s.scroll.records = None;
    s.scroll.record_cols = 0;
    s.scroll.details = 0;
    s.result = Some(Finished { outcome, saved });
}
