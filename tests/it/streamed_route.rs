//! `--stream`: krr, okl and lowrank-okl on a factor with the table read in row batches and Z never stored,
//! through the real binary. With a test column (the same split either way) and fewer training
//! rows than the sample holds (the same landmarks either way), the streamed route must give the
//! in-memory route's predictions; what it cannot stream is refused with exit 2, and the guard
//! picks it by itself when the in-memory route would not fit.

use std::path::{Path, PathBuf};

use ndarray::Array2;
use ndarray_npy::read_npy;

use crate::common::binary::{ovk, stderr, stdout, temp_dir};

/// A table of `n` rows: features a, b, c, three related targets, and `is_test` on every fourth
/// row.
fn write_table(path: &Path, n: usize) {
    let mut text = String::from("a,b,c,y0,y1,y2,is_test\n");
    for i in 0..n {
        let t = i as f64;
        let (a, b, c) = ((t * 0.37).sin(), (t * 0.11).cos(), ((t * 0.07) % 3.0) - 1.5);
        let y0 = (a + b).sin() + 0.2 * c;
        let y1 = y0 * 0.5 + (b * c).cos();
        let y2 = a * b - 0.3 * c + 0.05 * (t * 1.3).sin();
        let test = u8::from(i % 4 == 3);
        text.push_str(&format!("{a},{b},{c},{y0},{y1},{y2},{test}\n"));
    }
    std::fs::write(path, text).unwrap();
}

/// `ovk run` of `method` on `data` with `extra` flags; the session directory.
fn run(store: &Path, data: &Path, method: &str, extra: &[&str]) -> PathBuf {
    let mut args = vec![
        "run",
        "--data",
        data.to_str().unwrap(),
        "--targets",
        "y*",
        "--features",
        "a,b,c",
        "--test-column",
        "is_test",
        "--method",
        method,
        "--json",
    ];
    args.extend_from_slice(extra);
    let out = ovk(&args, store);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    PathBuf::from(v["session"].as_str().unwrap())
}

fn session(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("session.json")).unwrap()).unwrap()
}

fn max_rel_diff(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    assert_eq!(a.dim(), b.dim());
    let scale = b.iter().fold(0.0f64, |s, v| s.max(v.abs())).max(1e-300);
    a.iter()
        .zip(b)
        .fold(0.0f64, |s, (x, y)| s.max((x - y).abs()))
        / scale
}

/// `flags` for the in-memory route (`--stream no`) and for the streamed one (`--stream yes`).
fn both_routes<'a>(flags: &[&'a str]) -> (Vec<&'a str>, Vec<&'a str>) {
    let with = |how: &'a str| [flags, &["--stream", how]].concat();
    (with("no"), with("yes"))
}

#[test]
fn streamed_fits_equal_the_in_memory_factor_route() {
    let dir = temp_dir("stream", "equal", true);
    let store = dir.join("store");
    let csv = dir.join("t.csv");
    write_table(&csv, 1200);
    let parquet = dir.join("t.parquet");
    ovk_core::data::write_parquet(&csv, &parquet).unwrap();
    for data in [&csv, &parquet] {
        let one_lambda = ["--lambda", "0.05", "--rank", "2"];
        for (method, kernel, rank, extra) in [
            ("okl", "gaussian", "60", &[][..]),
            ("krr", "gaussian", "60", &[]),
            ("okl", "linear", "auto", &[]),
            ("lowrank-okl", "gaussian", "60", &one_lambda),
        ] {
            let mut flags = vec!["--kernel", kernel, "--input-rank", rank];
            flags.extend_from_slice(extra);
            let (memory, streamed) = both_routes(&flags);
            let (a, b) = (
                run(&store, data, method, &memory),
                run(&store, data, method, &streamed),
            );
            let what = format!("{method} {kernel} on {}", data.display());
            let pa: Array2<f64> = read_npy(a.join("predictions_test.npy")).unwrap();
            let pb: Array2<f64> = read_npy(b.join("predictions_test.npy")).unwrap();
            assert_eq!(pa.nrows(), 300, "{what}");
            let diff = max_rel_diff(&pb, &pa);
            assert!(
                diff < 1e-8,
                "{what}: streamed predictions differ by {diff:e}"
            );
            let (sa, sb) = (session(&a), session(&b));
            assert_eq!(sa["split"]["test"], sb["split"]["test"], "{what}");
            let mse = |s: &serde_json::Value, part: &str| s[part]["test"]["mse"].as_f64().unwrap();
            assert!((mse(&sa, "metrics") - mse(&sb, "metrics")).abs() < 1e-9 * mse(&sa, "metrics"));
            if method != "krr" {
                assert!(
                    (mse(&sa, "baseline") - mse(&sb, "baseline")).abs()
                        < 1e-9 * mse(&sa, "baseline")
                );
                assert_eq!(sa["iterations"], sb["iterations"], "{what}");
            }
            assert!(
                sb["details"]["stream"]["rows"].as_u64() == Some(1200),
                "{what}: {}",
                sb["details"]["stream"]
            );
            assert!(sb["notes"].to_string().contains("streamed"), "{what}");
            // The saved model predicts new rows as the in-memory one does.
            assert_eq!(sb["model"]["kind"], sa["model"]["kind"], "{what}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn streamed_lowrank_okl_chooses_lambda_on_a_validation_part_of_the_training_rows() {
    let dir = temp_dir("stream", "lowrank-path", true);
    let store = dir.join("store");
    let csv = dir.join("t.csv");
    write_table(&csv, 1200);
    let flags = ["--input-rank", "60", "--rank", "2", "--lambda-path", "8"];
    let (memory, streamed) = both_routes(&flags);
    let (a, b) = (
        session(&run(&store, &csv, "lowrank-okl", &memory)),
        session(&run(&store, &csv, "lowrank-okl", &streamed)),
    );
    // Every λ of the path scored on the validation part, the chosen one the best of them.
    let path = b["details"]["path"].as_array().unwrap();
    assert_eq!(path.len(), 8);
    let scores: Vec<f64> = path
        .iter()
        .map(|p| p["validation_mse"].as_f64().unwrap())
        .collect();
    let best = scores.iter().copied().fold(f64::INFINITY, f64::min);
    let chosen = b["details"]["lambda"].as_f64().unwrap();
    let at_best = path
        .iter()
        .find(|p| p["validation_mse"].as_f64() == Some(best))
        .unwrap();
    assert_eq!(at_best["lambda"].as_f64(), Some(chosen));
    let notes = b["notes"].to_string();
    assert!(notes.contains("validation part of"), "{notes}");
    assert!(notes.contains("refitted on"), "{notes}");
    assert!(b["optimistic"].is_null(), "{}", b["optimistic"]);
    // Another validation draw than in memory, the same test rows: a close test error.
    let mse = |s: &serde_json::Value| s["metrics"]["test"]["mse"].as_f64().unwrap();
    let (ma, mb) = (mse(&a), mse(&b));
    assert!((mb - ma).abs() < 0.1 * ma, "in memory {ma}, streamed {mb}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn what_cannot_be_streamed_is_refused_with_exit_2() {
    let dir = temp_dir("stream", "refused", true);
    let store = dir.join("store");
    let csv = dir.join("t.csv");
    write_table(&csv, 200);
    let data = csv.to_str().unwrap();
    let base = ["run", "--data", data, "--targets", "y*", "--stream", "yes"];
    for (extra, want) in [
        (vec!["--method", "kde"], "kde has no streamed route"),
        (vec!["--method", "okl", "--cv", "3"], "cross-validation"),
        (
            vec!["--method", "okl", "--target-scale", "center"],
            "--target-scale",
        ),
        (
            vec!["--method", "okl", "--input-rank", "exact"],
            "--input-rank R",
        ),
        (
            vec!["--method", "lowrank-okl", "--select-on", "test"],
            "--select-on test",
        ),
    ] {
        let mut args = base.to_vec();
        args.extend_from_slice(&extra);
        let out = ovk(&args, &store);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains("--stream yes") && err.contains(want),
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
    // A missing cell is named with its row, not streamed past.
    let holed = dir.join("holed.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut cells: Vec<&str> = lines[41].split(',').collect();
    cells[1] = "";
    lines[41] = cells.join(",");
    std::fs::write(&holed, lines.join("\n") + "\n").unwrap();
    let out = ovk(
        &[
            "run",
            "--data",
            holed.to_str().unwrap(),
            "--targets",
            "y*",
            "--method",
            "okl",
            "--input-rank",
            "50",
            "--stream",
            "yes",
        ],
        &store,
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("`b` has a missing cell in data row 41"),
        "{}",
        stderr(&out)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_guard_streams_when_the_in_memory_route_would_not_fit() {
    let dir = temp_dir("stream", "auto", true);
    let store = dir.join("store");
    let csv = dir.join("long.csv");
    // 100 000 rows: at rank 500 the in-memory route holds Z (400 MB; estimated 342 MiB in
    // all, measured 356 MiB); streamed, a 20 000-row sample and 8 192-row blocks (estimated
    // 258 MiB). A 400 MB limit lets 305 MiB be used: the one fits, the other does not.
    let mut text = String::from("a,b,y\n");
    for i in 0..100_000 {
        let t = i as f64;
        let (a, b) = ((t * 0.013).sin(), (t * 0.0071).cos());
        text.push_str(&format!("{a:.6},{b:.6},{:.6}\n", (a * 3.0).sin() + b * b));
    }
    std::fs::write(&csv, text).unwrap();
    let args = [
        "run",
        "--data",
        csv.to_str().unwrap(),
        "--targets",
        "y",
        "--method",
        "okl",
        "--input-rank",
        "500",
        "--json",
    ];
    let limited = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_ovk"))
            .args(args)
            .arg("--sessions")
            .arg(&store)
            .env("OVK_MEMORY_LIMIT", "400MB")
            .output()
            .unwrap()
    };
    let out = limited(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let s = session(Path::new(v["session"].as_str().unwrap()));
    let notes = s["notes"].to_string();
    assert!(notes.contains("the in-memory route needs about"), "{notes}");
    // The route taken is recorded, so a replay without the limit streams too.
    assert_eq!(s["config"]["data"]["stream"], "yes");
    let replay = ovk(
        &["replay", "--verify", v["session"].as_str().unwrap()],
        &store,
    );
    assert!(replay.status.success(), "{}", stderr(&replay));
    assert!(s["details"]["stream"]["rows"].as_u64() == Some(100_000));
    let r2 = s["metrics"]["test"]["r2"].as_f64().unwrap();
    assert!(r2 > 0.99, "a smooth target fitted streamed: r2 {r2}");
    // Refused instead under --stream no, with the streamed route's figure in the advice.
    let mut no = args.to_vec();
    no.extend_from_slice(&["--stream", "no"]);
    let out = limited(&no);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("--stream yes reads the rows in batches"),
        "{err}"
    );
    assert!(err.contains("--input-rank"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
