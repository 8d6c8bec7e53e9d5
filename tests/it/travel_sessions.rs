//! Sessions that replay anywhere: the data file is found by its recorded absolute path, beside
//! the session, or from a folder above it, whatever the working directory; `--data` points at a
//! moved copy; a file whose SHA-256 differs is refused with both hashes named.

use crate::common::binary::{root, temp_dir};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scratch(tag: &str) -> PathBuf {
    temp_dir("travel", tag, true)
}

fn ovk(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ovk"))
        .args(args)
        .current_dir(cwd)
        .env_remove("OVK_SESSIONS")
        .output()
        .unwrap()
}

fn ok(out: &Output) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    text
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// A session trained on `data` (relative to `cwd`), saved in `store`; its directory.
fn train(cwd: &Path, data: &str, store: &Path) -> PathBuf {
    let s = store.display().to_string();
    ok(&ovk(
        cwd,
        &["run", "--data", data, "--method", "krr", "--sessions", &s],
    ));
    std::fs::read_dir(store)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir())
        .unwrap()
}

#[test]
fn a_copied_session_verifies_from_a_third_directory() {
    let work = scratch("copy");
    let dir = train(&root(), "datasets/iris.csv", &work.join("store"));
    let copy = work.join("elsewhere").join("iris-copy");
    copy_dir(&dir, &copy);
    let third = work.join("third");
    std::fs::create_dir_all(&third).unwrap();
    let text = ok(&ovk(
        &third,
        &["replay", &copy.display().to_string(), "--verify"],
    ));
    assert!(text.contains("verified"), "{text}");
}

#[test]
fn a_moved_data_file_is_found_with_data_and_a_changed_one_is_refused() {
    let work = scratch("moved");
    let orig = work.join("orig");
    std::fs::create_dir_all(&orig).unwrap();
    for f in ["iris.csv", "iris.toml"] {
        std::fs::copy(root().join("datasets").join(f), orig.join(f)).unwrap();
    }
    let dir = train(&orig, "iris.csv", &work.join("store"));
    let d = dir.display().to_string();
    // Moved away, without its sidecar: the roles come from the session.
    let moved = work.join("moved.csv");
    std::fs::rename(orig.join("iris.csv"), &moved).unwrap();
    let lost = ovk(&work, &["replay", &d, "--verify"]);
    assert_eq!(lost.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&lost.stderr).contains("--data"));
    let text = ok(&ovk(
        &work,
        &[
            "replay",
            &d,
            "--verify",
            "--data",
            &moved.display().to_string(),
        ],
    ));
    assert!(text.contains("verified"), "{text}");

    let recorded = ovk_core::session::load(&dir).unwrap().record.dataset.sha256;
    let mut bytes = std::fs::read(&moved).unwrap();
    bytes.extend_from_slice(b"5.0,3.0,1.5,0.2,0\n");
    let changed = work.join("changed.csv");
    std::fs::write(&changed, &bytes).unwrap();
    let now = ovk_core::data::sha256_file(&changed).unwrap();
    let out = ovk(
        &work,
        &[
            "replay",
            &d,
            "--verify",
            "--data",
            &changed.display().to_string(),
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&recorded) && err.contains(&now), "{err}");
}

#[test]
fn a_data_file_beside_the_session_is_found() {
    let work = scratch("beside");
    let orig = work.join("orig");
    std::fs::create_dir_all(&orig).unwrap();
    std::fs::copy(root().join("datasets/iris.csv"), orig.join("iris.csv")).unwrap();
    std::fs::copy(root().join("datasets/iris.toml"), orig.join("iris.toml")).unwrap();
    let dir = train(&orig, "iris.csv", &work.join("store"));
    let copy = work.join("bundle").join("session");
    copy_dir(&dir, &copy);
    std::fs::rename(orig.join("iris.csv"), copy.join("iris.csv")).unwrap();
    let text = ok(&ovk(
        &work,
        &["replay", &copy.display().to_string(), "--verify"],
    ));
    assert!(text.contains("verified"), "{text}");
}
