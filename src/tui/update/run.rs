//! Starting, cancelling and following a fit; a finished fit becomes the shown result.

use std::path::PathBuf;

use ovk_core::methods::Phase;
use ovk_core::train::{Ended, RunMessage, RunOutcome};

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
        RunMessage::Estimate(phases) => s.run.estimate = phases,
        RunMessage::SweepRow(row) => super::sweep::row(s, *row),
        RunMessage::Note(n) => {
            s.status = n.clone();
            s.run.notes.push(n);
        }
        RunMessage::Finished(outcome) => {
            // Nobody recorded it (the thread runner): the workbench does, at once.
            let record = Box::new((*outcome).clone());
            finished(s, *outcome, None);
            return vec![Effect::RecordRun(record)];
        }
        RunMessage::Recorded { dir, ended } => {
            match ended {
                Ended::Finished(outcome) => finished(s, *outcome, Some(dir)),
                Ended::Cancelled(record) => {
                    cancelled(s);
                    recorded_cancelled(s, dir, &record.name);
                }
            }
            return vec![Effect::ListSessions];
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
            cancelled(s);
            // Nobody recorded it (the thread runner): the workbench does, from what it saw.
            if let Some(config) = s.run.config.clone() {
                let seconds = s
                    .run
                    .started
                    .map_or(0.0, |t| s.now.saturating_duration_since(t).as_secs_f64());
                return vec![Effect::RecordStopped {
                    config,
                    trace: s.run.trace.clone(),
                    notes: s.run.notes.clone(),
                    seconds,
                }];
            }
        }
    }
    vec![]
}

/// The fit (or a sweep's refitted best) finished: its result is shown; `dir` is where it is
/// recorded, when it is already.
fn finished(s: &mut State, outcome: RunOutcome, dir: Option<PathBuf>) {
    s.run.status = RunStatus::Finished;
    s.run.ended = Some(s.now);
    s.run.cancelling = false;
    let keep = "recorded, not kept yet: s keeps it under a name";
    s.status = match super::sweep::keep_best(s) {
        Some(set) => format!(
            "finished: {} — {set}, the sweep's best, is now in Kernel (3); {keep}",
            headline(&outcome)
        ),
        None => format!("finished: {} — {keep}", headline(&outcome)),
    };
    install_result(s, outcome, dir);
}

/// The fit stopped (its record follows, or is made by the workbench).
fn cancelled(s: &mut State) {
    s.run.status = RunStatus::Cancelled;
    s.run.ended = Some(s.now);
    s.run.cancelling = false;
    s.status = match &s.result {
        Some(f) => format!(
            "{} — the results shown are still those of '{}'",
            stopped_words(s),
            f.outcome.record.name
        ),
        None => format!("{} — r starts a new fit", stopped_words(s)),
    };
}

fn stopped_words(s: &State) -> &'static str {
    if s.run.sweep.is_some() {
        "sweep stopped, no best refitted (its scored rows stay in Run, e exports them)"
    } else {
        "fit stopped"
    }
}

/// The cancelled fit is recorded in `dir` as `name`.
pub(super) fn recorded_cancelled(s: &mut State, dir: PathBuf, name: &str) {
    s.run.recorded = Some(dir);
    s.status = format!(
        "{} — recorded as cancelled ('{name}', with its trace so far; 8 Sessions lists it)",
        stopped_words(s)
    );
}

/// A run the workbench recorded itself: the shown result's place in the store, or the
/// cancelled fit's.
pub(super) fn recorded(s: &mut State, r: Result<PathBuf, String>) -> Vec<Effect> {
    match r {
        Ok(dir) if s.run.status == RunStatus::Cancelled && s.run.recorded.is_none() => {
            let name = s
                .run
                .config
                .as_ref()
                .map(|c| c.name.clone().unwrap_or_else(|| c.default_name()))
                .unwrap_or_default();
            recorded_cancelled(s, dir, &name);
        }
        Ok(dir) => {
            if let Some(f) = s.result.as_mut().filter(|f| f.saved.is_none()) {
                f.outcome.record.kept = false;
                f.saved = Some(dir);
            }
        }
        Err(e) => s.status = format!("the run could not be recorded: {e}"),
    }
    vec![Effect::ListSessions]
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
