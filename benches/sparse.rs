//! Sparse features against a dense table of the same rows (issue 37): an RCV1-shaped LIBSVM
//! file (6 000 rows × 47 236 features at 0.2 % density, text-like column frequencies, 10
//! labels) kept sparse, beside a dense 6 000 × 1 000 CSV with 10 targets. Each configuration
//! runs the real `ovk run` on both, interleaved (dense, sparse, dense, …) so a shared machine's
//! load falls on both alike; the table gives the median wall times, their ratio (sparse ÷
//! dense) and each process's peak resident memory. Asserts nothing.
//! Run: `cargo bench --bench sparse` (`SPARSE_PAIRS=k`: k pairs, 1 by default).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use ovk_core::data::rng::Rng;

const ROWS: usize = 6000;
const SPARSE_COLS: usize = 47_236;
const PER_ROW: usize = 100;
const DENSE_COLS: usize = 1000;
const LABELS: usize = 10;

fn write_sparse(path: &Path) -> f64 {
    let density =
        ovk_lab::synthetic::write_text_like_libsvm(path, ROWS, SPARSE_COLS, PER_ROW, LABELS, 1)
            .unwrap();
    // The last column once, so the file spans all 47 236.
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    std::io::Write::write_all(&mut f, format!("0 {SPARSE_COLS}:1\n").as_bytes()).unwrap();
    density
}

fn write_dense(path: &Path) {
    let mut rng = Rng::new(2);
    let v: Vec<f64> = (0..DENSE_COLS * LABELS).map(|_| rng.normal()).collect();
    let mut t: String = (0..DENSE_COLS)
        .map(|j| format!("x{j}"))
        .chain((0..LABELS).map(|k| format!("y{k}")))
        .collect::<Vec<_>>()
        .join(",");
    t.push('\n');
    for _ in 0..ROWS {
        let x: Vec<f64> = (0..DENSE_COLS).map(|_| rng.normal()).collect();
        let cells: Vec<String> = x
            .iter()
            .map(|v| format!("{v:.5}"))
            .chain((0..LABELS).map(|k| {
                let s: f64 = (0..DENSE_COLS).map(|j| x[j] * v[j * LABELS + k]).sum();
                u8::from(s > 0.0).to_string()
            }))
            .collect();
        t.push_str(&cells.join(","));
        t.push('\n');
    }
    std::fs::write(path, t).unwrap();
}

/// One `ovk run`: wall seconds, the process's peak RSS, and the input route it took.
fn run(store: &Path, data: &Path, args: &[&str]) -> (f64, f64, String) {
    let t = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_ovk"))
        .args(["run", "--data"])
        .arg(data)
        .args(args)
        .args(["--json", "--sessions"])
        .arg(store)
        .output()
        .expect("running ovk");
    let secs = t.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let peak = v["memory"]["process_peak_rss_bytes"]
        .as_f64()
        .unwrap_or(f64::NAN);
    let session = PathBuf::from(v["session"].as_str().unwrap());
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(session.join("session.json")).unwrap())
            .unwrap();
    let route = match (
        v["input_factor"].get("rank"),
        s["details"]["krylov"].get("dim"),
    ) {
        (Some(r), _) => format!("rank {r}"),
        (None, Some(q)) => format!("Krylov, q = {q}"),
        (None, None) => "exact".to_string(),
    };
    (secs, peak, route)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let pairs: usize = std::env::var("SPARSE_PAIRS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let dir: PathBuf =
        std::env::temp_dir().join(format!("ovk-bench-sparse-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (svm, csv, store) = (
        dir.join("rcv1-like.svm"),
        dir.join("dense.csv"),
        dir.join("store"),
    );
    let density = write_sparse(&svm);
    write_dense(&csv);
    println!(
        "sparse: {ROWS} × {SPARSE_COLS} LIBSVM at {:.3} % non-zero ({:.1} MB); dense: {ROWS} × \
         {DENSE_COLS} CSV ({:.1} MB); {pairs} interleaved pair(s), medians\n",
        100.0 * density,
        std::fs::metadata(&svm).unwrap().len() as f64 / 1e6,
        std::fs::metadata(&csv).unwrap().len() as f64 / 1e6
    );
    println!("| method | kernel | sparse args | dense s | sparse s | sparse ÷ dense | dense peak | sparse peak | sparse route |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for (method, kernel, extra) in [
        ("krr", "linear", &[][..]),
        ("krr", "gaussian", &[][..]),
        ("okl", "linear", &[][..]),
        ("okl", "gaussian", &[][..]),
        ("krr", "linear", &["--input-rank", "1000"][..]),
        ("okl", "linear", &["--input-rank", "1000"][..]),
    ] {
        let base = ["--method", method, "--kernel", kernel];
        let (mut ds, mut ss, mut dp, mut sp) = (vec![], vec![], 0.0f64, 0.0f64);
        let mut route = String::new();
        for _ in 0..pairs {
            let targets = ["--targets", "y*"];
            let d = run(&store, &csv, &[&base[..], &targets[..]].concat());
            let s = run(&store, &svm, &[&base[..], extra].concat());
            ds.push(d.0);
            ss.push(s.0);
            dp = dp.max(d.1);
            sp = sp.max(s.1);
            route = s.2;
        }
        let (d, s) = (median(&mut ds), median(&mut ss));
        println!(
            "| {method} | {kernel} | {} | {d:.2} | {s:.2} | {:.2} | {:.0} MB | {:.0} MB | {route} |",
            if extra.is_empty() { "—".to_string() } else { extra.join(" ") },
            s / d,
            dp / 1e6,
            sp / 1e6
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
