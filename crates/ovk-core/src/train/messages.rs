//! What the background runner tells its face (TUI or CLI), in order: phases, records and notes
//! while fitting (a sweep: its rows, then the refit of the best), then exactly one of
//! finished / failed / cancelled.

use crate::methods::{Phase, TraceRecord};

use super::RunOutcome;

#[derive(Debug)]
pub enum RunMessage {
    Phase {
        phase: Phase,
        /// Expected number of steps in this phase, when known (for an ETA).
        total: Option<usize>,
    },
    Record(TraceRecord),
    /// Progress inside a phase without trace records: `done` of `total` steps.
    Step {
        done: usize,
        total: usize,
    },
    Note(String),
    /// A sweep scored one configuration (its rows arrive before the best one is refitted).
    SweepRow(Box<super::sweep::SweepRow>),
    Finished(Box<RunOutcome>),
    Failed {
        message: String,
        exit_code: i32,
    },
    Cancelled,
}
