//! Issue 33, point 1: nothing a session depends on — its data file, the data's sidecar, kde's
//! candidates file, the store's own files — is written over by `predict --out` or `export`,
//! even with `--force`, from any working directory, and whatever name leads there (the
//! recorded relative path from elsewhere, an absolute path, a hard link to a store `.npy`).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::binary::{root, stderr, stdout, temp_dir};

/// `ovk ARGS --sessions STORE`, run in `cwd`.
fn ovk_at(cwd: &Path, store: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ovk"))
        .args(args)
        .arg("--sessions")
        .arg(store)
        .current_dir(cwd)
        .env_remove("RUST_BACKTRACE")
        .output()
        .unwrap()
}

fn session_id(out: &Output) -> String {
    assert!(out.status.success(), "{}", stderr(out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let dir = PathBuf::from(v["session"].as_str().unwrap());
    dir.file_name().unwrap().to_string_lossy().into_owned()
}

/// Exit 2 naming why, and `file`'s bytes untouched.
fn refused(out: &Output, file: &Path, before: &[u8], why: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{}:\n{err}", file.display());
    assert!(
        err.contains(why),
        "{}: `{why}` missing:\n{err}",
        file.display()
    );
    assert_eq!(
        fs::read(file).unwrap(),
        before,
        "{} changed",
        file.display()
    );
}

/// Every way a session's output can be written, all with `--force`, into `target`.
fn writers<'a>(id: &'a str, data: &'a str, target: &'a str) -> Vec<Vec<&'a str>> {
    vec![
        vec!["predict", id, "--data", data, "--out", target, "--force"],
        vec!["export", id, "--predictions", target, "--force"],
        vec![
            "export",
            id,
            "--matrix",
            "predictions_test",
            target,
            "--force",
        ],
        vec!["export", id, "--trace", target, "--force"],
    ]
}

#[test]
fn a_sessions_inputs_are_refused_from_any_working_directory() {
    let dir = temp_dir("inputs", "cwd", true);
    let (a, b) = (dir.join("a"), dir.join("b"));
    fs::create_dir_all(&a).unwrap();
    fs::create_dir_all(&b).unwrap();
    let store = dir.join("store");
    let linnerud = root().join("datasets/linnerud.csv");
    fs::copy(&linnerud, a.join("lin.csv")).unwrap();
    fs::write(
        a.join("lin.toml"),
        "source = \"a copy of linnerud\"\ntargets = [\"target_*\"]\n",
    )
    .unwrap();
    fs::write(
        a.join("cands.csv"),
        "target_weight,target_waist,target_pulse\n190,36,50\n160,33,60\n",
    )
    .unwrap();
    // Fitted in a/ on relative names: the record holds `lin.csv` and `cands.csv`.
    let krr = session_id(&ovk_at(
        &a,
        &store,
        &["run", "--data", "lin.csv", "--method", "krr", "--json"],
    ));
    let kde = session_id(&ovk_at(
        &a,
        &store,
        &[
            "run",
            "--data",
            "lin.csv",
            "--method",
            "kde",
            "--candidates",
            "cands.csv",
            "--json",
        ],
    ));
    fs::copy(&linnerud, b.join("new.csv")).unwrap();
    // A file in b/ named like the training file: the recorded relative name, seen from b/,
    // is this one, and it is not the session's (replacing it is allowed).
    fs::write(b.join("lin.csv"), "not the training data\n").unwrap();
    let cases: [(&str, PathBuf, &str); 3] = [
        (&krr, a.join("lin.csv"), "data file of session"),
        (&krr, a.join("lin.toml"), "sidecar of the data file"),
        (&kde, a.join("cands.csv"), "candidates file of session"),
    ];
    for (id, file, why) in &cases {
        let before = fs::read(file).unwrap();
        let f = file.to_str().unwrap();
        for args in writers(id, "new.csv", f) {
            refused(&ovk_at(&b, &store, &args), file, &before, why);
        }
    }
    // The session itself still loads and predicts; b/lin.csv, not an input, may be replaced.
    let out = ovk_at(
        &b,
        &store,
        &[
            "predict", &krr, "--data", "new.csv", "--out", "lin.csv", "--force",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let replaced = fs::read_to_string(b.join("lin.csv")).unwrap();
    assert!(replaced.starts_with("target_weight,"), "{replaced}");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_hard_link_to_a_stores_file_is_refused() {
    let dir = temp_dir("inputs", "link", true);
    let store = dir.join("store");
    let id = session_id(&ovk_at(
        &root(),
        &store,
        &[
            "run",
            "--data",
            "datasets/linnerud.csv",
            "--method",
            "krr",
            "--json",
        ],
    ));
    let npy = store.join(&id).join("predictions_test.npy");
    let before = fs::read(&npy).unwrap();
    let link = dir.join("predictions.csv");
    fs::hard_link(&npy, &link).unwrap();
    let data = root().join("datasets/linnerud.csv");
    for args in writers(&id, data.to_str().unwrap(), link.to_str().unwrap()) {
        let out = ovk_at(&dir, &store, &args);
        refused(&out, &npy, &before, "hard link");
        assert!(stdout(&out).is_empty());
    }
    // A hard link to a file outside the store is an ordinary file: --force replaces it.
    let plain = dir.join("plain.csv");
    fs::write(&plain, "x\n").unwrap();
    let twin = dir.join("twin.csv");
    fs::hard_link(&plain, &twin).unwrap();
    let out = ovk_at(
        &dir,
        &store,
        &["export", &id, "--trace", "twin.csv", "--force"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let _ = fs::remove_dir_all(&dir);
}
