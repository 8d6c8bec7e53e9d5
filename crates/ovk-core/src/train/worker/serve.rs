//! The worker's side: read the job, run it with an observer that writes each message as a
//! line of JSON, record the run in the store (not kept), and say where. Its stdin closing (the
//! face cancelled, or died) cancels the run; a run that does not stop within `GRACE` is
//! recorded by the watchdog, from what the observer saw, and the process ends.

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::stopped::{record_stopped, Seen};
use super::{Event, Job, Work, GRACE};
use crate::methods::{Observer, Phase, TraceRecord};
use crate::session::details::{key, Details, Memory};
use crate::session::Store;
use crate::train::runner::panic_text;
use crate::train::{pipeline, sweep, Ended};
use crate::{OvkError, Result};

/// Exit status of a worker whose run was cancelled (as `ovk run`'s).
const CANCELLED: i32 = 130;

/// Serve the job on the first line of `input`, writing events to `output`; the process's exit
/// status. Any later line of `input`, or its end, cancels the run.
pub fn serve(mut input: impl BufRead + Send + 'static, output: impl Write + Send + 'static) -> i32 {
    // The workbench's terminal runs beside this process: one core stays its own.
    crate::linalg::configure_parallelism_leaving_a_core();
    let wire = Wire(Arc::new(Mutex::new(Box::new(output))));
    let mut first = String::new();
    let job: Job = match input
        .read_line(&mut first)
        .map_err(|e| e.to_string())
        .and_then(|_| serde_json::from_str(&first).map_err(|e| e.to_string()))
    {
        Ok(job) => job,
        Err(e) => {
            wire.send(&Event::Failed {
                message: format!("internal error: the worker could not read its job: {e}"),
                exit_code: 1,
            });
            return 1;
        }
    };
    let shared = Arc::new(Shared {
        cancel: Arc::new(AtomicBool::new(false)),
        seen: Mutex::default(),
        recorder: AtomicU8::new(NOBODY),
        start: Instant::now(),
    });
    watch_input(input, job.clone(), shared.clone(), wire.clone());
    let mut obs = WireObserver {
        wire: wire.clone(),
        shared: shared.clone(),
    };
    let ended = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&job, &mut obs)))
        .unwrap_or_else(|p| {
            Err(OvkError::internal(format!(
                "the fit panicked: {}",
                panic_text(&p)
            )))
        });
    if !shared.claim(THE_RUN) {
        // The watchdog is recording the run and ends the process.
        loop {
            std::thread::park();
        }
    }
    let (event, status) = finish(&job, ended, &shared);
    wire.send(&event);
    status
}

/// Run the job to its end (finished or cancelled, with its record).
fn run(job: &Job, obs: &mut WireObserver) -> Result<Ended> {
    match &job.work {
        Work::Fit(config) => pipeline::run_to_end(config, obs),
        Work::Sweep {
            configs,
            folds,
            jobs,
            halving,
        } => {
            let wire = obs.wire.clone();
            let shared = obs.shared.clone();
            let on_row = |row: &sweep::SweepRow| {
                shared.seen(|s| s.rows.push(row.clone()));
                wire.send(&Event::SweepRow { row: row.clone() });
            };
            let cancel = shared.cancel.clone();
            let result =
                crate::train::search::run_search(configs, *folds, *halving, *jobs, cancel, on_row)?;
            if result.interrupted {
                return Err(OvkError::Cancelled);
            }
            sweep::refit_best_to_end(configs, &result, obs)
        }
    }
}

/// Record what the run ended with; the event that says so and the exit status.
fn finish(job: &Job, ended: Result<Ended>, shared: &Shared) -> (Event, i32) {
    let recorded = |dir: Result<std::path::PathBuf>, status: i32| match dir {
        Ok(dir) => (Event::Recorded { dir }, status),
        Err(e) => (
            Event::Failed {
                message: format!("the run ended but could not be recorded: {e}"),
                exit_code: e.exit_code(),
            },
            e.exit_code(),
        ),
    };
    let store = || Store::open(Some(&job.store));
    match ended {
        Ok(Ended::Finished(outcome)) => {
            let mut record = outcome.record;
            record.id = job.id.clone();
            record.kept = false;
            // Measured in this process, which ran nothing but this run.
            if let Some(mut m) = Details::of(&record.details).memory() {
                m.process = Some(Memory::WORKER.into());
                record.details.insert(key::MEMORY.into(), m.to_json());
            }
            recorded(store().and_then(|s| s.save(&record, &outcome.matrices)), 0)
        }
        Ok(Ended::Cancelled(mut record)) => {
            record.id = job.id.clone();
            record.kept = false;
            recorded(store().and_then(|s| s.save(&record, &[])), CANCELLED)
        }
        Err(OvkError::Cancelled) => {
            let seen = shared.seen.lock().map(|s| s.clone()).unwrap_or_default();
            let secs = shared.start.elapsed().as_secs_f64();
            recorded(record_stopped(job, &seen, secs), CANCELLED)
        }
        Err(e) => (
            Event::Failed {
                message: e.to_string(),
                exit_code: e.exit_code(),
            },
            e.exit_code(),
        ),
    }
}

/// Cancel the run when `input` says anything more or ends; then give it `GRACE` to stop, and
/// if it has not, record what was seen and end the process.
fn watch_input(
    mut input: impl BufRead + Send + 'static,
    job: Job,
    shared: Arc<Shared>,
    wire: Wire,
) {
    let _ = std::thread::Builder::new()
        .name("ovk-worker-watch".into())
        .spawn(move || {
            let mut line = String::new();
            let _ = input.read_line(&mut line);
            shared.cancel.store(true, Ordering::Relaxed);
            std::thread::sleep(GRACE);
            if !shared.claim(THE_WATCHDOG) {
                return; // the run returned and records itself
            }
            let (event, _) = finish(&job, Err(OvkError::Cancelled), &shared);
            wire.send(&event);
            std::process::exit(CANCELLED);
        });
}

const NOBODY: u8 = 0;
const THE_RUN: u8 = 1;
const THE_WATCHDOG: u8 = 2;

/// What the run's thread and the watchdog share.
struct Shared {
    cancel: Arc<AtomicBool>,
    seen: Mutex<Seen>,
    /// Who records the run: nobody yet, the run's own thread, or the watchdog.
    recorder: AtomicU8,
    start: Instant,
}

impl Shared {
    fn claim(&self, who: u8) -> bool {
        self.recorder
            .compare_exchange(NOBODY, who, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    fn seen(&self, f: impl FnOnce(&mut Seen)) {
        if let Ok(mut s) = self.seen.lock() {
            f(&mut s);
        }
    }
}

/// The worker's stdout, shared by the run and the watchdog; one event is one flushed line.
#[derive(Clone)]
struct Wire(Arc<Mutex<Box<dyn Write + Send>>>);

impl Wire {
    /// False when the face is gone (the pipe closed).
    fn send(&self, event: &Event) -> bool {
        let Ok(mut out) = self.0.lock() else {
            return false;
        };
        out.write_all(event.to_line().as_bytes()).is_ok() && out.flush().is_ok()
    }
}

struct WireObserver {
    wire: Wire,
    shared: Arc<Shared>,
}

impl WireObserver {
    fn send(&self, event: Event) {
        if !self.wire.send(&event) {
            self.shared.cancel.store(true, Ordering::Relaxed);
        }
    }
}

impl Observer for WireObserver {
    fn phase(&mut self, phase: Phase, total: Option<usize>) {
        self.send(Event::Phase { phase, total });
    }
    fn record(&mut self, rec: &TraceRecord) {
        self.shared.seen(|s| s.trace.push(rec.clone()));
        self.send(Event::Record {
            record: rec.clone(),
        });
    }
    fn step(&mut self, done: usize, total: usize) {
        self.send(Event::Step { done, total });
    }
    fn note(&mut self, msg: &str) {
        self.shared.seen(|s| s.notes.push(msg.to_string()));
        self.send(Event::Note {
            text: msg.to_string(),
        });
    }
    fn estimate(&mut self, phases: &[(Phase, f64)]) {
        self.send(Event::Estimate {
            phases: phases.to_vec(),
        });
    }
    fn is_cancelled(&self) -> bool {
        self.shared.cancel.load(Ordering::Relaxed)
    }
}
