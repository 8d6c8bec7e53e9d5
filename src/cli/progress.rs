//! Progress of a headless fit on stderr: a redrawn status line when stderr is a terminal,
//! plain lines (phases, and at most one record a second) otherwise. Ctrl-C cancels the fit.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ovk_core::methods::{Observer, Phase, TraceRecord};
use ovk_core::session::{SessionRecord, Store};
use ovk_core::train::RunConfig;

/// How long a cancelled fit may take to stop by itself before the watchdog ends the process.
const GRACE: Duration = Duration::from_millis(800);

pub struct CliProgress {
    tty: bool,
    start: Instant,
    last_line: Instant,
    phase: Option<Phase>,
    /// When the current phase began (its steps' pace gives the time left).
    phase_started: Instant,
    total: Option<usize>,
    cancel: Arc<AtomicBool>,
    dirty: bool,
    /// The notes already printed while the fit ran.
    noted: Vec<String>,
    /// Every trace record and note so far, for the record of a run the watchdog ends.
    seen: Arc<Mutex<(Vec<TraceRecord>, Vec<String>)>>,
    /// Who records the run: nobody yet, the fit's own thread, or the watchdog.
    recorder: Arc<AtomicU8>,
}

const NOBODY: u8 = 0;
const THE_FIT: u8 = 1;
const THE_WATCHDOG: u8 = 2;

impl CliProgress {
    pub fn new() -> Self {
        let cancel = super::signals::flag();
        CliProgress {
            tty: std::io::stderr().is_terminal(),
            start: Instant::now(),
            last_line: Instant::now() - Duration::from_secs(10),
            phase: None,
            phase_started: Instant::now(),
            total: None,
            cancel,
            dirty: false,
            noted: Vec::new(),
            seen: Arc::default(),
            recorder: Arc::default(),
        }
    }

    /// A fit that does not notice Ctrl-C within a second (inside one long decomposition that
    /// cannot be interrupted) is ended by a watchdog with exit status 130, which first records
    /// the run so far in `store` (its configuration, trace and notes, as cancelled) — unless
    /// the fit's own thread is already recording it (`claim_record`), whose exit then follows.
    /// A save in progress is atomic (temp folder + rename).
    pub fn record_when_cancelled(&self, config: &RunConfig, store: &Store) {
        let (flag, seen, recorder) = (
            self.cancel.clone(),
            self.seen.clone(),
            self.recorder.clone(),
        );
        let (config, root, start) = (config.clone(), store.root().to_path_buf(), self.start);
        let _ = std::thread::Builder::new()
            .name("ovk-cancel-watchdog".into())
            .spawn(move || {
                super::signals::wait_for_signal(&flag);
                std::thread::sleep(GRACE);
                if recorder
                    .compare_exchange(NOBODY, THE_WATCHDOG, Ordering::AcqRel, Ordering::Acquire)
                    .is_err()
                {
                    return; // the fit returned and records the run itself
                }
                let (trace, notes) = seen.lock().map(|s| s.clone()).unwrap_or_default();
                let record =
                    SessionRecord::stopped(&config, trace, notes, start.elapsed().as_secs_f64());
                let saved = Store::open(Some(&root)).and_then(|s| s.save(&record, &[]));
                match saved {
                    Ok(dir) => errln!(
                        "\ncancelled: the run so far is recorded as {}",
                        dir.display()
                    ),
                    Err(e) => errln!("\ncancelled (the run could not be recorded: {e})"),
                }
                // Whatever the fit's thread had in flight goes with it.
                ovk_core::session::abandon();
                std::process::exit(130);
            });
    }

    /// Claim the recording of the run for the fit's thread; false when the watchdog has it
    /// (it records the run and ends the process).
    pub fn claim_record(&self) -> bool {
        self.recorder
            .compare_exchange(NOBODY, THE_FIT, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// The session's notes this observer has not printed while the fit ran (the data's, the
    /// baseline's, the ones a method returns without announcing).
    pub fn unseen<'a>(&self, notes: &'a [String]) -> Vec<&'a str> {
        notes
            .iter()
            .filter(|n| !self.noted.contains(n))
            .map(String::as_str)
            .collect()
    }

    /// Ends the status line so later output starts on a fresh line.
    pub fn finish(&mut self) {
        if self.tty && self.dirty {
            errln!();
            self.dirty = false;
        }
    }

    /// One progress line: rewritten in place on a terminal, appended otherwise.
    fn emit(&mut self, line: &str) {
        if self.tty {
            err!("\r\x1b[2K{line}");
            let _ = std::io::stderr().flush();
            self.dirty = true;
        } else {
            errln!("{line}");
        }
    }

    fn elapsed(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }
}

impl Observer for CliProgress {
    fn phase(&mut self, phase: Phase, total: Option<usize>) {
        self.phase = Some(phase);
        self.phase_started = Instant::now();
        // a path's total counts fits, not the iterations its records number
        self.total = total.filter(|_| phase != Phase::Path);
        self.finish();
        errln!("[{:7.2}s] {}", self.elapsed(), phase.label());
    }

    fn record(&mut self, rec: &TraceRecord) {
        if let Ok(mut s) = self.seen.lock() {
            s.0.push(rec.clone());
        }
        let every = if self.tty {
            Duration::from_millis(100)
        } else {
            Duration::from_secs(1)
        };
        if self.last_line.elapsed() < every {
            return;
        }
        self.last_line = Instant::now();
        let of = self.total.map(|t| format!("/{t}")).unwrap_or_default();
        let mut line = format!("  iter {}{of}  objective {:.8e}", rec.iter, rec.objective);
        if let Some(r) = rec.residual {
            line.push_str(&format!("  residual {r:.2e}"));
        }
        if let Some(l) = rec.lambda {
            line.push_str(&format!("  λ {l:.3e}"));
        }
        line.push_str(&format!("  {:.1}s", self.elapsed()));
        if let (Some(t), true) = (self.total, rec.iter > 0) {
            let per = rec.elapsed_ms / 1e3 / rec.iter as f64;
            let eta = per * t.saturating_sub(rec.iter) as f64;
            line.push_str(&format!("  (at most {eta:.0}s left)"));
        }
        self.emit(&line);
    }

    fn step(&mut self, done: usize, total: usize) {
        let every = if self.tty {
            Duration::from_millis(100)
        } else {
            Duration::from_secs(1)
        };
        if done < total && self.last_line.elapsed() < every {
            return;
        }
        self.last_line = Instant::now();
        let what = self.phase.map_or("", |p| p.label());
        let mut line = format!("  {what} {done}/{total}  {:.1}s", self.elapsed());
        if done > 0 && done < total {
            let per = self.phase_started.elapsed().as_secs_f64() / done as f64;
            let left = per * (total - done) as f64;
            let digits = usize::from(left < 10.0);
            line.push_str(&format!("  (about {left:.digits$}s left)"));
        }
        self.emit(&line);
    }

    fn note(&mut self, msg: &str) {
        if let Ok(mut s) = self.seen.lock() {
            s.1.push(msg.to_string());
        }
        self.finish();
        match msg.strip_prefix(ovk_core::train::WARNING) {
            Some(w) => errln!("  warning: {w}"),
            None => errln!("  note: {msg}"),
        }
        self.noted.push(msg.to_string());
    }

    fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}
