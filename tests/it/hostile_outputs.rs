//! Issue 19 ("reliability, second round") through the real binary: outputs that never clobber,
//! sizes that never reach an allocation unchecked, reads that never block or run unbounded,
//! a memory guard that reads the limits that apply, results that are never wrong silently,
//! messages that fit their cause, and names that cannot drive the terminal. Each case checks
//! the exit status, that the message names the file or option, that nothing was written where
//! it must not be, and that the store still lists every earlier session.

#[allow(dead_code)]
use crate::common::binary;
use std::fs;
use std::os::unix::fs::{symlink, FileTypeExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use binary::{stderr, stdout, temp_dir};

const LINNERUD: &str = "datasets/linnerud.csv";

fn ovk_in(store: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ovk"));
    c.args(args)
        .arg("--sessions")
        .arg(store)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("RUST_BACKTRACE")
        .env_remove("OVK_MEMORY_LIMIT");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("running ovk")
}

/// `ovk` that must end (a hang is a failure, not a stuck test run): killed after `limit`.
fn ovk_bounded(store: &Path, args: &[&str], limit: Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ovk"))
        .args(args)
        .arg("--sessions")
        .arg(store)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running ovk");
    let start = Instant::now();
    loop {
        if child.try_wait().expect("waiting").is_some() {
            return child.wait_with_output().expect("output");
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!(
                "ovk {args:?} did not finish in {limit:?} (blocked or unbounded read); stderr:\n{}",
                stderr(&out)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Exit 2, each needle on stderr, no panic; returns stderr.
fn refused(out: &Output, needles: &[&str]) -> String {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "stderr:\n{err}");
    for n in needles {
        assert!(err.contains(n), "stderr lacks `{n}`:\n{err}");
    }
    assert!(!err.contains("panicked"), "{err}");
    err
}

fn ok(out: &Output) {
    assert_eq!(out.status.code(), Some(0), "stderr:\n{}", stderr(out));
}

/// A store holding one okl session on a private copy of linnerud; returns (dir, store,
/// data copy, session id).
fn one_session(name: &str) -> (PathBuf, PathBuf, PathBuf, String) {
    let dir = temp_dir("outputs", name, true);
    let store = dir.join("store");
    let data = dir.join("lin.csv");
    fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join(LINNERUD), &data).unwrap();
    let out = ovk_in(
        &store,
        &[
            "run",
            "--data",
            data.to_str().unwrap(),
            "--targets",
            "target_weight,target_waist",
            "--method",
            "okl",
            "--name",
            "first",
            "--json",
        ],
        &[],
    );
    ok(&out);
    let id = ids(&store).pop().expect("a session");
    (dir, store, data, id)
}

/// The ids `ovk sessions` lists as readable.
fn ids(store: &Path) -> Vec<String> {
    let out = ovk_in(store, &["sessions"], &[]);
    ok(&out);
    stdout(&out)
        .lines()
        .filter(|l| !l.starts_with('!') && !l.starts_with("no sessions"))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

// ---- 1. outputs never clobber -------------------------------------------------------------

#[test]
fn exports_never_write_into_the_store_or_over_the_data() {
    let (dir, store, data, id) = one_session("protect");
    let record = store.join(&id).join("session.json");
    let before = fs::read(&record).unwrap();
    let data_before = fs::read(&data).unwrap();

    let out = ovk_in(
        &store,
        &["export", &id, "--trace", s(&record), "--force"],
        &[],
    );
    refused(&out, &["session.json", "session store"]);
    let new_in_store = store.join("trace.csv");
    let out = ovk_in(&store, &["export", &id, "--trace", s(&new_in_store)], &[]);
    refused(&out, &["trace.csv", "session store"]);
    assert!(!new_in_store.exists());
    let out = ovk_in(
        &store,
        &["export", &id, "--predictions", s(&data), "--force"],
        &[],
    );
    refused(&out, &["lin.csv", "input of the run"]);
    // A link to the data is the data.
    let link = dir.join("link.csv");
    symlink(&data, &link).unwrap();
    let out = ovk_in(
        &store,
        &["export", &id, "--trace", s(&link), "--force"],
        &[],
    );
    refused(&out, &["link.csv", "input of the run"]);

    assert_eq!(fs::read(&record).unwrap(), before, "session.json changed");
    assert_eq!(fs::read(&data).unwrap(), data_before, "the data changed");
    assert_eq!(ids(&store), vec![id]);
    let _ = fs::remove_dir_all(&dir);
}

/// `gen`, `bench data` and `bench scaling --out` write files outside any session: like
/// exports, never into the store and never over a saved session's data, even with --force.
#[test]
fn generated_files_never_land_in_the_store_or_over_a_sessions_data() {
    let (dir, store, data, id) = one_session("generated");
    let record = store.join(&id).join("session.json");
    let before = fs::read(&record).unwrap();
    let data_before = fs::read(&data).unwrap();
    let in_session = store.join(&id).join("more.csv");
    let cases: [(&[&str], &Path); 3] = [
        (
            &["bench", "data", "--n", "10", "--force", "--out"],
            &in_session,
        ),
        (&["gen", "gp-mix", "--force", "--out"], &in_session),
        (
            &[
                "bench",
                "scaling",
                "--methods",
                "krr",
                "--n",
                "50",
                "--force",
                "--out",
            ],
            &record,
        ),
    ];
    for (args, in_store) in cases {
        for (target, needle) in [
            (in_store, "session store"),
            (data.as_path(), "data file of session"),
        ] {
            let mut full: Vec<&str> = args.to_vec();
            full.push(s(target));
            refused(&ovk_in(&store, &full, &[]), &[needle]);
        }
    }
    assert!(!in_session.exists());
    assert_eq!(fs::read(&record).unwrap(), before, "session.json changed");
    assert_eq!(fs::read(&data).unwrap(), data_before, "the data changed");
    assert_eq!(ids(&store), vec![id]);
    // Listing a store that does not exist says so and does not create it.
    let absent = dir.join("no-store");
    let out = ovk_in(&absent, &["sessions"], &[]);
    ok(&out);
    assert!(stdout(&out).starts_with("no sessions"));
    assert!(!absent.exists(), "ovk sessions created the store");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn existing_files_need_force_links_stay_links_and_devices_are_written_through() {
    let (dir, store, _data, id) = one_session("force");
    let out_file = dir.join("trace.csv");
    fs::write(&out_file, "mine\n").unwrap();
    let out = ovk_in(&store, &["export", &id, "--trace", s(&out_file)], &[]);
    refused(&out, &["trace.csv", "already exists", "--force"]);
    assert_eq!(fs::read_to_string(&out_file).unwrap(), "mine\n");
    ok(&ovk_in(
        &store,
        &["export", &id, "--trace", s(&out_file), "--force"],
        &[],
    ));
    assert!(fs::read_to_string(&out_file)
        .unwrap()
        .starts_with("iter,objective"));

    // --force through a symbolic link replaces its target; the link stays a link.
    let target = dir.join("target.csv");
    fs::write(&target, "old\n").unwrap();
    let link = dir.join("via.csv");
    symlink(&target, &link).unwrap();
    ok(&ovk_in(
        &store,
        &["export", &id, "--trace", s(&link), "--force"],
        &[],
    ));
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(fs::read_to_string(&target).unwrap().starts_with("iter,"));
    // A dangling link is not followed into a new file.
    let dangling = dir.join("dangling.csv");
    symlink(dir.join("nowhere.csv"), &dangling).unwrap();
    refused(
        &ovk_in(
            &store,
            &["export", &id, "--trace", s(&dangling), "--force"],
            &[],
        ),
        &["dangling.csv", "symbolic link"],
    );
    assert!(!dir.join("nowhere.csv").exists());
    // The same file twice in one export.
    let twice = dir.join("twice.csv");
    refused(
        &ovk_in(
            &store,
            &[
                "export",
                &id,
                "--trace",
                s(&twice),
                "--predictions",
                s(&twice),
            ],
            &[],
        ),
        &["twice.csv", "twice"],
    );
    assert!(!twice.exists());

    // `-` is standard output; /dev/full reports its error; a FIFO is written through.
    let out = ovk_in(&store, &["export", &id, "--trace", "-"], &[]);
    ok(&out);
    assert!(stdout(&out).starts_with("iter,objective"));
    if Path::new("/dev/full").exists() {
        let out = ovk_in(&store, &["export", &id, "--trace", "/dev/full"], &[]);
        refused(&out, &["/dev/full", "No space left"]);
        assert!(!fs::metadata("/dev/full").unwrap().is_file());
        let out = ovk_in(
            &store,
            &["gen", "gp-mix", "--outputs", "3", "--out", "/dev/full"],
            &[],
        );
        refused(&out, &["/dev/full"]);
    }
    let fifo = dir.join("pipe.csv");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || fs::read_to_string(fifo).unwrap())
    };
    ok(&ovk_in(&store, &["export", &id, "--trace", s(&fifo)], &[]));
    assert!(reader.join().unwrap().starts_with("iter,objective"));
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());

    // gen --out follows the same rules.
    let g = dir.join("g.csv");
    ok(&ovk_in(
        &store,
        &["gen", "gp-mix", "--outputs", "2", "--out", s(&g)],
        &[],
    ));
    refused(
        &ovk_in(
            &store,
            &["gen", "gp-mix", "--outputs", "2", "--out", s(&g)],
            &[],
        ),
        &["g.csv", "--force"],
    );
    assert_eq!(ids(&store), vec![id]);
    let _ = fs::remove_dir_all(&dir);
}

// ---- 2. sizes from input -------------------------------------------------------------------

#[test]
fn huge_sizes_are_refused_before_allocating() {
    let (dir, store, data, id) = one_session("sizes");
    for sweep in ["1..4000000000", "1..18446744073709551615", "1..5000"] {
        let out = ovk_in(
            &store,
            &[
                "run",
                "--data",
                s(&data),
                "--targets",
                "target_weight,target_waist",
                "--method",
                "lowrank-okl",
                "--rank-sweep",
                sweep,
            ],
            &[],
        );
        refused(&out, &["rank_sweep"]);
    }
    for m in ["18446744073709551615", "100000000"] {
        let out = ovk_in(
            &store,
            &[
                "gen",
                "gp-mix",
                "--outputs",
                m,
                "--out",
                s(&dir.join("g.csv")),
            ],
            &[],
        );
        refused(&out, &["--outputs"]);
        assert!(!dir.join("g.csv").exists());
    }
    // A list repeating one rank 200 000 times, from a config file: one rank, one path.
    let cfg = dir.join("threes.toml");
    fs::write(
        &cfg,
        format!(
            "data = \"{}\"\ntargets = [\"target_weight\", \"target_waist\"]\nmethod = \"lowrank-okl\"\n\
             rank_sweep = \"{}\"\nname = \"threes\"\n",
            s(&data),
            vec!["2"; 200_000].join(",")
        ),
    )
    .unwrap();
    let out = ovk_in(&store, &["run", "--config", s(&cfg), "--json"], &[]);
    ok(&out);
    // The same from a sweep file, and from a tampered session under replay --verify.
    let grid = dir.join("grid.toml");
    fs::write(
        &grid,
        format!(
            "data = \"{}\"\ntargets = [\"target_weight\"]\nmethod = \"lowrank-okl\"\n\
             rank_sweep = [\"1..18446744073709551615\", \"1..4000000000\"]\n",
            s(&data)
        ),
    )
    .unwrap();
    // Each configuration is refused on its own row (stdout), and nothing is saved.
    let out = ovk_in(&store, &["sweep", "--config", s(&grid)], &[]);
    refused(&out, &["nothing saved"]);
    assert!(stdout(&out).contains("rank_sweep"), "{}", stdout(&out));
    let lr = ids(&store)
        .into_iter()
        .find(|i| i.contains("threes"))
        .unwrap();
    let record = store.join(&lr).join("session.json");
    let text = fs::read_to_string(&record).unwrap();
    let tampered = text.replace(&vec!["2"; 200_000].join(","), "1..4000000000");
    assert_ne!(text, tampered);
    fs::write(&record, tampered).unwrap();
    refused(
        &ovk_in(&store, &["replay", &lr, "--verify"], &[]),
        &["rank_sweep"],
    );
    assert_eq!(ids(&store).len(), 2);
    assert!(ids(&store).contains(&id));
    let _ = fs::remove_dir_all(&dir);
}

// ---- 3. no SIGBUS on a file truncated while read -------------------------------------------

#[test]
fn a_csv_truncated_while_it_is_read_never_kills_the_process() {
    let dir = temp_dir("outputs", "truncate", true);
    let store = dir.join("store");
    let data = dir.join("big.csv");
    let mut text = String::from("a,b,c,y\n");
    for i in 0..1_500_000u64 {
        text.push_str(&format!("{},{},{},{}\n", i % 97, i % 89, i % 83, i % 7));
    }
    for delay_ms in [0u64, 30, 120] {
        fs::write(&data, &text).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_ovk"))
            .args([
                "run",
                "--data",
                s(&data),
                "--targets",
                "y",
                "--method",
                "krr",
            ])
            .arg("--sessions")
            .arg(&store)
            .env("OVK_MEMORY_LIMIT", "2GB")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        fs::OpenOptions::new()
            .write(true)
            .open(&data)
            .unwrap()
            .set_len(100)
            .unwrap();
        let out = child.wait_with_output().unwrap();
        // Refused (memory, or the file changed) — but a status, never a signal.
        assert!(
            out.status.code().is_some(),
            "killed by a signal ({:?}); stderr:\n{}",
            out.status,
            stderr(&out)
        );
        assert!(!stderr(&out).contains("panicked"));
    }
    let _ = fs::remove_dir_all(&dir);
}

// ---- 4. bounded reads ----------------------------------------------------------------------

#[test]
fn devices_fifos_and_links_out_of_the_store_never_block_or_exhaust() {
    let (dir, store, _data, id) = one_session("reads");
    let bad = |name: &str| {
        let d = store.join(name);
        fs::create_dir_all(&d).unwrap();
        d.join("session.json")
    };
    symlink("/dev/zero", bad("zero")).unwrap();
    symlink("/dev/urandom", bad("urandom")).unwrap();
    assert!(Command::new("mkfifo")
        .arg(bad("fifo"))
        .status()
        .unwrap()
        .success());
    fs::create_dir_all(bad("dir")).unwrap();
    let out = ovk_bounded(&store, &["sessions"], Duration::from_secs(60));
    ok(&out);
    let listing = stdout(&out);
    assert!(listing.contains(&id), "{listing}");
    for (entry, why) in [
        ("zero", "outside the session directory"),
        ("urandom", "outside the session directory"),
        ("fifo", "named pipe"),
        ("dir", "directory"),
    ] {
        assert!(
            listing
                .lines()
                .any(|l| l.starts_with('!') && l.contains(entry) && l.contains(why)),
            "{entry}: {listing}"
        );
        let out = ovk_bounded(
            &store,
            &["replay", s(&store.join(entry)), "--print"],
            Duration::from_secs(60),
        );
        refused(&out, &["session.json"]);
    }

    // As --data and --config.
    let fifo = dir.join("data.csv");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let zero = dir.join("zero.csv");
    symlink("/dev/zero", &zero).unwrap();
    let random = dir.join("random.toml");
    symlink("/dev/urandom", &random).unwrap();
    for (args, needles) in [
        (
            vec![
                "run",
                "--data",
                s(&fifo),
                "--targets",
                "y",
                "--method",
                "krr",
            ],
            vec!["data.csv", "named pipe"],
        ),
        (
            vec![
                "run",
                "--data",
                s(&zero),
                "--targets",
                "y",
                "--method",
                "krr",
            ],
            vec!["zero.csv", "character device"],
        ),
        (
            vec!["run", "--config", s(&random)],
            vec!["random.toml", "character device"],
        ),
    ] {
        let out = ovk_bounded(&store, &args, Duration::from_secs(60));
        let err = refused(&out, &needles);
        assert!(!err.contains("empty"), "{err}");
    }
    // A 2 GB sparse CSV (no disk used) is refused at its first block, not after reading it.
    let sparse = dir.join("sparse.csv");
    fs::write(&sparse, "x,y\n").unwrap();
    fs::OpenOptions::new()
        .write(true)
        .open(&sparse)
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    let out = ovk_bounded(
        &store,
        &[
            "run",
            "--data",
            s(&sparse),
            "--targets",
            "y",
            "--method",
            "krr",
        ],
        Duration::from_secs(60),
    );
    refused(&out, &["sparse.csv", "NUL byte at offset 4"]);
    assert_eq!(ids(&store), vec![id]);
    let _ = fs::remove_dir_all(&dir);
}

// ---- 6. the memory guard -------------------------------------------------------------------

fn table(dir: &Path, rows: usize) -> PathBuf {
    let p = dir.join(format!("t{rows}.csv"));
    let mut t = String::from("a,b,y\n");
    for i in 0..rows {
        t.push_str(&format!("{},{},{}\n", i % 13, (i * 7) % 11, i % 5));
    }
    fs::write(&p, t).unwrap();
    p
}

#[test]
fn memory_limits_are_read_with_units_and_refused_when_unreadable() {
    let dir = temp_dir("outputs", "limits", true);
    let store = dir.join("store");
    let data = table(&dir, 600);
    let run = [
        "run",
        "--data",
        s(&data),
        "--targets",
        "y",
        "--method",
        "krr",
    ];
    for bad in ["abc", "-1", "1 parsec", "1e400"] {
        let out = ovk_in(&store, &run, &[("OVK_MEMORY_LIMIT", bad)]);
        refused(&out, &["OVK_MEMORY_LIMIT"]);
    }
    for good in ["1GB", "512MiB", "17e9"] {
        ok(&ovk_in(&store, &run, &[("OVK_MEMORY_LIMIT", good)]));
    }
    // The message states the figure it compared against and where it came from.
    let err = refused(
        &ovk_in(&store, &run, &[("OVK_MEMORY_LIMIT", "1MB")]),
        &["needs about"],
    );
    assert!(
        err.contains(
            "only 781.2 KiB of memory may be used (80% of the 976.6 KiB OVK_MEMORY_LIMIT=1MB)"
        ),
        "{err}"
    );
    assert!(
        !err.contains("lowrank-okl"),
        "krr's way out is fewer rows: {err}"
    );
    assert_eq!(ids(&store).len(), 3);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn the_address_space_limit_is_honoured() {
    let dir = temp_dir("outputs", "ulimit", true);
    let store = dir.join("store");
    let exe = env!("CARGO_BIN_EXE_ovk");
    let sh = |limit_kb: u64, args: &str| {
        Command::new("sh")
            .arg("-c")
            .arg(format!(
                "ulimit -v {limit_kb} && exec {exe} {args} --sessions {}",
                s(&store)
            ))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env_remove("OVK_MEMORY_LIMIT")
            .output()
            .unwrap()
    };
    // It used to abort (`memory allocation of 67108864 bytes failed`): thread arenas. Where the
    // CPU reports a very large last-level cache, faer's products reserve several times it of
    // address space (1.5 GiB beside a 260 MiB L3), and the fit is refused here instead.
    let small = sh(800_000, "run --data datasets/digits.csv --method okl");
    if small.status.code() != Some(0) {
        refused(&small, &["needs about", "ulimit -v"]);
    }
    // What does not fit under the limit is refused with the limit named, not aborted.
    let big = table(&dir, 9000);
    let out = sh(
        800_000,
        &format!(
            "run --data {} --targets y --method krr --input-rank exact",
            s(&big)
        ),
    );
    refused(&out, &["needs about", "ulimit -v"]);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn kde_low_rank_counts_the_candidate_gram() {
    let dir = temp_dir("outputs", "kde", true);
    let store = dir.join("store");
    let data = table(&dir, 400);
    let out = ovk_in(
        &store,
        &[
            "run",
            "--data",
            s(&data),
            "--targets",
            "a,y",
            "--method",
            "kde",
            "--low-rank",
            "20,20",
            "--json",
        ],
        &[],
    );
    ok(&out);
    let v: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    let n = 300u64; // 400 rows, test fraction 0.25
    let est = v["memory"]["estimated_peak_bytes"].as_u64().unwrap();
    assert!(
        est >= n * n * 8,
        "the n×n candidate Gram is not counted: {est}"
    );
    let _ = fs::remove_dir_all(&dir);
}

// ---- 7. wrong results ----------------------------------------------------------------------

/// Overwrite one f64 of a saved `.npy` (the last one) with `v`.
fn poke_last(npy: &Path, v: f64) {
    let mut b = fs::read(npy).unwrap();
    let n = b.len();
    b[n - 8..].copy_from_slice(&v.to_le_bytes());
    fs::write(npy, b).unwrap();
}

#[test]
fn non_finite_matrices_fail_verification_and_are_not_exported() {
    let (dir, store, _data, id) = one_session("nan");
    for v in [f64::NAN, f64::INFINITY] {
        poke_last(&store.join(&id).join("output_kernel.npy"), v);
        let out = ovk_in(&store, &["replay", &id, "--verify"], &[]);
        assert_ne!(out.status.code(), Some(0), "{}", stdout(&out));
        let csv = dir.join("L.csv");
        let out = ovk_in(
            &store,
            &["export", &id, "--matrix", "output_kernel", s(&csv)],
            &[],
        );
        refused(&out, &["output_kernel.npy"]);
        assert!(!csv.exists());
    }
    let _ = fs::remove_dir_all(&dir);
}

/// `--verify` checks what predictions use besides the matrices — the model's settings and
/// scaler, the kernel as used, the split — so an edited session.json is not "verified".
#[test]
fn an_edited_model_record_fails_verification() {
    let (dir, store, _data, id) = one_session("model");
    let json = store.join(&id).join("session.json");
    let pristine = fs::read_to_string(&json).unwrap();
    let out = ovk_in(&store, &["replay", &id, "--verify"], &[]);
    ok(&out);
    type Edit = fn(&mut serde_json::Value);
    let edits: [(&str, Edit); 4] = [
        ("model.scaler.std[0]", |r| {
            r["model"]["scaler"]["std"][0] = 0.0.into()
        }),
        ("model.settings", |r| {
            r["model"]["settings"]["kernel"]["sigma"] = (-1.0).into()
        }),
        ("split.train[0]", |r| r["split"]["train"][0] = 999.into()),
        ("model: saved null", |r| {
            r["model"] = serde_json::Value::Null
        }),
    ];
    for (want, edit) in edits {
        let mut record: serde_json::Value = serde_json::from_str(&pristine).unwrap();
        edit(&mut record);
        fs::write(&json, serde_json::to_string(&record).unwrap()).unwrap();
        let out = ovk_in(&store, &["replay", &id, "--verify"], &[]);
        let text = stdout(&out);
        assert_eq!(out.status.code(), Some(1), "{want}: {text}{}", stderr(&out));
        assert!(text.contains(want), "{want}: {text}");
    }
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn collect_refuses_to_rank_unrelated_sessions_together() {
    let dir = temp_dir("outputs", "collect", true);
    let plan = dir.join("plan");
    let store = dir.join("store");
    ok(&ovk_in(
        &plan,
        &["run", "--data", "datasets/iris.csv", "--method", "krr"],
        &[],
    ));
    ok(&ovk_in(
        &plan,
        &["run", "--data", LINNERUD, "--method", "krr"],
        &[],
    ));
    let out = ovk_in(&store, &["sweep", "--collect", s(&plan)], &[]);
    refused(&out, &["different problems", "iris.csv", "linnerud.csv"]);
    assert!(ids(&store).is_empty(), "a best session was saved");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn okl_with_one_output_at_its_optimum_is_converged() {
    let dir = temp_dir("outputs", "okl1", true);
    let store = dir.join("store");
    let out = ovk_in(
        &store,
        &[
            "run",
            "--data",
            LINNERUD,
            "--targets",
            "target_weight",
            "--method",
            "okl",
            "--json",
        ],
        &[],
    );
    ok(&out);
    let v: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(v["converged"], true, "{v}");
    let _ = fs::remove_dir_all(&dir);
}

// ---- 8. exit codes and messages ------------------------------------------------------------

#[test]
fn store_failures_exit_2_with_the_cause() {
    let dir = temp_dir("outputs", "store", true);
    let file = dir.join("store-file");
    fs::write(&file, "").unwrap();
    for args in [
        vec!["sessions"],
        vec!["run", "--data", LINNERUD, "--method", "krr"],
    ] {
        refused(
            &ovk_in(&file, &args, &[]),
            &["store-file", "must be a directory"],
        );
    }
    refused(
        &ovk_in(
            Path::new("/proc/self/ovk-store"),
            &["run", "--data", LINNERUD, "--method", "krr"],
            &[],
        ),
        &["/proc/self/ovk-store"],
    );
    let store = dir.join("store");
    fs::create_dir_all(store.join("s/session.json")).unwrap();
    refused(
        &ovk_in(&store, &["replay", s(&store.join("s")), "--print"], &[]),
        &["session.json", "directory"],
    );
    let _ = fs::remove_dir_all(&dir);
}

/// A store that exists but cannot be written (mode bits do not stop root, which CI may be, so
/// sysfs stands in: no one may create files there). The fit runs, the save is refused with
/// the path and the cause, exit 2; a store that cannot even be created likewise.
#[test]
fn read_only_store_exits_2_naming_the_path() {
    let read_only = Path::new("/sys/kernel/mm");
    if !read_only.is_dir() || fs::write(read_only.join("ovk-probe"), "").is_ok() {
        eprintln!("skipped: no read-only directory at {}", read_only.display());
        return;
    }
    refused(
        &ovk_in(
            read_only,
            &["run", "--data", LINNERUD, "--method", "krr"],
            &[],
        ),
        &["/sys/kernel/mm/"],
    );
    refused(
        &ovk_in(
            Path::new("/sys/ovk-store"),
            &["run", "--data", LINNERUD, "--method", "krr"],
            &[],
        ),
        &["creating the session store /sys/ovk-store"],
    );
}

#[test]
fn messages_fit_their_cause() {
    let dir = temp_dir("outputs", "messages", true);
    let store = dir.join("store");
    let lin = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(LINNERUD)).unwrap();
    let two = dir.join("two.csv");
    fs::write(&two, lin.lines().take(3).collect::<Vec<_>>().join("\n")).unwrap();
    let err = refused(
        &ovk_in(
            &store,
            &[
                "run",
                "--data",
                s(&two),
                "--targets",
                "target_weight",
                "--method",
                "krr",
            ],
            &[],
        ),
        &["at least 2 training rows"],
    );
    assert!(!err.contains("all rows equal"), "{err}");

    let huge = dir.join("huge.csv");
    let mut lines = lin.lines();
    let mut t = format!("{}\n", lines.next().unwrap());
    for (i, l) in lines.enumerate() {
        let mut cells: Vec<String> = l.split(',').map(str::to_string).collect();
        cells[3] = if i % 2 == 0 {
            "1e308".into()
        } else {
            "-1e308".into()
        };
        t.push_str(&cells.join(","));
        t.push('\n');
    }
    fs::write(&huge, t).unwrap();
    let err = refused(
        &ovk_in(
            &store,
            &[
                "run",
                "--data",
                s(&huge),
                "--targets",
                "target_weight",
                "--method",
                "okl",
            ],
            &[],
        ),
        &["huge.csv", "target_weight", "rescale"],
    );
    assert!(!err.contains("raise --lambda"), "{err}");
    let err = refused(
        &ovk_in(
            &store,
            &[
                "run",
                "--data",
                LINNERUD,
                "--targets",
                "target_weight",
                "--method",
                "krr",
                "--sigma",
                "1e-300",
            ],
            &[],
        ),
        &["--sigma"],
    );
    assert!(!err.contains("raise --lambda"), "{err}");
    let err = refused(
        &ovk_in(
            &store,
            &[
                "run",
                "--data",
                LINNERUD,
                "--method",
                "vvmr",
                "--labeled",
                "1e300",
            ],
            &[],
        ),
        &["--labeled"],
    );
    assert!(!err.contains("18446744073709551615"), "{err}");
    assert!(ids(&store).is_empty());
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn verify_names_a_changed_data_file_and_prints_plain_numbers() {
    let (dir, store, data, id) = one_session("hash");
    let mut t = fs::read_to_string(&data).unwrap();
    t = t.replacen("\n5,", "\n6,", 1);
    fs::write(&data, t).unwrap();
    let out = ovk_in(&store, &["replay", &id, "--verify"], &[]);
    let text = stdout(&out);
    assert_ne!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("SHA-256") && text.contains("lin.csv"),
        "{text}"
    );
    assert!(!text.contains("Some("), "{text}");
    let _ = fs::remove_dir_all(&dir);
}

// ---- 9. terminal injection -----------------------------------------------------------------

#[test]
fn names_cannot_drive_the_terminal() {
    let dir = temp_dir("outputs", "names", true);
    let store = dir.join("store");
    let evil = "evil\u{1b}[31mRED\u{1b}]0;title\u{7}\nline2\u{202e}";
    ok(&ovk_in(
        &store,
        &["run", "--data", LINNERUD, "--method", "krr", "--name", evil],
        &[],
    ));
    let long = "n".repeat(100_000);
    ok(&ovk_in(
        &store,
        &[
            "run", "--data", LINNERUD, "--method", "krr", "--name", &long,
        ],
        &[],
    ));
    // A record written by hand (or by an older ovk) is escaped on display.
    let first = ids(&store);
    assert_eq!(first.len(), 2);
    let record = store.join(&first[0]).join("session.json");
    let text = fs::read_to_string(&record).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let name = v["name"].as_str().unwrap().to_string();
    fs::write(
        &record,
        text.replace(&format!("\"{name}\""), "\"x\\u001b[2Jy\\nz\""),
    )
    .unwrap();

    let out = ovk_in(&store, &["sessions"], &[]);
    ok(&out);
    let listing = stdout(&out);
    assert!(
        !listing.contains('\u{1b}') && !listing.contains('\u{7}'),
        "{listing:?}"
    );
    assert_eq!(listing.lines().count(), 2, "{listing:?}");
    assert!(
        listing.lines().all(|l| l.chars().count() < 400),
        "a 100 000-character name"
    );
    for id in ids(&store) {
        let out = ovk_in(&store, &["replay", &id, "--print"], &[]);
        ok(&out);
        let p = stdout(&out);
        assert!(!p.contains('\u{1b}') && !p.contains('\u{202e}'), "{p:?}");
        assert!(p.lines().next().unwrap().starts_with("Session   "));
        assert!(!p.lines().nth(1).unwrap().starts_with("line2"), "{p:?}");
    }
    let _ = fs::remove_dir_all(&dir);
}

/// `ovk … > /dev/full` (or into a pipe closed early): a clear message and exit 2, not a panic
/// (exit 101); with standard error gone too, the exit status still says what happened.
#[test]
fn a_standard_output_that_cannot_be_written_is_reported_not_a_panic() {
    let full = Path::new("/dev/full");
    if !full.exists() {
        return;
    }
    let store = temp_dir("hostile", "devfull", true);
    let example = binary::root().join("sessions/20261121-080318-iris-krr");
    let listed = store.join("20261121-080318-iris-krr");
    let copied = Command::new("cp")
        .arg("-r")
        .arg(&example)
        .arg(&listed)
        .status()
        .expect("cp");
    assert!(copied.success());
    let cases: [&[&str]; 5] = [
        &["sessions"],
        &["sessions", "--json"],
        &["docs", "config"],
        &["replay", "20261121-080318-iris-krr", "--print"],
        &["run", "--data", LINNERUD, "--method", "krr"],
    ];
    for args in cases {
        let o = Command::new(env!("CARGO_BIN_EXE_ovk"))
            .args(args)
            .arg("--sessions")
            .arg(&store)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdout(fs::File::create(full).expect("opening /dev/full"))
            .output()
            .expect("running ovk");
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("writing to standard output") && !err.contains("panicked"),
            "{args:?}: {err}"
        );
        // Standard error gone as well: nothing to say it on, but no panic.
        let o = Command::new(env!("CARGO_BIN_EXE_ovk"))
            .args(args)
            .arg("--sessions")
            .arg(&store)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdout(fs::File::create(full).expect("opening /dev/full"))
            .stderr(fs::File::create(full).expect("opening /dev/full"))
            .output()
            .expect("running ovk");
        assert_eq!(
            o.status.code(),
            Some(2),
            "{args:?} with stderr on /dev/full"
        );
    }
    // The run saved its session before it printed: the store lists it.
    let listed = fs::read_dir(&store).expect("store").count();
    assert!(listed >= 2, "the run's session was not saved");
    let _ = fs::remove_dir_all(&store);
}

/// The workbench without a terminal (a script, a batch job): exit 2 and what to use instead,
/// not an OS error and exit 1.
#[test]
fn the_workbench_without_a_terminal_points_at_the_headless_commands() {
    let store = temp_dir("outputs", "noterm", false);
    for args in [&[][..], &["datasets/iris.csv"][..]] {
        let out = Command::new(env!("CARGO_BIN_EXE_ovk"))
            .args(args)
            .arg("--sessions")
            .arg(&store)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdin(Stdio::null())
            .output()
            .expect("running ovk");
        refused(&out, &["needs a terminal", "ovk run"]);
    }
}
