//! The command-line conventions users expect: bare boolean flags, "did you mean" for values,
//! `ovk sessions --json`, `-` as standard output, views by column selectors, and a sidecar
//! without a description.

use crate::common::binary::{root, temp_dir};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scratch(tag: &str) -> PathBuf {
    temp_dir("conv", tag, true)
}

fn ovk(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ovk"))
        .args(args)
        .current_dir(root())
        .output()
        .unwrap()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn session_json(store: &Path) -> serde_json::Value {
    let dir = std::fs::read_dir(store)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir())
        .unwrap();
    serde_json::from_str(&std::fs::read_to_string(dir.join("session.json")).unwrap()).unwrap()
}

/// A SARCOS-like table: views q1..q3 and dq1..dq3 share no `prefix_`.
fn sarcos_like(dir: &Path) -> String {
    let mut text = String::from("q1,q2,q3,dq1,dq2,dq3,y\n");
    for i in 0..40 {
        let t = i as f64 / 7.0;
        text.push_str(&format!(
            "{},{},{},{},{},{},{}\n",
            t.sin(),
            t.cos(),
            (2.0 * t).sin(),
            t.cos() * 0.5,
            -t.sin(),
            (3.0 * t).cos(),
            t.sin() + 0.3 * t.cos()
        ));
    }
    let path = dir.join("arm.csv");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn bare_boolean_flags_and_view_selectors() {
    let dir = scratch("views");
    let data = sarcos_like(&dir);
    // `ovk run` on that table with `flags`, saved into the store `name`: its session.json.
    let session = |name: &str, flags: &[&str]| {
        let store = dir.join(name).display().to_string();
        let mut args = vec!["run", "--data", data.as_str(), "--targets", "y"];
        args.extend(flags);
        args.extend(["--sessions", store.as_str()]);
        ok(&ovk(&args));
        session_json(Path::new(&store))
    };
    let s = session(
        "store",
        &[
            "--method",
            "mvml",
            "--view",
            "q=q1..q3",
            "--view",
            "dq=dq1..dq3",
            "--fixed-metric",
            "--max-iter",
            "3",
        ],
    );
    assert_eq!(s["params"]["fixed_metric"], serde_json::json!(true));
    assert_eq!(s["details"]["views"], serde_json::json!(["q", "dq"]));
    let s = session("store2", &["--method", "krr", "--drop-missing", "false"]);
    assert_eq!(
        s["config"]["data"]["drop_missing"],
        serde_json::json!(false)
    );
}

#[test]
fn option_values_get_did_you_mean() {
    let out = ovk(&["run", "--data", "datasets/iris.csv", "--method", "okll"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("did you mean 'okl'"), "{err}");
    let out = ovk(&[
        "run",
        "--data",
        "datasets/linnerud.csv",
        "--method",
        "kde",
        "--ovk",
        "conditionl",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("did you mean 'conditional'"), "{err}");
}

/// Every choice, as a flag or as a key of a config file, refuses a typo naming the closest word
/// (and the flag, or the file and key), before any data is read.
#[test]
fn a_choice_typo_names_the_closest_word_in_flags_and_config_files() {
    let cases = [
        (
            "task",
            "multiclas",
            "regression, multiclass, multilabel",
            "multiclass",
        ),
        ("scale", "standrd", "standard, none", "standard"),
        ("target_scale", "centre", "none, center, standard", "center"),
        ("class_coding", "pm", "pm1, 01", "pm1"),
        ("missing", "dorp", "refuse, drop, impute", "drop"),
        (
            "kernel",
            "gausian",
            "linear, gaussian, polynomial, laplacian, cosine, precomputed",
            "gaussian",
        ),
        ("landmarks", "uniforn", "rpcholesky, uniform", "uniform"),
        ("solver", "bdc", "qn, bcd", "bcd"),
    ];
    let dir = scratch("choice-typos");
    for (key, typo, words, near) in cases {
        let flag = format!("--{}", key.replace('_', "-"));
        let tail = format!("'{typo}' is not one of {words} (did you mean '{near}'?)");
        let out = ovk(&[
            "run",
            "--data",
            "datasets/linnerud.csv",
            "--method",
            "okl",
            &flag,
            typo,
        ]);
        assert_eq!(out.status.code(), Some(2), "{flag}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("{flag}: {tail}")), "{flag}: {err}");

        let cfg = dir.join(format!("{key}.toml"));
        std::fs::write(
            &cfg,
            format!("data = \"datasets/linnerud.csv\"\nmethod = \"okl\"\n{key} = \"{typo}\"\n"),
        )
        .unwrap();
        let out = ovk(&["run", "--config", &cfg.display().to_string()]);
        assert_eq!(out.status.code(), Some(2), "{key}");
        let err = String::from_utf8_lossy(&out.stderr);
        let want = format!("{}: {key}: {tail}", cfg.display());
        assert!(err.contains(&want), "{key}: {err}");
    }
    let cfg = dir.join("method.toml");
    std::fs::write(
        &cfg,
        "data = \"datasets/linnerud.csv\"\nmethod = \"lowrank-ok\"\n",
    )
    .unwrap();
    let out = ovk(&["run", "--config", &cfg.display().to_string()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("method: 'lowrank-ok' is not one of krr, okl, lowrank-okl")
            && err.contains("(did you mean 'lowrank-okl'?)"),
        "{err}"
    );
}

#[test]
fn sessions_json_and_export_to_stdout() {
    let dir = scratch("json");
    let store = dir.join("store").display().to_string();
    ok(&ovk(&[
        "run",
        "--data",
        "datasets/iris.csv",
        "--method",
        "krr",
        "--sessions",
        &store,
    ]));
    let list: serde_json::Value =
        serde_json::from_str(&ok(&ovk(&["sessions", "--json", "--sessions", &store]))).unwrap();
    let first = &list.as_array().unwrap()[0];
    assert_eq!(first["method"], "krr");
    let id = first["id"].as_str().unwrap();
    let csv = ok(&ovk(&[
        "export",
        id,
        "--sessions",
        &store,
        "--matrix",
        "predictions_test",
        "-",
    ]));
    assert!(csv.starts_with("species=0,species=1,species=2\n"), "{csv}");
    assert_eq!(csv.lines().count(), 1 + 38);
    assert!(!Path::new(&root().join("-")).exists());
}

#[test]
fn a_sidecar_needs_no_description() {
    let dir = scratch("side");
    std::fs::copy(root().join("datasets/iris.csv"), dir.join("iris.csv")).unwrap();
    std::fs::write(
        dir.join("iris.toml"),
        "source = \"x\"\nclass = \"species\"\n",
    )
    .unwrap();
    let store = dir.join("store").display().to_string();
    ok(&ovk(&[
        "run",
        "--data",
        &dir.join("iris.csv").display().to_string(),
        "--method",
        "krr",
        "--sessions",
        &store,
    ]));
}

#[test]
fn export_writes_the_format_its_file_name_says() {
    let dir = scratch("export-format");
    let session = root().join("sessions/20261121-080316-linnerud-okl");
    let session = session.to_str().unwrap();
    let (pq, tsv) = (dir.join("pred.parquet"), dir.join("trace.tsv"));
    ok(&ovk(&[
        "export",
        session,
        "--predictions",
        pq.to_str().unwrap(),
        "--trace",
        tsv.to_str().unwrap(),
    ]));
    let bytes = std::fs::read(&pq).unwrap();
    assert!(
        bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"),
        "not Parquet"
    );
    // ovk reads back what it wrote: the Parquet predictions are a table of the same columns.
    let store = dir.join("store").display().to_string();
    let refit = ok(&ovk(&[
        "run",
        "--data",
        pq.to_str().unwrap(),
        "--method",
        "krr",
        "--targets",
        "pred_*",
        "--features",
        "true_*",
        "--sessions",
        &store,
    ]));
    assert!(refit.contains("method    krr"), "{refit}");
    // Tab-separated, and a value a trace record lacks is an empty cell, not NaN.
    let trace = std::fs::read_to_string(&tsv).unwrap();
    assert!(
        trace.starts_with("iter\tobjective\tresidual\tstep\tlambda\t"),
        "{trace}"
    );
    assert!(trace.lines().nth(1).unwrap().contains("\t\t"), "{trace}");
    assert!(!trace.contains("NaN"), "{trace}");
    let unknown = ovk(&[
        "export",
        session,
        "--trace",
        dir.join("t.txt").to_str().unwrap(),
    ]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("name a .csv, .tsv or .parquet"));
    assert!(!dir.join("t.txt").exists());
}

#[test]
fn the_store_may_come_before_the_command_and_a_path_may_not() {
    let dir = scratch("global-store");
    let store = dir.join("store").display().to_string();
    let out = ok(&ovk(&[
        "--sessions",
        &store,
        "run",
        "--data",
        "datasets/iris.csv",
        "--method",
        "krr",
    ]));
    assert!(out.contains(&store), "saved elsewhere: {out}");
    let stray = ovk(&["datasets/iris.csv", "run", "--method", "krr"]);
    assert_eq!(stray.status.code(), Some(2));
    let err = String::from_utf8_lossy(&stray.stderr);
    assert!(
        err.contains("`datasets/iris.csv` comes before the command `run`"),
        "{err}"
    );
    // A mistyped command is not taken for a missing file.
    let typo = ovk(&["sessionz"]);
    assert_eq!(typo.status.code(), Some(2));
    let err = String::from_utf8_lossy(&typo.stderr);
    assert!(err.contains("did you mean `ovk sessions`?"), "{err}");
}
