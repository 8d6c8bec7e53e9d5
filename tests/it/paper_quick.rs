//! `ovk paper`: every experiment's `--quick` protocol runs through the product's path (a
//! session per fit) and yields a table whose figures are all finite; `--list` names them all;
//! a bad name or data path is a clear input error.

use std::path::PathBuf;
use std::process::Command;

use ovk_core::methods::Silent;
use ovk_core::session::Store;
use ovk_lab::papers::{self, EXPERIMENTS};

const NAMES: [&str; 12] = [
    "okl-sim",
    "okl-usps",
    "okl-usps-tuned",
    "lowrank-exp1",
    "lowrank-exp2",
    "kde-usps",
    "kde-ocr",
    "vvmr-multilabel",
    "vvmr-scene",
    "vvmr-tuned",
    "mvml-views",
    "mvml-uwave",
];

/// A test's folder (its store and the data the experiment writes beside it), removed when the
/// test passes and kept when it fails, to look at: the experiments write about 150 MB a run.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
            // The process's folder goes with its last test (it is not empty before).
            let _ = self.0.parent().map(std::fs::remove_dir);
        }
    }
}

/// The test's folder and the session store inside it.
fn store_dir(name: &str) -> (Scratch, PathBuf) {
    let d = std::env::temp_dir()
        .join(format!("ovk-paper-quick-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    let sessions = d.join("sessions");
    (Scratch(d), sessions)
}

/// Rows, columns, finiteness and one session per fit at least.
fn check(name: &str, min_rows: usize) {
    let exp = papers::find(name).unwrap();
    let (_scratch, dir) = store_dir(name);
    let store = Store::open(Some(&dir)).unwrap();
    let t = papers::run(exp, true, None, &store, &mut Silent).unwrap();
    assert_eq!(t.experiment, name);
    assert!(t.rows.len() >= min_rows, "{name}: {} rows", t.rows.len());
    for r in &t.rows {
        assert!(
            r.ours.is_finite(),
            "{name} / {}: ours {:?}",
            r.label,
            r.ours
        );
        if let Some(b) = r.baseline {
            assert!(b.is_finite(), "{name} / {}: baseline {b:?}", r.label);
        }
        if let Some(p) = r.paper {
            assert!(p.is_finite() && p > 0.0, "{name} / {}: paper {p}", r.label);
        }
    }
    assert!(
        t.rows.iter().any(|r| r.baseline.is_some()),
        "{name}: no baseline column"
    );
    assert!(!t.sessions.is_empty(), "{name}: no session saved");
    let saved = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .map(|e| e.path().join("session.json").is_file())
                .unwrap_or(false)
        })
        .count();
    assert_eq!(saved, t.sessions.len(), "{name}: sessions in the store");
    assert!(t.seconds.is_finite() && t.seconds >= 0.0);
}

#[test]
fn okl_sim_quick() {
    check("okl-sim", 4);
}

/// The generated data beside the store are rewritten only when they are ovk's own (the same
/// bytes again); a user's file of the same name is refused, never replaced.
#[test]
fn a_users_file_where_the_experiment_writes_is_never_replaced() {
    let exp = papers::find("okl-sim").unwrap();
    let (_scratch, dir) = store_dir("okl-sim-foreign");
    let store = Store::open(Some(&dir)).unwrap();
    papers::run(exp, true, None, &store, &mut Silent).unwrap();
    // Again over its own files: fine.
    papers::run(exp, true, None, &store, &mut Silent).unwrap();
    let mine = dir.parent().unwrap().join("paper-data/okl-sim/sim0.csv");
    assert!(mine.is_file());
    std::fs::write(&mine, "my precious\n").unwrap();
    let e = papers::run(exp, true, None, &store, &mut Silent).unwrap_err();
    assert_eq!(e.exit_code(), 2, "{e}");
    assert!(e.to_string().contains("sim0.csv"), "{e}");
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "my precious\n");
}

#[test]
fn okl_usps_quick() {
    // Two kernel widths, the first also on a low-rank input kernel.
    check("okl-usps", 3);
}

#[test]
fn okl_usps_tuned_quick() {
    check("okl-usps-tuned", 1);
}

#[test]
fn lowrank_exp1_quick() {
    check("lowrank-exp1", 4);
}

#[test]
fn lowrank_exp2_quick() {
    check("lowrank-exp2", 2);
}

#[test]
fn kde_usps_quick() {
    // The three operator kernels, identity first: it is the baseline of the other two.
    check("kde-usps", 3);
}

#[test]
fn vvmr_multilabel_quick() {
    // Full model, γ_I = 0, γ_O = 0, each transductive and inductive.
    check("vvmr-multilabel", 6);
}

#[test]
fn vvmr_tuned_quick() {
    // emotions: vvmr and krr tuned by the same CV, each transductive and inductive.
    check("vvmr-tuned", 2);
}

#[test]
fn mvml_views_quick() {
    check("mvml-views", 4);
}

// The papers' own data sets (../shared/datasets, not shipped): opt-in, `cargo test --release
// -p ovk --test it paper_own_data -- --ignored`.

#[test]
#[ignore = "reads the shared scene.csv"]
fn paper_own_data_vvmr_scene_quick() {
    // 3 models, krr, γ_I on each scale, vvmr and krr tuned: each transductive and inductive.
    check("vvmr-scene", 16);
}

#[test]
#[ignore = "reads the shared ocr_letters.csv"]
fn paper_own_data_kde_ocr_quick() {
    check("kde-ocr", 3);
}

#[test]
#[ignore = "reads the shared uwave_train.csv"]
fn paper_own_data_mvml_uwave_quick() {
    check("mvml-uwave", 8);
}

#[test]
fn list_names_every_experiment() {
    let names: Vec<&str> = EXPERIMENTS.iter().map(|e| e.name).collect();
    assert_eq!(names, NAMES);
    let out = Command::new(env!("CARGO_BIN_EXE_ovk"))
        .args(["paper", "--list"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for n in NAMES {
        assert!(text.contains(n), "--list lacks {n}:\n{text}");
    }
}

#[test]
fn bad_name_and_data_are_input_errors() {
    let (_scratch, dir) = store_dir("bad");
    for args in [
        vec!["paper", "no-such"],
        vec!["paper"],
        vec!["paper", "okl-usps", "--data", "/nonexistent/usps.csv"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_ovk"))
            .args(&args)
            .arg("--sessions")
            .arg(&dir)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("paper") || err.contains("--data"),
            "{args:?}: {err}"
        );
    }
}

/// Ctrl-C during a full experiment: exit status 130, the sessions already saved are whole, and
/// no half-written session (a `.tmp-` folder) is left in the store.
#[test]
fn sigint_stops_an_experiment_cleanly() {
    let (_scratch, dir) = store_dir("sigint");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ovk"))
        .args(["paper", "okl-sim", "--sessions"])
        .arg(&dir)
        .stderr(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        assert!(!name.starts_with(".tmp-"), "half-written {name}");
        assert!(
            p.join("session.json").is_file(),
            "{name} has no session.json"
        );
    }
}
