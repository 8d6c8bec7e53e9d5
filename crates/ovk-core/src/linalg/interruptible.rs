//! One-shot decompositions cannot poll a cancel flag: faer runs an n×n eigendecomposition or
//! Cholesky factorisation to the end once started, minutes at n = 10⁴. `interruptible` runs such
//! a call on a worker thread and waits for it while polling `cancelled`; on cancellation it
//! returns at once and leaves the worker to finish and drop its result, so the face (Esc in the
//! TUI, Ctrl-C headless) is answered within a fraction of a second. The abandoned worker is
//! told so ([`abandoned`]): ovk's own long loops — the blocked tridiagonal reduction's panels,
//! the phases of an eigendecomposition — stop there and free the core; a call inside faer
//! (divide and conquer, Cholesky, the Hessenberg reduction) still runs to its end first.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use crate::{OvkError, Result};

/// How often the waiting thread looks at the cancel flag.
const POLL: Duration = Duration::from_millis(25);

thread_local! {
    /// On an `interruptible` worker: raised once its caller has stopped waiting for it.
    static ABANDONED: RefCell<Option<Arc<AtomicBool>>> = const { RefCell::new(None) };
}

/// True on an `interruptible` worker whose caller was cancelled (false on any other thread).
pub(crate) fn abandoned() -> bool {
    ABANDONED.with(|a| {
        a.borrow()
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Relaxed))
    })
}

/// `Err(Cancelled)` once [`abandoned`]: between the phases of a long decomposition.
pub(crate) fn stop_if_abandoned() -> Result<()> {
    if abandoned() {
        Err(OvkError::Cancelled)
    } else {
        Ok(())
    }
}

/// Run `work` on its own thread; `Err(Cancelled)` as soon as `cancelled()` turns true.
pub(crate) fn interruptible<T: Send + 'static>(
    cancelled: &dyn Fn() -> bool,
    work: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    let (tx, rx) = mpsc::channel();
    let flag = Arc::new(AtomicBool::new(false));
    let raised = flag.clone();
    let worker = std::thread::Builder::new()
        .name("ovk-decomposition".into())
        .spawn(move || {
            ABANDONED.with(|a| *a.borrow_mut() = Some(raised));
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
                    flag.store(true, Ordering::Relaxed);
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

/// Run `f` on this thread as an abandoned worker would (tests of the loops that stop).
#[cfg(test)]
pub(crate) fn as_abandoned<T>(f: impl FnOnce() -> T) -> T {
    ABANDONED.with(|a| *a.borrow_mut() = Some(Arc::new(AtomicBool::new(true))));
    let out = f();
    ABANDONED.with(|a| *a.borrow_mut() = None);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn the_abandoned_worker_is_told_and_only_it() {
        assert!(!abandoned());
        let (done_tx, done_rx) = mpsc::channel();
        let out = interruptible(&|| true, move || {
            // spins until told: without the flag this worker would never end
            while !abandoned() {
                std::thread::yield_now();
            }
            let _ = done_tx.send(());
            Ok(())
        });
        assert!(matches!(out, Err(OvkError::Cancelled)));
        // a liveness bound, not a timing: the worker ends once the flag reaches it
        assert!(done_rx.recv_timeout(Duration::from_secs(60)).is_ok());
        assert!(
            !abandoned(),
            "the caller's thread is never the abandoned one"
        );
        assert!(!interruptible(&|| false, || Ok(abandoned())).unwrap());
    }

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
