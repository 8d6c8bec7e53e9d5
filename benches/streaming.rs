//! The streamed route past memory (issue 36): okl on a rank-`STREAM_RANK` (1000) Nyström
//! factor of a synthetic Parquet table of d = 10 features and m = 10 outputs. Three runs of the
//! real `ovk run`, each its own process so each peak is its own:
//! - `STREAM_SMALL` rows (10⁶) in memory (`--stream no`), the baseline;
//! - the same file streamed (`--stream yes`), the ratio against it;
//! - `STREAM_ROWS` rows (10⁷) streamed — the in-memory route would need Z, n×r, 80 GB.
//!
//! Prints wall seconds, the process's peak RSS (the session's `details.memory`), the test MSE and
//! the krr baseline's. Asserts nothing.
//!
//! Run: `cargo bench --bench streaming` (`STREAM_ROWS`, `STREAM_SMALL`, `STREAM_RANK`;
//! `STREAM_KEEP=DIR` keeps the tables there for another run).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use ovk_core::data::rng::Rng;
use polars::prelude::*;

const D: usize = 10;
const M: usize = 10;
/// Rows per Parquet row group and per generated chunk.
const CHUNK: usize = 500_000;

/// A smooth multi-output target of `x`: each output mixes a sine of one feature with a
/// product of two others, plus noise, so the outputs are related and the kernel matters.
fn targets(x: &[f64], rng: &mut Rng) -> [f64; M] {
    let mut y = [0.0; M];
    for (k, yk) in y.iter_mut().enumerate() {
        *yk = (x[k % D] + 0.5 * x[(k + 1) % D]).sin()
            + 0.3 * x[(k + 2) % D] * x[(k + 3) % D]
            + 0.1 * rng.normal();
    }
    y
}

/// `rows` rows of the table, as one frame.
fn chunk(rows: usize, rng: &mut Rng) -> DataFrame {
    let mut cols: Vec<Vec<f64>> = (0..D + M).map(|_| Vec::with_capacity(rows)).collect();
    for _ in 0..rows {
        let x: Vec<f64> = (0..D).map(|_| rng.normal()).collect();
        let y = targets(&x, rng);
        for (j, v) in x.iter().chain(y.iter()).enumerate() {
            cols[j].push(*v);
        }
    }
    let names = (0..D)
        .map(|j| format!("x{j}"))
        .chain((0..M).map(|k| format!("y{k}")));
    let columns: Vec<Column> = names
        .zip(cols)
        .map(|(n, c)| Column::new(n.as_str().into(), c))
        .collect();
    DataFrame::new(rows, columns).unwrap()
}

fn write_table(path: &Path, rows: usize) {
    if path.exists() {
        return;
    }
    let mut rng = Rng::new(36);
    let part = path.with_extension("partial");
    let first = chunk(CHUNK.min(rows), &mut rng);
    let mut writer = ParquetWriter::new(std::fs::File::create(&part).unwrap())
        .with_row_group_size(Some(CHUNK))
        .batched(first.schema())
        .unwrap();
    writer.write_batch(&first).unwrap();
    let mut done = first.height();
    drop(first);
    while done < rows {
        let df = chunk(CHUNK.min(rows - done), &mut rng);
        writer.write_batch(&df).unwrap();
        done += df.height();
    }
    writer.finish().unwrap();
    std::fs::rename(&part, path).unwrap();
}

struct Run {
    wall: f64,
    peak_mb: f64,
    mse: f64,
    baseline_mse: f64,
    test_rows: usize,
}

fn run(store: &Path, data: &Path, rank: usize, stream: &str) -> Run {
    let t = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_ovk"))
        .args(["run", "--data"])
        .arg(data)
        .args(["--features", "x*", "--targets", "y*", "--method", "okl"])
        .args(["--input-rank", &rank.to_string(), "--stream", stream])
        .args(["--json", "--sessions"])
        .arg(store)
        .output()
        .expect("running ovk");
    let wall = t.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let session = PathBuf::from(v["session"].as_str().unwrap());
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(session.join("session.json")).unwrap())
            .unwrap();
    let _ = std::fs::remove_dir_all(&session);
    let peak = s["details"]["memory"]["process_peak_rss_bytes"]
        .as_f64()
        .unwrap_or(f64::NAN);
    Run {
        wall,
        peak_mb: peak / 1e6,
        mse: s["metrics"]["test"]["mse"].as_f64().unwrap_or(f64::NAN),
        baseline_mse: s["baseline"]["test"]["mse"].as_f64().unwrap_or(f64::NAN),
        test_rows: s["split"]["test"].as_array().map_or(0, Vec::len),
    }
}

fn main() {
    let env = |k: &str, d: usize| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let (big, small, rank) = (
        env("STREAM_ROWS", 10_000_000),
        env("STREAM_SMALL", 1_000_000),
        env("STREAM_RANK", 1000),
    );
    let keep = std::env::var_os("STREAM_KEEP").map(PathBuf::from);
    let dir = keep.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("ovk-bench-streaming-{}", std::process::id()))
    });
    std::fs::create_dir_all(&dir).unwrap();
    let store = dir.join("store");
    let (small_pq, big_pq) = (
        dir.join(format!("synthetic-{small}.parquet")),
        dir.join(format!("synthetic-{big}.parquet")),
    );
    write_table(&small_pq, small);
    write_table(&big_pq, big);
    println!(
        "okl, Gaussian kernel (median σ), rank-{rank} Nyström factor; d = {D}, m = {M}; Parquet \
         {:.0} MB and {:.0} MB; {} cores\n",
        std::fs::metadata(&small_pq).unwrap().len() as f64 / 1e6,
        std::fs::metadata(&big_pq).unwrap().len() as f64 / 1e6,
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!("| rows | route | wall s | peak RSS MB | test rows | test MSE | krr test MSE |");
    println!("|---|---|---|---|---|---|---|");
    let print = |rows: usize, route: &str, r: &Run| {
        println!(
            "| {rows} | {route} | {:.1} | {:.0} | {} | {:.5} | {:.5} |",
            r.wall, r.peak_mb, r.test_rows, r.mse, r.baseline_mse
        );
    };
    let memory = run(&store, &small_pq, rank, "no");
    print(small, "in memory", &memory);
    let streamed = run(&store, &small_pq, rank, "yes");
    print(small, "streamed", &streamed);
    let far = run(&store, &big_pq, rank, "yes");
    print(big, "streamed", &far);
    println!(
        "\nstreamed ÷ in memory at {small} rows: {:.2}× the time, {:.2}× the peak; {big} rows \
         streamed: {:.2}× the in-memory time at {small}",
        streamed.wall / memory.wall,
        streamed.peak_mb / memory.peak_mb,
        far.wall / memory.wall
    );
    if keep.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
}
