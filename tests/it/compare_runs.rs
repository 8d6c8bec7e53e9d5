//! `ovk compare`: runs side by side, each output's metric, paired tests over shared folds —
//! the text and the JSON carry the same numbers.

use std::fs;
use std::path::PathBuf;

use crate::common::binary::{assert_ok, ovk, root, stdout, temp_dir};

fn run(store: &std::path::Path, method: &str, extra: &[&str]) -> PathBuf {
    let data = root().join("datasets/emotions.csv");
    let mut args = vec![
        "run",
        "--data",
        data.to_str().unwrap(),
        "--method",
        method,
        "--json",
    ];
    args.extend_from_slice(extra);
    let out = ovk(&args, store);
    assert_ok(&out, method);
    let v: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    PathBuf::from(v["session"].as_str().unwrap())
}

#[test]
fn three_cross_validated_runs_compare_with_paired_tests() {
    let dir = temp_dir("compare", "three", true);
    let store = dir.join("store");
    let runs: Vec<PathBuf> = ["krr", "okl", "vvmr"]
        .iter()
        .map(|m| run(&store, m, &["--cv", "4"]))
        .collect();
    let ids: Vec<&str> = runs.iter().map(|p| p.to_str().unwrap()).collect();
    let mut args = vec!["compare"];
    args.extend(&ids);
    let text = ovk(&args, &store);
    assert_ok(&text, "compare");
    let text = stdout(&text);
    args.push("--json");
    let json = ovk(&args, &store);
    assert_ok(&json, "compare --json");
    let c: serde_json::Value = serde_json::from_str(stdout(&json).trim()).unwrap();

    assert_eq!(c["runs"].as_array().unwrap().len(), 3);
    // every metric side by side, the best marked
    let auc = c["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["part"] == "test" && r["metric"] == "mean_auc")
        .unwrap();
    let best = auc["best"].as_u64().unwrap() as usize;
    let line = text
        .lines()
        .find(|l| l.starts_with("test mean_auc"))
        .unwrap();
    let shown = format!("{:.4}*", auc["values"][best].as_f64().unwrap());
    assert!(line.contains(&shown), "{line} lacks {shown}");
    // per-label AUCs, one row per label
    let per = &c["per_output"];
    assert_eq!(per["metric"], "auc");
    assert_eq!(per["outputs"].as_array().unwrap().len(), 6);
    assert!(text.contains("label_amazed_suprised"), "{text}");
    // paired tests for every two runs on every cross-validated metric, recomputed from the
    // runs' own fold scores
    let paired = c["paired"].as_array().unwrap();
    assert_eq!(paired.len(), 3 * 3, "{paired:?}");
    let folds_of = |run: usize, metric: &str| -> Vec<f64> {
        let rec: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(runs[run].join("session.json")).unwrap())
                .unwrap();
        rec["cv"][metric]["folds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect()
    };
    for p in paired {
        let (a, b) = (
            p["a"].as_u64().unwrap() as usize,
            p["b"].as_u64().unwrap() as usize,
        );
        let metric = p["metric"].as_str().unwrap();
        let want = ovk_core::metrics::paired_tests(&folds_of(a, metric), &folds_of(b, metric));
        assert_eq!(
            p["test"]["t_p"].as_f64(),
            Some(want.t_p),
            "{metric} {a}-{b}"
        );
        assert_eq!(
            p["test"]["w_p"].as_f64(),
            Some(want.w_p),
            "{metric} {a}-{b}"
        );
        assert!(want.t_p > 0.0 && want.t_p <= 1.0);
    }
    assert!(c["caveat"].as_str().unwrap().contains("not independent"));
    assert!(text.contains("paired tests over 4 shared folds"), "{text}");
    // runs on other folds are not paired, and the reader is told why
    let other = run(&store, "krr", &["--cv", "4", "--seed", "3"]);
    let out = ovk(
        &["compare", ids[0], other.to_str().unwrap(), "--json"],
        &store,
    );
    assert_ok(&out, "other folds");
    let c: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert!(c["paired"].as_array().unwrap().is_empty());
    let notes = c["notes"].to_string();
    assert!(notes.contains("different"), "{notes}");
    // fewer than two runs is an input error
    assert_eq!(ovk(&["compare", ids[0]], &store).status.code(), Some(2));
    let _ = fs::remove_dir_all(&dir);
}
