//! Resource limits (issue 9, item 3): every method estimates its peak memory before a fit and
//! refuses, with the figure and a method-appropriate way out, what the machine cannot hold
//! (`OVK_MEMORY_LIMIT` stands in for a small machine); and the estimates are checked against
//! the peak resident memory measured in a child process.

use crate::common::binary;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use binary::{stderr, stdout};
use ovk_core::data::rng::Rng;
use ovk_core::methods::{
    find, mats, MethodName, Params, ProblemShape, Value, LOADING_BYTES, RUNTIME_BYTES,
};

/// A regression table with two views `a`, `b` (2 columns each) and `m` outputs.
fn write_table(dir: &Path, n: usize, m: usize, seed: u64) -> PathBuf {
    let mut r = Rng::new(seed);
    let mut s = String::from("a_0,a_1,b_0,b_1");
    for k in 0..m {
        s.push_str(&format!(",y{k}"));
    }
    s.push('\n');
    for _ in 0..n {
        let x: Vec<f64> = (0..4).map(|_| r.normal()).collect();
        let mut cells: Vec<String> = x.iter().map(|v| format!("{v:.6}")).collect();
        for k in 0..m {
            let y = (x[k % 4] * (k + 1) as f64).sin() + x[(k + 1) % 4] * 0.3 + 0.1 * r.normal();
            cells.push(format!("{y:.6}"));
        }
        s.push_str(&cells.join(","));
        s.push('\n');
    }
    let path = dir.join(format!("t{n}x{m}.csv"));
    std::fs::write(&path, s).unwrap();
    path
}

/// `ovk run` arguments for `method` on `data` (views for mvml, hidden labels for vvmr).
fn run_args(method: &str, data: &Path, m: usize, extra: &[&str]) -> Vec<String> {
    let mut a = binary::run_args(method, data, m);
    match method {
        "mvml" => a.extend(["--views".into(), "a,b".into()]),
        "vvmr" => a.extend(["--labeled".into(), "0.5".into()]),
        _ => {}
    }
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn ovk_env(args: &[String], store: &Path, limit: Option<u64>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ovk"));
    c.args(args).arg("--sessions").arg(store);
    if let Some(l) = limit {
        c.env("OVK_MEMORY_LIMIT", l.to_string());
    }
    c.output().expect("running ovk")
}

fn sessions_in(store: &Path) -> usize {
    std::fs::read_dir(store)
        .map(|d| d.flatten().count())
        .unwrap_or(0)
}

#[test]
fn a_small_machine_refuses_every_method_with_the_figure_and_its_way_out() {
    let dir = binary::temp_dir("limits", "refuse", true);
    let data = write_table(&dir, 400, 3, 1);
    let store = dir.join("store");
    let cases: &[(&str, &[&str], &str)] = &[
        ("krr", &[], "--input-rank 150 needs about"),
        ("okl", &[], "--input-rank 150 needs about"),
        (
            "lowrank-okl",
            &["--lambda", "0.1"],
            "--input-rank 150 needs about",
        ),
        ("kde", &[], "--low-rank"),
        ("vvmr", &[], "unlabeled"),
        // mvml's rank is block Nyström on R landmark columns in all
        ("mvml", &[], "--input-rank 150 needs about"),
    ];
    for (method, extra, advice) in cases {
        // 400 rows: a few 300×300 matrices, far beyond 100 kB.
        let out = ovk_env(&run_args(method, &data, 3, extra), &store, Some(100_000));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{method}: {err}");
        assert!(err.contains("needs about"), "{method}: {err}");
        assert!(
            err.contains("MiB") || err.contains("KiB"),
            "{method}: {err}"
        );
        assert!(err.contains("97.7 KiB"), "{method}: the limit: {err}");
        assert!(err.contains(advice), "{method}: advice `{advice}`: {err}");
        assert!(!err.contains("panicked"), "{method}: {err}");
        assert_eq!(sessions_in(&store), 0, "{method}: a session was written");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_suggested_way_out_is_admitted_where_the_exact_fit_is_not() {
    let dir = binary::temp_dir("limits", "wayout", true);
    let data = write_table(&dir, 600, 3, 2);
    let store = dir.join("store");
    let shape = ProblemShape {
        n_train: 450,
        n_labeled: 450,
        n_test: 150,
        d: 4,
        m: 3,
        views: 2,
        ..Default::default()
    };
    let kde = find(MethodName::Kde);
    let exact = kde.peak_bytes(&shape, &Params::new()).unwrap();
    let low = Params::new().with("low_rank", Value::Text("50,50".into()));
    let lowrank = kde.peak_bytes(&shape, &low).unwrap();
    assert!(lowrank * 3 < exact, "{lowrank} vs {exact}");
    // A limit between the two: exact refused, low rank admitted (and run to the end). The run's
    // estimate adds to the method's the loader, the fit's runtime and the data's copies.
    let beside = LOADING_BYTES + RUNTIME_BYTES + mats(3, 600, 4 + 2 * 3);
    let limit = ((exact + lowrank) / 2 + beside) * 5 / 4;
    let refused = ovk_env(&run_args("kde", &data, 3, &[]), &store, Some(limit));
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    let ok = ovk_env(
        &run_args("kde", &data, 3, &["--low-rank", "50,50"]),
        &store,
        Some(limit),
    );
    assert!(ok.status.success(), "{}", stderr(&ok));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn lowrank_okl_estimate_does_not_grow_with_m_squared() {
    let m = find(MethodName::LowRankOkl);
    let shape = |outputs| ProblemShape {
        n_train: 2000,
        n_labeled: 2000,
        n_test: 500,
        d: 10,
        m: outputs,
        views: 0,
        ..Default::default()
    };
    let p = Params::new().with("rank", Value::Int(5));
    let small = m.peak_bytes(&shape(10_000), &p).unwrap();
    let large = m.peak_bytes(&shape(100_000), &p).unwrap();
    // Ten times the outputs: at most ten times the memory (linear in m: the ℓ×m targets),
    // far below one m×m matrix (80 GB).
    assert!(large <= 10 * small, "{small} → {large}");
    assert!(large < 8 * 100_000u64 * 100_000 / 4, "{large}");
    // okl, which holds m×m matrices, does grow with m².
    let okl = find(MethodName::Okl);
    let q = Params::new();
    let (a, b) = (
        okl.peak_bytes(&shape(10_000), &q).unwrap(),
        okl.peak_bytes(&shape(100_000), &q).unwrap(),
    );
    assert!(b > 50 * a, "{a} → {b}");
}

/// The child's memory report: (estimated peak, process peak RSS, process base RSS), bytes.
fn memory_report(
    method: &str,
    data: &Path,
    m: usize,
    extra: &[&str],
    store: &Path,
) -> (f64, f64, f64) {
    let args = run_args(method, data, m, extra);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = binary::ovk(&args, store);
    assert!(out.status.success(), "{method}: {}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    let field = |k: &str| v["memory"][k].as_f64().unwrap();
    (
        field("estimated_peak_bytes"),
        field("process_peak_rss_bytes"),
        field("process_base_rss_bytes"),
    )
}

/// The child's reported estimate and its process peak RSS.
fn measured(method: &str, data: &Path, m: usize, extra: &[&str], store: &Path) -> (f64, f64) {
    let (est, peak, _) = memory_report(method, data, m, extra, store);
    (est, peak)
}

/// The child's reported estimate and its peak above the process's base at the run's start.
fn measured_above_base(
    method: &str,
    data: &Path,
    m: usize,
    extra: &[&str],
    store: &Path,
) -> (f64, f64) {
    let (est, peak, base) = memory_report(method, data, m, extra, store);
    (est, peak - base)
}

/// A folder `name` with a store and two tables of m outputs, of 1200 and of 40 rows (seeds
/// `seeds`): (folder, store, big, tiny).
fn measure_tables(name: &str, m: usize, seeds: (u64, u64)) -> (PathBuf, PathBuf, PathBuf, PathBuf) {
    let dir = binary::temp_dir("limits", name, true);
    let store = dir.join("store");
    let big = write_table(&dir, 1200, m, seeds.0);
    let tiny = write_table(&dir, 40, m, seeds.1);
    (dir, store, big, tiny)
}

/// The estimate over the measured peak above the binary's own footprint (`base`), and the
/// report line saying so. `est` is the estimate above the same tiny run's: the estimate counts
/// the loader and the fit's runtime too, which the tiny run's peak already holds.
fn compared(method: &str, extra: &[&str], est: f64, peak: f64, base: f64) -> (f64, String) {
    let used = (peak - base).max(1.0);
    let ratio = est / used;
    let line = format!(
        "{method} {}: estimate {:.1} MiB, measured {:.1} MiB (peak {:.1} − base {:.1}), ratio {ratio:.2}",
        extra.join(" "),
        est / 1048576.0,
        used / 1048576.0,
        peak / 1048576.0,
        base / 1048576.0
    );
    (ratio, line)
}

#[test]
fn estimates_are_within_a_small_factor_of_the_measured_peak() {
    let m = 3;
    let (dir, store, big, tiny) = measure_tables("measure", m, (3, 4));
    let cases: &[(&str, &[&str])] = &[
        ("krr", &[]),
        ("okl", &[]),
        ("lowrank-okl", &["--lambda", "0.1", "--rank", "2"]),
        ("kde", &["--ovk", "identity"]),
        ("kde", &["--ovk", "covariance"]),
        ("kde", &["--ovk", "conditional"]),
        ("vvmr", &[]),
        ("mvml", &["--max-iter", "3"]),
    ];
    let mut report = Vec::new();
    for (method, extra) in cases {
        // The same run on 40 rows: the binary's own footprint (code, allocator, data loading).
        let (est_tiny, base) = measured(method, &tiny, m, extra, &store);
        let (est, peak) = measured(method, &big, m, extra, &store);
        let (ratio, line) = compared(method, extra, est - est_tiny, peak, base);
        report.push(line);
        assert!(
            (0.5..=3.0).contains(&ratio),
            "{method}: estimate/measured = {ratio:.2}\n{}",
            report.join("\n")
        );
    }
    eprintln!("{}", report.join("\n"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn low_rank_estimates_are_close_to_the_measured_peak() {
    let m = 3;
    let (dir, store, _, _) = measure_tables("measure-lowrank", m, (5, 6));
    // 4000 rows rather than 1200: at 1200 these peaks were 6–20 MiB, where a few MiB of the
    // allocator's own moved the ratio by a third (vvmr read 1.35–1.74 there, 0.87–1.11 at
    // 4000 rows with r = 300 and 800, 2026-11-28).
    let big = write_table(&dir, 4000, m, 5);
    let cases: &[(&str, &[&str])] = &[
        ("vvmr", &["--input-rank", "300"]),
        ("vvmr", &["--input-rank", "300", "--laplacian-power", "2"]),
        ("kde", &["--input-rank", "300"]),
        ("kde", &["--input-rank", "300", "--ovk", "identity"]),
    ];
    let mut report = Vec::new();
    let mut worst: f64 = 1.0;
    for (method, extra) in cases {
        // Each run's whole estimate against its peak above the process's own base, as the
        // run reports them and `bench scaling` and `bench lowrank` compare them. A 40-row
        // run's peak had served as the base: it held the rate calibration's products, which
        // a 40-row fit no longer makes, and it hid 7 MiB that vvmr's k-NN search left in the
        // worker threads' heaps (0.84 as the run reported it, now fixed).
        // Peaks of a few MiB move by up to 20 % from run to run (kde's conditional solve
        // measured 24.4 and 29.2 MiB with the same input): the guard must cover the largest
        // of three.
        let (est, used) = (0..3)
            .map(|_| measured_above_base(method, &big, m, extra, &store))
            .fold((0.0, 0.0), |a, b| if b.1 > a.1 { b } else { a });
        let ratio = est / used.max(1.0);
        report.push(format!(
            "{method} {}: estimate {:.1} MiB, measured {:.1} MiB above the base, ratio {ratio:.2}",
            extra.join(" "),
            est / 1048576.0,
            used / 1048576.0
        ));
        if (ratio - 1.0).abs() > (worst - 1.0).abs() {
            worst = ratio;
        }
    }
    eprintln!("{}", report.join("\n"));
    // Aimed at 0.9–1.15, the benchmarks' band; an over-estimate only refuses a little early,
    // an under-estimate would let a run abort, so the upper bound is the safe side's.
    assert!(
        (0.85..=1.3).contains(&worst),
        "estimate/measured = {worst:.2}\n{}",
        report.join("\n")
    );
    let _ = std::fs::remove_dir_all(&dir);
}
