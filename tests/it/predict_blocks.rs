//! `ovk predict`'s memory guard counts the result (rows × outputs, and the model's work per
//! row): where the whole would not fit, the rows are predicted and written a block at a time
//! (chosen automatically, and said so; `--batch-rows N` to choose), with the same bytes as a
//! prediction made whole; a block that cannot fit, and a whole result the workbench would hold,
//! are refused with the figure and a way out. Small `OVK_MEMORY_LIMIT`s keep the sizes modest.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::binary::{self, stderr};

/// A CSV of `rows` rows: x, and `m` outputs y0…y{m-1} that are linear in x.
fn wide_csv(path: &Path, rows: usize, m: usize) {
    let mut s = String::from("x");
    for k in 0..m {
        s.push_str(&format!(",y{k}"));
    }
    s.push('\n');
    for i in 0..rows {
        let x = i as f64 / rows as f64;
        s.push_str(&format!("{x}"));
        for k in 0..m {
            s.push_str(&format!(",{}", x * (k % 7) as f64 + (k % 3) as f64));
        }
        s.push('\n');
    }
    std::fs::write(path, s).unwrap();
}

/// Rows of x alone, to predict.
fn x_csv(path: &Path, rows: usize) {
    let mut s = String::from("x\n");
    for i in 0..rows {
        s.push_str(&format!("{}\n", i as f64 / 97.0));
    }
    std::fs::write(path, s).unwrap();
}

/// A krr session (linear kernel) with `m` outputs fitted on `rows` rows.
fn wide_session(dir: &Path, rows: usize, m: usize) -> PathBuf {
    let data = dir.join("wide.csv");
    wide_csv(&data, rows, m);
    let store = dir.join("store");
    let targets = format!("y0..y{}", m - 1);
    let o = binary::ovk(
        &[
            "run",
            "--data",
            data.to_str().unwrap(),
            "--targets",
            &targets,
            "--features",
            "x",
            "--method",
            "krr",
            "--kernel",
            "linear",
            "--lambda",
            "0.1",
            "--json",
        ],
        &store,
    );
    binary::assert_ok(&o, "fitting the wide session: ");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    PathBuf::from(v["session"].as_str().unwrap())
}

fn predict(session: &Path, data: &Path, out: &str, limit: Option<&str>, extra: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ovk"));
    c.arg("predict")
        .arg(session)
        .arg("--data")
        .arg(data)
        .args(["--out", out])
        .args(extra);
    match limit {
        Some(l) => c.env("OVK_MEMORY_LIMIT", l),
        None => c.env_remove("OVK_MEMORY_LIMIT"),
    };
    c.output().unwrap()
}

#[test]
fn a_result_too_large_for_memory_is_predicted_and_written_in_blocks() {
    let dir = binary::temp_dir("predict-blocks", "auto", true);
    let session = wide_session(&dir, 40, 1000);
    let data = dir.join("x.csv");
    x_csv(&data, 200);

    // 200 rows × 1000 outputs and their copies are about 6 MB: whole without a limit …
    let whole = predict(&session, &data, "-", None, &[]);
    assert!(whole.status.success(), "{}", stderr(&whole));
    assert!(!stderr(&whole).contains("at a time"), "{}", stderr(&whole));
    assert_eq!(whole.stdout.iter().filter(|&&b| b == b'\n').count(), 201);

    // … in blocks under 2 MB (1.6 MB usable), said so, with the same bytes.
    let blocks = predict(&session, &data, "-", Some("2MB"), &[]);
    assert!(blocks.status.success(), "{}", stderr(&blocks));
    let note = stderr(&blocks);
    assert!(
        note.contains("rows at a time") && note.contains("200 rows × 1000 outputs"),
        "{note}"
    );
    assert!(
        whole.stdout == blocks.stdout,
        "the blocks differ from the whole"
    );

    // Chosen by hand: the same again, CSV and Parquet files.
    let seven = predict(&session, &data, "-", None, &["--batch-rows", "7"]);
    assert!(seven.status.success(), "{}", stderr(&seven));
    assert!(whole.stdout == seven.stdout);
    for ext in ["csv", "parquet"] {
        let one = dir.join(format!("whole.{ext}"));
        let many = dir.join(format!("blocks.{ext}"));
        let a = predict(&session, &data, one.to_str().unwrap(), None, &[]);
        let b = predict(
            &session,
            &data,
            many.to_str().unwrap(),
            None,
            &["--batch-rows", "33"],
        );
        assert!(
            a.status.success() && b.status.success(),
            "{}{}",
            stderr(&a),
            stderr(&b)
        );
        let names: Vec<String> = (0..1000).map(|k| format!("y{k}")).collect();
        let read = |p: &Path| ovk_core::data::read_numeric_columns(p, &names).unwrap();
        assert_eq!(read(&one), read(&many), "{ext}");
        assert_eq!(read(&many).nrows(), 200);
    }
}

#[test]
fn a_block_that_cannot_fit_is_refused_with_the_figure_and_a_way_out() {
    let dir = binary::temp_dir("predict-blocks", "refused", true);
    let session = wide_session(&dir, 40, 1000);
    let data = dir.join("x.csv");
    x_csv(&data, 200);

    let asked = predict(&session, &data, "-", Some("2MB"), &["--batch-rows", "200"]);
    assert_eq!(asked.status.code(), Some(2), "{}", stderr(&asked));
    let e = stderr(&asked);
    assert!(
        e.contains("predicting 200 rows × 1000 outputs needs about")
            && e.contains("give a smaller --batch-rows (at most"),
        "{e}"
    );
    assert!(asked.stdout.is_empty());

    let zero = predict(&session, &data, "-", None, &["--batch-rows", "0"]);
    assert_eq!(zero.status.code(), Some(2));
    assert!(stderr(&zero).contains("--batch-rows must be at least 1"));

    // Not even one row's result fits in 20 kB (the model itself, 8 kB, does).
    let tiny = predict(&session, &data, "-", Some("20kB"), &[]);
    assert_eq!(tiny.status.code(), Some(2), "{}", stderr(&tiny));
    assert!(stderr(&tiny).contains("even one row"), "{}", stderr(&tiny));
}

/// The case: 100 000 outputs on 100 000 rows under 8 GB. The workbench's prediction
/// (the whole table in memory) is refused before allocating 80 GB, pointing to `ovk predict`;
/// so is a block of every row asked by hand.
#[test]
fn a_hundred_thousand_outputs_on_a_hundred_thousand_rows_is_refused_not_allocated() {
    let dir = binary::temp_dir("predict-blocks", "huge", true);
    let session = wide_session(&dir, 4, 100_000);
    let data = dir.join("x.csv");
    x_csv(&data, 100_000);
    std::env::set_var("OVK_MEMORY_LIMIT", "8G");
    let e = ovk_core::train::predict_file(&session, &data).unwrap_err();
    std::env::remove_var("OVK_MEMORY_LIMIT");
    assert_eq!(e.exit_code(), 2, "{e}");
    let e = e.to_string();
    assert!(
        e.contains("predicting 100000 rows × 100000 outputs needs about")
            && e.contains("ovk predict")
            && e.contains("--batch-rows"),
        "{e}"
    );
    let asked = predict(
        &session,
        &data,
        "-",
        Some("8G"),
        &["--batch-rows", "100000"],
    );
    assert_eq!(asked.status.code(), Some(2), "{}", stderr(&asked));
    assert!(stderr(&asked).contains("at most"), "{}", stderr(&asked));
}
