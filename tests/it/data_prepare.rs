//! `prepare` on good inputs: codings, selectors, split, scaling, labels, views, sidecar
//! defaults on the shipped datasets, and CSV/Parquet agreement.

use std::path::{Path, PathBuf};

use ovk_core::data::{
    load_table, prepare, read_numeric_columns, sha256_hex, write_parquet, ClassCoding, DataConfig,
    PrepareOptions, Prepared, Scale, Task,
};

fn temp_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("ovk-prepare-{}-{name}", std::process::id()))
}

fn temp(name: &str, text: &str) -> PathBuf {
    let p = temp_path(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn dataset(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("datasets")
        .join(name)
}

fn run(cfg: &DataConfig) -> Prepared {
    prepare(cfg, PrepareOptions::default()).unwrap()
}

/// 12 rows: two features, a string class with 3 values, two 0/1 labels, a real target.
fn small_csv(name: &str) -> PathBuf {
    let mut s = String::from("x1,x2,kind,l_a,l_b,t\n");
    let kinds = ["cat", "ant", "bee"];
    for i in 0..12 {
        s.push_str(&format!(
            "{},{},{},{},{},{}\n",
            i,
            (i * i) % 7,
            kinds[i % 3],
            i % 2,
            (i / 3) % 2,
            0.5 * i as f64 - 1.25
        ));
    }
    temp(name, &s)
}

/// A config of the file at `p` whose class column is `class`.
fn with_class(p: &Path, class: &str) -> DataConfig {
    let mut cfg = DataConfig::new(p);
    cfg.class = Some(class.into());
    cfg
}

#[test]
fn multiclass_codings_and_class_order() {
    let p = small_csv("codings.csv");
    let mut cfg = with_class(&p, "kind");
    cfg.features = Some(vec!["x1,x2".into()]);
    cfg.test_fraction = 0.0;
    let pm = run(&cfg);
    assert_eq!(pm.task, Task::Multiclass);
    assert_eq!(
        pm.class_values.as_deref(),
        Some(&["ant".to_string(), "bee".into(), "cat".into()][..])
    );
    assert_eq!(pm.output_names, vec!["kind=ant", "kind=bee", "kind=cat"]);
    // row 0 is "cat": (−1, −1, +1); row 1 "ant": (+1, −1, −1)
    assert_eq!(pm.y_train.row(0).to_vec(), vec![-1.0, -1.0, 1.0]);
    assert_eq!(pm.y_train.row(1).to_vec(), vec![1.0, -1.0, -1.0]);
    cfg.class_coding = ClassCoding::ZeroOne;
    let zo = run(&cfg);
    assert_eq!(zo.y_train.row(0).to_vec(), vec![0.0, 0.0, 1.0]);
    assert_eq!(zo.y_train.mapv(|v| 2.0 * v - 1.0), pm.y_train);
}

#[test]
fn numeric_classes_sort_numerically() {
    let p = temp("numclass.csv", "a,c\n1,10\n2,9\n3,2\n4,10\n");
    let mut cfg = with_class(&p, "c");
    cfg.test_fraction = 0.0;
    let prep = run(&cfg);
    assert_eq!(prep.output_names, vec!["c=2", "c=9", "c=10"]);
}

#[test]
fn task_inference_multilabel_and_regression() {
    let p = small_csv("infer.csv");
    let mut cfg = DataConfig::new(&p);
    cfg.targets = Some(vec!["l_*".into()]);
    cfg.features = Some(vec!["x1..x2".into()]);
    cfg.test_fraction = 0.0;
    let ml = run(&cfg);
    assert_eq!(ml.task, Task::Multilabel);
    assert_eq!(ml.output_names, vec!["l_a", "l_b"]);
    assert!(ml.y_train.iter().all(|v| *v == 1.0 || *v == -1.0));
    assert_eq!(ml.y_train[[1, 0]], 1.0); // l_a of row 1 is 1
    cfg.class_coding = ClassCoding::ZeroOne;
    assert!(run(&cfg).y_train.iter().all(|v| *v == 1.0 || *v == 0.0));
    // One 0/1 column alone is regression; so is a real column.
    cfg.targets = Some(vec!["l_a".into()]);
    assert_eq!(run(&cfg).task, Task::Regression);
    cfg.targets = Some(vec!["l_a,t".into()]);
    let reg = run(&cfg);
    assert_eq!(reg.task, Task::Regression);
    assert_eq!(reg.y_train[[3, 1]], 0.5 * 3.0 - 1.25);
}

#[test]
fn ranges_and_globs_follow_file_order() {
    let p = dataset("digits.csv");
    let mut cfg = DataConfig::new(&p);
    cfg.features = Some(vec!["p_0_0..p_3_7".into()]);
    let top = run(&cfg);
    assert_eq!(top.feature_names.len(), 32);
    assert_eq!(top.feature_names[0], "p_0_0");
    assert_eq!(top.feature_names[31], "p_3_7");
    cfg.features = Some(vec!["p_0_*".into(), "p_7_*".into()]);
    let g = run(&cfg);
    assert_eq!(g.feature_names.len(), 16);
    assert_eq!(g.feature_names[8], "p_7_0");
}

#[test]
fn split_is_seeded_disjoint_and_complete() {
    let p = small_csv("split.csv");
    let mut cfg = with_class(&p, "kind");
    cfg.seed = 5;
    let a = run(&cfg);
    let b = run(&cfg);
    assert_eq!(
        (a.train_rows.clone(), a.test_rows.clone()),
        (b.train_rows.clone(), b.test_rows.clone())
    );
    assert_eq!(a.x_train, b.x_train);
    assert_eq!(a.test_rows.len(), 3); // round(0.25 · 12)
    let mut all: Vec<usize> = a.train_rows.iter().chain(&a.test_rows).copied().collect();
    all.sort_unstable();
    assert_eq!(all, (0..12).collect::<Vec<_>>());
    assert!(a.train_rows.windows(2).all(|w| w[0] < w[1]));
    assert!(a.test_rows.windows(2).all(|w| w[0] < w[1]));
    // Matrices follow the row lists: x1 is the file row index, before scaling.
    let x1: Vec<f64> = a
        .x_train
        .column(0)
        .iter()
        .map(|v| v * a.scaler.std[0] + a.scaler.mean[0])
        .collect();
    for (v, r) in x1.iter().zip(&a.train_rows) {
        assert!((v - *r as f64).abs() < 1e-9);
    }
    let seeds: Vec<Vec<usize>> = (0..4)
        .map(|s| {
            cfg.seed = s;
            run(&cfg).test_rows
        })
        .collect();
    assert!(
        seeds.windows(2).any(|w| w[0] != w[1]),
        "the seed changes the split"
    );
}

#[test]
fn standard_scaling_uses_training_statistics() {
    let p = temp(
        "scale.csv",
        "a,k,c\n1,3,0\n2,3,1\n3,3,0\n4,3,1\n5,3,0\n6,3,1\n7,3,0\n8,3,1\n",
    );
    let mut cfg = with_class(&p, "c");
    cfg.seed = 3;
    let prep = run(&cfg);
    let raw: Vec<f64> = prep.train_rows.iter().map(|r| *r as f64 + 1.0).collect();
    let n = raw.len() as f64;
    let mean = raw.iter().sum::<f64>() / n;
    let std = (raw.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt(); // ddof = 0
    assert!((prep.scaler.mean[0] - mean).abs() < 1e-12);
    assert!((prep.scaler.std[0] - std).abs() < 1e-12);
    assert_eq!(prep.scaler.std[1], 1.0); // constant column
    assert!(prep.x_train.column(1).iter().all(|v| *v == 0.0));
    for (k, r) in prep.test_rows.iter().enumerate() {
        let want = (*r as f64 + 1.0 - mean) / std;
        assert!((prep.x_test[[k, 0]] - want).abs() < 1e-12);
    }
    cfg.scale = Scale::None;
    let none = run(&cfg);
    assert_eq!(none.x_train[[0, 1]], 3.0);
    assert_eq!(none.scaler.std, vec![1.0, 1.0]);
}

#[test]
fn labeled_count_and_fraction() {
    let p = dataset("iris.csv");
    let mut cfg = DataConfig::new(&p);
    cfg.seed = 9;
    cfg.labeled = Some(10.0);
    let prep = run(&cfg);
    let n_train = prep.train_rows.len();
    assert_eq!(n_train, 150 - 38); // round(0.25 · 150) = 38
    assert_eq!(prep.labeled.iter().filter(|b| **b).count(), 10);
    for k in 0..n_train {
        assert_eq!(
            prep.y_train.row(k).iter().all(|v| v.is_nan()),
            !prep.labeled[k]
        );
    }
    // the hidden labels are kept, as in the file, for the unlabeled rows only
    assert_eq!(prep.y_unlabeled_true.nrows(), n_train - 10);
    assert!(prep.y_unlabeled_true.iter().all(|v| v.is_finite()));
    cfg.labeled = Some(0.25);
    let frac = run(&cfg);
    assert_eq!(frac.labeled.iter().filter(|b| **b).count(), 28); // round(0.25 · 112)
    assert_eq!(frac.labeled, run(&cfg).labeled);
}

#[test]
fn csv_and_parquet_prepare_identically() {
    let csv = small_csv("twin.csv");
    let pq = temp_path("twin.parquet");
    write_parquet(&csv, &pq).unwrap();
    for class in [true, false] {
        let cfgs: Vec<DataConfig> = [&csv, &pq]
            .iter()
            .map(|p| {
                let mut cfg = DataConfig::new(*p);
                if class {
                    cfg.class = Some("kind".into());
                    cfg.features = Some(vec!["x*".into(), "t".into()]);
                } else {
                    cfg.targets = Some(vec!["l_a..l_b".into()]);
                    cfg.features = Some(vec!["x1,x2,t".into()]);
                }
                cfg.seed = 4;
                cfg.labeled = Some(4.0);
                cfg
            })
            .collect();
        let (a, b) = (run(&cfgs[0]), run(&cfgs[1]));
        assert_eq!(a.x_train, b.x_train);
        assert_eq!(a.x_test, b.x_test);
        assert!(a
            .y_train
            .iter()
            .zip(b.y_train.iter())
            .all(|(u, v)| u == v || (u.is_nan() && v.is_nan())));
        assert_eq!(a.y_unlabeled_true, b.y_unlabeled_true);
        assert_eq!(a.y_test, b.y_test);
        assert_eq!(a.labeled, b.labeled);
        assert_eq!((a.train_rows, a.test_rows), (b.train_rows, b.test_rows));
        assert_eq!(a.feature_names, b.feature_names);
        assert_eq!(a.output_names, b.output_names);
        assert_eq!(a.class_values, b.class_values);
        assert_eq!(a.task, b.task);
        assert_eq!(a.scaler, b.scaler);
        assert_eq!(a.info.rows, b.info.rows);
    }
    let (tc, tp) = (load_table(&csv, 3).unwrap(), load_table(&pq, 3).unwrap());
    assert_eq!(tc.columns, tp.columns);
    assert_eq!(tc.head, tp.head);
}

#[test]
fn table_summary_and_head() {
    let p = temp("summary.csv", "n,s,f\n1,a,0.5\n2,b,\n3,,NaN\n6,d,1.5\n");
    let t = load_table(&p, 2).unwrap();
    assert_eq!(t.n_rows, 4);
    let n = &t.columns[0];
    assert_eq!(
        (n.name.as_str(), n.dtype.as_str(), n.missing),
        ("n", "i64", 0)
    );
    assert_eq!((n.min, n.max, n.mean), (Some(1.0), Some(6.0), Some(3.0)));
    let s = &t.columns[1];
    assert_eq!((s.dtype.as_str(), s.missing, s.mean), ("str", 1, None));
    let f = &t.columns[2];
    assert_eq!((f.dtype.as_str(), f.missing), ("f64", 2));
    assert_eq!((f.min, f.max, f.mean), (Some(0.5), Some(1.5), Some(1.0)));
    assert_eq!(t.head, vec![vec!["1", "a", "0.5"], vec!["2", "b", "null"]]);
}

#[test]
fn read_numeric_columns_in_file_order() {
    let m = read_numeric_columns(
        &dataset("linnerud.csv"),
        &["chins".into(), "target_pulse".into()],
    )
    .unwrap();
    assert_eq!(m.dim(), (20, 2));
    assert_eq!(m.row(0).to_vec(), vec![5.0, 50.0]);
}

#[test]
fn views_by_prefix() {
    let p = temp(
        "views.csv",
        "fou_0,fou_1,kar_0,zer,c\n1,2,3,4,0\n4,5,6,7,1\n8,9,1,2,0\n",
    );
    let mut cfg = with_class(&p, "c");
    cfg.views = Some(vec!["kar,fou".into(), "zer".into()]);
    let prep = run(&cfg);
    let v: Vec<(String, Vec<usize>)> = prep
        .views
        .iter()
        .map(|v| (v.name.clone(), v.columns.clone()))
        .collect();
    assert_eq!(
        v,
        vec![
            ("kar".into(), vec![2]),
            ("fou".into(), vec![0, 1]),
            ("zer".into(), vec![3])
        ]
    );
}

#[test]
fn sidecar_defaults_digits() {
    let prep = run(&DataConfig::new(dataset("digits.csv")));
    assert_eq!(prep.task, Task::Multiclass);
    assert_eq!(prep.output_names.len(), 10);
    assert_eq!(prep.output_names[0], "digit=0");
    assert_eq!(prep.feature_names.len(), 64);
    assert_eq!(prep.info.rows, 1797);
    assert_eq!(
        prep.info.sha256,
        "9adc9947a6fc0dd2beaf3d34358d2b0f1112bdcec8f3c0936aaa1fb5049b5e48"
    );
    assert_eq!(prep.x_train.nrows() + prep.x_test.nrows(), 1797);
}

#[test]
fn sidecar_defaults_emotions() {
    let prep = run(&DataConfig::new(dataset("emotions.csv")));
    assert_eq!(prep.task, Task::Multilabel);
    assert_eq!(prep.output_names.len(), 6);
    assert_eq!(prep.feature_names.len(), 72);
    let v: Vec<(&str, Vec<usize>)> = prep
        .views
        .iter()
        .map(|v| (v.name.as_str(), v.columns.clone()))
        .collect();
    assert_eq!(
        v,
        vec![
            ("timbre", (0..64).collect()),
            ("rhythm", (64..72).collect())
        ]
    );
    // A sidecar view can be asked for by name.
    let mut cfg = DataConfig::new(dataset("emotions.csv"));
    cfg.views = Some(vec!["rhythm".into()]);
    assert_eq!(run(&cfg).views[0].columns, (64..72).collect::<Vec<_>>());
}

#[test]
fn every_shipped_dataset_prepares_from_its_sidecar() {
    let expect = [
        ("digits", Task::Multiclass, 64, 10, 0),
        ("linnerud", Task::Regression, 3, 3, 0),
        ("iris", Task::Multiclass, 4, 3, 0),
        ("wine", Task::Multiclass, 13, 3, 0),
        ("emotions", Task::Multilabel, 72, 6, 2),
        ("enb", Task::Regression, 8, 2, 0),
        ("slump", Task::Regression, 7, 3, 0),
        ("wq", Task::Regression, 16, 14, 0),
        ("mfeat", Task::Multiclass, 649, 10, 6),
    ];
    for (name, task, p, q, views) in expect {
        let path = dataset(&format!("{name}.csv"));
        let prep = run(&DataConfig::new(&path));
        assert_eq!(
            (
                prep.task,
                prep.feature_names.len(),
                prep.output_names.len(),
                prep.views.len()
            ),
            (task, p, q, views),
            "{name}"
        );
        assert_eq!(prep.info.sha256, sha256_hex(&path).unwrap());
    }
    let mf = run(&DataConfig::new(dataset("mfeat.csv")));
    let names: Vec<&str> = mf.views.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, vec!["fou", "fac", "kar", "pix", "zer", "mor"]);
    let sizes: Vec<usize> = mf.views.iter().map(|v| v.columns.len()).collect();
    assert_eq!(sizes, vec![76, 216, 64, 240, 47, 6]);
}

#[test]
fn tsv_reads_like_csv() {
    let csv = temp("tab.csv", "a,b,c\n1,2.5,0\n3,4,1\n5,6,0\n7,8,1\n");
    let tsv = temp("tab.tsv", "a\tb\tc\n1\t2.5\t0\n3\t4\t1\n5\t6\t0\n7\t8\t1\n");
    let (a, b) = (load_table(&csv, 4).unwrap(), load_table(&tsv, 4).unwrap());
    assert_eq!(a.columns, b.columns);
    assert_eq!(a.head, b.head);
}

#[test]
fn digits_top_half_predicts_bottom_half() {
    let mut cfg = DataConfig::new(dataset("digits.csv"));
    cfg.features = Some(vec!["p_0_0..p_3_7".into()]);
    cfg.targets = Some(vec!["p_4_0..p_7_7".into()]);
    let prep = run(&cfg);
    assert_eq!(prep.task, Task::Regression);
    assert_eq!(
        (prep.feature_names.len(), prep.output_names.len()),
        (32, 32)
    );
    assert!(prep.views.is_empty());
}
