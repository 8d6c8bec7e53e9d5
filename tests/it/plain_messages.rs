//! Small things a user meets: `ovk run --json | true` is no failure of a saved fit; messages
//! without doubled words ("not a a session record", "give a smaller the grid"); a FIFO or
//! `/dev/zero` named as what it is, not "no such file"; and no advice about polars' Python
//! keyword arguments in a candidates file's error.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::binary::{self, stderr};

fn ovk(args: &[&str], store: &Path) -> std::process::Output {
    binary::ovk(args, store)
}

#[test]
fn a_closed_standard_output_after_the_save_is_not_a_failure() {
    let store = binary::temp_dir("messages", "closed-stdout", false);
    let mut child = Command::new(env!("CARGO_BIN_EXE_ovk"))
        .args([
            "run",
            "--data",
            "datasets/linnerud.csv",
            "--method",
            "okl",
            "--json",
        ])
        .arg("--sessions")
        .arg(&store)
        .current_dir(binary::root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes away before the fit ends (`| true`).
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the session was saved as"),
        "{}",
        stderr(&o)
    );
    let saved = std::fs::read_dir(&store)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().join("session.json").is_file())
        .count();
    assert_eq!(saved, 1);
}

#[test]
fn messages_have_no_doubled_words() {
    let dir = binary::temp_dir("messages", "typos", true);
    let s = dir.join("s");
    std::fs::create_dir_all(&s).unwrap();
    std::fs::write(s.join("session.json"), b"{\"schema\": \0}").unwrap();
    let o = ovk(
        &["replay", s.to_str().unwrap(), "--print"],
        &dir.join("store"),
    );
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("NUL byte") && !e.contains("a a "), "{e}");

    let o = Command::new(env!("CARGO_BIN_EXE_ovk"))
        .args(["gen", "gp-mix", "--outputs", "100000", "--out"])
        .arg(dir.join("g.csv"))
        .env("OVK_MEMORY_LIMIT", "1MB")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("give a smaller --outputs") && !e.contains("the grid"),
        "{e}"
    );
}

#[test]
fn a_fifo_or_a_device_is_named_for_what_it_is() {
    let dir = binary::temp_dir("messages", "fifo", true);
    let fifo = dir.join("data.csv");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let session = binary::root().join("sessions/20261121-080316-linnerud-okl");
    for (path, what) in [
        (fifo.to_str().unwrap(), "named pipe (FIFO)"),
        ("/dev/zero", "character device"),
    ] {
        let o = ovk(
            &[
                "replay",
                session.to_str().unwrap(),
                "--verify",
                "--data",
                path,
            ],
            &dir.join("store"),
        );
        assert_eq!(o.status.code(), Some(2), "{path}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains(what) && e.contains("--data") && !e.contains("no such file"),
            "{path}: {e}"
        );
        // The workbench's path: refused before the terminal is taken.
        let o = ovk(&[path], &dir.join("store"));
        assert_eq!(o.status.code(), Some(2), "{path}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains(what) && !e.contains("no such file"),
            "{path}: {e}"
        );
    }
}

#[test]
fn a_candidates_error_carries_no_python_advice() {
    let dir = binary::temp_dir("messages", "candidates", true);
    // Whole numbers for 150 rows, then text: polars infers an integer column and then fails,
    // with advice about `infer_schema_length` and `ignore_errors`.
    let mut text = String::from("Chins,Situps,Jumps\n");
    for i in 0..150 {
        text.push_str(&format!("{i},{i},{i}\n"));
    }
    text.push_str("1.5x,2,3\n");
    let cand = dir.join("cand.csv");
    std::fs::write(&cand, text).unwrap();
    let o = ovk(
        &[
            "run",
            "--data",
            "datasets/linnerud.csv",
            "--method",
            "kde",
            "--candidates",
            cand.to_str().unwrap(),
        ],
        &dir.join("store"),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("cand.csv"), "{e}");
    for python in [
        "ignore_errors",
        "infer_schema_length",
        "schema_overrides",
        "True",
    ] {
        assert!(!e.contains(python), "{python} in: {e}");
    }
}
