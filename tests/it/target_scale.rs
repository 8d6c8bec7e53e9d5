//! `--target-scale`: the fit sees centred (or standardised) targets and every prediction comes
//! back in the targets' units — the run's, the baseline's, `ovk predict`'s. Centring makes a
//! fit translation-invariant in its targets; standardising leaves independent ridge unchanged
//! (it is linear in each output) while it reweighs the outputs of a coupled method. A method
//! that scores itself on the test rows (lowrank-okl's λ path) sees them scaled alike.

use crate::common::binary::{self, root, temp_dir};
use std::path::{Path, PathBuf};

use ndarray::Array2;
use ovk_core::data::TargetScale;
use ovk_core::methods::Silent;
use ovk_core::session::Store;
use ovk_core::train::{self, predict_file, RunConfig, RunOutcome};

/// enb with both loads shifted by `shift` (the file's other columns unchanged).
fn enb_shifted(dir: &Path, shift: f64) -> PathBuf {
    let text = std::fs::read_to_string(root().join("datasets/enb.csv")).unwrap();
    let mut lines = text.lines();
    let mut out = format!("{}\n", lines.next().unwrap());
    for line in lines {
        let mut cells: Vec<String> = line.split(',').map(String::from).collect();
        let m = cells.len();
        for c in &mut cells[m - 2..] {
            *c = (c.parse::<f64>().unwrap() + shift).to_string();
        }
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    let path = dir.join(format!("enb{shift}.csv"));
    std::fs::write(&path, out).unwrap();
    path
}

/// λ = 0.1, except lowrank-okl, which chooses λ on its path by the test rows' MSE (its default).
fn run(data: &Path, method: &str, scale: TargetScale) -> RunOutcome {
    let params = if method == "lowrank-okl" {
        serde_json::json!({})
    } else {
        serde_json::json!({"lambda": 0.1})
    };
    let mut cfg: RunConfig = serde_json::from_value(serde_json::json!({
        "data": {"path": data, "targets": ["target_*"]},
        "method": method,
        "params": params
    }))
    .unwrap();
    cfg.data.target_scale = scale;
    train::run(&cfg, &mut Silent).unwrap()
}

fn predictions(o: &RunOutcome) -> Array2<f64> {
    o.matrix("predictions_test").unwrap().clone()
}

fn max_abs(a: &Array2<f64>) -> f64 {
    a.iter().fold(0.0_f64, |m, v| m.max(v.abs()))
}

#[test]
fn centring_makes_a_fit_translation_invariant_and_says_when_it_is_missing() {
    let dir = temp_dir("target-scale", "shift", true);
    let (near, far) = (enb_shifted(&dir, 0.0), enb_shifted(&dir, 1000.0));
    for method in ["krr", "okl", "lowrank-okl"] {
        let a = run(&near, method, TargetScale::Center);
        let b = run(&far, method, TargetScale::Center);
        let shifted = predictions(&a) + 1000.0;
        assert!(
            max_abs(&(predictions(&b) - &shifted)) < 1e-8,
            "{method}: a shifted target shifts its predictions"
        );
        let r2 = |o: &RunOutcome| o.record.metrics.test["r2"];
        assert!((r2(&a) - r2(&b)).abs() < 1e-10, "{method}");
        // the λ path scores itself on the test rows, scaled like the training rows
        let lambda = |o: &RunOutcome| o.record.details.get("lambda").and_then(|v| v.as_f64());
        match (lambda(&a), lambda(&b)) {
            (Some(la), Some(lb)) => assert!((la - lb).abs() < 1e-9 * la, "{method}: {la} {lb}"),
            (la, lb) => assert_eq!(la, lb, "{method}"),
        }
        if method == "okl" {
            let base = |o: &RunOutcome| o.record.baseline.as_ref().unwrap().test["r2"];
            assert!(
                (base(&a) - base(&b)).abs() < 1e-10,
                "the baseline is centred too"
            );
        }
    }
    // Unscaled, ridge shrinks the far targets toward 0, and a note says so.
    let a = run(&near, "krr", TargetScale::None);
    let b = run(&far, "krr", TargetScale::None);
    assert!(b.record.metrics.test["r2"] < a.record.metrics.test["r2"] - 0.5);
    let said = |o: &RunOutcome| {
        o.record
            .notes
            .iter()
            .any(|n| n.contains("--target-scale center"))
    };
    assert!(said(&b), "{:?}", b.record.notes);
    assert!(
        !said(&a),
        "enb's own loads are near enough: {:?}",
        a.record.notes
    );
}

#[test]
fn standardising_leaves_independent_ridge_unchanged_and_reweighs_okl() {
    let enb = root().join("datasets/enb.csv");
    let c = run(&enb, "krr", TargetScale::Center);
    let s = run(&enb, "krr", TargetScale::Standard);
    let scale = max_abs(&predictions(&c));
    assert!(max_abs(&(predictions(&s) - predictions(&c))) < 1e-9 * scale);
    let c = run(&enb, "okl", TargetScale::Center);
    let s = run(&enb, "okl", TargetScale::Standard);
    assert!(max_abs(&(predictions(&s) - predictions(&c))) > 1e-3 * scale);
}

/// The saved model maps back too: `ovk predict` on the training file reproduces the stored
/// test predictions bit for bit, for a standardised multi-label fit and a centred regression.
#[test]
fn a_saved_model_predicts_in_the_targets_units() {
    let store = Store::open(Some(&temp_dir("target-scale", "predict", true))).unwrap();
    for (file, method, scale) in [
        (
            "datasets/emotions.csv",
            "lowrank-okl",
            TargetScale::Standard,
        ),
        ("datasets/linnerud.csv", "okl", TargetScale::Center),
    ] {
        let mut cfg: RunConfig = serde_json::from_value(serde_json::json!({
            "data": {"path": root().join(file)}, "method": method
        }))
        .unwrap();
        cfg.data.target_scale = scale;
        let out = train::run(&cfg, &mut Silent).unwrap();
        // the memory estimate counts the data's own targets kept beside the scaled ones
        let mut plain = cfg.clone();
        plain.data.target_scale = TargetScale::None;
        let unscaled = train::run(&plain, &mut Silent).unwrap();
        let peak = |o: &RunOutcome| {
            o.record.details["memory"]["estimated_peak_bytes"]
                .as_u64()
                .unwrap()
        };
        let r = &out.record;
        let rows = (r.split.train.len() + r.split.test.len()) as u64;
        assert_eq!(
            peak(&out) - peak(&unscaled),
            rows * r.output_names.len() as u64 * 8
        );
        let rec = out.record.model.as_ref().unwrap();
        let t = rec
            .target_scaler
            .as_ref()
            .expect("the target scaling is saved");
        assert_eq!(t.mean.len(), out.record.output_names.len());
        let dir = store.save(&out.record, &out.matrices).unwrap();
        let table = predict_file(&dir, &cfg.data.path).unwrap();
        let saved = predictions(&out);
        for (k, &row) in out.record.split.test.iter().enumerate() {
            for j in 0..saved.ncols() {
                assert_eq!(
                    saved[[k, j]].to_bits(),
                    table.scores[[row, j]].to_bits(),
                    "{file}: row {row}, output {j}"
                );
            }
        }
        // the config says how, so a replay scales the same way
        let text = std::fs::read_to_string(dir.join("session.json")).unwrap();
        assert!(text.contains("\"target_scale\""), "{file}");
    }
}

#[test]
fn a_bad_target_scale_is_refused_naming_the_option() {
    let store = temp_dir("target-scale", "bad", true);
    let out = binary::ovk(
        &[
            "run",
            "--data",
            "datasets/enb.csv",
            "--method",
            "krr",
            "--target-scale",
            "centre",
        ],
        &store,
    );
    let err = binary::stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--target-scale: 'centre'") && err.contains("center"),
        "{err}"
    );
}

/// A session whose saved target scaling does not fit its outputs is refused, naming it.
#[test]
fn a_torn_target_scaler_is_refused_on_load() {
    let store = Store::open(Some(&temp_dir("target-scale", "torn", true))).unwrap();
    let mut cfg: RunConfig = serde_json::from_value(serde_json::json!({
        "data": {"path": root().join("datasets/linnerud.csv")}, "method": "krr"
    }))
    .unwrap();
    cfg.data.target_scale = TargetScale::Standard;
    let out = train::run(&cfg, &mut Silent).unwrap();
    let dir = store.save(&out.record, &out.matrices).unwrap();
    let json = dir.join("session.json");
    for (key, value, want) in [
        (
            "mean",
            serde_json::json!([1.0]),
            "model.target_scaler: 1 means and 3 scales",
        ),
        (
            "std",
            serde_json::json!([1.0, 0.0, 1.0]),
            "model.target_scaler: the scale of column 1 is 0",
        ),
    ] {
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let saved = v["model"]["target_scaler"][key].clone();
        v["model"]["target_scaler"][key] = value;
        std::fs::write(&json, serde_json::to_string(&v).unwrap()).unwrap();
        let Err(e) = predict_file(&dir, &cfg.data.path) else {
            panic!("{key}: a torn target scaler predicts");
        };
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains(want), "{e}");
        v["model"]["target_scaler"][key] = saved;
        std::fs::write(&json, serde_json::to_string(&v).unwrap()).unwrap();
    }
    assert!(predict_file(&dir, &cfg.data.path).is_ok());
}
