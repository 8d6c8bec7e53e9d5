//! Shared by the tests that drive the real `ovk` binary: run it against a session store,
//! read its output, make a private temporary folder. (A folder, so cargo does not build it
//! as a test of its own.)

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
