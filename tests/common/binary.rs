//! For the tests that drive the real `ovk` binary: run it against a session store, build an
//! `ovk run` command line, read its output, make a private temporary folder.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root (where `datasets/` and `sessions/` are).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `ovk ARGS --sessions STORE`, run from the repository root.
pub fn ovk(args: &[&str], store: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ovk"))
        .args(args)
        .arg("--sessions")
        .arg(store)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("running ovk")
}

/// A temporary folder unique to this test process, emptied (absent when `create` is false).
pub fn temp_dir(prefix: &str, name: &str, create: bool) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ovk-{prefix}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    if create {
        std::fs::create_dir_all(&d).expect("creating a temp dir");
    }
    d
}

/// Panics, saying `context` and what ovk wrote to stderr, unless the run exited 0.
pub fn assert_ok(o: &Output, context: &str) {
    assert!(o.status.success(), "{context}{}", stderr(o));
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `ovk run --data DATA --targets y0,…,y{m-1} --method METHOD --json`: the command line the
/// tests that write their own wide tables start from (append `--sessions` or more flags).
pub fn run_args(method: &str, data: &Path, m: usize) -> Vec<String> {
    let targets: Vec<String> = (0..m).map(|k| format!("y{k}")).collect();
    [
        "run",
        "--data",
        data.to_str().unwrap(),
        "--targets",
        &targets.join(","),
        "--method",
        method,
        "--json",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}
