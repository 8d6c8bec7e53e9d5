//! `ovk bench`: the scaling ledger. `bench scaling` runs every (method, n, outputs) as a child
//! process of itself (`bench one`, hidden), so each configuration's peak memory is its own, a
//! configuration over the time or memory cap is killed and reported rather than waited for, and
//! the table comes out as Markdown ready to paste. `bench data` writes the same synthetic
//! problem as CSV for the Python peers (peers/peers.sh).

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use ovk_core::kernels::{available_memory_bytes, format_bytes};
use ovk_core::session::OutputRules;
use ovk_core::{OvkError, Result};
use ovk_lab::bench_engine::{self as engine, BenchResult};

#[derive(clap::Args, Debug)]
pub struct BenchCmd {
    #[command(subcommand)]
    what: BenchWhat,
}

#[derive(clap::Subcommand, Debug)]
enum BenchWhat {
    /// Time each method's fit (defaults, λ = 0.1, no path) on synthetic data for every n and
    /// output count, with peak memory and the ratio to one eigendecomposition of K; Markdown out
    Scaling(ScalingArgs),
    /// One configuration in this process; prints one JSON object (used by `bench scaling`)
    #[command(hide = true)]
    One(OneArgs),
    /// Write the synthetic problem of the ledger as CSV (x_0 … x_9, y_0 …; n rows + 100 held out)
    Data(DataArgs),
    /// The low-rank input kernel at real sizes: end-to-end runs on tmc2007, usps, delicious and
    /// synthetic data, wall time and peak memory beside the exact route; Markdown out
    Lowrank(super::bench_lowrank::LowrankArgs),
}

#[derive(clap::Args, Debug)]
struct ScalingArgs {
    /// Comma-separated methods (default: all but the floor). Known: krr, okl, lowrank-okl,
    /// kde-identity, kde-covariance, kde-conditional, vvmr, mvml-exact, mvml-nystrom
    #[arg(long, value_delimiter = ',')]
    methods: Option<Vec<String>>,
    /// Training sizes
    #[arg(long, value_delimiter = ',', default_value = "500,1000,2000,4000")]
    n: Vec<usize>,
    /// Output counts m
    #[arg(long, value_delimiter = ',', default_value = "10,100")]
    outputs: Vec<usize>,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Per-configuration time cap: the child is killed and the cell reads "> S s"; larger n or m
    /// of the same method are then skipped
    #[arg(long, default_value_t = 120.0, value_name = "S")]
    max_seconds: f64,
    /// Per-configuration resident-memory cap in GiB (default: 85% of the memory available)
    #[arg(long, value_name = "GIB")]
    max_memory: Option<f64>,
    /// Divide by the floor measured once per n (in its own process) instead of by the eigh each
    /// configuration's process runs right after its fit (the default, robust to a changing load)
    #[arg(long)]
    floor_once: bool,
    /// Also write every measurement as JSON
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Replace the --out file if it exists
    #[arg(long)]
    force: bool,
}

#[derive(clap::Args, Debug)]
struct OneArgs {
    #[arg(long)]
    method: String,
    #[command(flatten)]
    size: Synthetic,
    /// Skip the floor (the parent measures it once per n)
    #[arg(long)]
    no_floor: bool,
}

#[derive(clap::Args, Debug)]
struct DataArgs {
    #[command(flatten)]
    size: Synthetic,
    #[command(flatten)]
    file: OutFile,
}

/// Where `bench data` writes its table.
#[derive(clap::Args, Debug)]
pub struct OutFile {
    /// The CSV file to write; `-` is standard output
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Replace FILE if it exists
    #[arg(long)]
    pub force: bool,
}

/// The synthetic problem of `bench one` and `bench data`: n rows, m outputs, a seed.
#[derive(clap::Args, Debug)]
struct Synthetic {
    #[arg(long)]
    n: usize,
    #[arg(long, default_value_t = 10)]
    outputs: usize,
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

pub fn bench(cmd: &BenchCmd, sessions: Option<&Path>) -> Result<i32> {
    match &cmd.what {
        BenchWhat::One(a) => {
            let r = engine::run_one(
                &a.method,
                a.size.n,
                a.size.outputs,
                a.size.seed,
                !a.no_floor,
            )?;
            let text = serde_json::to_string(&r)
                .map_err(|e| OvkError::internal(format!("benchmark JSON: {e}")))?;
            outln!("{text}")?;
            Ok(0)
        }
        BenchWhat::Data(a) => {
            if a.size.n < 2 || a.size.outputs == 0 {
                return Err(OvkError::input(
                    "--n must be at least 2 and --outputs at least 1",
                ));
            }
            ovk_core::data::gen_size::check_table(
                "--n",
                a.size.n,
                "--outputs",
                a.size.outputs + engine::INPUTS,
            )?;
            if !matches!(
                ovk_core::data::output_format(&a.file.out)?,
                ovk_core::data::Format::Csv { separator: b',' }
            ) {
                return Err(ovk_core::error::input_at(
                    &a.file.out,
                    "bench data writes comma-separated CSV; name a .csv file (or - for \
                     standard output)",
                ));
            }
            let rules = ovk_core::session::OutputRules::outside_store(a.file.force, sessions)?;
            let out = ovk_core::session::output::plan(&a.file.out, &rules)?;
            out.write(engine::synthetic_csv(a.size.n, a.size.outputs, a.size.seed).as_bytes())?;
            errln!(
                "wrote {} ({} training + 100 held-out rows, {} inputs, {} outputs)",
                a.file.out.display(),
                a.size.n,
                engine::INPUTS,
                a.size.outputs
            );
            Ok(0)
        }
        BenchWhat::Scaling(a) => scaling(a, sessions),
        BenchWhat::Lowrank(a) => super::bench_lowrank::bench_lowrank(a),
    }
}

/// How one configuration ended.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
enum Status {
    Ok,
    /// Killed at the time cap.
    Timeout,
    /// Killed at the memory cap (or refused by the method's own memory guard).
    Memory,
    /// Not run: a smaller n of the same method and m already hit a cap.
    Skipped,
    Error,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Row {
    method: String,
    n: usize,
    outputs: usize,
    status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    /// Wall-clock seconds of the child process (data generation included).
    wall_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<BenchResult>,
}

#[derive(Debug, Serialize)]
struct Ledger<'a> {
    machine: Machine,
    settings: Settings,
    floor: &'a [Row],
    rows: &'a [Row],
}

#[derive(Debug, Clone, Serialize)]
struct Machine {
    cpu: String,
    cores: usize,
    memory_bytes: Option<u64>,
    load_average: String,
    started: String,
    ovk_version: String,
    ovk_threads: String,
}

#[derive(Debug, Clone, Serialize)]
struct Settings {
    lambda: f64,
    kernel: &'static str,
    inputs: usize,
    seed: u64,
    max_seconds: f64,
    max_memory_bytes: u64,
    floor: &'static str,
    floor_once: bool,
}

fn scaling(a: &ScalingArgs, sessions: Option<&Path>) -> Result<i32> {
    let methods = a.methods.clone().unwrap_or_else(engine::default_variants);
    for m in &methods {
        engine::check_variant(m)?;
    }
    if a.n.iter().any(|&n| n < 2) || a.outputs.contains(&0) {
        return Err(OvkError::input(
            "every --n must be at least 2 and every --outputs at least 1",
        ));
    }
    if !a.max_seconds.is_finite() || a.max_seconds <= 0.0 {
        return Err(OvkError::input("--max-seconds must be positive"));
    }
    if let Some(p) = &a.out {
        // Checked before the first fit; later saves replace the ledger this run wrote.
        ovk_core::session::output::plan(
            p,
            &ovk_core::session::OutputRules::outside_store(a.force, sessions)?,
        )?;
    }
    let max_memory = match a.max_memory {
        Some(g) if g > 0.0 => (g * 1024f64.powi(3)) as u64,
        Some(_) => return Err(OvkError::input("--max-memory must be positive (GiB)")),
        None => available_memory_bytes()
            .map(|b| (b as f64 * 0.85) as u64)
            .unwrap_or(u64::MAX),
    };
    let exe = std::env::current_exe()
        .map_err(|e| OvkError::internal(format!("cannot find the ovk executable: {e}")))?;
    let machine = machine();
    let settings = Settings {
        lambda: engine::LAMBDA,
        kernel: "gaussian, σ = median distance",
        inputs: engine::INPUTS,
        seed: a.seed,
        max_seconds: a.max_seconds,
        max_memory_bytes: max_memory,
        floor: if a.floor_once {
            "once per n, in its own process"
        } else {
            "in each configuration's process, right after its fit"
        },
        floor_once: a.floor_once,
    };
    let cap = Caps {
        seconds: a.max_seconds,
        memory: max_memory,
    };
    let mut ns = a.n.clone();
    ns.sort_unstable();
    ns.dedup();

    let mut floor: Vec<Row> = Vec::new();
    let mut rows: Vec<Row> = Vec::new();
    let save = |floor: &[Row], rows: &[Row]| -> Result<()> {
        if let Some(path) = &a.out {
            write_json(
                path,
                &Ledger {
                    machine: machine.clone(),
                    settings: settings.clone(),
                    floor,
                    rows,
                },
            )?;
        }
        Ok(())
    };
    for &n in &ns {
        let row = run_child(&exe, "eigh", n, 1, a.seed, false, &cap);
        progress(&row);
        floor.push(row);
        save(&floor, &rows)?;
    }
    let mut outputs = a.outputs.clone();
    outputs.sort_unstable();
    outputs.dedup();
    for method in &methods {
        // (n, m) that hit a cap: a larger n or m of the same method would too (time and memory
        // grow with both), so it is reported as skipped instead of run to the cap again.
        let mut capped: Vec<(usize, usize)> = Vec::new();
        for &n in &ns {
            for &m in &outputs {
                let below = capped.iter().find(|&&(cn, cm)| cn <= n && cm <= m).copied();
                let mut row = match below {
                    Some((cn, cm)) => Row {
                        method: method.clone(),
                        n,
                        outputs: m,
                        status: Status::Skipped,
                        message: Some(format!("n = {cn}, m = {cm} already hit a cap")),
                        wall_s: 0.0,
                        result: None,
                    },
                    None => run_child(&exe, method, n, m, a.seed, !a.floor_once, &cap),
                };
                if matches!(row.status, Status::Timeout | Status::Memory) {
                    capped.push((n, m));
                }
                if let (Some(r), Some(f)) = (
                    row.result.as_mut(),
                    floor
                        .iter()
                        .find(|f| f.n == n)
                        .and_then(|f| f.result.as_ref()),
                ) {
                    if r.eigh_s.is_none() {
                        r.eigh_s = f.eigh_s;
                        r.gram_s = f.gram_s;
                        r.ratio = r.fit_s.zip(f.eigh_s).map(|(t, e)| t / e);
                    }
                }
                progress(&row);
                rows.push(row);
                save(&floor, &rows)?;
            }
        }
    }
    out!(
        "{}",
        markdown(&machine, &settings, &floor, &rows, &methods, &outputs)
    )?;
    Ok(0)
}

struct Caps {
    seconds: f64,
    memory: u64,
}

/// Run `ovk bench one …` and watch it: kill it at the time or memory cap. The time cap applies
/// to the fit; once the child reports the fit done, its floor gets a cap of its own.
fn run_child(
    exe: &Path,
    method: &str,
    n: usize,
    outputs: usize,
    seed: u64,
    floor: bool,
    cap: &Caps,
) -> Row {
    let mut cmd = Command::new(exe);
    cmd.args(["bench", "one", "--method", method])
        .args(["--n", &n.to_string(), "--outputs", &outputs.to_string()])
        .args(["--seed", &seed.to_string()]);
    if !floor {
        cmd.arg("--no-floor");
    }
    let mut row = Row {
        method: method.to_string(),
        n,
        outputs,
        status: Status::Error,
        message: None,
        wall_s: 0.0,
        result: None,
    };
    let start = Instant::now();
    let mut child = match cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn() {
        Ok(c) => c,
        Err(e) => {
            row.message = Some(format!("could not start {}: {e}", exe.display()));
            return row;
        }
    };
    // Read both pipes on their own threads (a full pipe would stall the child); stderr line by
    // line, to see the fit-done marker as it comes.
    let out_reader = child.stdout.take().map(|mut s| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = s.read_to_string(&mut text);
            text
        })
    });
    let (tx, rx) = mpsc::channel::<String>();
    let err_reader = child.stderr.take().map(|s| {
        std::thread::spawn(move || {
            for line in BufReader::new(s).lines().map_while(|l| l.ok()) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        })
    });
    let status_file = format!("/proc/{}/status", child.id());
    let mut err_lines: Vec<String> = Vec::new();
    let mut fit_done: Option<Instant> = None;
    let killed = loop {
        for line in rx.try_iter() {
            if line == engine::FIT_DONE {
                fit_done = Some(Instant::now());
            } else {
                err_lines.push(line);
            }
        }
        match child.try_wait() {
            Ok(Some(_)) => break None,
            Ok(None) => {}
            Err(e) => {
                row.message = Some(format!("waiting for the child: {e}"));
                break Some(Status::Error);
            }
        }
        let over = match fit_done {
            None => start.elapsed().as_secs_f64() > cap.seconds,
            Some(t) => t.elapsed().as_secs_f64() > cap.seconds,
        };
        if over {
            if fit_done.is_some() {
                row.message = Some(format!("the floor (eigh of K) ran over {} s", cap.seconds));
            }
            break Some(Status::Timeout);
        }
        let rss = engine::status_kib(&status_file, "VmRSS:").map(|k| k * 1024);
        if rss.is_some_and(|b| b > cap.memory) {
            break Some(Status::Memory);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if killed.is_some() {
        let _ = child.kill();
    }
    let _ = child.wait();
    row.wall_s = start.elapsed().as_secs_f64();
    let out = out_reader.and_then(|h| h.join().ok()).unwrap_or_default();
    if let Some(h) = err_reader {
        let _ = h.join();
    }
    err_lines.extend(rx.try_iter().filter(|l| l != engine::FIT_DONE));
    if let Some(status) = killed {
        row.message.get_or_insert_with(|| match status {
            Status::Timeout => format!("killed at the {} s cap", cap.seconds),
            _ => format!("killed above {} resident", format_bytes(cap.memory)),
        });
        row.status = status;
        return row;
    }
    match serde_json::from_str::<BenchResult>(out.trim()) {
        Ok(r) => {
            row.status = Status::Ok;
            row.result = Some(r);
        }
        Err(_) => {
            let msg = err_lines
                .join(" ")
                .trim()
                .trim_start_matches("ovk: ")
                .to_string();
            row.status = if msg.contains("memory") {
                Status::Memory
            } else {
                Status::Error
            };
            row.message = Some(if msg.is_empty() {
                "no result from the child".to_string()
            } else {
                msg
            });
        }
    }
    row
}

fn progress(row: &Row) {
    let what = format!("{} n = {} m = {}", row.method, row.n, row.outputs);
    match (&row.status, &row.result) {
        (Status::Ok, Some(r)) => {
            let time = if r.method == "eigh" {
                format!("eigh {}", secs(r.eigh_s.unwrap_or(f64::NAN)))
            } else {
                format!(
                    "fit {} ({}× eigh)",
                    secs(r.fit_s.unwrap_or(f64::NAN)),
                    r.ratio.map_or("?".into(), ratio)
                )
            };
            errln!(
                "{what}: {time}, peak {}",
                r.peak_rss_bytes.map_or("?".into(), mem)
            );
        }
        _ => errln!(
            "{what}: {:?} — {}",
            row.status,
            row.message.as_deref().unwrap_or("")
        ),
    }
}

fn write_json(path: &Path, ledger: &Ledger) -> Result<()> {
    let text = serde_json::to_string_pretty(ledger)
        .map_err(|e| OvkError::internal(format!("benchmark JSON: {e}")))?;
    // The ledger is rewritten as rows finish: replacing its own earlier version is expected.
    ovk_core::session::output::plan(path, &OutputRules::new(true))?.write(text.as_bytes())
}

fn machine() -> Machine {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|v| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let memory_bytes = engine::status_kib("/proc/meminfo", "MemTotal:").map(|k| k * 1024);
    let load_average = std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default();
    Machine {
        cpu,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        memory_bytes,
        load_average,
        started: ovk_core::session::now_rfc3339(),
        ovk_version: env!("CARGO_PKG_VERSION").to_string(),
        ovk_threads: std::env::var("OVK_THREADS")
            .unwrap_or_else(|_| "unset (every core; small decompositions on one thread)".into()),
    }
}

fn secs(s: f64) -> String {
    if !s.is_finite() {
        "—".into()
    } else if s < 0.1 {
        format!("{s:.3} s")
    } else if s < 10.0 {
        format!("{s:.2} s")
    } else {
        format!("{s:.1} s")
    }
}

fn ratio(r: f64) -> String {
    if r < 10.0 {
        format!("{r:.2}")
    } else {
        format!("{r:.0}")
    }
}

fn mem(b: u64) -> String {
    let mib = b as f64 / 1024f64.powi(2);
    if mib < 1024.0 {
        format!("{mib:.0} MiB")
    } else {
        format!("{:.2} GiB", mib / 1024.0)
    }
}

/// The ledger as Markdown: the floor per n, then one table per method (rows n, a column group
/// per output count).
fn markdown(
    machine: &Machine,
    s: &Settings,
    floor: &[Row],
    rows: &[Row],
    methods: &[String],
    outputs: &[usize],
) -> String {
    let mut o = String::new();
    let gib = machine.memory_bytes.map_or("? GiB".into(), |b| {
        format!("{:.1} GiB", b as f64 / 1024f64.powi(3))
    });
    o.push_str(&format!(
        "Measured {} on {} ({} cores, {gib}), load average at the start {}; ovk {}, \
         OVK_THREADS {}. Synthetic data: d = {} inputs, smooth multi-output targets + noise \
         (seed {}); Gaussian kernel at the median σ, λ = {} fixed (no path, no search), each \
         method's other defaults. One child process per configuration; peak = its VmHWM; cap {} s \
         (\"skipped\": a smaller n or m of the same method already hit a cap).\n\n",
        machine.started,
        machine.cpu,
        machine.cores,
        machine.load_average,
        machine.ovk_version,
        machine.ovk_threads,
        s.inputs,
        s.seed,
        s.lambda,
        s.max_seconds
    ));
    if !floor.is_empty() {
        let per_config = !s.floor_once;
        o.push_str(if per_config {
            "**Floor**: one `eigh` of the n×n Gram matrix K, alone in its own process; each \
             ratio below divides by the eigh its own process ran right after the fit (their \
             median in the last column)\n\n"
        } else {
            "**Floor**: one `eigh` of the n×n Gram matrix K, alone in its own process; every \
             ratio below divides by it\n\n"
        });
        o.push_str("| n | Gram of K | eigh of K | peak memory |");
        o.push_str(if per_config {
            " eigh beside the fits (median) |\n|---:|---:|---:|---:|---:|\n"
        } else {
            "\n|---:|---:|---:|---:|\n"
        });
        for f in floor {
            match &f.result {
                Some(r) => o.push_str(&format!(
                    "| {} | {} | {} | {} |",
                    f.n,
                    secs(r.gram_s.unwrap_or(f64::NAN)),
                    secs(r.eigh_s.unwrap_or(f64::NAN)),
                    r.peak_rss_bytes.map_or("—".into(), mem)
                )),
                None => o.push_str(&format!("| {} | | {} | |", f.n, cell_failure(f, s))),
            }
            if per_config {
                let mut e: Vec<f64> = rows
                    .iter()
                    .filter(|r| r.n == f.n)
                    .filter_map(|r| r.result.as_ref().and_then(|x| x.eigh_s))
                    .collect();
                e.sort_by(f64::total_cmp);
                let med = if e.is_empty() {
                    "—".to_string()
                } else {
                    secs(e[e.len() / 2])
                };
                o.push_str(&format!(" {med} |"));
            }
            o.push('\n');
        }
        o.push('\n');
    }
    for method in methods {
        let about = engine::VARIANTS
            .iter()
            .find(|(v, _)| v == method)
            .map_or("", |(_, d)| *d);
        o.push_str(&format!("**{method}** ({about})\n\n| n |"));
        for m in outputs {
            o.push_str(&format!(
                " m = {m}: fit | ÷ eigh | peak (estimate ÷ peak) | iters |"
            ));
        }
        o.push_str("\n|---:|");
        for _ in outputs {
            o.push_str("---:|---:|---:|---:|");
        }
        o.push('\n');
        let mut ns: Vec<usize> = rows
            .iter()
            .filter(|r| &r.method == method)
            .map(|r| r.n)
            .collect();
        ns.sort_unstable();
        ns.dedup();
        for n in ns {
            o.push_str(&format!("| {n} |"));
            for &m in outputs {
                let row = rows
                    .iter()
                    .find(|r| &r.method == method && r.n == n && r.outputs == m);
                match row {
                    Some(Row {
                        status: Status::Ok,
                        result: Some(r),
                        ..
                    }) => o.push_str(&format!(
                        " {} | {} | {} | {}{} |",
                        secs(r.fit_s.unwrap_or(f64::NAN)),
                        r.ratio.map_or("—".into(), ratio),
                        peak_and_estimate(r),
                        r.iterations,
                        if r.converged { "" } else { " (not converged)" }
                    )),
                    Some(row) => o.push_str(&format!(" {} | | | |", cell_failure(row, s))),
                    None => o.push_str(" | | | |"),
                }
            }
            o.push('\n');
        }
        o.push('\n');
    }
    o
}

/// "61 MiB (0.97)": the measured peak and the guard's estimate as a share of it.
fn peak_and_estimate(r: &engine::BenchResult) -> String {
    match (r.peak_rss_bytes, r.estimate_bytes) {
        (Some(p), Some(e)) if p > 0 => format!("{} ({:.2})", mem(p), e as f64 / p as f64),
        (Some(p), _) => mem(p),
        _ => "—".into(),
    }
}

fn cell_failure(row: &Row, s: &Settings) -> String {
    match row.status {
        Status::Timeout => format!("> {} s", s.max_seconds),
        Status::Memory => format!("> {} memory", format_bytes(s.max_memory_bytes)),
        Status::Skipped => "skipped".into(),
        _ => format!(
            "error: {}",
            row.message
                .as_deref()
                .unwrap_or("")
                .replace('|', "/")
                .chars()
                .take(80)
                .collect::<String>()
        ),
    }
}
