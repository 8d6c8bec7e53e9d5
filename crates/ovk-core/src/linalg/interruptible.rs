//! One-shot decompositions cannot poll a cancel flag: faer runs an n×n eigendecomposition or
//! Cholesky factorisation to the end once started, minutes at n = 10⁴. `interruptible` runs such
//! a call on a worker thread and waits for it while polling `cancelled`; on cancellation it
//! returns at once and leaves the worker to finish and drop its result, so the face (Esc in the
//! TUI, Ctrl-C headless) is answered within a fraction of a second. The cost: the abandoned
//! worker keeps one core and its matrices until its call ends.

use std::sync::mpsc;
use std::time::Duration;

use crate::{OvkError, Result};

/// How often the waiting thread looks at the cancel flag.
const POLL: Duration = Duration::from_millis(25);

/// Run `work` on its own thread; `Err(Cancelled)` as soon as `cancelled()` turns true.
pub(crate) fn interruptible<T: Send + 'static>(
    cancelled: &dyn Fn() -> bool,
    work: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    let (tx, rx) = mpsc::channel();
    let worker = std::thread::Builder::new()
        .name("ovk-decomposition".into())
        .spawn(move || {
            let _ = tx.send(work());
        })
        .map_err(|e| OvkError::internal(format!("starting a worker thread: {e}")))?;
    loop {
        match rx.recv_timeout(POLL) {
            // Joined, so everything the worker held (its thread-locals too) is freed on return.
            Ok(out) => {
                let _ = worker.join();
                return out;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if cancelled() {
                    return Err(OvkError::Cancelled);
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(OvkError::internal(
                    "a decomposition's worker thread panicked",
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::Instant;

    #[test]
    fn returns_the_result_or_the_cancellation_promptly() {
        assert_eq!(interruptible(&|| false, || Ok(7)).unwrap(), 7);
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let t = Instant::now();
        let s2 = stop.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            s2.store(true, Ordering::Relaxed);
        });
        let out = interruptible(&|| flag.load(Ordering::Relaxed), || {
            std::thread::sleep(Duration::from_secs(3));
            Ok(1)
        });
        assert!(matches!(out, Err(OvkError::Cancelled)));
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
        let _ = stop;
    }
}
