//! The example sessions shipped in `sessions/` load, print, and (the small ones) replay to the
//! same numbers — so a schema change that would orphan saved sessions fails here first.

use std::path::Path;
use std::process::Command;

use ovk::session::{self, Listing, Store};

fn examples() -> Vec<std::path::PathBuf> {
    let store = Store::open(Some(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions"),
    ))
    .unwrap();
    store
        .list()
        .into_iter()
        .map(|l| match l {
            Listing::Ok(s) => s.path,
            Listing::Corrupt { path, reason } => panic!("{}: {reason}", path.display()),
        })
        .collect()
}

#[test]
fn every_example_loads_with_its_matrices() {
    let dirs = examples();
    assert!(
        dirs.len() >= 6,
        "expected the shipped examples, found {}",
        dirs.len()
    );
    let methods: Vec<String> = dirs
        .iter()
        .map(|d| session::load(d).unwrap().record.method)
        .collect();
    for m in ["krr", "okl", "lowrank-okl", "kde", "vvmr", "mvml"] {
        assert!(methods.iter().any(|x| x == m), "no example session for {m}");
    }
    for d in &dirs {
        let s = session::load(d).unwrap();
        for name in s.record.matrices.keys() {
            let m = s.matrix(name).unwrap();
            assert!(m.iter().all(|v| v.is_finite()), "{}: {name}", d.display());
        }
        let text = session::summary_text(&s.record);
        assert!(text.contains(&s.record.method));
    }
}

#[test]
fn small_examples_replay_and_verify_from_any_directory() {
    // Not the repository root: the data files are found from the sessions' own location.
    let elsewhere = std::env::temp_dir();
    for d in examples() {
        let rec = session::load(&d).unwrap().record;
        if rec.dataset.rows > 200 {
            continue;
        }
        let out = Command::new(env!("CARGO_BIN_EXE_ovk"))
            .args(["replay", "--verify"])
            .arg(&d)
            .current_dir(&elsewhere)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: {}{}",
            d.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
