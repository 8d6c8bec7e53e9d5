//! `ovk bench lowrank`: the low-rank input kernel at real data sizes. Every row is one
//! end-to-end `ovk run` (loading included) in a child process of this binary, timed from the
//! outside with its peak resident memory read from /proc; each low-rank row stands beside the
//! same run's exact route where that fits the caps, and the table prints the ratios.
//!
//! The large sets are read from the shared datasets folder (`--data-dir`, `$OVK_SHARED_DATA`,
//! or `../shared/datasets` from the working directory); they are never copied anywhere.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value as Json;

use ovk_core::kernels::format_bytes;
use ovk_core::{OvkError, Result};
use ovk_lab::bench_engine::{status_kib, synthetic_csv};

#[derive(clap::Args, Debug)]
pub struct LowrankArgs {
    /// Which rows: real (tmc2007, usps, delicious), synthetic (n = 100 000 okl), compare (every
    /// method at n = 2000 and 4000, exact beside r = n/4), or all
    #[arg(long, default_value = "all")]
    suite: String,
    /// Folder holding tmc2007.csv, usps.csv and delicious.csv (default: $OVK_SHARED_DATA, else
    /// ../shared/datasets)
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Per-run wall-time cap in seconds (the child is killed and the cell reads "> S s")
    #[arg(long, default_value_t = 600.0, value_name = "S")]
    max_seconds: f64,
    /// Only rows whose name contains this text
    #[arg(long)]
    only: Option<String>,
}

/// One end-to-end run: `ovk run --data <data> <args…>`.
struct Case {
    name: String,
    data: PathBuf,
    args: Vec<String>,
    /// The exact row this one is compared with (by name), when there is one.
    exact: Option<String>,
}

struct Outcome {
    wall_s: f64,
    peak: Option<u64>,
    json: Option<Json>,
    failure: Option<String>,
}

pub fn bench_lowrank(a: &LowrankArgs) -> Result<i32> {
    let dir = a
        .data_dir
        .clone()
        .unwrap_or_else(ovk_lab::datasets::shared_dir);
    let scratch = std::env::temp_dir().join(format!("ovk-bench-lowrank-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(|e| OvkError::io_path(&scratch, e))?;
    let mut cases = Vec::new();
    let want = |s: &str| a.suite == "all" || a.suite == s;
    if !["all", "real", "synthetic", "compare"].contains(&a.suite.as_str()) {
        return Err(OvkError::input(format!(
            "--suite: '{}' is not real, synthetic, compare or all",
            a.suite
        )));
    }
    if want("real") {
        for f in ["tmc2007.csv", "usps.csv", "delicious.csv"] {
            if !dir.join(f).is_file() {
                return Err(OvkError::input(format!(
                    "{}: not found; point --data-dir (or $OVK_SHARED_DATA) at the shared \
                     datasets folder",
                    dir.join(f).display()
                )));
            }
        }
        cases.extend(real_cases(&dir));
    }
    if want("synthetic") {
        let path = scratch.join("synthetic-100000.csv");
        write_file(&path, &synthetic_csv(100_000, 10, 0))?;
        cases.push(case(
            "synthetic n=100000 okl r=1000",
            &path,
            "--targets y_* --test-fraction 0.001 --method okl --input-rank 1000 --lambda 0.1",
            None,
        ));
    }
    if want("compare") {
        cases.extend(compare_cases(&scratch)?);
    }
    if let Some(only) = &a.only {
        cases.retain(|c| c.name.contains(only.as_str()));
    }
    let exe = std::env::current_exe()
        .map_err(|e| OvkError::internal(format!("locating this binary: {e}")))?;
    let store = scratch.join("sessions");
    let mut done: Vec<(Case, Outcome)> = Vec::new();
    for c in cases {
        errln!("running {} …", c.name);
        let o = run_case(&exe, &c, &store, a.max_seconds);
        errln!("  {}", summary(&o));
        done.push((c, o));
    }
    outln!("{}", markdown(&done))?;
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(0)
}

fn case(name: &str, data: &Path, args: &str, exact: Option<&str>) -> Case {
    Case {
        name: name.to_string(),
        data: data.to_path_buf(),
        args: args.split_whitespace().map(String::from).collect(),
        exact: exact.map(String::from),
    }
}

/// The rows on the shared datasets, with their official splits.
fn real_cases(dir: &Path) -> Vec<Case> {
    let tmc = dir.join("tmc2007.csv");
    let usps = dir.join("usps.csv");
    let deli = dir.join("delicious.csv");
    let tmc_roles = "--targets label_* --test-column is_test";
    vec![
        case(
            "tmc2007 krr linear λ=1 (exact, primal)",
            &tmc,
            &format!("{tmc_roles} --method krr --kernel linear --lambda 1"),
            None,
        ),
        case(
            "tmc2007 krr gaussian r=1000",
            &tmc,
            &format!("{tmc_roles} --method krr --input-rank 1000 --lambda 1"),
            Some("tmc2007 krr linear λ=1 (exact, primal)"),
        ),
        case(
            "tmc2007 krr gaussian r=2000",
            &tmc,
            &format!("{tmc_roles} --method krr --input-rank 2000 --lambda 1"),
            Some("tmc2007 krr linear λ=1 (exact, primal)"),
        ),
        case(
            "tmc2007 okl gaussian r=1000",
            &tmc,
            &format!("{tmc_roles} --method okl --input-rank 1000 --lambda 1"),
            Some("tmc2007 krr linear λ=1 (exact, primal)"),
        ),
        case(
            "tmc2007 okl gaussian r=2000",
            &tmc,
            &format!("{tmc_roles} --method okl --input-rank 2000 --lambda 1"),
            Some("tmc2007 krr linear λ=1 (exact, primal)"),
        ),
        case(
            "tmc2007 lowrank-okl p=10 gaussian r=2000",
            &tmc,
            &format!("{tmc_roles} --method lowrank-okl --rank 10 --input-rank 2000 --lambda 1"),
            Some("tmc2007 krr linear λ=1 (exact, primal)"),
        ),
        // each label standardised over the training rows: a rare label weighs as much as a
        // frequent one in the squared loss
        case(
            "tmc2007 lowrank-okl p=10 gaussian r=2000, standardised labels",
            &tmc,
            &format!(
                "{tmc_roles} --method lowrank-okl --rank 10 --input-rank 2000 --lambda 1 \
                 --target-scale standard"
            ),
            Some("tmc2007 krr linear λ=1 (exact, primal)"),
        ),
        case(
            "tmc2007 vvmr 1000 labeled gaussian r=2000",
            &tmc,
            &format!("{tmc_roles} --method vvmr --labeled 1000 --input-rank 2000"),
            Some("tmc2007 krr linear λ=1 (exact, primal)"),
        ),
        // γ chosen by `ovk sweep --cv 3` on the training part over γ_A ∈ {1e-5, 1e-4, 1e-3},
        // γ_I ∈ {0, 1e-6, 1e-5, 1e-4}: the graph term does not help at 1000 labels here.
        case(
            "tmc2007 vvmr 1000 labeled r=2000, γ by 3-fold CV",
            &tmc,
            &format!(
                "{tmc_roles} --method vvmr --labeled 1000 --input-rank 2000 --gamma-a 1e-3 \
                 --gamma-i 0"
            ),
            Some("tmc2007 krr linear λ=1 (exact, primal)"),
        ),
        case(
            "usps okl exact",
            &usps,
            "--class digit --test-column is_test --method okl --input-rank exact --lambda 0.1",
            None,
        ),
        case(
            "usps okl r=2000",
            &usps,
            "--class digit --test-column is_test --method okl --input-rank 2000 --lambda 0.1",
            Some("usps okl exact"),
        ),
        case(
            "delicious lowrank-okl p=50 25-λ path r=2000",
            &deli,
            "--targets label_* --test-column is_test --method lowrank-okl --rank 50 \
             --lambda-path 25 --input-rank 2000",
            None,
        ),
    ]
}

/// Every method at n = 2000 and 4000: the exact route beside r = n/4.
fn compare_cases(scratch: &Path) -> Result<Vec<Case>> {
    let mut out = Vec::new();
    for n in [2000, 4000] {
        let path = scratch.join(format!("synthetic-{n}.csv"));
        write_file(&path, &synthetic_csv(n, 10, 0))?;
        let r = n / 4;
        // λ of each method chosen by `ovk sweep --cv 3` on the n = 2000 training part over
        // 1e-2 … 1e1 (7 points): a fixed λ far below the optimum exaggerates the effect of the
        // discarded spectrum, which only matters where λ is smaller than it.
        for (method, extra) in [
            ("krr", "--lambda 0.1"),
            ("okl", "--lambda 1"),
            // λ chosen on its path by MSE on 20 % of the training rows, then refitted on all:
            // choosing on the test rows would make the compared metric the one λ was fit to.
            ("lowrank-okl", "--rank 5 --val-fraction 0.2"),
            ("vvmr", "--labeled 0.5"),
            ("kde", "--lambda 0.01"),
            // mvml's rank R is block Nyström on R landmark columns in all, R/2 per view here.
            ("mvml", "--view a=x_0..x_4 --view b=x_5..x_9 --lambda 0.1"),
        ] {
            let exact = format!("{method} n={n} exact");
            let base = format!("--targets y_* --test-fraction 0.2 --method {method} {extra}");
            let exact_args = format!("{base} --input-rank exact");
            out.push(case(&exact, &path, &exact_args, None));
            let approx = format!("{base} --input-rank {r}");
            out.push(case(
                &format!("{method} n={n} r={r}"),
                &path,
                &approx,
                Some(&exact),
            ));
        }
    }
    Ok(out)
}

fn write_file(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).map_err(|e| OvkError::io_path(path, e))
}

/// Run one case as a child, polling its peak resident set; kill it at the time cap.
fn run_case(exe: &Path, c: &Case, store: &Path, max_seconds: f64) -> Outcome {
    let mut cmd = Command::new(exe);
    cmd.arg("run")
        .arg("--data")
        .arg(&c.data)
        .args(&c.args)
        .arg("--json")
        .arg("--sessions")
        .arg(store)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = match cmd.spawn() {
        Ok(ch) => ch,
        Err(e) => {
            return Outcome {
                wall_s: 0.0,
                peak: None,
                json: None,
                failure: Some(format!("could not start {}: {e}", exe.display())),
            }
        }
    };
    let take = |s: Option<Box<dyn Read + Send>>| {
        s.map(|mut r| {
            std::thread::spawn(move || {
                let mut t = String::new();
                let _ = r.read_to_string(&mut t);
                t
            })
        })
    };
    let out = take(
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let err = take(
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let status = format!("/proc/{}/status", child.id());
    let mut peak: Option<u64> = None;
    let mut killed = false;
    loop {
        if let Some(k) = status_kib(&status, "VmHWM:") {
            peak = Some(peak.unwrap_or(0).max(k * 1024));
        }
        match child.try_wait() {
            Ok(Some(_)) | Err(_) => break,
            Ok(None) => {}
        }
        if start.elapsed().as_secs_f64() > max_seconds {
            let _ = child.kill();
            killed = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let exit = child.wait().ok();
    let wall_s = start.elapsed().as_secs_f64();
    let stdout = out.and_then(|h| h.join().ok()).unwrap_or_default();
    let stderr = err.and_then(|h| h.join().ok()).unwrap_or_default();
    let json = serde_json::from_str::<Json>(stdout.trim()).ok();
    let failure = if killed {
        Some(format!("> {max_seconds:.0} s (killed)"))
    } else if json.is_none() || !exit.is_some_and(|s| s.success()) {
        let last = stderr
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no output")
            .trim_start_matches("ovk: ")
            .to_string();
        Some(last)
    } else {
        None
    };
    Outcome {
        wall_s,
        peak,
        json,
        failure,
    }
}

/// The test metric a row is judged by: mean AUC (multi-label), accuracy (multi-class), MSE.
fn headline(j: &Json) -> Option<(&'static str, f64)> {
    let test = j.get("metrics")?.get("test")?;
    for key in ["mean_auc", "accuracy", "mse"] {
        if let Some(v) = test.get(key).and_then(|v| v.as_f64()) {
            return Some((key, v));
        }
    }
    None
}

fn summary(o: &Outcome) -> String {
    match (&o.failure, &o.json) {
        (Some(f), _) => format!("failed: {f}"),
        (None, Some(j)) => format!(
            "{:.1} s wall, peak {}, {}",
            o.wall_s,
            o.peak.map(format_bytes).unwrap_or_else(|| "?".into()),
            headline(j)
                .map(|(k, v)| format!("{k} {v:.4}"))
                .unwrap_or_default()
        ),
        (None, None) => "no result".into(),
    }
}

fn markdown(rows: &[(Case, Outcome)]) -> String {
    let mut s = String::from(
        "| run | wall (load included) | fit | peak memory (estimate ÷ peak) | test metric | exact route | Δ metric | speed-up (wall) | speed-up (fit) |\n\
         |---|---:|---:|---:|---|---|---:|---:|---:|\n",
    );
    let find = |name: &str| rows.iter().find(|(c, _)| c.name == name).map(|(_, o)| o);
    for (c, o) in rows {
        let fit_s = |o: &Outcome| {
            o.json
                .as_ref()
                .and_then(|j| j.get("fit_seconds"))
                .and_then(|v| v.as_f64())
        };
        let fit = fit_s(o)
            .map(|v| format!("{v:.2} s"))
            .unwrap_or_else(|| "—".into());
        let metric = o.json.as_ref().and_then(headline);
        let (wall, metric_cell) = match &o.failure {
            Some(f) => (format!("{:.1} s", o.wall_s), format!("failed: {f}")),
            None => (
                format!("{:.1} s", o.wall_s),
                metric
                    .map(|(k, v)| format!("{k} {v:.4}"))
                    .unwrap_or_else(|| "—".into()),
            ),
        };
        let (exact_cell, delta, speed, fit_speed) =
            match c.exact.as_deref().and_then(|e| find(e).map(|x| (e, x))) {
                Some((name, x)) => {
                    let xm = x.json.as_ref().and_then(headline);
                    // Relative too: the bar is "within 1 % of the exact test metric".
                    let delta = match (metric, xm) {
                        (Some((_, a)), Some((_, b))) => {
                            format!("{:+.4} ({:+.2} %)", a - b, 100.0 * (a - b) / b.abs())
                        }
                        _ => "—".into(),
                    };
                    let both = x.failure.is_none() && o.failure.is_none();
                    let speed = if both && o.wall_s > 0.0 {
                        format!("{:.1}×", x.wall_s / o.wall_s)
                    } else {
                        "—".into()
                    };
                    let fit_speed = match (fit_s(x), fit_s(o)) {
                        (Some(a), Some(b)) if both && b > 0.0 => format!("{:.1}×", a / b),
                        _ => "—".into(),
                    };
                    (name.to_string(), delta, speed, fit_speed)
                }
                None => ("—".into(), "—".into(), "—".into(), "—".into()),
            };
        s.push_str(&format!(
            "| {} | {wall} | {fit} | {} | {metric_cell} | {exact_cell} | {delta} | {speed} | {fit_speed} |\n",
            c.name,
            peak_and_estimate(o),
        ));
    }
    s
}

/// "318.2 MiB (1.04)": the child's peak and the memory guard's estimate for the run as a share
/// of it. The estimate counts what the run adds, so the process's resident set before it
/// loaded anything (the program itself) is added to it, as `bench scaling` does.
fn peak_and_estimate(o: &Outcome) -> String {
    let Some(peak) = o.peak else {
        return "?".into();
    };
    let memory = o.json.as_ref().and_then(|j| j.get("memory"));
    let field = |k: &str| memory.and_then(|m| m.get(k)).and_then(Json::as_u64);
    match (
        field("estimated_peak_bytes"),
        field("process_base_rss_bytes"),
    ) {
        (Some(e), Some(base)) if peak > 0 => format!(
            "{} ({:.2})",
            format_bytes(peak),
            (e + base) as f64 / peak as f64
        ),
        _ => format_bytes(peak),
    }
}
