//! The honest study (docs/sessions.md, "What a run may look at"): the test rows' targets never
//! reach a fit unless the user asks for the papers' protocol by name; `--cv K` estimates a
//! configuration with its spread; a labelled file scores a saved model; runs not kept can be
//! pruned; every metric computed on rows that also chose something says so.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::binary::{assert_ok, ovk, root, stdout, temp_dir};
use ovk_core::util::rng::Rng;

/// The rows of a CSV file: header, then one line per row (no quoted commas in the bundled sets).
fn read_rows(path: &Path) -> (String, Vec<String>) {
    let text = fs::read_to_string(path).unwrap();
    let mut lines = text.lines().map(str::to_string);
    let header = lines.next().unwrap();
    (header, lines.filter(|l| !l.is_empty()).collect())
}

/// `dataset`'s first `n` rows with an `is_test` column (a seeded quarter of them), and the same
/// rows with the target cells of the test rows permuted among the test rows; each beside a
/// copy of the dataset's sidecar, named `<tag>-a` and `<tag>-b`. Returns (original, permuted).
fn permuted_pair(
    dir: &Path,
    tag: &str,
    dataset: &str,
    n: usize,
    is_target: impl Fn(&str) -> bool,
) -> (PathBuf, PathBuf) {
    let src = root().join("datasets").join(dataset);
    let (header, rows) = read_rows(&src);
    let rows = &rows[..n.min(rows.len())];
    let cols: Vec<&str> = header.split(',').collect();
    let targets: Vec<usize> = (0..cols.len()).filter(|&j| is_target(cols[j])).collect();
    assert!(!targets.is_empty(), "{dataset}: no target columns");
    let mut order: Vec<usize> = (0..rows.len()).collect();
    Rng::new(5).shuffle(&mut order);
    let mut test: Vec<usize> = order[..rows.len() / 4].to_vec();
    test.sort_unstable();
    // A derangement of the test rows: each takes the targets of the next one.
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.split(',').map(str::to_string).collect())
        .collect();
    let mut permuted = cells.clone();
    for (k, &i) in test.iter().enumerate() {
        let from = test[(k + 1) % test.len()];
        for &j in &targets {
            permuted[i][j] = cells[from][j].clone();
        }
    }
    assert_ne!(
        cells, permuted,
        "{dataset}: the permutation changed nothing"
    );
    let write = |name: &str, table: &[Vec<String>]| -> PathBuf {
        let name = format!("{tag}-{name}");
        let path = dir.join(format!("{name}.csv"));
        let mut text = format!("{header},is_test\n");
        for (i, r) in table.iter().enumerate() {
            text.push_str(&r.join(","));
            text.push_str(if test.binary_search(&i).is_ok() {
                ",1\n"
            } else {
                ",0\n"
            });
        }
        fs::write(&path, text).unwrap();
        let sidecar = src.with_extension("toml");
        fs::copy(&sidecar, dir.join(format!("{name}.toml"))).unwrap();
        path
    };
    (write("a", &cells), write("b", &permuted))
}

/// `ovk run … --json` in `store`; returns the session directory.
fn run_json(store: &Path, args: &[&str]) -> (PathBuf, serde_json::Value) {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = ovk(&all, store);
    assert_ok(&out, &format!("ovk {all:?}\n"));
    let v: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    (PathBuf::from(v["session"].as_str().unwrap()), v)
}

fn bytes(dir: &Path, file: &str) -> Vec<u8> {
    fs::read(dir.join(file)).unwrap_or_else(|e| panic!("{}: {e}", dir.join(file).display()))
}

/// For every method with its default settings, permuting the targets among the test rows
/// leaves the predictions on the test rows bit-identical: nothing the model learned came from
/// them. The papers' protocol (`--select-on test`), asked for by name, does see them.
#[test]
fn the_test_rows_targets_never_reach_a_default_fit() {
    let dir = temp_dir("honest", "permute", true);
    let store = dir.join("store");
    let (a, b) = permuted_pair(&dir, "labels", "emotions.csv", 240, |c| {
        c.starts_with("label_")
    });
    let (ra, rb) = permuted_pair(&dir, "loads", "enb.csv", 200, |c| c.starts_with("target_"));
    let cases: [(&str, &Path, &Path); 6] = [
        ("krr", &a, &b),
        ("okl", &a, &b),
        ("lowrank-okl", &a, &b),
        ("vvmr", &a, &b),
        ("mvml", &a, &b),
        ("kde", &ra, &rb),
    ];
    for (method, a, b) in cases {
        let args = |data: &Path| -> Vec<String> {
            [
                "--data",
                data.to_str().unwrap(),
                "--method",
                method,
                "--test-column",
                "is_test",
            ]
            .map(String::from)
            .to_vec()
        };
        let (da, ja) = run_json(
            &store,
            &args(a).iter().map(String::as_str).collect::<Vec<_>>(),
        );
        let (db, _) = run_json(
            &store,
            &args(b).iter().map(String::as_str).collect::<Vec<_>>(),
        );
        assert_eq!(
            bytes(&da, "predictions_test.npy"),
            bytes(&db, "predictions_test.npy"),
            "{method}: the test rows' targets changed its test predictions"
        );
        assert!(ja["optimistic"].is_null(), "{method}: {}", ja["optimistic"]);
    }
    // Asked for by name, lowrank-okl's λ path chooses on the test rows — which it then says.
    let on_test = |data: &Path| {
        run_json(
            &store,
            &[
                "--data",
                data.to_str().unwrap(),
                "--method",
                "lowrank-okl",
                "--test-column",
                "is_test",
                "--select-on",
                "test",
            ],
        )
    };
    let ((da, ja), (db, _)) = (on_test(&a), on_test(&b));
    assert_ne!(
        bytes(&da, "predictions_test.npy"),
        bytes(&db, "predictions_test.npy")
    );
    let why = ja["optimistic"]["reason"].as_str().unwrap();
    assert!(why.contains("--select-on test"), "{why}");
    let list = stdout(&ovk(&["sessions"], &store));
    assert!(list.contains("(optimistic)"), "{list}");
    let _ = fs::remove_dir_all(&dir);
}

/// `--cv K`: K per-fold values per metric whose mean is the reported mean and whose sample
/// standard deviation is the reported sd; each fold's value is what `--cv-folds K --cv-fold i`
/// scores alone; the final fit is the plain run's, on all training rows.
#[test]
fn cv_reports_each_folds_score_with_their_mean_and_spread() {
    let dir = temp_dir("honest", "cv", true);
    let store = dir.join("store");
    let data = root().join("datasets/enb.csv");
    let d = data.to_str().unwrap();
    let (session, v) = run_json(&store, &["--data", d, "--method", "okl", "--cv", "4"]);
    let cv = v["cv"].as_object().expect("cv in the JSON");
    assert!(cv.contains_key("mse") && cv.contains_key("r2"), "{cv:?}");
    for (name, s) in cv {
        let folds: Vec<f64> = s["folds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert_eq!(folds.len(), 4, "{name}");
        let mean = folds.iter().sum::<f64>() / 4.0;
        let sd = (folds.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 3.0).sqrt();
        assert!(
            (s["mean"].as_f64().unwrap() - mean).abs() <= 1e-12 * mean.abs().max(1.0),
            "{name}"
        );
        assert!(
            (s["sd"].as_f64().unwrap() - sd).abs() <= 1e-12 * sd.abs().max(1.0),
            "{name}"
        );
        assert!(sd > 0.0, "{name}: folds {folds:?}");
    }
    for (i, want) in cv["mse"]["folds"].as_array().unwrap().iter().enumerate() {
        let (_, f) = run_json(
            &store,
            &[
                "--data",
                d,
                "--method",
                "okl",
                "--cv-folds",
                "4",
                "--cv-fold",
                &i.to_string(),
            ],
        );
        assert_eq!(f["metrics"]["test"]["mse"], *want, "fold {i}");
    }
    let (plain, p) = run_json(&store, &["--data", d, "--method", "okl"]);
    assert_eq!(p["metrics"], v["metrics"]);
    assert_eq!(
        bytes(&plain, "predictions_test.npy"),
        bytes(&session, "predictions_test.npy")
    );
    // The folds are named, so runs on the same folds can be paired.
    let record: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(session.join("session.json")).unwrap()).unwrap();
    assert_eq!(record["split"]["folds"]["k"], 4);
    assert!(record["split"]["folds"]["id"].as_str().unwrap().len() == 12);
    assert_eq!(record["cv"]["mse"], v["cv"]["mse"]);
    let _ = fs::remove_dir_all(&dir);
}

/// A labelled file scores a saved model: given the session's own test rows, or the whole
/// table it was fitted on, `ovk predict` reproduces its stored test metrics (regression,
/// multi-class, multi-label).
#[test]
fn predict_on_the_stored_test_rows_reproduces_the_test_metrics() {
    let dir = temp_dir("honest", "predict", true);
    let store = dir.join("store");
    for (dataset, method) in [
        ("enb.csv", "okl"),
        ("iris.csv", "krr"),
        ("emotions.csv", "lowrank-okl"),
    ] {
        let data = root().join("datasets").join(dataset);
        let (session, v) = run_json(
            &store,
            &["--data", data.to_str().unwrap(), "--method", method],
        );
        let record: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(session.join("session.json")).unwrap())
                .unwrap();
        let (header, rows) = read_rows(&data);
        let mut text = format!("{header}\n");
        for i in record["split"]["test"].as_array().unwrap() {
            text.push_str(&rows[i.as_u64().unwrap() as usize]);
            text.push('\n');
        }
        let test_file = dir.join(format!("test-{dataset}"));
        fs::write(&test_file, text).unwrap();
        let predict = |file: &Path| -> serde_json::Value {
            let out = ovk(
                &[
                    "predict",
                    session.to_str().unwrap(),
                    "--data",
                    file.to_str().unwrap(),
                    "--json",
                ],
                &store,
            );
            assert_ok(&out, dataset);
            serde_json::from_str(stdout(&out).trim()).unwrap()
        };
        let p = predict(&test_file);
        assert_eq!(p["metrics"], v["metrics"]["test"], "{dataset}");
        assert_eq!(
            p["scored_rows"],
            record["split"]["test"].as_array().unwrap().len()
        );
        // The very table the model was fitted on: its training rows are left out of the
        // score, which is then the run's own held-out score, not an optimistic one.
        let p = predict(&data);
        assert_eq!(p["metrics"], v["metrics"]["test"], "{dataset} whole file");
        assert_eq!(p["rows"], rows.len(), "{dataset}");
        assert_eq!(
            p["scored_rows"],
            record["split"]["test"].as_array().unwrap().len()
        );
        assert_eq!(
            p["training_rows_left_out"],
            record["split"]["train"].as_array().unwrap().len()
        );
        // The same rows in another file (tab-separated): a model that keeps its training rows
        // recognises them by content and leaves them out too.
        if dataset == "enb.csv" {
            let tsv = dir.join("enb-copy.tsv");
            fs::write(&tsv, fs::read_to_string(&data).unwrap().replace(',', "\t")).unwrap();
            let p = predict(&tsv);
            assert_eq!(p["metrics"], v["metrics"]["test"], "{dataset} as TSV");
            assert_eq!(
                p["training_rows_left_out"],
                record["split"]["train"].as_array().unwrap().len()
            );
        }
    }
    // A file without the outputs is predicted, not scored.
    let iris = root().join("datasets/iris.csv");
    let (header, rows) = read_rows(&iris);
    let keep: Vec<usize> = header
        .split(',')
        .enumerate()
        .filter(|(_, c)| *c != "species")
        .map(|(j, _)| j)
        .collect();
    let strip = |line: &str| -> String {
        let cells: Vec<&str> = line.split(',').collect();
        keep.iter().map(|&j| cells[j]).collect::<Vec<_>>().join(",")
    };
    let mut text = format!("{}\n", strip(&header));
    for r in &rows[..10] {
        text.push_str(&strip(r));
        text.push('\n');
    }
    let bare = dir.join("bare.csv");
    fs::write(&bare, text).unwrap();
    let (session, _) = run_json(
        &store,
        &["--data", iris.to_str().unwrap(), "--method", "krr"],
    );
    let out = ovk(
        &[
            "predict",
            session.to_str().unwrap(),
            "--data",
            bare.to_str().unwrap(),
            "--json",
        ],
        &store,
    );
    assert_ok(&out, "bare");
    let p: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert!(p["metrics"].is_null() && p["rows"] == 10, "{p}");
    let _ = fs::remove_dir_all(&dir);
}

/// `ovk sessions --prune-unkept [--older-than AGE]` removes the runs not kept, and only those.
#[test]
fn prune_removes_only_the_runs_not_kept() {
    use crate::common::fixture::{record, temp_store};
    let (dir, store) = temp_store("honest-prune");
    let kept = record("kept", "2026-11-20T10:00:00Z", 3);
    let mut unkept = record("tried", "2026-11-20T11:00:00Z", 3);
    unkept.kept = false;
    let mut young = record("young", &ovk_core::session::now_rfc3339(), 3);
    young.kept = false;
    for r in [&kept, &unkept, &young] {
        store.save(r, &[]).unwrap();
    }
    let list = stdout(&ovk(&["sessions"], &dir));
    assert!(list.contains("~ marks runs not kept"), "{list}");
    let out = ovk(&["sessions", "--prune-unkept", "--older-than", "1d"], &dir);
    assert_ok(&out, "prune");
    let names: Vec<String> = store
        .list()
        .into_iter()
        .filter_map(|l| match l {
            ovk_core::session::Listing::Ok(s) => Some(s.name),
            _ => None,
        })
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names.contains(&"kept".to_string()) && names.contains(&"young".to_string()));
    assert_ok(&ovk(&["sessions", "--prune-unkept"], &dir), "prune all");
    assert_eq!(store.list().len(), 1);
    let bad = ovk(
        &["sessions", "--prune-unkept", "--older-than", "soon"],
        &dir,
    );
    assert_eq!(bad.status.code(), Some(2));
    let _ = fs::remove_dir_all(&dir);
}

/// A sweep without `--cv` scores on 3 folds of the training part (its refit's test metrics are
/// honest); `select_on = "test"` without `--cv` scores on the test part and marks the refit's
/// test metrics optimistic.
#[test]
fn a_sweep_chooses_on_folds_unless_told_to_use_the_test_rows() {
    let dir = temp_dir("honest", "sweep", true);
    let store = dir.join("store");
    let data = root().join("datasets/enb.csv");
    for (extra, folds, optimistic) in [("", 3, false), ("select_on = \"test\"\n", 0, true)] {
        let file = dir.join("grid.toml");
        fs::write(
            &file,
            format!(
                "data = \"{}\"\nmethod = \"krr\"\n{extra}lambda = [0.01, 0.1]\n",
                data.display()
            ),
        )
        .unwrap();
        let out = ovk(&["sweep", "--config", file.to_str().unwrap()], &store);
        assert_ok(&out, extra);
        let text = stdout(&out);
        let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(
            first["fold_scores"].as_array().unwrap().len(),
            folds.max(1),
            "{text}"
        );
        let saved = text
            .lines()
            .last()
            .unwrap()
            .rsplit(' ')
            .next()
            .unwrap()
            .to_string();
        let record: serde_json::Value = serde_json::from_str(
            &fs::read_to_string(Path::new(&saved).join("session.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(
            !record["optimistic"].is_null(),
            optimistic,
            "{extra}: {}",
            record["optimistic"]
        );
    }
    let _ = fs::remove_dir_all(&dir);
}
