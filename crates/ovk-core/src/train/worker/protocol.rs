//! The worker's wire format: the job in (one JSON line), events out (one JSON object a line).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::methods::{Phase, TraceRecord};
use crate::train::sweep::SweepRow;
use crate::train::RunConfig;

/// What a worker runs, and where it records the run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Job {
    /// The session store.
    pub store: PathBuf,
    /// The id the run is recorded under, chosen by the face: after a worker died without a
    /// word, the face looks there before recording the run itself.
    pub id: String,
    pub work: Work,
}

/// The work of one job: a fit or a sweep.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Work {
    /// One run (its `--cv` folds first, when asked).
    Fit(Box<RunConfig>),
    /// Score every configuration (by `folds`-fold CV, or on the test part), then refit the
    /// best on the whole training part.
    Sweep {
        /// The configurations to score.
        configs: Vec<RunConfig>,
        /// Folds of the cross-validation (None: score on the test part).
        folds: Option<usize>,
        /// Fits run at a time.
        jobs: usize,
        /// Successive halving keeping 1/factor of the configurations per rung, when set.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        halving: Option<usize>,
    },
}

impl Work {
    /// The configuration the record of a stopped run names: the fit's, or a sweep's first
    /// (named `<name>-sweep`).
    pub fn config(&self) -> Option<RunConfig> {
        match self {
            Work::Fit(c) => Some((**c).clone()),
            Work::Sweep { configs, .. } => configs.first().map(|c| {
                let mut c = c.clone();
                c.name = Some(format!(
                    "{}-sweep",
                    c.name.clone().unwrap_or_else(|| c.default_name())
                ));
                c
            }),
        }
    }

    /// The name the finished run will carry (a sweep's refitted best: `<name>-best`).
    pub(crate) fn run_name(&self) -> String {
        match self {
            Work::Fit(c) => c.name.clone().unwrap_or_else(|| c.default_name()),
            Work::Sweep { configs, .. } => configs.first().map_or_else(
                || "sweep-best".into(),
                |c| {
                    format!(
                        "{}-best",
                        c.name.clone().unwrap_or_else(|| c.default_name())
                    )
                },
            ),
        }
    }
}

/// One line of the worker's stdout.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// A phase began (`Observer::phase`).
    Phase {
        /// The phase that began.
        phase: Phase,
        /// Expected number of steps in this phase, when known.
        total: Option<usize>,
    },
    /// A trace record (`Observer::record`).
    Record {
        /// The iteration's (or path point's) record.
        record: TraceRecord,
    },
    /// Progress inside a phase (`Observer::step`).
    Step {
        /// Steps done so far.
        done: usize,
        /// Steps in the phase.
        total: usize,
    },
    /// A remark for the user (`Observer::note`).
    Note {
        /// The remark.
        text: String,
    },
    /// The floor seconds of the long phases (`Observer::estimate`).
    Estimate {
        /// Each long phase with its floor in seconds.
        phases: Vec<(Phase, f64)>,
    },
    /// A sweep scored one configuration.
    SweepRow {
        /// The configuration's scores.
        row: SweepRow,
    },
    /// The run is in the store at `dir`, finished or cancelled (its record's status says).
    Recorded {
        /// The run's session directory.
        dir: PathBuf,
    },
    /// The job failed: the message for the user and the exit status to end with.
    Failed {
        /// The message for the user.
        message: String,
        /// The exit status to end with.
        exit_code: i32,
    },
}

impl Event {
    /// The event as one line of JSON (no newline inside: serde_json escapes them).
    pub(crate) fn to_line(&self) -> String {
        let mut s = serde_json::to_string(self).unwrap_or_else(|e| {
            format!(
                "{{\"event\":\"failed\",\"message\":\"unserializable event: {}\",\"exit_code\":1}}",
                e.to_string().replace(['"', '\\'], "'")
            )
        });
        s.push('\n');
        s
    }
}
