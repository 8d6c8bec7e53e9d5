//! polars panics on some corrupt files (a Parquet footer whose thrift fields have the wrong
//! type: `expect("thrift bool field")`). A user's file must never crash ovk, so reads run under
//! `catch_unwind` with the panic report silenced, and a panic becomes a message.
//!
//! polars may also panic on its own threads (its async executor, its tokio runtime, its rayon
//! pool) and re-raise the panic on the calling thread as a `JoinError`. Those threads' reports
//! are silenced too while a guarded read runs: besides the noise on stderr, the report would
//! reach the TUI's panic hook, which restores the terminal — and the app would go on drawing
//! on a terminal no longer in raw mode.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Once;

thread_local! {
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// How many guarded reads are running, on any thread.
static READS: AtomicUsize = AtomicUsize::new(0);

/// Thread names polars 0.55 gives its workers (polars-core's rayon pool and its unmapper,
/// polars-async's executor, and tokio's default name for its runtime).
const POLARS_THREADS: [&str; 3] = ["polars-", "async-executor-", "tokio-rt-worker"];

/// Whether a panic report belongs to a guarded read and must not be printed.
fn silenced(quiet_here: bool, reads: usize, thread: Option<&str>) -> bool {
    quiet_here
        || (reads > 0
            && thread.is_some_and(|name| POLARS_THREADS.iter().any(|p| name.starts_with(p))))
}

/// Run `f`; a panic inside it becomes `Err(panic message)`, reported by no hook.
pub(crate) fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let quiet_here = QUIET.with(Cell::get);
            let reads = READS.load(Ordering::SeqCst);
            if !silenced(quiet_here, reads, std::thread::current().name()) {
                previous(info);
            }
        }));
    });
    let was = QUIET.with(|q| q.replace(true));
    READS.fetch_add(1, Ordering::SeqCst);
    let r = catch_unwind(AssertUnwindSafe(f));
    READS.fetch_sub(1, Ordering::SeqCst);
    QUIET.with(|q| q.set(was));
    r.map_err(|p| {
        p.downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown failure".into())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_reports_of_a_guarded_read_are_silenced() {
        assert!(silenced(true, 1, Some("ovk-reader")), "the reading thread");
        assert!(silenced(false, 1, Some("async-executor-0")));
        assert!(silenced(false, 2, Some("tokio-rt-worker")));
        assert!(silenced(false, 1, Some("polars-3")));
        assert!(!silenced(false, 0, Some("polars-3")), "no read running");
        assert!(!silenced(false, 1, Some("ovk-runner")), "ovk's own threads");
        assert!(!silenced(false, 1, Some("main")));
        assert!(!silenced(false, 1, None));
    }

    #[test]
    fn a_panic_re_raised_from_a_worker_thread_becomes_a_message() {
        let r = guarded(|| {
            let worker = std::thread::Builder::new()
                .name("async-executor-test".into())
                .spawn(|| panic!("Invalid argument (os error 22)"))
                .unwrap();
            if let Err(payload) = worker.join() {
                std::panic::resume_unwind(payload);
            }
        });
        assert_eq!(r, Err("Invalid argument (os error 22)".to_string()));
    }
}
