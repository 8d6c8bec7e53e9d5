//! The face's side: start a worker on a job, turn its events into the runner's messages, and
//! stop it on cancel — closing its stdin, then killing it if it has not ended `KILL_AFTER`
//! later. A worker that ends without a word is accounted for: its run is read from the store
//! when it recorded one, recorded here from what was seen when it was cancelled, and otherwise
//! reported as a failure that says how the process ended.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::stopped::{record_stopped, Seen};
use super::{Event, Job, Work, KILL_AFTER, WORKER_COMMAND};
use crate::session::{self, new_id};
use crate::train::{read_run, Ended, RunMessage};
use crate::{OvkError, Result};

/// A running worker: its messages arrive on `rx`, ending with exactly one of recorded /
/// failed / cancelled. Dropping the handle stops the worker (and records its run).
pub struct WorkerHandle {
    /// The worker's messages, in order.
    pub rx: Receiver<RunMessage>,
    pid: u32,
    control: Arc<Control>,
    reader: Option<JoinHandle<()>>,
}

/// What the handle and its threads share.
struct Control {
    child: Mutex<Child>,
    /// Closed (taken) to cancel.
    stdin: Mutex<Option<ChildStdin>>,
    cancelled: AtomicBool,
}

/// Start `exe fit-worker` on `work`, recorded in the store at `store`.
pub fn spawn_worker(exe: &Path, store: &Path, work: Work) -> Result<WorkerHandle> {
    let job = Job {
        store: store.to_path_buf(),
        id: free_id(store, &work.run_name()),
        work,
    };
    let mut child = Command::new(exe)
        .arg(WORKER_COMMAND)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            OvkError::internal(format!(
                "cannot start the fit's process ({}): {e}",
                exe.display()
            ))
        })?;
    let (Some(mut stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        let _ = child.kill();
        return Err(OvkError::internal("the fit's process has no pipes"));
    };
    let line = serde_json::to_string(&job).map_err(|e| OvkError::internal(e.to_string()))?;
    if let Err(e) = stdin
        .write_all(line.as_bytes())
        .and_then(|_| stdin.write_all(b"\n"))
        .and_then(|_| stdin.flush())
    {
        let _ = child.kill();
        let _ = child.wait();
        return Err(OvkError::internal(format!(
            "cannot hand the job to the fit's process: {e}"
        )));
    }
    let pid = child.id();
    let control = Arc::new(Control {
        child: Mutex::new(child),
        stdin: Mutex::new(Some(stdin)),
        cancelled: AtomicBool::new(false),
    });
    let tail = keep_tail(stderr);
    let (tx, rx) = channel();
    let reader = {
        let control = control.clone();
        std::thread::Builder::new()
            .name("ovk-worker-reader".into())
            .spawn(move || read_events(stdout, job, control, tail, tx))
            .map_err(|e| OvkError::internal(format!("cannot start a thread: {e}")))?
    };
    Ok(WorkerHandle {
        rx,
        pid,
        control,
        reader: Some(reader),
    })
}

impl WorkerHandle {
    /// Stop the run: the worker records it as cancelled (or it is killed, and the run is
    /// recorded here); the last message follows.
    pub fn cancel(&self) {
        if self.control.cancelled.swap(true, Ordering::AcqRel) {
            return;
        }
        if let Ok(mut stdin) = self.control.stdin.lock() {
            stdin.take(); // closed: the worker's cue
        }
        let control = self.control.clone();
        let _ = std::thread::Builder::new()
            .name("ovk-worker-kill".into())
            .spawn(move || {
                let until = Instant::now() + KILL_AFTER;
                while Instant::now() < until {
                    if control.exited() {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                if let Ok(mut child) = control.child.lock() {
                    let _ = child.kill();
                }
            });
    }

    /// The worker's process id (its CPU time and memory are its run's).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The worker's resident memory now and its peak so far, in bytes (Linux; `None`
    /// elsewhere or once it has ended): the run's own, nothing of the face's.
    pub fn memory(&self) -> Option<(u64, u64)> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid)).ok()?;
        let kib = |key: &str| -> Option<u64> {
            let line = status.lines().find(|l| l.starts_with(key))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        };
        Some((kib("VmRSS:")? * 1024, kib("VmHWM:")? * 1024))
    }
}

impl Drop for WorkerHandle {
    /// The face is going: stop the worker and wait until its run is recorded (at most about
    /// `KILL_AFTER`).
    fn drop(&mut self) {
        self.cancel();
        if let Some(t) = self.reader.take() {
            let _ = t.join();
        }
    }
}

impl Control {
    fn exited(&self) -> bool {
        self.child
            .lock()
            .map(|mut c| !matches!(c.try_wait(), Ok(None)))
            .unwrap_or(true)
    }

    /// Wait for the process to end, killing it if it lingers after closing its stdout.
    fn wait(&self) -> Option<ExitStatus> {
        let until = Instant::now() + KILL_AFTER;
        loop {
            if let Ok(mut c) = self.child.lock() {
                match c.try_wait() {
                    Ok(Some(status)) => return Some(status),
                    Ok(None) if Instant::now() >= until => {
                        let _ = c.kill();
                        return c.wait().ok();
                    }
                    Ok(None) => {}
                    Err(_) => return None,
                }
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// A fresh session id for `name` that no session of `store` has.
fn free_id(store: &Path, name: &str) -> String {
    let base = new_id(name);
    (1..)
        .map(|k| {
            if k == 1 {
                base.clone()
            } else {
                format!("{base}-{k}")
            }
        })
        .find(|id| store.join(id).symlink_metadata().is_err())
        .unwrap_or(base)
}

/// The last few kilobytes the worker wrote on stderr (a panic's or an abort's last words).
fn keep_tail(mut stderr: impl Read + Send + 'static) -> JoinHandle<String> {
    const KEEP: usize = 4096;
    std::thread::spawn(move || {
        let mut kept: Vec<u8> = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = stderr.read(&mut buf) {
            if n == 0 {
                break;
            }
            kept.extend_from_slice(&buf[..n]);
            if kept.len() > 2 * KEEP {
                kept.drain(..kept.len() - KEEP);
            }
        }
        let start = kept.len().saturating_sub(KEEP);
        String::from_utf8_lossy(&kept[start..]).into_owned()
    })
}

/// Forward the worker's events until it ends, then make sure exactly one ending was sent.
fn read_events(
    stdout: impl Read,
    job: Job,
    control: Arc<Control>,
    tail: JoinHandle<String>,
    tx: Sender<RunMessage>,
) {
    let start = Instant::now();
    let mut seen = Seen::default();
    let mut ended = false;
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        // A line that is no event (a library printing on stdout) is not the run's.
        let Ok(event) = serde_json::from_str::<Event>(&line) else {
            continue;
        };
        let msg = match event {
            Event::Phase { phase, total } => RunMessage::Phase { phase, total },
            Event::Record { record } => {
                seen.trace.push(record.clone());
                RunMessage::Record(record)
            }
            Event::Step { done, total } => RunMessage::Step { done, total },
            Event::Note { text } => {
                seen.notes.push(text.clone());
                RunMessage::Note(text)
            }
            Event::Estimate { phases } => RunMessage::Estimate(phases),
            Event::SweepRow { row } => {
                seen.rows.push(row.clone());
                RunMessage::SweepRow(Box::new(row))
            }
            Event::Recorded { dir } => {
                ended = true;
                read_back(dir)
            }
            Event::Failed { message, exit_code } => {
                ended = true;
                RunMessage::Failed { message, exit_code }
            }
        };
        if tx.send(msg).is_err() {
            break; // nobody listens: the drop that follows stops the worker
        }
        if ended {
            break;
        }
    }
    let status = control.wait();
    let tail = tail.join().unwrap_or_default();
    if ended {
        return;
    }
    let dir = job.store.join(&job.id);
    let msg = if dir.join("session.json").is_file() {
        // recorded, then killed before it could say so
        read_back(dir)
    } else if control.cancelled.load(Ordering::Acquire) {
        match record_stopped(&job, &seen, start.elapsed().as_secs_f64()) {
            Ok(dir) => read_back(dir),
            Err(e) => {
                let _ = tx.send(RunMessage::Note(format!(
                    "the cancelled run could not be recorded: {e}"
                )));
                RunMessage::Cancelled
            }
        }
    } else {
        RunMessage::Failed {
            message: died(status, &tail),
            exit_code: 1,
        }
    };
    let _ = tx.send(msg);
}

/// The recorded run in `dir`, as the face's last message.
fn read_back(dir: PathBuf) -> RunMessage {
    let ended = match session::load(&dir) {
        Ok(l) if !l.record.status.is_finished() => Ok(Ended::Cancelled(Box::new(l.record))),
        Ok(_) => read_run(&dir).map(|o| Ended::Finished(Box::new(o))),
        Err(e) => Err(e),
    };
    match ended {
        Ok(ended) => RunMessage::Recorded { dir, ended },
        Err(e) => RunMessage::Failed {
            message: format!(
                "the run is recorded in {} but could not be read back: {e}",
                dir.display()
            ),
            exit_code: e.exit_code(),
        },
    }
}

/// How a worker that ended without a word ended, in words.
fn died(status: Option<ExitStatus>, stderr: &str) -> String {
    let last = stderr
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .map(|l| crate::util::text::display_safe(l).to_string());
    let said = last
        .as_ref()
        .map_or_else(String::new, |l| format!(" — its last words: {l}"));
    let out_of_memory = last
        .as_deref()
        .is_some_and(|l| l.contains("memory allocation of"));
    #[cfg(unix)]
    let signal = {
        use std::os::unix::process::ExitStatusExt;
        status.and_then(|s| s.signal())
    };
    #[cfg(not(unix))]
    let signal: Option<i32> = None;
    match (signal, status.and_then(|s| s.code())) {
        _ if out_of_memory => format!(
            "the fit ran out of memory and its process ended{said}; a low-rank input kernel \
             (input rank in the Kernel pane) or fewer rows needs far less"
        ),
        (Some(libc::SIGKILL), _) => "the fit's process was killed by the system (SIGKILL) — \
             most often for using more memory than the machine has free; a low-rank input \
             kernel (input rank in the Kernel pane) or fewer rows needs far less"
            .to_string(),
        (Some(libc::SIGABRT), _) => format!("the fit's process aborted{said}"),
        (Some(sig), _) => format!("the fit's process crashed (signal {sig}){said}"),
        (None, Some(code)) => {
            format!("the fit's process ended with status {code} without a result{said}")
        }
        (None, None) => format!("the fit's process ended without a result{said}"),
    }
}
