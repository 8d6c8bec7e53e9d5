//! `--input-rank`, `--landmarks` and `--test-column` through the real binary: good values run
//! and are recorded in the session, bad ones exit 2 naming the option, and a cancelled run
//! (SIGINT) exits 130 without saving.

use crate::common::binary;
use std::path::Path;

use binary::{ovk, stderr, stdout, temp_dir};

fn sessions_in(store: &Path) -> usize {
    std::fs::read_dir(store)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| e.path().join("session.json").is_file())
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn bad_input_ranks_are_refused_naming_the_option() {
    let store = temp_dir("rank", "bad", true);
    for (value, want) in [
        ("0", "--input-rank"),
        ("abc", "--input-rank"),
        ("-3", "--input-rank"),
        ("1e3", "--input-rank"),
        ("100000", "--input-rank 100000"),
    ] {
        let out = ovk(
            &[
                "run",
                "--data",
                "datasets/iris.csv",
                "--method",
                "okl",
                "--input-rank",
                value,
            ],
            &store,
        );
        assert_eq!(out.status.code(), Some(2), "{value}: {}", stderr(&out));
        assert!(stderr(&out).contains(want), "{value}: {}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"), "{value}");
    }
    let out = ovk(
        &[
            "run",
            "--data",
            "datasets/iris.csv",
            "--method",
            "krr",
            "--input-rank",
            "20",
            "--landmarks",
            "random",
        ],
        &store,
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--landmarks"), "{}", stderr(&out));
    assert_eq!(sessions_in(&store), 0);
    let _ = std::fs::remove_dir_all(&store);
}

#[test]
fn a_low_rank_run_records_its_factor_and_replays() {
    let store = temp_dir("rank", "ok", true);
    let out = ovk(
        &[
            "run",
            "--data",
            "datasets/digits.csv",
            "--method",
            "okl",
            "--input-rank",
            "300",
            "--landmarks",
            "uniform",
            "--json",
        ],
        &store,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    // the factor's phase and its landmark count reach the progress lines (the last always)
    let err = stderr(&out);
    assert!(
        err.contains("] landmarks") && err.contains("  landmarks 300/300"),
        "{err}"
    );
    let j: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    let dir = j["session"].as_str().unwrap().to_string();
    let rec: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(&dir).join("session.json")).unwrap(),
    )
    .unwrap();
    let f = &rec["details"]["input_factor"];
    assert_eq!(f["rank"], 300, "{f}");
    assert_eq!(f["landmarks"], "uniform");
    let te = f["trace_error"].as_f64().unwrap();
    assert!(te > 0.0 && te < 1.0, "{te}");
    assert_eq!(rec["config"]["kernel"]["input_rank"], 300);
    assert!(
        rec["matrices"].get("feature_coefficients").is_some(),
        "{}",
        rec["matrices"]
    );
    let acc = j["metrics"]["test"]["accuracy"].as_f64().unwrap();
    assert!(acc > 0.9, "accuracy {acc}");
    let replay = ovk(&["replay", "--verify", &dir], &store);
    assert!(
        replay.status.success(),
        "{}{}",
        stdout(&replay),
        stderr(&replay)
    );
    let _ = std::fs::remove_dir_all(&store);
}

/// vvmr's input rank (200) exceeds its labeled rows (100): the krr baseline, which fits the
/// labeled rows only, still runs (at rank 100, the exact kernel of those rows).
#[test]
fn a_semi_supervised_low_rank_run_keeps_its_krr_baseline() {
    let store = temp_dir("rank", "baseline", true);
    let out = ovk(
        &[
            "run",
            "--data",
            "datasets/emotions.csv",
            "--method",
            "vvmr",
            "--labeled",
            "100",
            "--input-rank",
            "200",
            "--json",
        ],
        &store,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let j: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    let auc = j["baseline"]["test"]["mean_auc"].as_f64();
    assert!(auc.is_some_and(|a| a > 0.5), "{j}");
    let _ = std::fs::remove_dir_all(&store);
}

#[test]
fn a_test_column_replaces_the_random_split() {
    let dir = temp_dir("rank", "split", true);
    let data = dir.join("t.csv");
    let mut text = String::from("a,b,is_test,y\n");
    for i in 0..40 {
        let x = i as f64 / 10.0;
        text.push_str(&format!(
            "{x},{},{},{}\n",
            (x * 1.7).sin(),
            (i % 4 == 0) as u8,
            x.cos()
        ));
    }
    std::fs::write(&data, text).unwrap();
    let store = dir.join("store");
    let d = data.to_str().unwrap();
    let krr = |path: &str, column: &str, json: bool| {
        let mut args = vec![
            "run",
            "--data",
            path,
            "--targets",
            "y",
            "--test-column",
            column,
            "--method",
            "krr",
        ];
        if json {
            args.push("--json");
        }
        ovk(&args, &store)
    };
    let out = krr(d, "is_test", true);
    assert!(out.status.success(), "{}", stderr(&out));
    let j: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    let rec: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(j["session"].as_str().unwrap()).join("session.json"))
            .unwrap(),
    )
    .unwrap();
    let test: Vec<u64> = rec["split"]["test"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(test, (0..40).step_by(4).collect::<Vec<u64>>());
    assert_eq!(rec["feature_names"], serde_json::json!(["a", "b"]));
    let out = krr(d, "is_tst", false);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("is_test"), "{}", stderr(&out));
    // a marker of zeros leaves no test part: the summary says so instead of an empty line
    let zeros = dir.join("zeros.csv");
    let text = std::fs::read_to_string(&data).unwrap();
    let mut lines = text.lines();
    let mut z = format!("{}\n", lines.next().unwrap());
    for l in lines {
        let c: Vec<&str> = l.split(',').collect();
        z.push_str(&format!("{},{},0,{}\n", c[0], c[1], c[3]));
    }
    std::fs::write(&zeros, z).unwrap();
    let out = krr(zeros.to_str().unwrap(), "is_test", false);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("test      (no test rows)"),
        "{}",
        stdout(&out)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sigint_during_an_exact_decomposition_exits_130_quickly_and_records_the_cancelled_run() {
    let dir = temp_dir("rank", "sigint", true);
    let data = dir.join("big.csv");
    // 4000 rows: the exact eigendecomposition alone takes seconds, longer than the grace.
    let mut text = String::from("a,b,c,y\n");
    for i in 0..4000 {
        let x = i as f64 * 0.001;
        text.push_str(&format!(
            "{x},{},{},{}\n",
            (x * 7.0).sin(),
            (x * 3.0).cos(),
            x * x
        ));
    }
    std::fs::write(&data, text).unwrap();
    let store = dir.join("store");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ovk"))
        .args([
            "run",
            "--data",
            data.to_str().unwrap(),
            "--targets",
            "y",
            "--method",
            "okl",
        ])
        .args([
            "--input-rank",
            "exact",
            "--sessions",
            store.to_str().unwrap(),
        ])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the decomposition phase, then interrupt.
    let t0 = std::time::Instant::now();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let sent = std::time::Instant::now();
    let _ = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let status = child.wait().unwrap();
    let took = sent.elapsed();
    assert_eq!(status.code(), Some(130), "after {:?}", t0.elapsed());
    assert!(
        took < std::time::Duration::from_secs(5),
        "exit took {took:?}"
    );
    // The run so far is recorded, as cancelled and not kept, with no matrices.
    assert_eq!(sessions_in(&store), 1);
    let dir_of_run = std::fs::read_dir(&store)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| p.join("session.json").is_file())
        .unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir_of_run.join("session.json")).unwrap())
            .unwrap();
    assert_eq!(json["status"], "cancelled");
    assert_eq!(json["kept"], false);
    assert_eq!(json["matrices"], serde_json::json!({}));
    let _ = std::fs::remove_dir_all(&dir);
}

/// mvml's `--nystrom` with `--input-rank exact` asks for two routes at once: refused naming
/// both, not silently fitted by Nyström.
#[test]
fn mvml_refuses_nystrom_with_an_exact_input_rank() {
    let store = temp_dir("rank", "mvml-exact", true);
    let out = ovk(
        &[
            "run",
            "--data",
            "datasets/emotions.csv",
            "--method",
            "mvml",
            "--nystrom",
            "0.5",
            "--input-rank",
            "exact",
        ],
        &store,
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--nystrom") && err.contains("--input-rank exact"),
        "{err}"
    );
    assert_eq!(sessions_in(&store), 0);
}

/// mvml's `--input-rank R` is block Nyström on ⌊R/v⌋ landmarks per view (emotions: two views),
/// recorded in the session; a rank beyond v·n exits 2 naming the option and saves nothing.
#[test]
fn mvml_takes_an_input_rank_as_landmarks_per_view() {
    let store = temp_dir("rank", "mvml-rank", true);
    let run = |rank: &str| {
        ovk(
            &[
                "run",
                "--data",
                "datasets/emotions.csv",
                "--method",
                "mvml",
                "--input-rank",
                rank,
                "--json",
            ],
            &store,
        )
    };
    let out = run("100000");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--input-rank 100000 is larger than"), "{err}");
    assert_eq!(sessions_in(&store), 0);
    let session_of = |rank: &str| -> serde_json::Value {
        let out = run(rank);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        let dir = Path::new(json["session"].as_str().unwrap());
        serde_json::from_str(&std::fs::read_to_string(dir.join("session.json")).unwrap()).unwrap()
    };
    let session = session_of("40");
    assert_eq!(
        session["details"]["nystrom"]["ranks"],
        serde_json::json!([20, 20])
    );
    assert_eq!(
        session["config"]["kernel"]["input_rank"],
        serde_json::json!(40)
    );
    // the time estimate counts the route taken: 40 landmark columns, not the 391×391 Grams
    let floor = |s: &serde_json::Value| s["details"]["estimate"]["floor_seconds"].as_f64().unwrap();
    let exact = session_of("exact");
    assert!(
        floor(&session) * 10.0 < floor(&exact),
        "{} vs {}",
        floor(&session),
        floor(&exact)
    );
}

/// Guidance before a long exact fit: on 12 075 training rows an exact okl or mvml needs many
/// minutes (a few 12 075 × 12 075 eigendecompositions), and the run says so before its Gram
/// matrix, proposing a rank with its own estimate. The process is stopped once it has said it.
#[test]
fn an_exact_fit_past_a_minute_says_so_and_proposes_a_rank() {
    use std::io::{BufRead, BufReader};
    let dir = temp_dir("rank", "guidance", true);
    let data = dir.join("big.csv");
    let out = ovk(
        &[
            "bench",
            "data",
            "--n",
            "16000",
            "--outputs",
            "2",
            "--out",
            data.to_str().unwrap(),
        ],
        &dir.join("store"),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let store = dir.join("store");
    for extra in [
        &["--method", "okl"][..],
        &[
            "--method",
            "mvml",
            "--view",
            "a=x_0..x_4",
            "--view",
            "b=x_5..x_9",
        ][..],
    ] {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ovk"))
            .args(["run", "--data", data.to_str().unwrap(), "--targets", "y_*"])
            .args(extra)
            .args([
                "--input-rank",
                "exact",
                "--sessions",
                store.to_str().unwrap(),
            ])
            // the exact route's memory is not what this test is about
            .env("OVK_MEMORY_LIMIT", "1TB")
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let mut said = None;
        for line in lines.map_while(|l| l.ok()) {
            if line.contains("needs at least") {
                said = Some(line);
                break;
            }
            if line.contains("Gram matrix") {
                break;
            }
        }
        let _ = child.kill();
        let _ = child.wait();
        let said = said.unwrap_or_else(|| panic!("{extra:?}: no guidance before the Gram matrix"));
        assert!(
            said.contains("the exact fit on 12075 training rows")
                && said.contains("--input-rank 2000 would take about"),
            "{extra:?}: {said}"
        );
    }
    assert_eq!(sessions_in(&store), 0);
    let _ = std::fs::remove_dir_all(&dir);
}
