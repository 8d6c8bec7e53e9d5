//! Large buffers freed off the critical path. Freeing a buffer of hundreds of MB is the kernel
//! unmapping and releasing every page of it: the CSV file's 190 MB bytes took 14 ms, the table's
//! parsed columns about as long, on a load of 0.55 s. A thread of its own frees them while the
//! caller goes on, and `finish` waits for every such thread, so a phase that measures memory
//! (the fit, after loading) starts with them gone, as it did when they were dropped in place.

use std::sync::Mutex;
use std::thread::JoinHandle;

static PENDING: Mutex<Vec<JoinHandle<()>>> = Mutex::new(Vec::new());

/// Drop `value` on a thread of its own (in place if no thread can start).
pub(crate) fn drop_later<T: Send + 'static>(value: T) {
    // When no thread can start, `spawn` drops the closure, and the value with it, here.
    let spawned = std::thread::Builder::new()
        .name("drop-later".into())
        .spawn(move || drop(value));
    if let Ok(handle) = spawned {
        let mut pending = pending();
        // A long-lived process (the workbench loads a table per file chosen) may never call
        // `finish`: threads that are done are let go here, so their stacks do not pile up.
        pending.retain(|h| !h.is_finished());
        pending.push(handle);
    }
}

/// Wait until every value given to `drop_later` is freed.
pub(crate) fn finish() {
    let handles = std::mem::take(&mut *pending());
    for h in handles {
        let _ = h.join();
    }
}

fn pending() -> std::sync::MutexGuard<'static, Vec<JoinHandle<()>>> {
    PENDING.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// The tests share the process's list of pending threads.
    static SERIAL: Mutex<()> = Mutex::new(());

    struct Counted(Arc<AtomicUsize>);
    impl Drop for Counted {
        fn drop(&mut self) {
            std::thread::sleep(std::time::Duration::from_millis(20));
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Threads that have ended are let go as new ones start, without `finish`.
    #[test]
    fn ended_threads_do_not_pile_up() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        finish();
        for _ in 0..50 {
            drop_later(vec![0u8; 1 << 10]);
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        // Without the pruning all 50 would be kept; other tests loading files at the same
        // time may add a few of their own.
        assert!(pending().len() < 40, "{} handles kept", pending().len());
        finish();
    }

    #[test]
    fn finish_waits_for_every_value_to_be_dropped() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let dropped = Arc::new(AtomicUsize::new(0));
        for _ in 0..3 {
            drop_later(Counted(dropped.clone()));
        }
        finish();
        assert_eq!(dropped.load(Ordering::SeqCst), 3);
    }
}
