//! Runs `tests/e2e_tui.sh` — the workbench driven in tmux — against the binary cargo built.
//! The script reports a skip (and passes) where tmux is missing; `.ci/run` installs it.

use std::process::Command;

#[test]
fn workbench_end_to_end_in_tmux() {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new("bash")
        .arg(format!("{root}/tests/e2e_tui.sh"))
        .env("OVK_BIN", env!("CARGO_BIN_EXE_ovk"))
        .current_dir(root)
        .output()
        .expect("running bash");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{text}");
    assert!(out.status.success(), "end-to-end script failed:\n{text}");
}
