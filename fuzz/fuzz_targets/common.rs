//! Shared by the targets: one scratch directory per process (in /dev/shm when it exists, so
//! the per-input file writes stay in memory), and the contract every result must meet.

use std::path::PathBuf;

pub fn scratch(name: &str) -> PathBuf {
    let base = if std::path::Path::new("/dev/shm").is_dir() {
        PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    let dir = base.join(format!("ovk-fuzz-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// A refusal must be a user-input error (exit 2) with a message that names the file.
pub fn check_refusal(e: &ovk_core::OvkError, names: &[&str]) {
    let msg = e.to_string();
    assert!(!msg.trim().is_empty(), "empty error message: {e:?}");
    assert_eq!(e.exit_code(), 2, "not a user-input error: {e:?}");
    assert!(
        names.iter().any(|n| msg.contains(n)),
        "message does not name the file ({names:?}): {msg}"
    );
}
