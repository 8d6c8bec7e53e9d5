//! The one handler of SIGINT and SIGTERM for every command: a signal sets one flag. A command
//! that can stop cleanly (run, sweep, paper) watches the flag itself; any other (gen, predict,
//! export, replay, bench …) is ended by `exit_on_signal`'s watcher. Either way the process
//! leaves with status 130 after removing its unfinished temporaries (what it already published
//! is whole and stays); those of writers killed outright are removed by the next write to the
//! same place (`session::temporaries`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// How often a watcher looks at the flag: well within the second a signal may take to act.
const POLL: Duration = Duration::from_millis(50);

static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// Whether SIGINT or SIGTERM has come since the handler was installed.
pub fn signalled() -> bool {
    FLAG.get().is_some_and(|f| f.load(Ordering::Relaxed))
}

/// The flag SIGINT and SIGTERM set, the handler installed on first use.
pub fn flag() -> Arc<AtomicBool> {
    FLAG.get_or_init(|| {
        let f = Arc::new(AtomicBool::new(false));
        // A failure to install the handler only loses the clean exit, not the command.
        let _ = signal_hook::flag::register(signal_hook::consts::SIGINT, f.clone());
        let _ = signal_hook::flag::register(signal_hook::consts::SIGTERM, f.clone());
        f
    })
    .clone()
}

/// Block until a signal has come.
pub fn wait_for_signal(flag: &AtomicBool) {
    while !flag.load(Ordering::Relaxed) {
        std::thread::sleep(POLL);
    }
}

/// Remove this process's unfinished temporaries, say so, and exit with status 130.
pub fn abandon_and_exit(what: &str) -> ! {
    let gone = ovk_core::session::abandon();
    let mut msg = format!("\n{what}");
    if !gone.removed.is_empty() {
        let n = gone.removed.len();
        msg.push_str(&format!(
            "; {n} unfinished file{} removed",
            if n == 1 { "" } else { "s" }
        ));
    }
    if let Some(last) = gone.published.last() {
        msg.push_str(&format!(
            "; {} written whole and kept (the last: {})",
            gone.published.len(),
            last.display()
        ));
    }
    errln!("{msg}");
    std::process::exit(130);
}

/// For a command with nothing to stop cleanly: a signal ends it within a second, its
/// temporaries removed.
pub fn exit_on_signal() {
    let flag = flag();
    let _ = std::thread::Builder::new()
        .name("ovk-signal-watcher".into())
        .spawn(move || {
            wait_for_signal(&flag);
            abandon_and_exit("interrupted");
        });
}
