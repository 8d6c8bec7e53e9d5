//! Issue 33, points 5 and 6: every command answers SIGINT and SIGTERM the same way — exit
//! status 130, its unfinished temporaries removed — and a temporary a killed writer left is
//! removed by the next write to the same place (unless a live writer still holds it).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::common::binary::{root, stderr, temp_dir};

fn ovk(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ovk"));
    c.current_dir(dir)
        .arg("--sessions")
        .arg(dir.join("store"))
        .env_remove("RUST_BACKTRACE");
    c
}

/// Whether `pid` catches SIGINT and SIGTERM (its handler is installed): `SigCgt` in
/// /proc/PID/status has bits 1 and 14.
fn catches_signals(pid: u32) -> bool {
    let Ok(status) = fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
        .is_some_and(|m| m & (1 << 1) != 0 && m & (1 << 14) != 0)
}

/// Send `signal` once the process handles it; its exit status and stderr.
fn interrupt(mut child: Child, signal: i32) -> (Option<i32>, String) {
    let pid = child.id();
    for _ in 0..500 {
        if catches_signals(pid) || child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: a signal to our own child, still unreaped.
    unsafe { libc::kill(pid as i32, signal) };
    let out = child.wait_with_output().unwrap();
    (out.status.code(), stderr(&out))
}

/// A FIFO nobody reads: a command writing its output there waits, handler installed, until
/// the signal comes.
fn fifo(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a plain mkfifo on a path we own.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    p
}

fn temporaries(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp"))
        .collect()
}

fn spawn(cmd: &mut Command) -> Child {
    cmd.stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn every_command_exits_130_on_a_signal() {
    let dir = temp_dir("signals", "commands", true);
    let data = root().join("datasets/linnerud.csv");
    let out = ovk(&dir)
        .args(["run", "--method", "krr", "--json", "--data"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = Path::new(v["session"].as_str().unwrap())
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let pipe = fifo(&dir, "pipe.csv");
    let p = pipe.to_str().unwrap();
    let d = data.to_str().unwrap();
    let commands: Vec<Vec<&str>> = vec![
        vec!["gen", "gp-mix", "--outputs", "3", "--out", p],
        vec!["predict", &id, "--data", d, "--out", p],
        vec!["export", &id, "--trace", p],
        vec!["bench", "data", "--n", "50", "--out", p],
    ];
    for (k, args) in commands.iter().enumerate() {
        let signal = if k % 2 == 0 {
            libc::SIGINT
        } else {
            libc::SIGTERM
        };
        let (code, err) = interrupt(spawn(ovk(&dir).args(args)), signal);
        assert_eq!(code, Some(130), "{args:?}:\n{err}");
        assert!(err.contains("interrupted"), "{args:?}:\n{err}");
    }
    assert!(temporaries(&dir).is_empty(), "{:?}", temporaries(&dir));
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn replay_verify_exits_130_on_a_signal() {
    let dir = temp_dir("signals", "verify", true);
    // Wide enough that the re-run is still going when the signal comes.
    let data = super::stale_saves::wide_table(&dir, 1500, 200);
    let targets: Vec<String> = (0..200).map(|k| format!("y{k}")).collect();
    let out = ovk(&dir)
        .args(["run", "--method", "krr", "--json", "--data"])
        .arg(&data)
        .args(["--targets", &targets.join(",")])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let session = v["session"].as_str().unwrap().to_string();
    let (code, err) = interrupt(
        spawn(ovk(&dir).args(["replay", &session, "--verify"])),
        libc::SIGINT,
    );
    assert_eq!(code, Some(130), "{err}");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_killed_writers_temporary_goes_with_the_next_write_and_a_live_ones_stays() {
    let dir = temp_dir("signals", "stale", true);
    // A dead writer's: unlocked and not empty. A live one's: locked by another process.
    let dead = dir.join(".x.csv.tmp-4194001-0badf00d");
    fs::write(&dead, "half a table").unwrap();
    let live = dir.join(".x.csv.tmp-4194002-0badcafe");
    fs::write(&live, "being written").unwrap();
    let mut holder = super::stale_saves::hold_lock(&live);
    let out = ovk(&dir)
        .args(["gen", "gp-mix", "--outputs", "2", "--out", "x.csv"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!dead.exists(), "a dead writer's temporary is left");
    assert!(live.exists(), "a live writer's temporary was removed");
    let _ = holder.kill();
    let _ = holder.wait();
    let _ = fs::remove_dir_all(&dir);
}
