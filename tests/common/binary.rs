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
    sweep_ended_runs();
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

/// Once per test process: remove the `ovk-…-PID-…` folders and files of test processes that
/// have ended.
/// Tests keep their folders (a failure's files stay to look at), and every run left about 170
/// of them, up to 150 MB each: 9 400 folders and 11 GB had piled up when a disk filled.
/// A folder whose process still runs (this one, a parallel run) is left alone.
fn sweep_ended_runs() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
            return;
        };
        // Linux's largest pid (pid_max is at most 2²²): longer numbers are dates or sizes.
        const PID_MAX: u32 = 1 << 22;
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(rest) = name.strip_prefix("ovk-") else {
                continue;
            };
            let pid = rest
                .split('-')
                .find_map(|t| t.parse::<u32>().ok().filter(|&p| p > 0 && p <= PID_MAX));
            let ended = pid.is_some_and(|p| {
                p != std::process::id() && !Path::new(&format!("/proc/{p}")).exists()
            });
            match e.file_type() {
                Ok(t) if ended && t.is_dir() => {
                    let _ = std::fs::remove_dir_all(e.path());
                }
                Ok(t) if ended && t.is_file() => {
                    let _ = std::fs::remove_file(e.path());
                }
                _ => {}
            }
        }
    });
}
