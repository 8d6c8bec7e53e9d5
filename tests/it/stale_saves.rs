//! Issue 33, point 4: a save in progress is never taken for a dead one because its writer's
//! process id means nothing here — another PID namespace (a container, another cluster node
//! sharing `--sessions`). A work folder is stale when no process holds the lock its writer
//! holds for the whole save; one whose lock is held survives every other save, from this
//! namespace or a fresh one, and goes once its holder is gone.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::Duration;

use crate::common::binary::{root, stderr, temp_dir};

/// A save in progress as another writer leaves it: `.tmp-ID-PID-NONCE/` with a file in it,
/// and its lock file, held by a live process (`flock(1)`, another process than this test's).
/// The PID in the name is one no process has here.
fn live_save(store: &Path, id: &str) -> (PathBuf, PathBuf, Child) {
    fs::create_dir_all(store).unwrap();
    let name = format!(".tmp-{id}-4194000-0badcafe");
    let dir = store.join(&name);
    fs::create_dir(&dir).unwrap();
    fs::write(dir.join("predictions_test.npy"), "half written").unwrap();
    let lock = store.join(format!("{name}.lock"));
    fs::write(&lock, "otherhost pid 4194000\n").unwrap();
    // One process that holds the lock until it is killed (flock(1) running a command would
    // leave the lock with its child).
    let holder = hold_lock(&lock);
    (dir, lock, holder)
}

/// A process holding an flock on `path` (its writer, as far as a cleaner can tell) until
/// killed; returned once the lock shows as held.
pub(crate) fn hold_lock(path: &Path) -> Child {
    let holder = Command::new("sh")
        .arg("-c")
        .arg("exec 9<>\"$0\" && flock 9 && exec sleep 120")
        .arg(path)
        .spawn()
        .unwrap();
    wait_until_locked(path);
    holder
}

fn wait_until_locked(path: &Path) {
    for _ in 0..250 {
        let free = Command::new("flock")
            .args(["--nonblock", "--conflict-exit-code", "9"])
            .arg(path)
            .arg("true")
            .status()
            .unwrap()
            .code()
            != Some(9);
        if !free {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("{} never showed as locked", path.display());
}

fn save(cmd: &mut Command, store: &Path) -> Output {
    cmd.args(["run", "--data"])
        .arg(root().join("datasets/linnerud.csv"))
        .args(["--method", "krr", "--sessions"])
        .arg(store)
        .output()
        .unwrap()
}

fn sessions(store: &Path) -> usize {
    fs::read_dir(store)
        .unwrap()
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .count()
}

/// `unshare --pid --fork --mount-proc` (as root, or as a user with user namespaces), or
/// `None` where this machine does not allow it.
fn in_new_pid_namespace() -> Option<Command> {
    let ovk = env!("CARGO_BIN_EXE_ovk");
    for prefix in [
        &["--pid", "--fork", "--mount-proc"][..],
        &[
            "--user",
            "--map-root-user",
            "--pid",
            "--fork",
            "--mount-proc",
        ][..],
    ] {
        let ok = Command::new("unshare")
            .args(prefix)
            .arg("true")
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            let mut c = Command::new("unshare");
            c.args(prefix).arg(ovk);
            return Some(c);
        }
    }
    None
}

#[test]
fn a_save_in_progress_survives_saves_from_any_namespace() {
    let dir = temp_dir("stale", "namespaces", true);
    let store = dir.join("store");
    let (work, lock, mut holder) = live_save(&store, "20260101-000000-other");

    // From this namespace: the work folder's pid is not running here, but its lock is held.
    let out = save(&mut Command::new(env!("CARGO_BIN_EXE_ovk")), &store);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        work.join("predictions_test.npy").exists(),
        "a live save was removed"
    );
    assert_eq!(sessions(&store), 1);

    // From a fresh PID namespace, where no pid of this one exists (its /proc is its own).
    match in_new_pid_namespace() {
        Some(mut cmd) => {
            let out = save(&mut cmd, &store);
            assert!(out.status.success(), "{}", stderr(&out));
            assert!(
                work.join("predictions_test.npy").exists(),
                "removed from a namespace"
            );
            assert_eq!(sessions(&store), 2);
        }
        None => eprintln!("skipped: unshare --pid is not permitted here"),
    }

    // Its writer gone (the lock released), the next save removes it and its lock file.
    let _ = holder.kill();
    let _ = holder.wait();
    let out = save(&mut Command::new(env!("CARGO_BIN_EXE_ovk")), &store);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        !work.exists() && !lock.exists(),
        "a dead writer's save is left"
    );
    let left: Vec<_> = fs::read_dir(&store)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".tmp-"))
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let _ = fs::remove_dir_all(&dir);
}

/// The other way round: saves this namespace has in progress (their writer, ovk itself, holds
/// their lock) survive a save made from a fresh PID namespace while they run.
#[test]
fn a_running_ovk_save_survives_a_save_from_a_fresh_namespace() {
    let Some(mut fresh) = in_new_pid_namespace() else {
        eprintln!("skipped: unshare --pid is not permitted here");
        return;
    };
    let dir = temp_dir("stale", "running", true);
    let store = dir.join("store");
    // A wide table: its save (many synced .npy) takes long enough to be caught in progress.
    let data = wide_table(&dir, 1500, 400);
    let targets: Vec<String> = (0..400).map(|k| format!("y{k}")).collect();
    let mut writer = Command::new(env!("CARGO_BIN_EXE_ovk"))
        .args([
            "run",
            "--data",
            data.to_str().unwrap(),
            "--targets",
            &targets.join(","),
        ])
        .args(["--method", "krr", "--sessions", store.to_str().unwrap()])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait for its work folder, then save from the namespace while it writes.
    let mut caught = false;
    for _ in 0..3000 {
        let busy = fs::read_dir(&store).ok().is_some_and(|rd| {
            rd.flatten().any(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                n.starts_with(".tmp-") && !n.ends_with(".lock")
            })
        });
        if busy {
            caught = true;
            let out = save(&mut fresh, &store);
            assert!(out.status.success(), "{}", stderr(&out));
            break;
        }
        if writer.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let status = writer.wait().unwrap();
    assert!(
        status.success(),
        "the running save failed: its work folder was removed"
    );
    if caught {
        assert_eq!(sessions(&store), 2);
    } else {
        eprintln!("the save ended before it could be caught in progress");
    }
    let _ = fs::remove_dir_all(&dir);
}

/// `dir/wide.csv`: inputs x0, x1 and `outputs` smooth targets y0 … over `rows` rows — a table
/// whose fit and save take long enough to be caught in progress.
pub(crate) fn wide_table(dir: &Path, rows: usize, outputs: usize) -> PathBuf {
    let data = dir.join("wide.csv");
    let mut s = String::from("x0,x1");
    for k in 0..outputs {
        s.push_str(&format!(",y{k}"));
    }
    s.push('\n');
    for i in 0..rows {
        let x = i as f64 / rows as f64;
        s.push_str(&format!("{x},{}", i % 17));
        for k in 0..outputs {
            s.push_str(&format!(",{:.4}", (x * (k + 1) as f64).sin()));
        }
        s.push('\n');
    }
    fs::write(&data, s).unwrap();
    data
}

/// Six runs saving under the same name at once: six sessions, and no work folder left behind
/// by the writers that lost a race for an id and took the next.
#[test]
fn concurrent_saves_under_one_name_leave_no_temporaries() {
    let dir = crate::common::binary::temp_dir("stale", "concurrent", true);
    let store = dir.join("store");
    let children: Vec<_> = (0..6)
        .map(|_| {
            std::process::Command::new(env!("CARGO_BIN_EXE_ovk"))
                .args(["run", "--data", "datasets/linnerud.csv", "--method", "krr"])
                .args(["--name", "same", "--sessions", store.to_str().unwrap()])
                .current_dir(crate::common::binary::root())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let names: Vec<String> = std::fs::read_dir(&store)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let leftovers: Vec<&String> = names.iter().filter(|n| n.starts_with('.')).collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    assert_eq!(names.len(), 6, "{names:?}");
}
