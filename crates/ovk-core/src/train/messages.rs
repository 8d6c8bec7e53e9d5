//! What the background runner tells its face (TUI or CLI), in order: phases, records and notes
//! while fitting (a sweep: its rows, then the refit of the best), then exactly one of
//! finished / recorded / failed / cancelled.

use std::path::PathBuf;

use crate::methods::{Phase, TraceRecord};

use super::{Ended, RunOutcome};

/// What a running fit (thread or worker process) tells its face, in order.
#[derive(Debug)]
pub enum RunMessage {
    /// A phase began.
    Phase {
        /// The phase that began.
        phase: Phase,
        /// Expected number of steps in this phase, when known (for an ETA).
        total: Option<usize>,
    },
    /// One iteration's (or path point's) trace record.
    Record(TraceRecord),
    /// Progress inside a phase without trace records: `done` of `total` steps.
    Step {
        /// Steps done so far.
        done: usize,
        /// Steps in the phase.
        total: usize,
    },
    /// A remark for the user.
    Note(String),
    /// Before the fit: the floor seconds of its long phases without steps.
    Estimate(Vec<(Phase, f64)>),
    /// A sweep scored one configuration (its rows arrive before the best one is refitted).
    SweepRow(Box<super::sweep::SweepRow>),
    /// The run finished; nothing has recorded it yet (the thread runner).
    Finished(Box<RunOutcome>),
    /// The run ended and is recorded in the session store at `dir`, not yet kept: finished
    /// (read back, matrices and all) or cancelled (its record: configuration, trace so far).
    /// The worker process ends this way.
    Recorded {
        /// The run's session directory.
        dir: PathBuf,
        /// Whether it finished or was cancelled, with what was read back.
        ended: Ended,
    },
    /// The run failed: the message for the user and the exit status to end with.
    Failed {
        /// The message for the user.
        message: String,
        /// The exit status to end with.
        exit_code: i32,
    },
    /// The run stopped and nothing has recorded it (the thread runner).
    Cancelled,
}
