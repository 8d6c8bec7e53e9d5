//! Issue 18 (9, 10): text, date and ID columns and missing cells, through `prepare` and the
//! CLI on tests/data/mixed_columns.csv (id 1..40, user u000…, when 2024-01-…, city with an NA,
//! size, age with two NA, price).

use crate::common::binary;
use std::path::PathBuf;
use std::process::Command;

use ovk_core::data::{prepare, Categorical, DataConfig, PrepareOptions};

fn csv() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/mixed_columns.csv")
}

fn cfg() -> DataConfig {
    let mut c = DataConfig::new(csv());
    c.targets = Some(vec!["price".into()]);
    c
}

#[test]
fn default_features_encode_city_and_leave_out_ids_and_dates() {
    let mut c = cfg();
    c.impute_missing = true;
    let p = prepare(&c, PrepareOptions::default()).unwrap();
    assert_eq!(
        p.feature_names,
        vec!["city=Lyon", "city=Nice", "city=Paris", "size", "age"]
    );
    assert_eq!(
        p.categories,
        vec![Categorical {
            column: "city".into(),
            levels: vec!["Lyon".into(), "Nice".into(), "Paris".into()]
        }]
    );
    // Rows 5, 10 and 18 (1-based) had a missing city or age: imputed, none dropped.
    assert_eq!((p.imputed_rows, p.dropped_rows), (3, 0));
    assert_eq!(p.train_rows.len() + p.test_rows.len(), 40);
}

#[test]
fn missing_cells_refuse_drop_or_impute() {
    let e = prepare(&cfg(), PrepareOptions::default()).unwrap_err();
    assert!(e.to_string().contains("--missing impute"), "{e}");
    let mut c = cfg();
    c.drop_missing = true;
    let p = prepare(&c, PrepareOptions::default()).unwrap();
    assert_eq!(p.dropped_rows, 3);
    assert_eq!(p.train_rows.len() + p.test_rows.len(), 37);
}

#[test]
fn fixed_levels_encode_identically_and_named_text_ids_are_refused() {
    let mut c = cfg();
    c.drop_missing = true;
    c.categories = Some(vec![Categorical {
        column: "city".into(),
        levels: vec!["Nice".into(), "Rome".into()],
    }]);
    let p = prepare(&c, PrepareOptions::default()).unwrap();
    assert_eq!(
        &p.feature_names[..2],
        &["city=Nice".to_string(), "city=Rome".to_string()]
    );
    let mut c = cfg();
    c.features = Some(vec!["user".into(), "size".into()]);
    let e = prepare(&c, PrepareOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("`user` is text with 40 distinct values"), "{e}");
}

#[test]
fn cli_missing_option_is_checked_and_the_session_keeps_the_encoding() {
    let store = std::env::temp_dir().join(format!("ovk-encode-{}", std::process::id()));
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_ovk"))
            .args(["run", "--data"])
            .arg(csv())
            .args(["--targets", "price", "--method", "krr", "--sessions"])
            .arg(&store)
            .args(extra)
            .output()
            .unwrap()
    };
    let bad = run(&["--missing", "sometimes"]);
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("--missing: 'sometimes' is not one of refuse, drop, impute"),
        "{err}"
    );
    let both = run(&["--missing", "impute", "--drop-missing"]);
    assert_eq!(both.status.code(), Some(2));
    let ok = run(&["--missing", "impute"]);
    binary::assert_ok(&ok, "");
    let dir = std::fs::read_dir(&store)
        .unwrap()
        .flatten()
        .find(|e| e.path().join("session.json").exists())
        .unwrap()
        .path();
    let text = std::fs::read_to_string(dir.join("session.json")).unwrap();
    let r: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(r["config"]["data"]["impute_missing"], true);
    assert_eq!(r["config"]["data"]["categories"][0]["column"], "city");
    assert!(r["details"]["diagnostics"]["test"]["outputs"][0]["pairs"].is_array());
    std::fs::remove_dir_all(&store).ok();
}

/// A model with one-hot features predicts on new rows by re-encoding them with the trained
/// levels; a level it never saw is refused naming the column and the value (exit 2).
#[test]
fn predict_re_encodes_text_features_and_refuses_unseen_levels() {
    let dir = std::env::temp_dir().join(format!("ovk-encode-predict-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(csv()).unwrap();
    let complete: Vec<&str> = text
        .lines()
        .enumerate()
        .filter(|(i, l)| *i == 0 || !(l.contains(",,") || l.ends_with(',') || l.contains("NA")))
        .map(|(_, l)| l)
        .collect();
    let data = dir.join("complete.csv");
    std::fs::write(&data, complete.join("\n") + "\n").unwrap();
    let store = dir.join("store");
    let ovk = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_ovk"))
            .args(args)
            .arg("--sessions")
            .arg(&store)
            .output()
            .unwrap()
    };
    let d = data.to_str().unwrap();
    let fit = ovk(&[
        "run",
        "--data",
        d,
        "--targets",
        "price",
        "--method",
        "krr",
        "--json",
    ]);
    binary::assert_ok(&fit, "");
    let j: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&fit.stdout).trim()).unwrap();
    let session = j["session"].as_str().unwrap().to_string();
    let out = ovk(&["predict", &session, "--data", d, "--out", "-"]);
    binary::assert_ok(&out, "");
    let rows = String::from_utf8_lossy(&out.stdout).lines().count();
    assert_eq!(rows, complete.len(), "a header and one line per row");

    let moved = dir.join("unseen.csv");
    std::fs::write(&moved, complete.join("\n").replace("Lyon", "Oslo") + "\n").unwrap();
    let bad = ovk(&[
        "predict",
        &session,
        "--data",
        moved.to_str().unwrap(),
        "--out",
        "-",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("column `city` holds `Oslo`"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--missing impute` fills a training row's missing age from the training rows alone: giving
/// a test row an absurd age leaves every training input as it was.
#[test]
fn imputation_never_reads_the_test_rows() {
    let mut c = cfg();
    c.impute_missing = true;
    // File rows 4 and 17 (0-based) have no age; pick a split with one of them in training.
    let (c, p) = (0..50)
        .map(|seed| {
            let mut c = c.clone();
            c.seed = seed;
            let p = prepare(&c, PrepareOptions::default()).unwrap();
            (c, p)
        })
        .find(|(_, p)| p.train_rows.iter().any(|&r| r == 4 || r == 17))
        .expect("some split trains on a row without age");
    let victim = *p.test_rows.iter().find(|&&r| r != 4 && r != 17).unwrap();

    let text = std::fs::read_to_string(csv()).unwrap();
    let changed: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, line)| {
            if i == victim + 1 {
                let mut cells: Vec<&str> = line.split(',').collect();
                cells[5] = "100000";
                cells.join(",")
            } else {
                line.to_string()
            }
        })
        .collect();
    let dir = binary::temp_dir("impute", "test-rows", true);
    let path = dir.join("mixed_columns.csv");
    std::fs::write(&path, changed.join("\n") + "\n").unwrap();
    let mut moved = c.clone();
    moved.path = path;
    let q = prepare(&moved, PrepareOptions::default()).unwrap();
    assert_eq!(q.train_rows, p.train_rows);
    assert_eq!(q.x_train, p.x_train);
    assert_ne!(q.x_test, p.x_test);
}
