//! The workbench's worker process (`ovk fit-worker`), driven as the workbench drives it: a fit
//! ends recorded in the store (not kept) and read back whole; a cancel inside an exact
//! eigendecomposition of a few thousand rows stops the process's CPU within a second and ends
//! it, and the run is recorded as cancelled with its trace so far; a worker that dies says how.

use std::path::{Path, PathBuf};
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use ovk_core::data::rng::Rng;
use ovk_core::data::DataConfig;
use ovk_core::kernels::{InputRank, KernelSpec, Sigma};
use ovk_core::methods::{Params, Phase, Value};
use ovk_core::session::{self, RunStatus, Store};
use ovk_core::train::worker::{spawn_worker, Work, WorkerHandle};
use ovk_core::train::{Ended, RunConfig, RunMessage};

use crate::common::binary::temp_dir;

fn exe() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_ovk"))
}

/// `n` rows of 5 features and 3 smooth targets.
fn write_table(dir: &Path, n: usize) -> PathBuf {
    let mut r = Rng::new(11);
    let mut s = String::from("x0,x1,x2,x3,x4,y0,y1,y2\n");
    for _ in 0..n {
        let x: Vec<f64> = (0..5).map(|_| r.normal()).collect();
        let y = [
            x[0].sin() + 0.1 * r.normal(),
            x[1] * x[2] + 0.1 * r.normal(),
            x[3] - x[4] + 0.1 * r.normal(),
        ];
        let cells: Vec<String> = x.iter().chain(&y).map(|v| format!("{v:.6}")).collect();
        s.push_str(&cells.join(","));
        s.push('\n');
    }
    let path = dir.join(format!("rows-{n}.csv"));
    std::fs::write(&path, s).unwrap();
    path
}

fn config(path: &Path, method: &str, rank: InputRank) -> RunConfig {
    let mut data = DataConfig::new(path);
    data.targets = Some(vec!["y0".into(), "y1".into(), "y2".into()]);
    RunConfig {
        data,
        method: method.parse().unwrap(),
        kernel: KernelSpec {
            sigma: Sigma::Value(1.5),
            input_rank: rank,
            ..KernelSpec::default()
        },
        params: Params::new().with("lambda", Value::Float(1e-2)),
        name: None,
        cv: None,
        select_on: Default::default(),
    }
}

/// Every message until the last one (recorded, failed or cancelled).
fn last_message(h: &WorkerHandle, within: Duration) -> (Vec<RunMessage>, RunMessage) {
    let until = Instant::now() + within;
    let mut before = Vec::new();
    loop {
        let left = until.saturating_duration_since(Instant::now());
        match h.rx.recv_timeout(left) {
            Ok(
                m @ (RunMessage::Recorded { .. }
                | RunMessage::Failed { .. }
                | RunMessage::Cancelled
                | RunMessage::Finished(_)),
            ) => return (before, m),
            Ok(m) => before.push(m),
            Err(RecvTimeoutError::Timeout) => panic!("no last message within {within:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("the worker's channel closed early"),
        }
    }
}

/// User + system CPU seconds of process `pid`, `None` once it is gone (or a zombie).
fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command's closing parenthesis: state is the 1st, utime the 12th,
    // stime the 13th.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    if f.first() == Some(&"Z") {
        return None;
    }
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    Some(ticks / hz)
}

#[test]
fn a_fit_in_the_worker_is_recorded_not_kept_and_read_back_whole() {
    let dir = temp_dir("worker", "fit", true);
    let store = dir.join("store");
    let data = write_table(&dir, 150);
    let h = spawn_worker(
        &exe(),
        &store,
        Work::Fit(Box::new(config(&data, "okl", InputRank::Auto))),
    )
    .expect("starting the worker");
    let (before, last) = last_message(&h, Duration::from_secs(120));
    assert!(
        before.iter().any(|m| matches!(m, RunMessage::Phase { .. })),
        "no phase reached the face"
    );
    assert!(
        before
            .iter()
            .any(|m| matches!(m, RunMessage::Estimate(e) if !e.is_empty())),
        "no time estimate reached the face"
    );
    let RunMessage::Recorded {
        dir: run_dir,
        ended: Ended::Finished(outcome),
    } = last
    else {
        panic!("expected a recorded finished run, got {last:?}");
    };
    assert!(run_dir.starts_with(&store), "{}", run_dir.display());
    let on_disk = session::load(&run_dir).unwrap().record;
    assert!(!on_disk.kept && on_disk.status == RunStatus::Finished);
    assert_eq!(on_disk.metrics, outcome.record.metrics);
    // The matrices in a live fit's order: the output kernel first, the model's parts last.
    assert_eq!(outcome.matrices[0].0, "output_kernel");
    assert!(outcome.matrices.last().unwrap().0.starts_with("model_"));
    // The memory measured is the worker's own.
    assert_eq!(on_disk.details["memory"]["process"], "worker");
    let listed = Store::open(Some(&store)).unwrap().unkept(None);
    assert_eq!(listed.len(), 1);
    drop(h);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn cancel_inside_an_exact_decomposition_stops_the_cpu_within_a_second_and_records_the_run() {
    let dir = temp_dir("worker", "cancel", true);
    let store = dir.join("store");
    // 3500 rows: an exact 2800×2800 eigendecomposition, seconds long on two cores.
    let data = write_table(&dir, 3500);
    let h = spawn_worker(
        &exe(),
        &store,
        Work::Fit(Box::new(config(&data, "okl", InputRank::Exact))),
    )
    .expect("starting the worker");
    let pid = h.pid();
    // Into the decomposition …
    let until = Instant::now() + Duration::from_secs(300);
    loop {
        match h
            .rx
            .recv_timeout(until.saturating_duration_since(Instant::now()))
        {
            Ok(RunMessage::Phase {
                phase: Phase::Decomposition,
                ..
            }) => break,
            Ok(m @ (RunMessage::Recorded { .. } | RunMessage::Failed { .. })) => {
                panic!("ended before its decomposition: {m:?}")
            }
            Ok(_) => {}
            Err(e) => panic!("no decomposition phase: {e:?}"),
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    let busy_a = cpu_seconds(pid).expect("the worker runs");
    std::thread::sleep(Duration::from_millis(300));
    let busy_b = cpu_seconds(pid).expect("the worker runs");
    assert!(
        busy_b > busy_a,
        "the worker is not computing ({busy_a} → {busy_b} CPU s)"
    );
    // … cancel, and watch its CPU time.
    let cancelled = Instant::now();
    h.cancel();
    let mut samples: Vec<(f64, f64)> = Vec::new();
    let gone = loop {
        let t = cancelled.elapsed().as_secs_f64();
        match cpu_seconds(pid) {
            Some(c) => samples.push((t, c)),
            None => break t,
        }
        assert!(
            t < 5.0,
            "the worker still runs 5 s after the cancel: {samples:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let at_cancel = samples.first().map_or(busy_b, |s| s.1);
    let last = samples.last().map_or(at_cancel, |s| s.1);
    // CPU seconds the process still burned after the first second (zero when it had ended).
    let after_one_second = samples
        .iter()
        .find(|(t, _)| *t >= 1.0)
        .map_or(0.0, |(_, c)| last - c);
    eprintln!(
        "worker {pid}: {:.2} CPU s used before the cancel, {:.2} CPU s from the cancel to its end; \
         gone {:.0} ms after the cancel; {:.2} CPU s after the first second",
        at_cancel,
        last - at_cancel,
        gone * 1000.0,
        after_one_second
    );
    assert!(gone <= 1.5, "the worker ended {gone:.2} s after the cancel");
    assert!(
        after_one_second < 0.05,
        "the worker kept computing after the first second: {samples:?}"
    );
    // The run is recorded as cancelled, with what it had.
    let (_, last) = last_message(&h, Duration::from_secs(10));
    let RunMessage::Recorded {
        dir: run_dir,
        ended: Ended::Cancelled(record),
    } = last
    else {
        panic!("expected a recorded cancelled run, got {last:?}");
    };
    assert_eq!(record.status, RunStatus::Cancelled);
    assert!(!record.kept);
    let on_disk = session::load(&run_dir).unwrap().record;
    assert_eq!(on_disk.status, RunStatus::Cancelled);
    assert_eq!(on_disk.method, "okl");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_cancelled_sweep_is_recorded_with_the_rows_it_scored() {
    let dir = temp_dir("worker", "sweep", true);
    let store = dir.join("store");
    let data = write_table(&dir, 120);
    let configs: Vec<RunConfig> = [1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0]
        .iter()
        .map(|l| {
            let mut c = config(&data, "krr", InputRank::Auto);
            c.params.set("lambda", Value::Float(*l));
            c
        })
        .collect();
    let n_configs = configs.len();
    let h = spawn_worker(
        &exe(),
        &store,
        Work::Sweep {
            configs,
            folds: Some(3),
            jobs: 1,
            halving: None,
        },
    )
    .unwrap();
    // Cancel once the first configuration is scored.
    let until = Instant::now() + Duration::from_secs(120);
    loop {
        match h
            .rx
            .recv_timeout(until.saturating_duration_since(Instant::now()))
        {
            Ok(RunMessage::SweepRow(_)) => break,
            Ok(m @ RunMessage::Recorded { .. }) => {
                // fast enough to finish first: its best is recorded, not cancelled
                assert!(matches!(
                    m,
                    RunMessage::Recorded {
                        ended: Ended::Finished(_),
                        ..
                    }
                ));
                return;
            }
            Ok(_) => {}
            Err(e) => panic!("no sweep row: {e:?}"),
        }
    }
    h.cancel();
    let (_, last) = last_message(&h, Duration::from_secs(10));
    match last {
        RunMessage::Recorded {
            ended: Ended::Cancelled(record),
            ..
        } => {
            assert!(record.name.ends_with("-sweep") || record.name.ends_with("-best"));
            let table = &record.details["sweep"];
            let rows = table["rows"].as_array().map_or(0, Vec::len);
            assert!(rows > 0);
            // cut short — or every configuration scored and the cancel landed in the refit
            assert!(table["interrupted"] == true || rows == n_configs, "{table}");
        }
        // the last configurations and the refit may all finish before the cancel lands
        RunMessage::Recorded {
            ended: Ended::Finished(_),
            ..
        } => {}
        m => panic!("expected a recorded run, got {m:?}"),
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_worker_that_dies_becomes_a_failure_that_says_how() {
    // A "worker" that aborts as an out-of-memory allocation does: the message says so.
    let dir = temp_dir("worker", "abort", true);
    let fake = dir.join("fake-ovk");
    std::fs::write(
        &fake,
        "#!/bin/sh\nread job\necho 'memory allocation of 80000000000 bytes failed' >&2\nkill -ABRT $$\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let data = write_table(&dir, 20);
    let h = spawn_worker(
        &fake,
        &dir.join("store"),
        Work::Fit(Box::new(config(&data, "krr", InputRank::Auto))),
    )
    .unwrap();
    let (_, last) = last_message(&h, Duration::from_secs(20));
    let RunMessage::Failed { message, .. } = last else {
        panic!("expected a failure, got {last:?}");
    };
    assert!(message.contains("ran out of memory"), "{message}");
    assert!(message.contains("80000000000 bytes"), "{message}");

    // One killed from outside (SIGKILL, as the out-of-memory killer does).
    let killed = dir.join("killed-ovk");
    std::fs::write(&killed, "#!/bin/sh\nread job\nkill -KILL $$\n").unwrap();
    std::fs::set_permissions(&killed, std::fs::Permissions::from_mode(0o755)).unwrap();
    let h = spawn_worker(
        &killed,
        &dir.join("store"),
        Work::Fit(Box::new(config(&data, "krr", InputRank::Auto))),
    )
    .unwrap();
    let (_, last) = last_message(&h, Duration::from_secs(20));
    let RunMessage::Failed { message, .. } = last else {
        panic!("expected a failure, got {last:?}");
    };
    assert!(message.contains("killed by the system"), "{message}");
    let _ = std::fs::remove_dir_all(dir);
}
