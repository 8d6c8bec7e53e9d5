//! Issue 33, points 7 and 8: kde's `--candidates` and `ovk paper --data` read through the one
//! hardened table reader — a hostile file is an input error (exit 2) naming the file, never a
//! panic or an abort, and a FIFO is refused instead of read forever.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::binary::{root, stderr, temp_dir};

fn ovk(dir: &Path, args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_ovk"))
        .args(args)
        .arg("--sessions")
        .arg(dir.join("store"))
        .current_dir(root())
        .env_remove("RUST_BACKTRACE")
        .output()
        .unwrap()
}

fn refused(out: &Output, file: &Path, also: &[&str]) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{}:\n{err}", file.display());
    let name = file.file_name().unwrap().to_string_lossy();
    assert!(err.contains(&*name), "{name} not named:\n{err}");
    assert!(!err.contains("panicked"), "{err}");
    for a in also {
        assert!(err.contains(a), "{name}: `{a}` missing:\n{err}");
    }
}

fn bad(name: &str) -> PathBuf {
    root().join("tests/data/bad").join(name)
}

fn fifo(dir: &Path) -> PathBuf {
    let p = dir.join("cands.csv");
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a plain mkfifo on a path we own.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    p
}

#[test]
fn hostile_candidates_files_are_input_errors() {
    let dir = temp_dir("reader", "candidates", true);
    let mut files: Vec<PathBuf> = [
        "bad_pages.parquet",
        "bad_thrift.parquet",
        "executor_panic.parquet",
        "decimal.parquet",
        "huge_alloc.parquet",
        "latin1.csv",
    ]
    .iter()
    .map(|n| bad(n))
    .collect();
    files.push(fifo(&dir));
    for f in &files {
        let out = ovk(
            &dir,
            &[
                "run",
                "--data",
                "datasets/linnerud.csv",
                "--method",
                "kde",
                "--candidates",
                f.to_str().unwrap(),
            ],
        );
        refused(&out, f, &[]);
    }
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn bad_paper_data_is_an_input_error_with_its_place() {
    let dir = temp_dir("reader", "paper", true);
    let utf16 = dir.join("utf16.csv");
    let mut bytes = vec![0xFF, 0xFE];
    for u in "a,b\n1,2\n".encode_utf16() {
        bytes.extend(u.to_le_bytes());
    }
    fs::write(&utf16, bytes).unwrap();
    let cases: [(PathBuf, &[&str]); 3] = [
        (bad("latin1.csv"), &["row", "`y`"]),
        (bad("bad_pages.parquet"), &[]),
        (utf16, &[]),
    ];
    for (f, also) in &cases {
        let out = ovk(&dir, &["paper", "kde-usps", "--data", f.to_str().unwrap()]);
        refused(&out, f, also);
    }
    let _ = fs::remove_dir_all(&dir);
}
