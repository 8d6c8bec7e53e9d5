//! Sweeps, cross-validation, plans, collection and exports through the real binary.

use crate::common::binary;
use std::path::{Path, PathBuf};
use std::process::Command;

use binary::{ovk, stderr as err, stdout as out};

fn fresh(name: &str) -> PathBuf {
    binary::temp_dir("sweep", name, true)
}

const SWEEP: &str = "data = \"datasets/linnerud.csv\"\nmethod = \"okl\"\nlambda = [0.1, 1.0, 10.0]\nkernel = [\"gaussian\", \"laplacian\"]\nmax_iter = 500\n";

/// The JSON rows of a sweep's stdout, by grid index.
fn rows(stdout: &str) -> Vec<serde_json::Value> {
    let mut v: Vec<serde_json::Value> = stdout
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    v.sort_by_key(|r| r["index"].as_u64());
    v
}

#[test]
fn sweep_with_cv_ranks_six_rows_and_is_job_count_independent() {
    let dir = fresh("grid");
    let cfg = dir.join("exp.toml");
    std::fs::write(&cfg, SWEEP).unwrap();
    let s1 = dir.join("s1");
    let s2 = dir.join("s2");
    let one = ovk(
        &[
            "sweep",
            "--config",
            cfg.to_str().unwrap(),
            "--cv",
            "3",
            "--jobs",
            "1",
        ],
        &s1,
    );
    assert!(one.status.success(), "{}", err(&one));
    let two = ovk(
        &[
            "sweep",
            "--config",
            cfg.to_str().unwrap(),
            "--cv",
            "3",
            "--jobs",
            "2",
        ],
        &s2,
    );
    assert!(two.status.success(), "{}", err(&two));
    let (r1, r2) = (rows(&out(&one)), rows(&out(&two)));
    assert_eq!(r1.len(), 6);
    for (a, b) in r1.iter().zip(&r2) {
        assert_eq!(
            a["fold_scores"], b["fold_scores"],
            "jobs 1 and 2 agree bit for bit"
        );
        assert_eq!(a["values"], b["values"]);
        assert_eq!(a["fold_scores"].as_array().unwrap().len(), 3);
    }

    // The saved best model equals an independent `ovk run` with the best values.
    let best = r1
        .iter()
        .min_by(|a, b| {
            a["mean"]
                .as_f64()
                .unwrap()
                .total_cmp(&b["mean"].as_f64().unwrap())
        })
        .unwrap();
    let lambda = best["values"]["lambda"].as_str().unwrap();
    let kernel = best["values"]["kernel"].as_str().unwrap();
    let saved_line = out(&one)
        .lines()
        .find(|l| l.starts_with("best configuration"))
        .unwrap()
        .to_string();
    let saved_dir = saved_line.rsplit(" as ").next().unwrap().trim().to_string();
    let saved: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(&saved_dir).join("session.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        saved["details"]["sweep"]["rows"].as_array().unwrap().len(),
        6
    );
    let single = ovk(
        &[
            "run",
            "--data",
            "datasets/linnerud.csv",
            "--method",
            "okl",
            "--lambda",
            lambda,
            "--kernel",
            kernel,
            "--max-iter",
            "500",
            "--json",
        ],
        &dir.join("s3"),
    );
    assert!(single.status.success(), "{}", err(&single));
    let single: serde_json::Value = serde_json::from_str(out(&single).trim()).unwrap();
    assert_eq!(single["objective"], saved["objective"]);
    assert_eq!(single["metrics"]["test"], saved["metrics"]["test"]);

    // Exports parse back.
    let pred = dir.join("pred.csv");
    let mat = dir.join("L.csv");
    let trace = dir.join("trace.csv");
    let e = ovk(
        &[
            "export",
            &saved_dir,
            "--predictions",
            pred.to_str().unwrap(),
            "--matrix",
            "output_kernel",
            mat.to_str().unwrap(),
            "--trace",
            trace.to_str().unwrap(),
        ],
        &s1,
    );
    assert!(e.status.success(), "{}", err(&e));
    let p = std::fs::read_to_string(&pred).unwrap();
    let header: Vec<&str> = p.lines().next().unwrap().split(',').collect();
    assert_eq!(
        header,
        [
            "row",
            "true_target_weight",
            "true_target_waist",
            "true_target_pulse",
            "pred_target_weight",
            "pred_target_waist",
            "pred_target_pulse"
        ]
    );
    let n_test = saved["split"]["test"].as_array().unwrap().len();
    assert_eq!(p.lines().count(), n_test + 1);
    for line in p.lines().skip(1) {
        assert!(line.split(',').all(|c| c.parse::<f64>().is_ok()), "{line}");
    }
    let l = std::fs::read_to_string(&mat).unwrap();
    assert_eq!(l.lines().count(), 4);
    let t = std::fs::read_to_string(&trace).unwrap();
    assert!(t.starts_with("iter,objective"));
    assert_eq!(
        t.lines().count(),
        saved["trace"].as_array().unwrap().len() + 1
    );
}

#[test]
fn plan_then_collect_matches_local_sweep() {
    let dir = fresh("plan");
    let cfg = dir.join("exp.toml");
    std::fs::write(&cfg, "data = \"datasets/linnerud.csv\"\nmethod = \"krr\"\nlambda = [0.5, 5.0]\nkernel = \"linear\"\n").unwrap();
    let work = dir.join("work");
    let plan = ovk(
        &[
            "sweep",
            "--config",
            cfg.to_str().unwrap(),
            "--cv",
            "2",
            "--plan",
        ],
        &work,
    );
    assert!(plan.status.success(), "{}", err(&plan));
    let cmds: Vec<String> = out(&plan).lines().map(|s| s.to_string()).collect();
    assert_eq!(cmds.len(), 4, "2 configurations × 2 folds");
    for c in &cmds {
        let words: Vec<&str> = c.split_whitespace().collect();
        assert_eq!(words[0], "ovk");
        let o = Command::new(env!("CARGO_BIN_EXE_ovk"))
            .args(words[1..].iter().map(|w| w.trim_matches('\'')))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{c}: {}", err(&o));
    }
    let collected = ovk(
        &["sweep", "--collect", work.to_str().unwrap()],
        &dir.join("best"),
    );
    assert!(collected.status.success(), "{}", err(&collected));
    let local = ovk(
        &["sweep", "--config", cfg.to_str().unwrap(), "--cv", "2"],
        &dir.join("local"),
    );
    assert!(local.status.success(), "{}", err(&local));
    let (a, b) = (rows(&out(&collected)), rows(&out(&local)));
    assert_eq!(a.len(), 2);
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x["fold_scores"], y["fold_scores"]);
    }
}

#[test]
fn sweep_file_errors_are_clear() {
    let dir = fresh("errors");
    let cases = [
        ("data = \"datasets/linnerud.csv\"\nmethod = \"okl\"\nlamda = [1, 2]\n", "did you mean 'lambda'"),
        ("data = \"datasets/linnerud.csv\"\nmethod = \"okl\"\nlambda = { log = [1e-4], n = 3 }\n", "a range is"),
        ("data = \"datasets/linnerud.csv\"\nmethod = \"okl\"\nlambda = { log = [-1, 1], n = 3 }\n", "positive"),
        ("data = \"datasets/linnerud.csv\"\nmethod = \"okl\"\nlambda = { log = [1, 10], n = 1 }\n", "N ≥ 2"),
        // A bad value in the grid names the file and its key there.
        ("data = \"datasets/linnerud.csv\"\nmethod = \"okl\"\nlambda = [0.1, -1]\n", "bad4.toml: lambda: -1 is outside"),
    ];
    for (i, (text, needle)) in cases.iter().enumerate() {
        let cfg = dir.join(format!("bad{i}.toml"));
        std::fs::write(&cfg, text).unwrap();
        let o = ovk(&["sweep", "--config", cfg.to_str().unwrap()], &dir);
        assert_eq!(o.status.code(), Some(2), "{text}: {}", err(&o));
        assert!(err(&o).contains(needle), "{text}: {}", err(&o));
    }
}

/// Ctrl-C during a sweep stops it: the rows so far are printed, the best is named, and nothing
/// is refitted or saved (a refit would take as long as any fit of the sweep).
#[test]
fn an_interrupted_sweep_stops_without_refitting() {
    use std::io::BufRead;
    let dir = fresh("sigint");
    let cfg = dir.join("long.toml");
    std::fs::write(
        &cfg,
        "data = \"datasets/linnerud.csv\"\nmethod = \"okl\"\nlambda = { log = [1e-3, 1e3], n = 20000 }\n",
    )
    .unwrap();
    let store = dir.join("store");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ovk"))
        .args(["sweep", "--config", cfg.to_str().unwrap(), "--sessions"])
        .arg(&store)
        .current_dir(binary::root())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt once the first configuration has been scored.
    // stderr drained meanwhile: a sweep's progress lines would otherwise fill the pipe and
    // block it before it could see the signal.
    let mut stderr_pipe = child.stderr.take().unwrap();
    let stderr_reader = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stderr_pipe, &mut text).unwrap();
        text
    });
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert!(first.starts_with('{'), "{first}");
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let status = child.wait().unwrap();
    let stderr = stderr_reader.join().unwrap();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("sweep interrupted"), "{stderr}");
    assert!(stderr.contains("not refitted"), "{stderr}");
    assert!(
        rest.contains("rank"),
        "the table of the rows so far: {rest}"
    );
    let saved = std::fs::read_dir(&store).map(|d| d.count()).unwrap_or(0);
    assert_eq!(saved, 0, "an interrupted sweep saved a session");
}

/// The modelling choices beyond the method's own hyperparameters sweep too — target and feature
/// scaling, the input rank — and the table names each configuration by them.
#[test]
fn target_scaling_and_input_rank_are_swept_and_named() {
    let dir = fresh("modelling");
    let cfg = dir.join("exp.toml");
    std::fs::write(
        &cfg,
        "data = \"datasets/enb.csv\"\nmethod = \"okl\"\ntarget_scale = [\"none\", \"standard\"]\n\
         input_rank = [50, \"exact\"]\n",
    )
    .unwrap();
    let run = ovk(
        &["sweep", "--config", cfg.to_str().unwrap()],
        &dir.join("s"),
    );
    assert!(run.status.success(), "{}", err(&run));
    let rows = rows(&out(&run));
    assert_eq!(rows.len(), 4);
    let named: Vec<(String, String)> = rows
        .iter()
        .map(|r| {
            let v = &r["values"];
            (
                v["target_scale"].as_str().unwrap_or_default().to_string(),
                v["input_rank"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    for want in [
        ("none", "50"),
        ("none", "exact"),
        ("standard", "50"),
        ("standard", "exact"),
    ] {
        assert!(
            named.contains(&(want.0.to_string(), want.1.to_string())),
            "{want:?} in {named:?}"
        );
    }
    let table = out(&run);
    assert!(
        table.contains("target_scale") && table.contains("input_rank"),
        "{table}"
    );
}
