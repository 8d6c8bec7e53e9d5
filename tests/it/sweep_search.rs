//! Searching several knobs at once through the real binary: seeded random draws, successive
//! halving over training rows, and nested cross-validation around a whole search.

use crate::common::binary;
use std::path::PathBuf;

use binary::{ovk, stderr as err, stdout as out};

fn fresh(name: &str) -> PathBuf {
    binary::temp_dir("search", name, true)
}

/// The JSON lines of a sweep's stdout that are rows (they carry an index).
fn rows(stdout: &str) -> Vec<serde_json::Value> {
    stdout
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v.get("index").is_some())
        .collect()
}

fn sweep(dir: &std::path::Path, toml: &str, extra: &[&str]) -> std::process::Output {
    let cfg = dir.join("search.toml");
    std::fs::write(&cfg, toml).unwrap();
    let mut args = vec!["sweep", "--config", cfg.to_str().unwrap()];
    args.extend_from_slice(extra);
    ovk(&args, &dir.join("store"))
}

fn value(row: &serde_json::Value, key: &str) -> f64 {
    row["values"][key].as_str().unwrap().parse().unwrap()
}

const RANDOM: &str = "data = \"datasets/linnerud.csv\"\nmethod = \"krr\"\nsearch = \"random\"\n\
trials = 7\nsearch_seed = SEED\nlambda = { log = [1e-3, 1e2] }\nsigma = { lin = [0.5, 4.0] }\n";

#[test]
fn random_search_draws_the_trials_inside_the_ranges_and_the_seed_repeats_them() {
    let draws = |seed: &str, name: &str| {
        let dir = fresh(name);
        let o = sweep(&dir, &RANDOM.replace("SEED", seed), &["--cv", "3"]);
        assert!(o.status.success(), "{}", err(&o));
        let mut r = rows(&out(&o));
        r.sort_by_key(|r| r["index"].as_u64());
        r.iter()
            .map(|r| (value(r, "lambda"), value(r, "sigma")))
            .collect::<Vec<_>>()
    };
    let a = draws("11", "seed11a");
    assert_eq!(a.len(), 7, "one row per trial");
    for (lambda, sigma) in &a {
        assert!(
            (1e-3..=1e2).contains(lambda),
            "λ = {lambda} outside its range"
        );
        assert!((0.5..=4.0).contains(sigma), "σ = {sigma} outside its range");
    }
    // log-uniform: seven draws over five decades do not all land in one decade
    let decades: std::collections::BTreeSet<i32> =
        a.iter().map(|(l, _)| l.log10().floor() as i32).collect();
    assert!(decades.len() >= 2, "{a:?}");
    assert_eq!(
        a,
        draws("11", "seed11b"),
        "the same seed draws the same trials"
    );
    assert_ne!(a, draws("12", "seed12"), "another seed draws others");
}

#[test]
fn a_range_without_n_on_a_grid_and_trials_on_a_grid_are_refused() {
    let dir = fresh("refusals");
    let o = sweep(
        &dir,
        "data = \"datasets/linnerud.csv\"\nmethod = \"krr\"\nlambda = { log = [1e-3, 1e2] }\n",
        &[],
    );
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(err(&o).contains("needs n = N"), "{}", err(&o));
    let o = sweep(
        &dir,
        "data = \"datasets/linnerud.csv\"\nmethod = \"krr\"\ntrials = 4\nlambda = [0.1, 1]\n",
        &[],
    );
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(err(&o).contains("trials = N goes with"), "{}", err(&o));
    let o = sweep(
        &dir,
        "data = \"datasets/linnerud.csv\"\nmethod = \"krr\"\nsearch = \"bayes\"\nlambda = [0.1, 1]\n",
        &[],
    );
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    let o = sweep(
        &dir,
        "data = \"datasets/linnerud.csv\"\nmethod = \"krr\"\nsearch = \"halving\"\nlambda = [0.1, 1]\n",
        &["--plan"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(err(&o).contains("halving"), "{}", err(&o));
}

const HALVING: &str = "data = \"datasets/enb.csv\"\nmethod = \"krr\"\nsearch = \"halving\"\n\
trials = 12\nsearch_seed = 3\nfactor = 3\nlambda = { log = [1e-4, 1e1] }\nsigma = { log = [0.3, 30] }\n";

#[test]
fn halving_scores_all_on_few_rows_the_best_third_on_more_and_is_job_count_independent() {
    let run = |jobs: &str| {
        let dir = fresh(&format!("halving{jobs}"));
        let o = sweep(&dir, HALVING, &["--jobs", jobs]);
        assert!(o.status.success(), "{}", err(&o));
        (rows(&out(&o)), out(&o), dir)
    };
    let (r1, table, dir) = run("1");
    // 12 configurations, then 4, then 2: 18 evaluations streamed as rows
    assert_eq!(r1.len(), 18, "{table}");
    let per_rung = |k: u64| r1.iter().filter(|r| r["rung"].as_u64() == Some(k)).count();
    assert_eq!((per_rung(0), per_rung(1), per_rung(2)), (12, 4, 2));
    let rows_of = |k: u64| {
        r1.iter()
            .find(|r| r["rung"].as_u64() == Some(k))
            .and_then(|r| r["train_rows"].as_u64())
            .unwrap()
    };
    // enb holds 768 rows, 614 train: 68, 204, then all of them
    assert!(
        rows_of(0) < rows_of(1) && rows_of(1) < rows_of(2),
        "{table}"
    );
    assert_eq!(rows_of(1), 3 * rows_of(0));
    // the survivors of rung 0 are its best third
    let mut rung0: Vec<&serde_json::Value> = r1
        .iter()
        .filter(|r| r["rung"].as_u64() == Some(0))
        .collect();
    rung0.sort_by(|a, b| {
        a["mean"]
            .as_f64()
            .unwrap()
            .total_cmp(&b["mean"].as_f64().unwrap())
    });
    let mut best4: Vec<u64> = rung0[..4]
        .iter()
        .map(|r| r["index"].as_u64().unwrap())
        .collect();
    let mut rung1: Vec<u64> = r1
        .iter()
        .filter(|r| r["rung"].as_u64() == Some(1))
        .map(|r| r["index"].as_u64().unwrap())
        .collect();
    best4.sort_unstable();
    rung1.sort_unstable();
    assert_eq!(best4, rung1);
    // the saved best is a configuration of the last rung
    let rung2: Vec<u64> = r1
        .iter()
        .filter(|r| r["rung"].as_u64() == Some(2))
        .map(|r| r["index"].as_u64().unwrap())
        .collect();
    let best: u64 = table
        .lines()
        .find_map(|l| l.strip_prefix("best configuration "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(rung2.contains(&best), "{table}");
    assert!(dir.join("store").read_dir().unwrap().count() >= 1);
    // the same rows whatever the number of jobs
    let (r2, _, _) = run("2");
    let key = |r: &serde_json::Value| {
        (
            r["rung"].as_u64(),
            r["index"].as_u64(),
            r["mean"].as_f64().map(f64::to_bits),
        )
    };
    let mut k1: Vec<_> = r1.iter().map(key).collect();
    let mut k2: Vec<_> = r2.iter().map(key).collect();
    k1.sort();
    k2.sort();
    assert_eq!(k1, k2);
}

#[test]
fn nested_cv_estimates_the_whole_search_on_outer_folds_and_saves_it() {
    let dir = fresh("nested");
    let o = sweep(
        &dir,
        "data = \"datasets/enb.csv\"\nmethod = \"krr\"\nlambda = [0.001, 0.1, 10]\n",
        &["--nested-cv", "3", "--cv", "3"],
    );
    assert!(o.status.success(), "{}", err(&o));
    let nested: serde_json::Value = out(&o)
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find_map(|v| v.get("nested_cv").cloned())
        .expect("a nested_cv line");
    assert_eq!(nested["k"], 3);
    let folds = nested["folds"].as_array().unwrap();
    assert_eq!(folds.len(), 3);
    let mses: Vec<f64> = folds
        .iter()
        .map(|f| f["metrics"]["mse"].as_f64().unwrap())
        .collect();
    let mean = mses.iter().sum::<f64>() / 3.0;
    let est = &nested["estimate"]["mse"];
    assert!((est["mean"].as_f64().unwrap() - mean).abs() < 1e-12 * mean.abs().max(1.0));
    assert!(
        est["sd"].as_f64().unwrap() > 0.0,
        "three different outer folds"
    );
    for f in folds {
        let lambda = f["chosen"]["lambda"].as_str().unwrap();
        assert!(["0.001", "0.1", "10"].contains(&lambda), "{f}");
    }
    assert!(err(&o).contains("nested 3-fold"), "{}", err(&o));
    // the saved best session carries the nested estimate
    let store = dir.join("store");
    let session = std::fs::read_dir(&store)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("session.json").exists())
        .unwrap();
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(session.join("session.json")).unwrap())
            .unwrap();
    assert_eq!(record["details"]["nested_cv"]["k"], 3);
}
