//! A fit on its own thread, talking through a channel. Cancellation is a shared flag the
//! method polls once per iteration; dropping the handle cancels too, so an abandoned fit
//! frees its memory instead of running on — once the method polls again: a decomposition in
//! progress runs to its end. The workbench runs its fits in a worker process instead
//! (`train::worker`), which a cancel can kill; this runner serves tests and embedders.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;

use super::messages::RunMessage;
use super::{pipeline, sweep, RunConfig, RunOutcome};
use crate::methods::{Observer, Phase, TraceRecord};
use crate::OvkError;

/// A fit running on a thread: its messages, and the way to cancel it.
pub struct RunHandle {
    /// The run's messages, ending with one that says how it ended.
    pub rx: Receiver<RunMessage>,
    cancel: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl RunHandle {
    /// Ask the fit to stop; a `Cancelled` message follows.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// Wait for the fit's thread to end (after its last message); everything it allocated is
    /// freed by then.
    pub fn join(mut self) {
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for RunHandle {
    fn drop(&mut self) {
        self.cancel();
    }
}

/// Start `config` on a background thread.
pub fn spawn(config: RunConfig) -> RunHandle {
    spawn_job(move |obs| pipeline::run(&config, obs))
}

/// A cross-validated sweep on its own thread: one `SweepRow` message per scored configuration,
/// then the best configuration refitted on the whole training part (`sweep::refit_best`), ending
/// like a fit. Cancelling stops the sweep's fits and the refit alike.
pub fn spawn_sweep(configs: Vec<RunConfig>, folds: Option<usize>, jobs: usize) -> RunHandle {
    spawn_search(configs, folds, None, jobs)
}

/// `spawn_sweep`, or successive halving keeping 1/factor per rung when `halving` says so.
pub fn spawn_search(
    configs: Vec<RunConfig>,
    folds: Option<usize>,
    halving: Option<usize>,
    jobs: usize,
) -> RunHandle {
    spawn_job(move |obs| {
        let tx = obs.tx.clone();
        let cancel = obs.cancel.clone();
        let result = super::search::run_search(&configs, folds, halving, jobs, cancel, |row| {
            let _ = tx.send(RunMessage::SweepRow(Box::new(row.clone())));
        })?;
        if result.interrupted {
            return Err(OvkError::Cancelled);
        }
        sweep::refit_best(&configs, &result, obs)
    })
}

fn spawn_job(
    job: impl FnOnce(&mut ChannelObserver) -> crate::Result<RunOutcome> + Send + 'static,
) -> RunHandle {
    let (tx, rx) = channel();
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = cancel.clone();
    let thread = std::thread::Builder::new()
        .name("ovk-fit".into())
        .spawn(move || {
            let mut obs = ChannelObserver {
                tx: tx.clone(),
                cancel: flag,
            };
            let msg = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(&mut obs)))
            {
                Ok(Ok(outcome)) => RunMessage::Finished(Box::new(outcome)),
                Ok(Err(OvkError::Cancelled)) => RunMessage::Cancelled,
                Ok(Err(e)) => RunMessage::Failed {
                    message: e.to_string(),
                    exit_code: e.exit_code(),
                },
                Err(panic) => RunMessage::Failed {
                    message: format!("internal error: the fit panicked: {}", panic_text(&panic)),
                    exit_code: 1,
                },
            };
            let _ = tx.send(msg);
        })
        .expect("spawning a thread");
    RunHandle {
        rx,
        cancel,
        thread: Some(thread),
    }
}

pub(super) fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// Forwards the fit's progress to the channel; a closed channel (face gone) cancels the fit.
pub(crate) struct ChannelObserver {
    tx: Sender<RunMessage>,
    cancel: Arc<AtomicBool>,
}

impl Observer for ChannelObserver {
    fn phase(&mut self, phase: Phase, total: Option<usize>) {
        if self.tx.send(RunMessage::Phase { phase, total }).is_err() {
            self.cancel.store(true, Ordering::Relaxed);
        }
    }
    fn record(&mut self, rec: &TraceRecord) {
        if self.tx.send(RunMessage::Record(rec.clone())).is_err() {
            self.cancel.store(true, Ordering::Relaxed);
        }
    }
    fn step(&mut self, done: usize, total: usize) {
        if self.tx.send(RunMessage::Step { done, total }).is_err() {
            self.cancel.store(true, Ordering::Relaxed);
        }
    }
    fn note(&mut self, msg: &str) {
        let _ = self.tx.send(RunMessage::Note(msg.to_string()));
    }
    fn estimate(&mut self, phases: &[(Phase, f64)]) {
        let _ = self.tx.send(RunMessage::Estimate(phases.to_vec()));
    }
    fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}
