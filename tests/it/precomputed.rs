//! `--kernel precomputed`: a Gram matrix equal to ovk's own Gaussian kernel reproduces the
//! Gaussian run's predictions (krr, okl, mvml with one Gram per view) and a saved model's
//! predictions from a new-rows Gram; every bad Gram is refused with exit 2 naming the file;
//! a session replays, and a changed Gram is refused.

use std::path::{Path, PathBuf};

use ndarray::{s, Array2};
use ndarray_npy::WriteNpyExt;

use crate::common::binary::{assert_ok, ovk, stderr, temp_dir};
use ovk_core::kernels::{cross_gram, gram, GramFile, InputRank, Kernel};
use ovk_core::methods::Silent;
use ovk_core::session::Store;
use ovk_core::train::{self, Prediction, RunConfig};

const SIGMA: f64 = 1.3;
const ROWS: usize = 48;

/// Rows of a smooth two-output problem: features a_0..a_2 (view a), b_0, b_1 (view b).
fn features(rows: usize, shift: f64) -> Array2<f64> {
    Array2::from_shape_fn((rows, 5), |(i, j)| {
        let t = i as f64 * 0.37 + j as f64 * 1.1 + shift;
        (t * (1.0 + 0.2 * j as f64)).sin() + 0.1 * (t * 3.1).cos()
    })
}

fn write_table(path: &Path, x: &Array2<f64>) {
    let mut text = String::from("a_0,a_1,a_2,b_0,b_1,y0,y1\n");
    for r in x.rows() {
        let y0 = r[0] * r[3] + (2.0 * r[1]).sin();
        let y1 = r[2] - 0.5 * r[4] * r[4];
        let cells: Vec<String> = r
            .iter()
            .chain([y0, y1].iter())
            .map(|v| format!("{v:?}"))
            .collect();
        text.push_str(&cells.join(","));
        text.push('\n');
    }
    std::fs::write(path, text).unwrap();
}

/// Panics unless what ovk wrote to stderr contains `text`.
fn says(o: &std::process::Output, text: &str) {
    assert!(
        stderr(o).contains(text),
        "expected '{text}' in: {}",
        stderr(o)
    );
}

fn write_npy(path: &Path, k: &Array2<f64>) {
    k.write_npy(std::fs::File::create(path).unwrap()).unwrap();
}

fn gaussian() -> Kernel {
    Kernel::Gaussian { sigma: SIGMA }
}

/// A scratch folder with the table, its Gaussian Gram and one Gram per view.
struct Scratch {
    dir: PathBuf,
    table: PathBuf,
    x: Array2<f64>,
}

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let dir = temp_dir("precomputed", tag, true);
        let x = features(ROWS, 0.0);
        let table = dir.join("t.csv");
        write_table(&table, &x);
        let s = Scratch { dir, table, x };
        write_npy(&s.path("K.npy"), &gram(&gaussian(), s.x.view()).unwrap());
        let (xa, xb) = (s.x.slice(s![.., 0..3]), s.x.slice(s![.., 3..5]));
        write_npy(&s.path("Ka.npy"), &gram(&gaussian(), xa).unwrap());
        write_npy(&s.path("Kb.npy"), &gram(&gaussian(), xb).unwrap());
        s
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    fn config(&self, method: &str, kernel: serde_json::Value) -> RunConfig {
        serde_json::from_value(serde_json::json!({
            "data": {"path": self.table, "targets": ["y0", "y1"], "scale": "none",
                     "views": ["a", "b"], "test_fraction": 0.25, "seed": 3},
            "method": method,
            "kernel": kernel,
            "params": {"lambda": 0.05},
        }))
        .unwrap()
    }

    fn gaussian_config(&self, method: &str) -> RunConfig {
        self.config(
            method,
            serde_json::json!({"name": "gaussian", "sigma": SIGMA}),
        )
    }

    fn precomputed_config(&self, method: &str) -> RunConfig {
        let gram = if method == "mvml" {
            serde_json::json!([{"view": "a", "path": self.path("Ka.npy")},
                               {"view": "b", "path": self.path("Kb.npy")}])
        } else {
            serde_json::json!([{"path": self.path("K.npy")}])
        };
        self.config(
            method,
            serde_json::json!({"name": "precomputed", "gram": gram}),
        )
    }
}

fn max_diff(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    assert_eq!(a.dim(), b.dim());
    a.iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
}

#[test]
fn a_gaussian_gram_reproduces_the_gaussian_runs_predictions() {
    let s = Scratch::new("same");
    for method in ["krr", "okl", "mvml", "kde", "kde-conditional"] {
        // kde scores k(x, X_train) only (its pre-image candidates are outputs): a Gram serves.
        let (mut gc, mut pc) = (
            s.gaussian_config(method.trim_end_matches("-conditional")),
            s.precomputed_config(method.trim_end_matches("-conditional")),
        );
        if method == "kde-conditional" {
            for c in [&mut gc, &mut pc] {
                c.params
                    .set("ovk", ovk_core::methods::Value::Text("conditional".into()));
            }
        }
        let g = train::run(&gc, &mut Silent).unwrap();
        let p = train::run(&pc, &mut Silent).unwrap();
        let name = "predictions_test";
        let d = max_diff(g.matrix(name).unwrap(), p.matrix(name).unwrap());
        eprintln!("{method} {name}: largest difference {d:.3e}");
        assert!(d <= 1e-10, "{method} {name}: largest difference {d:e}");
        assert_eq!(p.record.kernel.resolved, Kernel::Precomputed);
        let files = &p.record.kernel.spec.gram;
        assert!(files
            .iter()
            .all(|f| f.sha256.as_ref().is_some_and(|h| h.len() == 64)));
    }
}

/// The low-rank route: Nyström columns of a precomputed kernel are columns of the given K, so
/// the same landmarks give the same factor.
#[test]
fn a_nystrom_factor_of_the_gram_matches_the_gaussian_one() {
    let s = Scratch::new("lowrank");
    for method in ["krr", "lowrank-okl"] {
        let (mut g, mut p) = (s.gaussian_config(method), s.precomputed_config(method));
        g.kernel.input_rank = InputRank::Rank(12);
        p.kernel.input_rank = InputRank::Rank(12);
        same_predictions(&g, &p, &format!("{method} rank 12"));
    }
    // mvml's block Nyström: the same sampled rows' columns of each view's Gram.
    let (mut g, mut p) = (s.gaussian_config("mvml"), s.precomputed_config("mvml"));
    for c in [&mut g, &mut p] {
        c.params
            .set("nystrom", ovk_core::methods::Value::Float(0.5));
    }
    same_predictions(&g, &p, "mvml nystrom 0.5");
}

/// Both configurations run; their test predictions agree to 1e-10.
fn same_predictions(gaussian: &RunConfig, precomputed: &RunConfig, what: &str) {
    let g = train::run(gaussian, &mut Silent).unwrap();
    let p = train::run(precomputed, &mut Silent).unwrap();
    let name = "predictions_test";
    let d = max_diff(g.matrix(name).unwrap(), p.matrix(name).unwrap());
    eprintln!("{what}: largest difference {d:.3e}");
    assert!(d <= 1e-10, "{what}: largest difference {d:e}");
}

#[test]
fn a_new_rows_gram_predicts_as_the_gaussian_model() {
    let s = Scratch::new("predict");
    let new_x = features(7, 0.5);
    let new_table = s.path("new.csv");
    write_table(&new_table, &new_x);
    let store = Store::open(Some(&s.path("store"))).unwrap();
    for method in ["krr", "mvml"] {
        let g = train::run(&s.gaussian_config(method), &mut Silent).unwrap();
        let p = train::run(&s.precomputed_config(method), &mut Silent).unwrap();
        let g_dir = store.save(&g.record, &g.matrices).unwrap();
        let p_dir = store.save(&p.record, &p.matrices).unwrap();
        let x_train = s.x.select(ndarray::Axis(0), &p.record.split.train);
        let new_gram = |cols: std::ops::Range<usize>, file: &str| {
            let k = cross_gram(
                &gaussian(),
                new_x.slice(s![.., cols.clone()]),
                x_train.slice(s![.., cols]),
            )
            .unwrap();
            write_npy(&s.path(file), &k);
            s.path(file)
        };
        let files = if method == "mvml" {
            vec![
                GramFile {
                    view: Some("a".into()),
                    path: new_gram(0..3, "Na.npy"),
                    sha256: None,
                },
                GramFile {
                    view: Some("b".into()),
                    path: new_gram(3..5, "Nb.npy"),
                    sha256: None,
                },
            ]
        } else {
            vec![GramFile {
                view: None,
                path: new_gram(0..5, "N.npy"),
                sha256: None,
            }]
        };
        let want = Prediction::prepare(&g_dir, &new_table)
            .unwrap()
            .whole()
            .unwrap();
        let got = Prediction::prepare(&p_dir, &new_table)
            .unwrap()
            .with_gram(&files)
            .unwrap()
            .whole()
            .unwrap();
        let d = max_diff(&want.scores, &got.scores);
        eprintln!("{method} predict: largest difference {d:.3e}");
        assert!(d <= 1e-10, "{method}: largest difference {d:e}");

        // Without the new-rows Gram, or with the wrong shape: refused with advice.
        let predict = |extra: &[&str]| {
            let mut args = vec![
                "predict",
                p_dir.to_str().unwrap(),
                "--data",
                new_table.to_str().unwrap(),
            ];
            args.extend_from_slice(extra);
            ovk(&args, &s.path("store"))
        };
        let o = predict(&[]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        says(&o, "was fitted on a precomputed kernel");
        says(
            &o,
            if method == "mvml" {
                "--gram-view a=K_new.npy"
            } else {
                "give --gram K_new.npy"
            },
        );
        if method == "krr" {
            let o = predict(&["--gram", s.path("K.npy").to_str().unwrap()]);
            assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
            says(
                &o,
                "K.npy is 48 × 48, but predicting needs the kernel between the 7 rows",
            );
            let (n, out) = (s.path("N.npy"), s.path("p.csv"));
            let o = predict(&[
                "--gram",
                n.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ]);
            assert_ok(&o, "predict --gram: ");
        }
    }
}

/// `ovk run --kernel precomputed` on the scratch table with these further flags.
fn run_precomputed(s: &Scratch, method: &str, gram: &[&str]) -> std::process::Output {
    let mut args = vec![
        "run",
        "--data",
        s.table.to_str().unwrap(),
        "--targets",
        "y0,y1",
        "--method",
        method,
        "--kernel",
        "precomputed",
    ];
    args.extend_from_slice(gram);
    ovk(&args, &s.path("store"))
}

/// `ovk run` with this Gram file: exit 2 and a message naming the file and the fault.
fn refused(s: &Scratch, method: &str, gram: &[&str], says: &str) {
    let o = run_precomputed(s, method, gram);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{method} {gram:?}: {err}");
    assert!(
        err.contains(says),
        "{method} {gram:?}: expected '{says}' in: {err}"
    );
}

#[test]
fn bad_grams_and_methods_are_refused_naming_the_file() {
    let s = Scratch::new("refuse");
    let k = gram(&gaussian(), s.x.view()).unwrap();
    let file = |name: &str, m: &Array2<f64>| {
        write_npy(&s.path(name), m);
        s.path(name).to_str().unwrap().to_string()
    };
    let rect = file("rect.npy", &k.slice(s![.., 1..]).to_owned());
    refused(
        &s,
        "krr",
        &["--gram", &rect],
        "rect.npy is 48 × 47, not square",
    );
    let small = file("small.npy", &k.slice(s![1.., 1..]).to_owned());
    refused(
        &s,
        "krr",
        &["--gram", &small],
        "small.npy is 47 × 47 but the table has 48 rows",
    );
    let mut bad = k.clone();
    bad[[3, 5]] = f64::NAN;
    let nan = file("nan.npy", &bad);
    refused(&s, "krr", &["--gram", &nan], "nan.npy holds NaN at [3, 5]");
    let mut bad = k.clone();
    bad[[7, 2]] += 0.25;
    let asym = file("asym.npy", &bad);
    refused(
        &s,
        "krr",
        &["--gram", &asym],
        "asym.npy is not symmetric: |K[7, 2] − K[2, 7]| = 2.500e-1",
    );
    std::fs::write(s.path("text.npy"), "not a matrix").unwrap();
    refused(
        &s,
        "krr",
        &["--gram", s.path("text.npy").to_str().unwrap()],
        "text.npy",
    );
    let good = s.path("K.npy").to_str().unwrap().to_string();
    refused(&s, "krr", &[], "needs its Gram matrix");
    refused(
        &s,
        "vvmr",
        &["--gram", &good],
        "does not work with --method vvmr",
    );
    refused(&s, "mvml", &["--gram", &good], "one Gram per view");
    refused(
        &s,
        "krr",
        &["--gram-view", &format!("a={good}")],
        "give --gram FILE",
    );

    // Not PSD: a warning with the smallest eigenvalue, and the run goes on.
    let mut neg = k.clone();
    for i in 0..ROWS {
        neg[[i, i]] -= 0.5;
    }
    let neg = file("neg.npy", &neg);
    let o = run_precomputed(&s, "krr", &["--gram", &neg, "--lambda", "1"]);
    assert_ok(&o, "a non-PSD Gram runs: ");
    says(
        &o,
        "neg.npy is not positive semi-definite: its smallest eigenvalue is -",
    );
}

#[test]
fn a_precomputed_session_replays_and_a_changed_gram_is_refused() {
    let s = Scratch::new("replay");
    let store = s.path("store");
    let config = s.path("run.toml");
    std::fs::write(
        &config,
        "data = \"t.csv\"\ntargets = [\"y0\", \"y1\"]\nmethod = \"okl\"\nkernel = \"precomputed\"\ngram = \"K.npy\"\nname = \"pre\"\n",
    )
    .unwrap();
    let o = ovk(&["run", "--config", config.to_str().unwrap()], &store);
    assert_ok(&o, "run --config with gram = \"K.npy\": ");
    let o = ovk(&["replay", "pre", "--verify"], &store);
    assert_ok(&o, "replay --verify: ");
    let mut k = gram(&gaussian(), s.x.view()).unwrap();
    k[[0, 0]] += 1e-3;
    write_npy(&s.path("K.npy"), &k);
    let o = ovk(&["replay", "pre", "--verify"], &store);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    says(&o, "K.npy: its SHA-256 is");
}

/// The workbench opens a precomputed session read-only and draws every pane; its Kernel pane
/// names the kernel.
#[test]
fn the_workbench_opens_a_precomputed_session() {
    use ovk::tui::state::Pane;
    let s = Scratch::new("tui");
    let out = train::run(&s.precomputed_config("okl"), &mut Silent).unwrap();
    let store = Store::open(Some(&s.path("store"))).unwrap();
    let dir = store.save(&out.record, &out.matrices).unwrap();
    let mut state = ovk::tui::replay_state(out, dir);
    for pane in Pane::ALL {
        state.pane = pane;
        let text = crate::tui_render::screen(&state, 100, 30);
        if pane == Pane::Kernel {
            assert!(text.contains("precomputed"), "{text}");
        }
    }
}

/// `--gram-ids`: the table's rows found in K by an id column — K over a shuffled superset of
/// the rows (three rows the table lacks) — fit exactly as the same kernel matched by position;
/// an unknown or repeated id is refused naming the file, and a changed ids file stops a replay.
#[test]
fn rows_matched_by_an_id_column_fit_as_rows_matched_by_position() {
    let s = Scratch::new("ids");
    let all = ndarray::concatenate![ndarray::Axis(0), s.x, features(3, 9.0)];
    let k_all = gram(&gaussian(), all.view()).unwrap();
    write_npy(
        &s.path("K.npy"),
        &k_all.slice(s![..ROWS, ..ROWS]).to_owned(),
    );
    // K's rows in a shuffled order: every 7th row first, then the rest.
    let n = all.nrows();
    let perm: Vec<usize> = (0..n)
        .step_by(7)
        .chain((0..n).filter(|i| i % 7 != 0))
        .collect();
    let k_big = Array2::from_shape_fn((n, n), |(a, b)| k_all[[perm[a], perm[b]]]);
    write_npy(&s.path("Kbig.npy"), &k_big);
    let name = |i: usize| format!("img-{i:03}");
    let ids: String = perm.iter().map(|&i| name(i) + "\n").collect();
    std::fs::write(s.path("ids.csv"), format!("image\n{ids}")).unwrap();
    // The table with its id column first.
    let text = std::fs::read_to_string(&s.table).unwrap();
    let with_ids: String = text
        .lines()
        .enumerate()
        .map(|(r, l)| match r {
            0 => format!("image,{l}\n"),
            r => format!("{},{l}\n", name(r - 1)),
        })
        .collect();
    let table = s.path("t_ids.csv");
    std::fs::write(&table, with_ids).unwrap();
    let store = s.path("store");
    let run = |data: &Path, gram: &[&str], name: &str| {
        let mut args = vec![
            "run",
            "--data",
            data.to_str().unwrap(),
            "--targets",
            "y0,y1",
            "--method",
            "okl",
            "--kernel",
            "precomputed",
            "--features",
            "a_0,a_1,a_2,b_0,b_1",
            "--name",
            name,
        ];
        args.extend_from_slice(gram);
        ovk(&args, &store)
    };
    let fit = |data: &Path, gram: &[&str], name: &str| {
        let o = run(data, gram, name);
        assert_ok(&o, name);
        let dir = Store::open(Some(&store)).unwrap().resolve(name).unwrap();
        ndarray_npy::read_npy::<_, Array2<f64>>(dir.join("predictions_test.npy")).unwrap()
    };
    let k_path = s.path("K.npy");
    let big = s.path("Kbig.npy");
    let ids_path = s.path("ids.csv");
    let by_position = fit(&s.table, &["--gram", k_path.to_str().unwrap()], "pos");
    let by_id = fit(
        &table,
        &[
            "--gram",
            big.to_str().unwrap(),
            "--gram-ids",
            ids_path.to_str().unwrap(),
        ],
        "ids",
    );
    assert_eq!(max_diff(&by_position, &by_id), 0.0);
    let o = ovk(&["replay", "ids", "--verify"], &store);
    assert_ok(&o, "replay --verify with --gram-ids: ");
    for (ids, why) in [
        (
            format!("image\n{}", ids.replacen("img-007", "img-x", 1)),
            "lists no id `img-007`",
        ),
        (format!("image\nimg-000\n{ids}"), "is on lines"),
        (format!("picture\n{ids}"), "has no column `picture`"),
    ] {
        let bad = s.path("bad.csv");
        std::fs::write(&bad, ids).unwrap();
        let gram = [
            "--gram",
            big.to_str().unwrap(),
            "--gram-ids",
            bad.to_str().unwrap(),
        ];
        let o = run(&table, &gram, "bad");
        assert_eq!(o.status.code(), Some(2), "{why}: {}", stderr(&o));
        says(&o, why);
    }
    std::fs::write(&ids_path, format!("image\n{ids}img-999\n")).unwrap();
    let o = ovk(&["replay", "ids", "--verify"], &store);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    says(&o, "Gram ids");
}
