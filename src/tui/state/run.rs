//! A fit in progress or just ended: phase, trace, notes, timing.

use std::time::Instant;

use ovk_core::methods::{Phase, TraceRecord};
use ovk_core::train::RunConfig;

#[derive(Debug, Clone, PartialEq)]
pub enum RunStatus {
    Idle,
    Running,
    Finished,
    Failed(String),
    Cancelled,
}

#[derive(Debug, Clone)]
pub struct RunState {
    pub status: RunStatus,
    pub started: Option<Instant>,
    pub ended: Option<Instant>,
    pub phase: Option<Phase>,
    pub phase_total: Option<usize>,
    pub phase_started: Option<Instant>,
    /// Records received since the current phase began.
    pub phase_done: usize,
    pub trace: Vec<TraceRecord>,
    pub notes: Vec<String>,
    pub cancelling: bool,
    /// The configuration this fit runs with (the form may be edited meanwhile).
    pub config: Option<RunConfig>,
    /// Set when this run is a sweep: its plan and the rows scored so far.
    pub sweep: Option<super::SweepState>,
    /// The floor seconds of the long phases without steps, as the fit estimated them.
    pub estimate: Vec<(Phase, f64)>,
    /// The worker's resident memory and its peak so far (bytes): the fit's own.
    pub memory: Option<(u64, u64)>,
    /// Where the cancelled fit is recorded, once it is.
    pub recorded: Option<std::path::PathBuf>,
}

impl RunState {
    /// The estimated seconds of the current phase, when the fit gave one.
    pub fn phase_estimate(&self) -> Option<f64> {
        let now = self.phase?;
        self.estimate
            .iter()
            .find(|(p, _)| *p == now)
            .map(|(_, s)| *s)
            .filter(|s| s.is_finite() && *s > 0.0)
    }
}

impl RunState {
    pub fn new() -> Self {
        RunState {
            status: RunStatus::Idle,
            started: None,
            ended: None,
            phase: None,
            phase_total: None,
            phase_started: None,
            phase_done: 0,
            trace: Vec::new(),
            notes: Vec::new(),
            cancelling: false,
            config: None,
            sweep: None,
            estimate: Vec::new(),
            memory: None,
            recorded: None,
        }
    }
}

impl Default for RunState {
    fn default() -> Self {
        Self::new()
    }
}
