//! A run in a process of its own, which a cancel can kill. The face (the workbench) starts
//! `ovk` itself as a worker (the hidden `fit-worker` command), hands it the job as one JSON
//! line on stdin, and reads the runner's messages back as JSON lines on stdout. The worker
//! records the run in the session store itself, finished or cancelled, so nothing is lost when
//! the face dies. Cancelling closes the worker's stdin: the run stops at its next check and
//! records itself; inside a decomposition that cannot be interrupted the worker's watchdog
//! records the run so far and ends the process; a worker that still runs is killed. Either
//! way its CPU and memory are free within about a second.

mod client;
mod protocol;
mod serve;
mod stopped;

pub use client::{spawn_worker, WorkerHandle};
pub(crate) use protocol::Job;
pub use protocol::{Event, Work};
pub use serve::serve;

/// The hidden subcommand of `ovk` that serves one job.
pub const WORKER_COMMAND: &str = "fit-worker";

/// How long a cancelled run may take to stop by itself before the worker's watchdog records
/// it and ends the process.
const GRACE: std::time::Duration = std::time::Duration::from_millis(400);

/// How long after a cancel the face kills a worker that has not ended (its watchdog failed).
const KILL_AFTER: std::time::Duration = std::time::Duration::from_millis(1200);
