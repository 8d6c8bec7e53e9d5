//! Issue 37, point 3: sparse features end to end. A LIBSVM file's features kept sparse
//! (`--sparse yes`, or `auto` on a large mostly-zero table) fit, save, replay and predict as the
//! same file read into ordinary columns, and a 6 000 × 47 236 text-like table at 0.2 % density
//! is never densified on its way to the kernels.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use ndarray::Array2;
use ndarray_npy::read_npy;
use ovk_core::data::{prepare, DataConfig, PrepareOptions, SparseChoice};
use ovk_core::kernels::{cross_gram, Kernel};
use ovk_core::util::rng::Rng;

use crate::common::binary::{assert_ok, ovk, stderr, stdout, temp_dir};

/// A text-like multi-label LIBSVM file of 4 labels (`ovk_lab::synthetic`).
fn write_text_like(path: &Path, rows: usize, features: usize, per_row: usize, seed: u64) {
    ovk_lab::synthetic::write_text_like_libsvm(path, rows, features, per_row, 4, seed).unwrap();
}

fn run(store: &Path, data: &Path, args: &[&str]) -> PathBuf {
    let mut all = vec!["run", "--data", data.to_str().unwrap(), "--json"];
    all.extend_from_slice(args);
    let out = ovk(&all, store);
    assert_ok(&out, &format!("{args:?}: "));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    PathBuf::from(v["session"].as_str().unwrap())
}

fn session(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("session.json")).unwrap()).unwrap()
}

fn close(a: &Array2<f64>, b: &Array2<f64>, tol: f64) -> bool {
    a.dim() == b.dim()
        && a.iter()
            .zip(b)
            .all(|(x, y)| (x - y).abs() <= tol * y.abs().max(1.0))
}

#[test]
fn sparse_and_column_readings_of_a_libsvm_file_fit_and_predict_alike() {
    let dir = temp_dir("sparse", "alike", true);
    let store = dir.join("store");
    let svm = dir.join("text.svm");
    write_text_like(&svm, 160, 600, 25, 7);
    for (method, kernel, extra) in [
        ("krr", "linear", vec![]),
        ("krr", "gaussian", vec![]),
        ("okl", "linear", vec![]),
        ("okl", "gaussian", vec![]),
        ("okl", "polynomial", vec![]),
        ("okl", "cosine", vec![]),
        ("lowrank-okl", "cosine", vec!["--input-rank", "40"]),
        ("lowrank-okl", "gaussian", vec!["--input-rank", "40"]),
        ("vvmr", "laplacian", vec!["--labeled", "0.5"]),
    ] {
        let mut base = vec!["--method", method, "--kernel", kernel];
        base.extend(&extra);
        let with = |sparse: &str| {
            let mut a = base.clone();
            a.extend(["--sparse", sparse]);
            run(&store, &svm, &a)
        };
        let (sparse, dense) = (with("yes"), with("no"));
        let (s, d) = (session(&sparse), session(&dense));
        assert!(
            s["dataset"]["packed_width"].as_u64().unwrap() >= 1,
            "{method}"
        );
        assert!(d["dataset"].get("packed_width").is_none(), "{method}");
        assert_eq!(s["config"]["data"]["sparse"], "yes");
        let p: Array2<f64> = read_npy(sparse.join("predictions_test.npy")).unwrap();
        let q: Array2<f64> = read_npy(dense.join("predictions_test.npy")).unwrap();
        assert!(close(&p, &q, 1e-8), "{method} {kernel}: {p} vs {q}");
        // The sparse session's model applies to the file read sparse: its test rows score as
        // the run scored them (the training rows are recognised and left out).
        let out = ovk(
            &[
                "predict",
                sparse.to_str().unwrap(),
                "--data",
                svm.to_str().unwrap(),
                "--json",
            ],
            &store,
        );
        assert_ok(&out, method);
        let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(
            v["training_rows_left_out"],
            s["split"]["train"].as_array().unwrap().len()
        );
        for (k, want) in s["metrics"]["test"].as_object().unwrap() {
            let got = v["metrics"][k].as_f64().unwrap();
            assert!(
                (got - want.as_f64().unwrap()).abs() < 1e-9,
                "{method} {kernel} {k}: {got} vs {want}"
            );
        }
        let out = ovk(&["replay", sparse.to_str().unwrap(), "--verify"], &store);
        assert_ok(&out, &format!("replay {method}"));
        // The same rows in another file with one row wider than any trained on (its rows pack
        // wider): the training rows are still recognised by their content.
        let copy = dir.join("copy.svm");
        let wide: Vec<String> = (1..=200).map(|j| format!("{j}:1")).collect();
        let text = std::fs::read_to_string(&svm).unwrap();
        std::fs::write(&copy, format!("{text}0 {}\n", wide.join(" "))).unwrap();
        let out = ovk(
            &[
                "predict",
                sparse.to_str().unwrap(),
                "--data",
                copy.to_str().unwrap(),
                "--json",
            ],
            &store,
        );
        assert_ok(&out, method);
        let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        if s["model"]["arrays"].to_string().contains("x_train") {
            assert_eq!(
                v["training_rows_left_out"],
                s["split"]["train"].as_array().unwrap().len(),
                "{method} {kernel}"
            );
        }
    }
}

#[test]
fn new_rows_may_hold_features_the_model_never_saw_or_lack_its_last_ones() {
    let dir = temp_dir("sparse", "newrows", true);
    let store = dir.join("store");
    let svm = dir.join("text.svm");
    write_text_like(&svm, 120, 300, 20, 3);
    let fit = run(
        &store,
        &svm,
        &["--method", "okl", "--kernel", "gaussian", "--sparse", "yes"],
    );
    // Two new rows: one with an index beyond training's, one with only the first feature.
    let new = dir.join("new.svm");
    std::fs::write(&new, "0 1:0.5 5:1.0 9999:3.0\n1 1:0.25\n").unwrap();
    let out = ovk(
        &[
            "predict",
            fit.to_str().unwrap(),
            "--data",
            new.to_str().unwrap(),
        ],
        &store,
    );
    assert_ok(&out, "predict new rows");
    assert_eq!(stdout(&out).lines().count(), 3, "{}", stdout(&out));
    // The same model refuses a CSV: its features were a sparse block.
    let csv = dir.join("new.csv");
    std::fs::write(&csv, "f1,f5\n0.5,1\n").unwrap();
    let out = ovk(
        &[
            "predict",
            fit.to_str().unwrap(),
            "--data",
            csv.to_str().unwrap(),
        ],
        &store,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("sparse features"), "{}", stderr(&out));
}

#[test]
fn choices_only_ordinary_columns_allow_are_refused_with_the_way_out() {
    let dir = temp_dir("sparse", "refusals", true);
    let store = dir.join("store");
    let svm = dir.join("text.svm");
    write_text_like(&svm, 60, 100, 10, 5);
    let csv = crate::common::binary::root().join("datasets/enb.csv");
    for (data, args, want) in [
        (&svm, vec!["--features", "f1,f2"], "--sparse no"),
        (
            &svm,
            vec!["--views", "a=f1..f50,b=f51..f100"],
            "--sparse no",
        ),
        (&csv, vec![], "holds no sparse features"),
    ] {
        let mut a = vec![
            "run",
            "--data",
            data.to_str().unwrap(),
            "--method",
            "krr",
            "--sparse",
            "yes",
        ];
        a.extend(&args);
        let out = ovk(&a, &store);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(want), "{args:?}: {}", stderr(&out));
    }
    // Naming every feature of the block (as the workbench does) is choosing the block.
    let all: Vec<String> = (1..=100).map(|j| format!("f{j}")).collect();
    let sel = all.join(",");
    run(
        &store,
        &svm,
        &["--method", "krr", "--sparse", "yes", "--features", &sel],
    );
}

/// RCV1's shape: 6 000 rows × 47 236 features at 0.2 % density. Under `--sparse auto` the
/// features stay sparse (the dense matrix would be 2.3 GB); the prepared inputs are a few
/// megabytes, and a Gaussian kernel value on them is the one on the standardised dense rows.
#[test]
fn a_text_sized_table_stays_sparse_and_its_kernel_is_the_dense_one() {
    let dir = temp_dir("sparse", "rcv1", true);
    let svm = dir.join("rcv1-like.svm");
    let (rows, features) = (6000, 47_236);
    write_text_like(&svm, rows, features, 100, 11);
    let mut cfg = DataConfig::new(&svm);
    assert_eq!(cfg.sparse, SparseChoice::Auto);
    cfg.test_fraction = 0.2;
    let p = prepare(&cfg, PrepareOptions::default()).unwrap();
    let width = p.info.packed_width.expect("kept sparse under auto");
    let dense_bytes = (rows * p.feature_names.len() * 8) as f64;
    let bytes = ((p.x_train.len() + p.x_test.len()) * 8) as f64;
    assert!(p.feature_names.len() > 40_000, "{}", p.feature_names.len());
    assert!(
        bytes < dense_bytes / 50.0,
        "{bytes} bytes for a {dense_bytes}-byte table"
    );
    assert_eq!(p.x_train.ncols(), 5 + 2 * width);
    // The workbench's preview says so, and summarises the block without densifying it.
    let table = ovk_core::data::load_table(&svm, 3).unwrap();
    assert_eq!(table.sparse, p.feature_names.len());
    assert_eq!(table.columns.len(), 4 + p.feature_names.len());
    // Brute force over every column for two training rows, from the file's text.
    let text = std::fs::read_to_string(&svm).unwrap();
    let dense_row = |file_row: usize| {
        let mut x = vec![0.0; p.feature_names.len()];
        let line = text.lines().nth(file_row).unwrap();
        for t in line.split_whitespace().skip(1) {
            let (i, v) = t.split_once(':').unwrap();
            x[i.parse::<usize>().unwrap() - 1] = v.parse().unwrap();
        }
        x.iter()
            .enumerate()
            .map(|(j, v)| (v - p.scaler.mean[j]) / p.scaler.std[j])
            .collect::<Vec<f64>>()
    };
    let (a, b) = (dense_row(p.train_rows[0]), dense_row(p.train_rows[1]));
    let d2: f64 = a.iter().zip(&b).map(|(x, y)| (x - y) * (x - y)).sum();
    let sigma = d2.sqrt();
    let kernel = Kernel::Gaussian { sigma };
    let k = cross_gram(
        &kernel,
        p.x_train.slice(ndarray::s![0..1, ..]),
        p.x_train.slice(ndarray::s![1..2, ..]),
    )
    .unwrap();
    let want = (-d2 / (2.0 * sigma * sigma)).exp();
    assert!((k[[0, 0]] - want).abs() < 1e-12, "{} vs {want}", k[[0, 0]]);
    let lin = cross_gram(
        &Kernel::Linear,
        p.x_train.slice(ndarray::s![0..1, ..]),
        p.x_train.slice(ndarray::s![1..2, ..]),
    )
    .unwrap();
    let dot: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
    assert!(
        (lin[[0, 0]] - dot).abs() < 1e-9 * dot.abs().max(1.0),
        "{} vs {dot}",
        lin[[0, 0]]
    );
}

/// A sparse ARFF file (MEKA's `-C 2`, its two labels declared numeric, so they start inside
/// the numeric block and are taken out as outputs) fits alike kept sparse and as columns.
#[test]
fn a_sparse_arff_file_fits_alike_kept_sparse_and_as_columns() {
    let dir = temp_dir("sparse", "arff", true);
    let store = dir.join("store");
    let arff = dir.join("text.arff");
    let mut rng = Rng::new(9);
    let mut t =
        String::from("@relation 'text: -C 2'\n@attribute y0 numeric\n@attribute y1 numeric\n");
    for j in 0..80 {
        writeln!(t, "@attribute w{j} numeric").unwrap();
    }
    t.push_str("@attribute source {web,mail}\n@data\n");
    for _ in 0..90 {
        let mut pairs: Vec<(usize, f64)> = (0..6)
            .map(|_| (2 + rng.below(80), 1.0 + rng.below(5) as f64))
            .collect();
        pairs.sort_unstable_by_key(|p| p.0);
        pairs.dedup_by_key(|p| p.0);
        let s: f64 = pairs
            .iter()
            .map(|p| if p.0 % 3 == 0 { p.1 } else { -p.1 * 0.5 })
            .sum();
        let mut cells: Vec<String> = Vec::new();
        if s > 0.0 {
            cells.push("0 1".into());
        }
        if pairs.len() > 5 {
            cells.push("1 1".into());
        }
        cells.extend(pairs.iter().map(|(j, v)| format!("{j} {v}")));
        if rng.uniform() < 0.5 {
            cells.push("82 mail".into());
        }
        writeln!(t, "{{{}}}", cells.join(", ")).unwrap();
    }
    std::fs::write(&arff, t).unwrap();
    let fit = |sparse: &str| {
        run(
            &store,
            &arff,
            &[
                "--method", "okl", "--kernel", "gaussian", "--sparse", sparse,
            ],
        )
    };
    let (s, d) = (fit("yes"), fit("no"));
    let (js, jd) = (session(&s), session(&d));
    assert_eq!(js["output_names"], jd["output_names"]);
    assert_eq!(js["output_names"].as_array().unwrap().len(), 2);
    // The nominal `source` is no sparse feature: beside the block it is left out, where the
    // column reading one-hot encodes it. Without it, the column reading matches.
    assert!(js["dataset"]["packed_width"].is_u64());
    let d2 = run(
        &store,
        &arff,
        &[
            "--method",
            "okl",
            "--kernel",
            "gaussian",
            "--sparse",
            "no",
            "--features",
            "w*",
        ],
    );
    let p: Array2<f64> = read_npy(s.join("predictions_test.npy")).unwrap();
    let q: Array2<f64> = read_npy(d2.join("predictions_test.npy")).unwrap();
    assert!(close(&p, &q, 1e-8), "{p} vs {q}");
}

/// A Parquet file with the features as two list columns (`indices`, `values`; scipy's CSR, a
/// Hugging Face dataset) fits as the LIBSVM file of the same rows, kept sparse.
#[test]
fn a_parquet_list_pair_fits_as_the_libsvm_file() {
    use polars::prelude::*;
    let dir = temp_dir("sparse", "parquet", true);
    let store = dir.join("store");
    let svm = dir.join("text.svm");
    write_text_like(&svm, 120, 400, 15, 13);
    let text = std::fs::read_to_string(&svm).unwrap();
    let (mut idx, mut val, mut labels) = (Vec::new(), Vec::new(), vec![Vec::new(); 4]);
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let first = words.next().unwrap();
        let (set, feats): (&str, Vec<&str>) = if first.contains(':') {
            ("", std::iter::once(first).chain(words).collect())
        } else {
            (first, words.collect())
        };
        for (k, l) in labels.iter_mut().enumerate() {
            l.push(f64::from(u8::from(
                set.split(',').any(|s| s == k.to_string()),
            )));
        }
        let (i, v): (Vec<i64>, Vec<f64>) = feats
            .iter()
            .map(|t| {
                let (i, v) = t.split_once(':').unwrap();
                (i.parse::<i64>().unwrap() - 1, v.parse::<f64>().unwrap())
            })
            .unzip();
        idx.push(Series::new("".into(), i));
        val.push(Series::new("".into(), v));
    }
    let mut cols: Vec<Column> = labels
        .into_iter()
        .enumerate()
        .map(|(k, l)| Column::new(format!("label_{k}").into(), l))
        .collect();
    cols.push(Column::new("indices".into(), idx));
    cols.push(Column::new("values".into(), val));
    let mut df = DataFrame::new_infer_height(cols).unwrap();
    let pq = dir.join("text.parquet");
    ParquetWriter::new(std::fs::File::create(&pq).unwrap())
        .finish(&mut df)
        .unwrap();
    let args = ["--method", "okl", "--kernel", "gaussian", "--sparse", "yes"];
    let a = run(&store, &svm, &args);
    let targets = ["--targets", "label_*"];
    let b = run(&store, &pq, &[&args[..], &targets[..]].concat());
    let p: Array2<f64> = read_npy(a.join("predictions_test.npy")).unwrap();
    let q: Array2<f64> = read_npy(b.join("predictions_test.npy")).unwrap();
    assert!(close(&p, &q, 1e-12), "{p} vs {q}");
    assert_eq!(session(&b)["dataset"]["features"][0], "f0");
}

/// A model that read a LIBSVM file as columns predicts a new LIBSVM file whose largest index
/// is smaller than training's: the columns past it are zeros, as in the file, not missing.
#[test]
fn a_column_model_predicts_a_libsvm_file_that_stops_short() {
    let dir = temp_dir("sparse", "short", true);
    let store = dir.join("store");
    let svm = dir.join("text.svm");
    write_text_like(&svm, 80, 200, 12, 17);
    assert_eq!(
        ovk_core::data::load_table(&svm, 3).unwrap().sparse,
        0,
        "small: auto is dense"
    );
    let fit = run(&store, &svm, &["--method", "krr", "--sparse", "no"]);
    let width = session(&fit)["feature_names"].as_array().unwrap().len();
    let short = "0 1:0.5 5:1.0\n1 2:0.25\n";
    let spanning = format!("{short}0 {width}:0\n");
    let predict = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let out = ovk(
            &[
                "predict",
                fit.to_str().unwrap(),
                "--data",
                path.to_str().unwrap(),
            ],
            &store,
        );
        assert_ok(&out, name);
        stdout(&out)
            .lines()
            .take(3)
            .map(String::from)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        predict("short.svm", short),
        predict("spanning.svm", &spanning)
    );
}

#[test]
fn a_linear_kernel_on_sparse_rows_is_solved_on_a_krylov_basis_as_exactly_as_by_eigh() {
    // 900 training rows: the basis is accepted well before it spans them, and the fit still
    // equals the dense reading's eigendecomposition route.
    let dir = temp_dir("sparse", "krylov", true);
    let store = dir.join("store");
    let svm = dir.join("text.svm");
    write_text_like(&svm, 1200, 5000, 30, 11);
    for method in ["okl", "krr"] {
        let with = |sparse: &str| {
            let args = ["--method", method, "--kernel", "linear", "--sparse", sparse];
            run(&store, &svm, &args)
        };
        let (sparse, dense) = (with("yes"), with("no"));
        let s = session(&sparse);
        let n = s["split"]["train"].as_array().unwrap().len() as u64;
        let k = &s["details"]["krylov"];
        let dim = k["dim"].as_u64().unwrap();
        assert!(
            dim > 0 && dim < n / 2,
            "{method}: a {dim}-column basis for {n} rows"
        );
        assert!(
            k["sylvester_residual"].as_f64().unwrap() < 1e-6,
            "{method}: {k}"
        );
        assert!(session(&dense)["details"].get("krylov").is_none());
        let p: Array2<f64> = read_npy(sparse.join("predictions_test.npy")).unwrap();
        let q: Array2<f64> = read_npy(dense.join("predictions_test.npy")).unwrap();
        assert!(close(&p, &q, 1e-6), "{method}: {p} vs {q}");
        if method == "okl" {
            let notes = s["notes"].to_string();
            assert!(notes.contains("Krylov basis"), "{notes}");
            let objective: Vec<f64> = s["trace"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["objective"].as_f64().unwrap())
                .collect();
            assert!(objective.windows(2).all(|w| w[1] <= w[0] * (1.0 + 1e-12)));
        }
    }
}
