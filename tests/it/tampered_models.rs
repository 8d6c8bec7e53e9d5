//! A loaded model is checked as strictly as a fit checks its parameters: tampered copies of a
//! saved session (σ = −1, a scale of −1, a feature named twice, a transposed `L_S`, classes or
//! a target scaling that disagree with the outputs …) are refused with exit 2 naming the file
//! and the field — never predictions silently changed. The untampered copies still predict.

use std::path::{Path, PathBuf};

use ndarray::Array2;
use ndarray_npy::{ReadNpyExt, WriteNpyExt};
use serde_json::Value;

use crate::common::binary::{root, temp_dir};
use ovk_core::methods::Silent;
use ovk_core::session::Store;
use ovk_core::train::{self, predict_file, RunConfig};

/// A copy of `session` under `tag`, with `edit` applied to its session.json.
fn tampered(session: &Path, tag: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let dir = temp_dir("tampered", tag, true).join("s");
    std::fs::create_dir_all(&dir).unwrap();
    for f in std::fs::read_dir(session).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, dir.join(f.file_name().unwrap())).unwrap();
    }
    let json = dir.join("session.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    edit(&mut v);
    std::fs::write(&json, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    dir
}

/// Predicting with the tampered copy is refused (exit 2), naming each of `needles`.
fn refused(dir: &Path, data: &Path, needles: &[&str]) {
    let e = match predict_file(dir, data) {
        Ok(_) => panic!("{}: the tampered session predicted", dir.display()),
        Err(e) => e,
    };
    assert_eq!(e.exit_code(), 2, "{e}");
    let msg = e.to_string();
    for n in needles {
        assert!(msg.contains(n), "'{n}' not in: {msg}");
    }
}

fn bundled(name: &str) -> PathBuf {
    root().join("sessions").join(name)
}

fn fit(tag: &str, cfg: Value) -> PathBuf {
    let mut c: RunConfig = serde_json::from_value(cfg).unwrap();
    c.data.path = root().join(&c.data.path);
    let out = train::run(&c, &mut Silent).unwrap();
    let store = Store::open(Some(&temp_dir("tampered-fit", tag, true))).unwrap();
    store.save(&out.record, &out.matrices).unwrap()
}

/// An edit of session.json.
type Edit = Box<dyn FnOnce(&mut Value)>;

#[test]
fn tampered_records_are_refused_naming_the_file_and_field() {
    let okl = bundled("20261121-080316-linnerud-okl");
    let data = root().join("datasets/linnerud.csv");
    assert!(predict_file(&okl, &data).is_ok());
    let cases: Vec<(&str, Edit, Vec<&str>)> = vec![
        (
            "sigma-negative",
            Box::new(|v| v["model"]["settings"]["kernel"]["sigma"] = (-1.0).into()),
            vec!["session.json", "model.settings.kernel", "sigma"],
        ),
        (
            "sigma-zero",
            Box::new(|v| v["model"]["settings"]["kernel"]["sigma"] = 0.0.into()),
            vec!["session.json", "model.settings.kernel"],
        ),
        (
            "sigma-changed",
            Box::new(|v| {
                let s = v["model"]["settings"]["kernel"]["sigma"].as_f64().unwrap();
                v["model"]["settings"]["kernel"]["sigma"] = (2.0 * s).into();
            }),
            vec![
                "model.settings.kernel",
                "differs from the kernel the fit used",
            ],
        ),
        (
            "resolved-sigma-negative",
            Box::new(|v| v["kernel"]["resolved"]["sigma"] = (-1.0).into()),
            vec!["session.json", "kernel.resolved"],
        ),
        (
            "std-negative",
            Box::new(|v| v["model"]["scaler"]["std"][0] = (-1.0).into()),
            vec!["session.json", "model.scaler", "positive"],
        ),
        (
            "std-zero",
            Box::new(|v| v["model"]["scaler"]["std"][1] = 0.0.into()),
            vec!["model.scaler"],
        ),
        (
            "mean-huge",
            Box::new(|v| v["model"]["scaler"]["mean"][0] = 1e308.into()),
            vec!["model.scaler", "the mean of column 0 is 1e308"],
        ),
        (
            "std-subnormal",
            Box::new(|v| v["model"]["scaler"]["std"][1] = 1e-320.into()),
            vec!["model.scaler", "the scale of column 1 is", "outside"],
        ),
        (
            "scaler-short",
            Box::new(|v| {
                v["model"]["scaler"]["std"].as_array_mut().unwrap().pop();
            }),
            vec!["model.scaler", "scales for 3 feature columns"],
        ),
        (
            "scale-none-not-identity",
            Box::new(|v| v["scale"] = "none".into()),
            vec!["model.scaler", "identity"],
        ),
        (
            "duplicated-feature",
            Box::new(|v| v["feature_names"][1] = v["feature_names"][0].clone()),
            vec!["session.json", "feature_names", "appears twice"],
        ),
        (
            "duplicated-output",
            Box::new(|v| v["output_names"][2] = v["output_names"][0].clone()),
            vec!["output_names", "appears twice"],
        ),
        (
            "extra-output",
            Box::new(|v| {
                v["output_names"]
                    .as_array_mut()
                    .unwrap()
                    .push("extra".into())
            }),
            vec!["session.json", "output_names", "predict 3"],
        ),
        (
            "target-scaler-added",
            Box::new(|v| {
                v["model"]["target_scaler"] =
                    serde_json::json!({"mean": [1.0, 2.0, 3.0], "std": [1.0, 1.0, 1.0]})
            }),
            vec!["model.target_scaler", "present"],
        ),
    ];
    for (tag, edit, needles) in cases {
        let dir = tampered(&okl, tag, edit);
        refused(&dir, &data, &needles);
    }
}

#[test]
fn classes_that_disagree_with_the_outputs_are_refused() {
    let iris = bundled("20261121-080318-iris-krr");
    let data = root().join("datasets/iris.csv");
    let short = tampered(&iris, "class-short", |v| {
        v["model"]["class"]["values"].as_array_mut().unwrap().pop();
    });
    refused(&short, &data, &["session.json", "classes for 3 outputs"]);
    let dup = tampered(&iris, "class-dup", |v| {
        v["model"]["class"]["values"][1] = v["model"]["class"]["values"][0].clone()
    });
    refused(&dup, &data, &["model.class.values", "appears twice"]);
}

#[test]
fn a_view_kernel_other_than_the_fit_used_is_refused() {
    let mvml = bundled("20261123-201918-emotions-mvml");
    let data = root().join("datasets/emotions.csv");
    let wider = tampered(&mvml, "view-sigma", |v| {
        let s = v["model"]["settings"]["views"][1]["kernel"]["sigma"]
            .as_f64()
            .unwrap();
        v["model"]["settings"]["views"][1]["kernel"]["sigma"] = (2.0 * s).into();
    });
    refused(
        &wider,
        &data,
        &["model.settings.views[1].kernel", "view `rhythm`"],
    );
    let other = tampered(&mvml, "view-kernel", |v| {
        v["model"]["settings"]["views"][0]["kernel"]["name"] = "laplacian".into()
    });
    refused(
        &other,
        &data,
        &["model.settings.views[0].kernel", "differs"],
    );
    let out = tampered(&mvml, "view-column", |v| {
        v["model"]["settings"]["views"][0]["columns"][0] = 100000.into()
    });
    refused(
        &out,
        &data,
        &["model.settings.views[0].columns", "column 100000"],
    );
}

#[test]
fn a_target_scaling_of_the_wrong_length_or_sign_is_refused() {
    let dir = fit(
        "tscale",
        serde_json::json!({"data": {"path": "datasets/linnerud.csv", "target_scale": "standard"}, "method": "krr", "kernel": {"name": "gaussian"}}),
    );
    let data = root().join("datasets/linnerud.csv");
    assert!(predict_file(&dir, &data).is_ok());
    let short = tampered(&dir, "tscale-short", |v| {
        v["model"]["target_scaler"]["mean"]
            .as_array_mut()
            .unwrap()
            .pop();
    });
    refused(&short, &data, &["model.target_scaler", "for 3 outputs"]);
    let negative = tampered(&dir, "tscale-neg", |v| {
        v["model"]["target_scaler"]["std"][0] = (-1.0).into()
    });
    refused(&negative, &data, &["model.target_scaler", "positive"]);
    let gone = tampered(&dir, "tscale-gone", |v| {
        v["model"].as_object_mut().unwrap().remove("target_scaler");
    });
    refused(&gone, &data, &["model.target_scaler", "absent"]);
}

/// Rewrite `model_<name>.npy` of a session transposed.
fn transpose_array(dir: &Path, name: &str) {
    let p = dir.join(format!("model_{name}.npy"));
    let a = Array2::<f64>::read_npy(std::fs::File::open(&p).unwrap()).unwrap();
    let t = a.t().as_standard_layout().to_owned();
    t.write_npy(std::fs::File::create(&p).unwrap()).unwrap();
}

#[test]
fn a_transposed_model_array_is_refused_naming_the_file() {
    let dir = fit(
        "nystrom",
        serde_json::json!({"data": {"path": "datasets/linnerud.csv"}, "method": "krr", "kernel": {"name": "gaussian", "input_rank": 5}}),
    );
    let data = root().join("datasets/linnerud.csv");
    let record: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("session.json")).unwrap()).unwrap();
    assert_eq!(record["model"]["kind"], "feature-expansion", "{record}");
    assert!(predict_file(&dir, &data).is_ok());
    // L_S is square: only its triangle tells a transposed file.
    let l_s = tampered(&dir, "l_s", |_| {});
    transpose_array(&l_s, "l_s");
    refused(&l_s, &data, &["model_l_s.npy", "L_S", "above the diagonal"]);
    // The coefficients (r × 3) transposed disagree with the landmarks.
    let coef = tampered(&dir, "coef", |_| {});
    transpose_array(&coef, "coef");
    refused(&coef, &data, &["disagree"]);
}

#[test]
fn every_bundled_session_passes_the_model_checks() {
    for entry in std::fs::read_dir(root().join("sessions")).unwrap() {
        let dir = entry.unwrap().path();
        let loaded = ovk_core::session::load(&dir).unwrap();
        ovk_core::session::load_model(&loaded).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    }
}
