//! Loading against polars' own read of the same file (issue 36): a numeric table of
//! `LOADING_ROWS` rows (10⁶ by default) × 20 columns, written once as CSV and as Parquet. Each
//! pair reads the file with polars in this process (`CsvReadOptions` / `ParquetReader`, every
//! core) and runs the real `ovk run --method krr --kernel linear` on it, interleaved so a
//! shared machine's load falls on both alike. ovk's side is the session's `load_s` — reading,
//! parsing, checking, splitting and scaling, everything before the fit. Prints the medians and
//! the median of the per-pair ratios ovk ÷ polars. Asserts nothing.
//! Run: `cargo bench --bench loading` (`LOADING_PAIRS=k`, 3 by default; `LOADING_KEEP=DIR`
//! writes the two files there and keeps them, for profiling).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use ovk_core::data::rng::Rng;
use polars::prelude::*;

const COLS: usize = 20;

fn write_csv(path: &Path, rows: usize) {
    use std::io::Write;
    let mut rng = Rng::new(5);
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let header: Vec<String> = (0..COLS - 1)
        .map(|j| format!("x{j}"))
        .chain(["y".to_string()])
        .collect();
    writeln!(out, "{}", header.join(",")).unwrap();
    let mut line = String::new();
    for _ in 0..rows {
        line.clear();
        let mut y = 0.0;
        for j in 0..COLS - 1 {
            let v = rng.normal();
            y += v * (j as f64 + 1.0).recip();
            std::fmt::Write::write_fmt(&mut line, format_args!("{v:.6},")).unwrap();
        }
        std::fmt::Write::write_fmt(&mut line, format_args!("{y:.6}\n")).unwrap();
        out.write_all(line.as_bytes()).unwrap();
    }
}

fn polars_csv(path: &Path) -> DataFrame {
    CsvReadOptions::default()
        .with_has_header(true)
        .try_into_reader_with_file_path(Some(path.to_path_buf()))
        .unwrap()
        .finish()
        .unwrap()
}

fn polars_parquet(path: &Path) -> DataFrame {
    ParquetReader::new(std::fs::File::open(path).unwrap())
        .finish()
        .unwrap()
}

/// One `ovk run`: the session's load_s and the whole run's wall seconds.
fn ovk_load(store: &Path, data: &Path) -> (f64, f64) {
    let t = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_ovk"))
        .args(["run", "--data"])
        .arg(data)
        .args([
            "--method",
            "krr",
            "--kernel",
            "linear",
            "--targets",
            "y",
            "--json",
            "--sessions",
        ])
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
    (s["timings"]["load_s"].as_f64().unwrap(), wall)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let env = |k: &str, d: usize| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let (rows, pairs) = (env("LOADING_ROWS", 1_000_000), env("LOADING_PAIRS", 3));
    let keep = std::env::var_os("LOADING_KEEP").map(PathBuf::from);
    let dir = keep.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("ovk-bench-loading-{}", std::process::id()))
    });
    std::fs::create_dir_all(&dir).unwrap();
    let (csv, pq, store) = (
        dir.join("table.csv"),
        dir.join("table.parquet"),
        dir.join("store"),
    );
    write_csv(&csv, rows);
    let mut df = polars_csv(&csv);
    ParquetWriter::new(std::fs::File::create(&pq).unwrap())
        .finish(&mut df)
        .unwrap();
    drop(df);
    println!(
        "{rows} rows × {COLS} numeric columns: CSV {:.0} MB, Parquet {:.0} MB; {pairs} interleaved \
         pair(s); {} cores\n",
        std::fs::metadata(&csv).unwrap().len() as f64 / 1e6,
        std::fs::metadata(&pq).unwrap().len() as f64 / 1e6,
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!(
        "| file | polars read s | ovk load_s | ovk ÷ polars (median of pairs) | ovk whole run s |"
    );
    println!("|---|---|---|---|---|");
    for (name, path, read) in [
        ("CSV", &csv, polars_csv as fn(&Path) -> DataFrame),
        ("Parquet", &pq, polars_parquet),
    ] {
        let (mut p, mut o, mut r, mut w) = (vec![], vec![], vec![], vec![]);
        for _ in 0..pairs {
            let t = Instant::now();
            let df = read(path);
            let secs = t.elapsed().as_secs_f64();
            assert_eq!(df.height(), rows);
            drop(df);
            let (load, wall) = ovk_load(&store, path);
            p.push(secs);
            o.push(load);
            r.push(load / secs);
            w.push(wall);
        }
        println!(
            "| {name} | {:.2} | {:.2} | {:.2} | {:.2} |",
            median(p),
            median(o),
            median(r),
            median(w)
        );
    }
    if keep.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
}
