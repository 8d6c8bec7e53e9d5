//! A session write interrupted at any point (SIGKILL during `ovk run`'s save) leaves the
//! previous sessions intact, lists no half-session, and the leftover work directory is harmless
//! and cleaned up by the next save.

use crate::common::binary;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use binary::stdout;
use ovk_core::data::rng::Rng;

/// Many outputs, so the save (coefficients, predictions and targets, each synced) takes long
/// enough to be hit.
fn write_table(dir: &Path, n: usize, m: usize) -> PathBuf {
    let mut r = Rng::new(5);
    let mut s = String::from("x0,x1,x2");
    for k in 0..m {
        s.push_str(&format!(",y{k}"));
    }
    s.push('\n');
    for _ in 0..n {
        let x = [r.normal(), r.normal(), r.normal()];
        let mut cells: Vec<String> = x.iter().map(|v| format!("{v:.5}")).collect();
        for k in 0..m {
            cells.push(format!("{:.5}", (x[k % 3] * (1 + k % 7) as f64).sin()));
        }
        s.push_str(&cells.join(","));
        s.push('\n');
    }
    let path = dir.join("wide.csv");
    std::fs::write(&path, s).unwrap();
    path
}

fn args(data: &Path, m: usize, store: &Path) -> Vec<String> {
    let mut a = binary::run_args("krr", data, m);
    a.extend(["--sessions".into(), store.to_str().unwrap().into()]);
    a
}

/// `ovk ARGS` run to the end, which must succeed (it saves a session).
fn save_ok(args: &[String]) {
    let out = Command::new(env!("CARGO_BIN_EXE_ovk"))
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", binary::stderr(&out));
}

/// Every file of a session directory, by name, with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

fn entries(store: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut sessions = Vec::new();
    let mut work = Vec::new();
    for e in std::fs::read_dir(store).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with(".tmp-") {
            work.push(e.path());
        } else if !name.starts_with('.') {
            sessions.push(e.path());
        }
    }
    (sessions, work)
}

/// Whether process `pid` has a save in progress (its work directory `.tmp-ID-PID-NONCE`).
fn has_work_dir(store: &Path, pid: u32) -> bool {
    let tag = format!("-{pid}-");
    entries(store)
        .1
        .iter()
        .any(|p| p.is_dir() && p.file_name().unwrap().to_string_lossy().contains(&tag))
}

/// Wait for `child`'s save to begin (the fit takes a moment): true once its work directory
/// is there, false if the process ended first.
fn save_begins(store: &Path, child: &mut std::process::Child) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(30) {
        if has_work_dir(store, child.id()) {
            return true;
        }
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_micros(100));
    }
    false
}

/// `ovk sessions`: the listed lines; none may be an unreadable entry.
fn listed(store: &Path) -> Vec<String> {
    let out = binary::ovk(&["sessions"], store);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(
        !text.contains("unreadable"),
        "a half-session is listed:\n{text}"
    );
    text.lines()
        .filter(|l| !l.starts_with("no sessions"))
        .map(String::from)
        .collect()
}

#[test]
fn sigkill_during_save_leaves_the_store_intact() {
    let dir = binary::temp_dir("kill", "save", true);
    let store = dir.join("store");
    let m = 300;
    let data = write_table(&dir, 1200, m);
    let a = args(&data, m, &store);

    // The previous session.
    save_ok(&a);
    let (sessions, _) = entries(&store);
    assert_eq!(sessions.len(), 1);
    let previous = sessions[0].clone();
    let before = snapshot(&previous);

    let mut hit_during_write = 0;
    let mut published = 0;
    // Delays after the work directory appears, in microseconds: from at once to past the end
    // of the save (a few hundred ms here, most of it fsync).
    for delay_us in [
        0u64, 300, 1000, 3000, 10_000, 30_000, 100_000, 300_000, 1_000_000,
    ] {
        let n_before = entries(&store).0.len();
        let mut child = Command::new(env!("CARGO_BIN_EXE_ovk"))
            .args(&a)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let pid = child.id();
        let started = save_begins(&store, &mut child);
        std::thread::sleep(Duration::from_micros(delay_us));
        let _ = child.kill(); // SIGKILL
        child.wait().unwrap();
        if started && has_work_dir(&store, pid) {
            hit_during_write += 1;
        }
        published += entries(&store).0.len() - n_before;

        // The previous session is bit for bit what it was, and still loads.
        assert_eq!(snapshot(&previous), before, "delay {delay_us} µs");
        ovk_core::session::load(&previous).unwrap();
        // Every listed entry is a complete session; work directories are not listed.
        let (sessions, _) = entries(&store);
        let lines = listed(&store);
        assert_eq!(
            lines.len(),
            sessions.len(),
            "delay {delay_us} µs: {lines:?}"
        );
        for s in &sessions {
            ovk_core::session::load(s).unwrap_or_else(|e| panic!("delay {delay_us} µs: {e}"));
        }
    }
    eprintln!("{hit_during_write} kills landed during the write, {published} saves completed");
    assert!(hit_during_write > 0, "no kill landed during the write");
    // The spread reaches past the save: some runs published their session before the kill.
    assert!(
        published > 0,
        "no kill came after a save (the spread is too short)"
    );

    // The next save removes the dead writers' leftovers and succeeds beside them.
    save_ok(&a);
    let (sessions, work) = entries(&store);
    assert!(work.is_empty(), "leftovers: {work:?}");
    assert_eq!(listed(&store).len(), sessions.len());
    assert_eq!(snapshot(&previous), before);
    let _ = std::fs::remove_dir_all(&dir);
}

/// SIGINT or SIGTERM while `ovk run` saves: exit 130, not 0 (a signal that comes as the run
/// finishes is reported too, by `cli::main`). Either the save
/// finishes and the run exits 130 saying it was kept, or nothing half-written is left.
#[test]
fn a_signal_during_save_exits_130_and_leaves_whole_sessions() {
    let dir = binary::temp_dir("kill", "signal", true);
    let store = dir.join("store");
    std::fs::create_dir_all(&store).unwrap();
    let m = 300;
    let data = write_table(&dir, 1200, m);
    let a = args(&data, m, &store);
    let (mut during, mut stopped, mut finished_first) = (0, 0, 0);
    for (k, delay_us) in [0u64, 500, 2000, 8000, 20_000, 40_000]
        .into_iter()
        .enumerate()
    {
        let signal = if k % 2 == 0 {
            libc::SIGINT
        } else {
            libc::SIGTERM
        };
        let mut child = Command::new(env!("CARGO_BIN_EXE_ovk"))
            .args(&a)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let started = save_begins(&store, &mut child);
        std::thread::sleep(Duration::from_micros(delay_us));
        if child.try_wait().unwrap().is_some() {
            continue; // the run ended before the signal: its 0 is its own
        }
        unsafe { libc::kill(pid as i32, signal) };
        let out = child.wait_with_output().unwrap();
        if started {
            during += 1;
        }
        let code = out.status.code();
        let text = binary::stderr(&out);
        if code == Some(0) {
            // the run left between the check above and the signal (a loaded machine can pause
            // the test there): its whole session is published and the signal came too late
            finished_first += 1;
        } else {
            assert_eq!(code, Some(130), "delay {delay_us} µs\n{text}");
            stopped += 1;
        }
        // every listed entry is a whole session
        let (sessions, _) = entries(&store);
        assert_eq!(listed(&store).len(), sessions.len());
        for s in &sessions {
            ovk_core::session::load(s).unwrap_or_else(|e| panic!("delay {delay_us} µs: {e}"));
        }
    }
    assert!(during > 0, "no signal landed during a save");
    // a signal handled but ignored would make every run exit 0
    assert!(
        stopped >= 3 && stopped > finished_first,
        "{stopped} runs exited 130, {finished_first} exited 0 after the signal"
    );
}
