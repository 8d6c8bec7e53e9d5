//! `ovk predict`: a saved model applied to the file it was trained on reproduces the session's
//! stored test predictions bit for bit, for every method; bad files and incomplete sessions are
//! refused with exit 2, naming the column or the file.

use crate::common::binary::{self, root, temp_dir};
use std::path::{Path, PathBuf};
use std::process::Command;

use ovk_core::methods::Silent;
use ovk_core::session::{self, Store};
use ovk_core::train::{self, predict_file, RunConfig};

fn scratch(tag: &str) -> PathBuf {
    temp_dir("predict", tag, true)
}

fn config(v: serde_json::Value) -> RunConfig {
    let mut c: RunConfig = serde_json::from_value(v).unwrap();
    c.data.path = root().join(&c.data.path);
    c
}

/// Train, save, and predict the training file again; the test rows must match bit for bit.
fn round_trip(tag: &str, cfg: serde_json::Value) -> PathBuf {
    let cfg = config(cfg);
    let out = train::run(&cfg, &mut Silent).unwrap();
    let store = Store::open(Some(&scratch(tag))).unwrap();
    let dir = store.save(&out.record, &out.matrices).unwrap();
    let table = predict_file(&dir, &cfg.data.path).unwrap();
    let saved = session::load(&dir)
        .unwrap()
        .matrix("predictions_test")
        .unwrap();
    let test = &out.record.split.test;
    assert!(!test.is_empty(), "{tag}: no test rows");
    assert_eq!(table.n_rows(), out.record.dataset.rows, "{tag}");
    for (k, &row) in test.iter().enumerate() {
        for j in 0..saved.ncols() {
            let (a, b) = (saved[[k, j]], table.scores[[row, j]]);
            assert_eq!(
                a.to_bits(),
                b.to_bits(),
                "{tag}: file row {row}, output {j}: stored {a}, predicted {b}"
            );
        }
    }
    dir
}

#[test]
fn krr_multiclass_reproduces_and_decodes_classes() {
    let dir = round_trip(
        "krr",
        serde_json::json!({
            "data": {"path": "datasets/iris.csv"}, "method": "krr", "params": {"lambda": 0.1}
        }),
    );
    let table = predict_file(&dir, &root().join("datasets/iris.csv")).unwrap();
    let (name, classes) = &table.decoded[0];
    assert_eq!(name, "species");
    // iris is separable enough: the decoded classes agree with the file on most rows.
    let truth = std::fs::read_to_string(root().join("datasets/iris.csv")).unwrap();
    let agree = truth
        .lines()
        .skip(1)
        .zip(classes)
        .filter(|(line, c)| line.rsplit(',').next() == Some(c.as_str()))
        .count();
    assert!(agree >= 140, "{agree} of 150 rows decoded to their class");
}

#[test]
fn okl_regression_reproduces() {
    round_trip(
        "okl",
        serde_json::json!({
            "data": {"path": "datasets/linnerud.csv"}, "method": "okl", "params": {"lambda": 1.0}
        }),
    );
}

#[test]
fn lowrank_okl_reproduces() {
    round_trip(
        "lowrank",
        serde_json::json!({
            "data": {"path": "datasets/wq.csv"}, "method": "lowrank-okl", "params": {"rank": 5}
        }),
    );
}

#[test]
fn kde_reproduces_with_both_preimages() {
    round_trip(
        "kde",
        serde_json::json!({
            "data": {"path": "datasets/linnerud.csv"}, "method": "kde",
            "params": {"ovk": "conditional"}
        }),
    );
    round_trip(
        "kde-closed",
        serde_json::json!({
            "data": {"path": "datasets/linnerud.csv"}, "method": "kde",
            "params": {"output_kernel": "linear", "preimage": "closed-form"}
        }),
    );
}

#[test]
fn vvmr_semi_supervised_multilabel_reproduces_and_decodes_labels() {
    let dir = round_trip(
        "vvmr",
        serde_json::json!({
            "data": {"path": "datasets/emotions.csv", "labeled": 100.0}, "method": "vvmr"
        }),
    );
    let table = predict_file(&dir, &root().join("datasets/emotions.csv")).unwrap();
    assert_eq!(table.decoded.len(), table.output_names.len());
    for (k, (name, labels)) in table.decoded.iter().enumerate() {
        assert_eq!(name, &table.output_names[k]);
        for (i, l) in labels.iter().enumerate() {
            let want = if table.scores[[i, k]] > 0.0 { "1" } else { "0" };
            assert_eq!(l, want);
        }
    }
}

#[test]
fn mvml_reproduces_exact_and_nystrom() {
    round_trip(
        "mvml",
        serde_json::json!({
            "data": {"path": "datasets/emotions.csv"}, "method": "mvml",
            "params": {"nystrom": 0.1}
        }),
    );
    round_trip(
        "mvml-exact",
        serde_json::json!({
            "data": {"path": "datasets/emotions.csv", "test_fraction": 0.5}, "method": "mvml",
            "params": {"max_iter": 5}
        }),
    );
}

fn ovk(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ovk"))
        .args(args)
        .output()
        .unwrap()
}

fn iris_session(tag: &str) -> (PathBuf, PathBuf) {
    let cfg = config(serde_json::json!({
        "data": {"path": "datasets/iris.csv"}, "method": "okl", "params": {"lambda": 0.1}
    }));
    let out = train::run(&cfg, &mut Silent).unwrap();
    let work = scratch(tag);
    let store = Store::open(Some(&work.join("store"))).unwrap();
    (store.save(&out.record, &out.matrices).unwrap(), work)
}

fn refused(out: &std::process::Output, names: &[&str]) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    for n in names {
        assert!(err.contains(n), "message does not name {n}: {err}");
    }
}

fn write(path: &Path, text: &str) -> String {
    std::fs::write(path, text).unwrap();
    path.display().to_string()
}

#[test]
fn the_command_writes_csv_and_parquet_and_stdout() {
    let (dir, work) = iris_session("cli");
    let d = dir.display().to_string();
    let data = root().join("datasets/iris.csv").display().to_string();
    let csv = work.join("p.csv");
    let out = ovk(&[
        "predict",
        &d,
        "--data",
        &data,
        "--out",
        &csv.display().to_string(),
    ]);
    binary::assert_ok(&out, "");
    let text = std::fs::read_to_string(&csv).unwrap();
    let stored = predict_file(&dir, Path::new(&data)).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "species,species=0_score,species=1_score,species=2_score"
    );
    // The CSV's numbers read back to the same bits.
    for (i, line) in lines.enumerate() {
        let cells: Vec<&str> = line.split(',').collect();
        for (j, cell) in cells.iter().skip(1).take(3).enumerate() {
            let v: f64 = cell.parse().unwrap();
            assert_eq!(v.to_bits(), stored.scores[[i, j]].to_bits());
        }
        assert_eq!(cells[0], stored.decoded[0].1[i]);
    }
    let stdout = ovk(&["predict", &d, "--data", &data, "--out", "-"]);
    assert!(stdout.status.success());
    assert_eq!(String::from_utf8_lossy(&stdout.stdout), text);

    let pq = work.join("p.parquet");
    let out = ovk(&[
        "predict",
        &d,
        "--data",
        &data,
        "--out",
        &pq.display().to_string(),
    ]);
    binary::assert_ok(&out, "");
    let back = ovk_core::data::read_numeric_columns(&pq, &["species=0_score".into()]).unwrap();
    for i in 0..back.nrows() {
        assert_eq!(back[[i, 0]].to_bits(), stored.scores[[i, 0]].to_bits());
    }
}

/// A polynomial kernel of degree 20 overflows on inputs far beyond the training range: the
/// prediction is refused naming the row, not written as NaN.
#[test]
fn predictions_that_overflow_are_refused_naming_the_row() {
    let work = scratch("overflow");
    let data = write(
        &work.join("poly.csv"),
        "x,y\n1,2\n2,3\n3,5\n4,4\n5,7\n6,8\n7,7\n8,9\n",
    );
    let store = work.join("store");
    let store_arg = store.display().to_string();
    let out = ovk(&[
        "run",
        "--data",
        &data,
        "--targets",
        "y",
        "--method",
        "krr",
        "--kernel",
        "polynomial",
        "--degree",
        "20",
        "--test-fraction",
        "0",
        "--name",
        "poly",
        "--sessions",
        &store_arg,
    ]);
    binary::assert_ok(&out, "");
    let far = write(&work.join("far.csv"), "x\n2\n1e20\n");
    refused(
        &ovk(&["predict", "poly", "--data", &far, "--sessions", &store_arg]),
        &["far.csv", "data row 2", "not a finite number"],
    );
    let near = write(&work.join("near.csv"), "x\n3\n");
    binary::assert_ok(
        &ovk(&["predict", "poly", "--data", &near, "--sessions", &store_arg]),
        "",
    );
}

#[test]
fn bad_files_are_refused_naming_the_column() {
    let (dir, work) = iris_session("bad");
    let d = dir.display().to_string();
    let header = "sepal_length,sepal_width,petal_length,petal_width,species\n";
    let missing = write(
        &work.join("missing.csv"),
        "sepal_length,sepal_width,petal_length,species\n5.1,3.5,1.4,0\n",
    );
    refused(
        &ovk(&["predict", &d, "--data", &missing]),
        &["missing.csv", "`petal_width`"],
    );
    let new_class = write(
        &work.join("newclass.csv"),
        &format!("{header}5.1,3.5,1.4,0.2,0\n6.0,3.0,4.0,1.0,7\n"),
    );
    refused(
        &ovk(&["predict", &d, "--data", &new_class]),
        &["`species`", "`7`"],
    );
    let text = write(
        &work.join("text.csv"),
        &format!("{header}5.1,3.5,1.4,0.2,0\n6.0,3.0,4.0,1.0,setosa\n"),
    );
    refused(&ovk(&["predict", &d, "--data", &text]), &["`species`"]);
    let text_feature = write(
        &work.join("textfeature.csv"),
        &format!("{header}5.1,3.5,1.4,0.2,0\n6.0,3.0,4.0,wide,1\n"),
    );
    refused(
        &ovk(&["predict", &d, "--data", &text_feature]),
        &["`petal_width`"],
    );
    // Values a fit would refuse are refused here too, and an overflowing kernel is an error,
    // never a NaN in the output.
    let huge = write(
        &work.join("huge.csv"),
        &format!("{header}5.1,3.5,1.4,1e200,0\n"),
    );
    refused(
        &ovk(&["predict", &d, "--data", &huge]),
        &["`petal_width`", "1e200", "data row 1"],
    );
    // Without the class column is fine: the model needs only the features.
    let features_only = write(
        &work.join("features.csv"),
        "petal_width,sepal_length,sepal_width,petal_length\n0.2,5.1,3.5,1.4\n",
    );
    let out = ovk(&["predict", &d, "--data", &features_only]);
    binary::assert_ok(&out, "");
}

#[test]
fn predictions_never_replace_their_input_or_the_session() {
    let (dir, work) = iris_session("clobber");
    let data = work.join("rows.csv");
    std::fs::copy(root().join("datasets/iris.csv"), &data).unwrap();
    let before = std::fs::read(&data).unwrap();
    let d = dir.display().to_string();
    let p = data.display().to_string();
    refused(
        &ovk(&["predict", &d, "--data", &p, "--out", &p]),
        &["data file"],
    );
    assert_eq!(std::fs::read(&data).unwrap(), before);
    let inside = dir.join("session.json").display().to_string();
    refused(
        &ovk(&["predict", &d, "--data", &p, "--out", &inside]),
        &["inside the session"],
    );
    assert!(ovk_core::session::load(&dir).is_ok());
}

#[test]
fn a_session_missing_a_model_part_is_refused_naming_the_file() {
    let (dir, _work) = iris_session("part");
    std::fs::remove_file(dir.join("model_coef.npy")).unwrap();
    let data = root().join("datasets/iris.csv").display().to_string();
    refused(
        &ovk(&["predict", &dir.display().to_string(), "--data", &data]),
        &["model_coef.npy"],
    );
}

#[test]
fn a_session_without_a_model_says_so() {
    let (dir, _work) = iris_session("nomodel");
    let mut rec = session::load(&dir).unwrap().record;
    rec.model = None;
    session::save_record(&dir, &rec).unwrap();
    let data = root().join("datasets/iris.csv").display().to_string();
    refused(
        &ovk(&["predict", &dir.display().to_string(), "--data", &data]),
        &["holds no model"],
    );
}

/// The low-rank input kernel (`--input-rank`): the model is the factor's feature map (Nyström
/// landmarks and `L_S`, or the linear kernel's primal features) and the coefficients in its
/// coordinates; predicting the training file again must give the stored rows bit for bit.
#[test]
fn low_rank_input_kernel_reproduces_for_every_method() {
    let cases = [
        (
            "ir-krr",
            "datasets/wq.csv",
            "krr",
            "gaussian",
            serde_json::json!({}),
        ),
        (
            "ir-okl",
            "datasets/wq.csv",
            "okl",
            "gaussian",
            serde_json::json!({}),
        ),
        (
            "ir-lowrank",
            "datasets/wq.csv",
            "lowrank-okl",
            "gaussian",
            serde_json::json!({"rank": 5}),
        ),
        (
            "ir-vvmr",
            "datasets/emotions.csv",
            "vvmr",
            "gaussian",
            serde_json::json!({}),
        ),
        (
            "ir-kde",
            "datasets/wq.csv",
            "kde",
            "gaussian",
            serde_json::json!({}),
        ),
        (
            "ir-kde-closed",
            "datasets/wq.csv",
            "kde",
            "gaussian",
            serde_json::json!({"output_kernel": "linear", "preimage": "closed-form"}),
        ),
        (
            "ir-krr-linear",
            "datasets/wq.csv",
            "krr",
            "linear",
            serde_json::json!({}),
        ),
    ];
    for (tag, data, method, kernel, params) in cases {
        let dir = round_trip(
            tag,
            serde_json::json!({
                "data": {"path": data}, "method": method, "params": params,
                "kernel": {"name": kernel, "input_rank": 40}
            }),
        );
        let model = session::load(&dir).unwrap().record.model.unwrap();
        let factor = model.kind == "feature-expansion"
            || model.settings.get("scoring").and_then(|s| s.as_str()) == Some("features");
        assert!(
            factor,
            "{tag}: model kind {} is not on the factor",
            model.kind
        );
    }
}

/// A model trained with `--missing impute` fills a new row's gaps as it filled the test rows':
/// predicting the training file reproduces the stored test predictions, gaps included.
#[test]
fn an_imputing_model_fills_new_rows_as_in_training() {
    let dir = scratch("impute-data");
    let mut text = String::from("x,city,z,y\n");
    for i in 0..60 {
        let x = if i % 7 == 3 {
            String::new()
        } else {
            format!("{}", (i as f64 * 0.37).sin())
        };
        let city = match i % 11 {
            5 => "",
            k if k % 2 == 0 => "Lyon",
            _ => "Paris",
        };
        text.push_str(&format!(
            "{x},{city},{},{}\n",
            i % 5,
            (i as f64 * 0.1).cos()
        ));
    }
    let data = write(&dir.join("gaps.csv"), &text);
    let session = round_trip(
        "impute",
        serde_json::json!({
            "data": {"path": data, "targets": ["y"], "impute_missing": true},
            "method": "krr", "params": {"lambda": 0.1}
        }),
    );
    let table = predict_file(&session, Path::new(&data)).unwrap();
    assert!(
        table.filled_rows >= 60 / 7 + 60 / 11,
        "{}",
        table.filled_rows
    );
    // A model trained without imputation still refuses a gap, pointing at the option.
    let plain = round_trip(
        "no-impute",
        serde_json::json!({
            "data": {"path": data, "targets": ["y"], "features": ["z"]},
            "method": "krr", "params": {"lambda": 0.1}
        }),
    );
    assert_eq!(
        predict_file(&plain, Path::new(&data)).unwrap().filled_rows,
        0
    );
    let gap = write(&dir.join("gap.csv"), "x,city,z,y\n0.1,Lyon,,1\n");
    let e = predict_file(&plain, Path::new(&gap))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`z` has a missing value") && e.contains("--missing impute"),
        "{e}"
    );
}
