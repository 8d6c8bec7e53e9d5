//! The example sessions shipped in `sessions/` load, print, and (the small ones) replay to the
//! same numbers — so a schema change that would orphan saved sessions fails here first.

use std::path::Path;
use std::process::Command;

use ovk_core::session::{self, Listing, Store};

fn examples() -> Vec<std::path::PathBuf> {
    let store = Store::open(Some(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions"),
    ))
    .unwrap();
    store
        .list()
        .into_iter()
        .map(|l| match l {
            Listing::Ok(s) => s.path,
            Listing::Corrupt { path, reason } => panic!("{}: {reason}", path.display()),
        })
        .collect()
}

#[test]
fn every_example_loads_with_its_matrices() {
    let dirs = examples();
    assert!(
        dirs.len() >= 6,
        "expected the shipped examples, found {}",
        dirs.len()
    );
    let methods: Vec<String> = dirs
        .iter()
        .map(|d| session::load(d).unwrap().record.method)
        .collect();
    for m in ["krr", "okl", "lowrank-okl", "kde", "vvmr", "mvml"] {
        assert!(methods.iter().any(|x| x == m), "no example session for {m}");
    }
    for d in &dirs {
        let s = session::load(d).unwrap();
        for name in s.record.matrices.keys() {
            let m = s.matrix(name).unwrap();
            assert!(m.iter().all(|v| v.is_finite()), "{}: {name}", d.display());
        }
        let text = session::summary_text(&s.record);
        assert!(text.contains(&s.record.method));
    }
}

#[test]
fn every_example_replays_and_verifies_from_any_directory() {
    // Not the repository root: the data files are found from the sessions' own location.
    // Each takes under a second: all of them, so a model format change cannot go unnoticed.
    let elsewhere = std::env::temp_dir();
    for d in examples() {
        let out = Command::new(env!("CARGO_BIN_EXE_ovk"))
            .args(["replay", "--verify"])
            .arg(&d)
            .current_dir(&elsewhere)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}: {}{}",
            d.display(),
            stdout,
            String::from_utf8_lossy(&out.stderr)
        );
        // The kde example was saved before the exact solve kept W factored: its model's
        // arrays and its α are listed as not compared, its predictions and metrics are.
        let old_kde_format = d.ends_with("20261121-133129-linnerud-kde");
        assert_eq!(
            stdout.contains("not compared: coefficients, model_candidate_gram"),
            old_kde_format,
            "{}: {stdout}",
            d.display()
        );
        assert!(
            stdout.contains("reproduces 6 metrics") || !old_kde_format,
            "{stdout}"
        );
    }
}

/// Give the examples the model `ovk predict` needs: each is re-run (as the binary runs it:
/// `OVK_THREADS`, else every core). When every saved matrix comes back bit for bit, only the model's arrays,
/// its record and the data file's size are added. When they come back only to `replay
/// --verify`'s tolerance (an example saved by an older ovk whose summation order has since
/// changed), the session is refreshed from the re-run — same id, name, date and relative data
/// path — so its stored predictions are the ones its model makes. Run by hand:
/// `cargo test --release --test example_sessions -- --ignored`.
#[test]
#[ignore]
fn regenerate_example_models() {
    // As the binary runs: every core unless OVK_THREADS says otherwise.
    ovk_core::linalg::configure_parallelism();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for d in examples() {
        let s = session::load(&d).unwrap();
        let mut rec = s.record.clone();
        let mut cfg = rec.config.clone();
        cfg.data.path = root.join(&cfg.data.path);
        let rerun = ovk_core::train::run(&cfg, &mut ovk_core::methods::Silent).unwrap();
        // A model kept in another format since (`ModelRecord::format_differs`): its arrays
        // and retired matrices are not compared, and the session is refreshed.
        let format_changed = match (&rec.model, &rerun.record.model) {
            (Some(a), Some(b)) => a.format_differs(b),
            _ => false,
        };
        let mut exact = !format_changed;
        for name in rec.matrices.keys() {
            let saved = s.matrix(name).unwrap();
            if format_changed && name.starts_with("model_") {
                continue;
            }
            // A matrix the method no longer forms: refresh.
            let Some(again) = rerun.matrix(name) else {
                exact = false;
                continue;
            };
            assert_eq!(saved.dim(), again.dim(), "{}: {name}", d.display());
            let scale = saved.iter().fold(1e-300f64, |a, v| a.max(v.abs()));
            for (a, b) in saved.iter().zip(again) {
                exact &= a.to_bits() == b.to_bits();
                assert!(
                    (a - b).abs() <= 1e-9 * scale,
                    "{}: {name} differs beyond replay's tolerance",
                    d.display()
                );
            }
        }
        if !exact {
            eprintln!("{}: refreshed from its re-run", d.display());
            let mut new = rerun.record.clone();
            new.id = rec.id.clone();
            new.name = rec.name.clone();
            new.created = rec.created.clone();
            new.dataset.path = rec.dataset.path.clone();
            new.dataset.absolute_path = None;
            new.config.data.path = rec.config.data.path.clone();
            for file in rec.matrices.values() {
                std::fs::remove_file(d.join(file)).unwrap();
            }
            for (name, file) in &new.matrices {
                ndarray_npy::write_npy(d.join(file), rerun.matrix(name).unwrap()).unwrap();
            }
            session::save_record(&d, &new).unwrap();
            continue;
        }
        let model = rerun.record.model.clone().unwrap();
        for array in &model.arrays {
            let name = session::model_matrix_name(array);
            let file = format!("{name}.npy");
            ndarray_npy::write_npy(d.join(&file), rerun.matrix(&name).unwrap()).unwrap();
            rec.matrices.insert(name, file);
        }
        rec.model = Some(model);
        rec.dataset.size = rerun.record.dataset.size;
        session::save_record(&d, &rec).unwrap();
    }
}

#[test]
fn examples_predict_their_stored_test_rows_bit_for_bit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for d in examples() {
        let s = session::load(&d).unwrap();
        if s.record.model.is_none() {
            continue;
        }
        let table = ovk_core::train::predict_file(&d, &root.join(&s.record.dataset.path)).unwrap();
        let stored = s.matrix("predictions_test").unwrap();
        for (k, &row) in s.record.split.test.iter().enumerate() {
            for j in 0..stored.ncols() {
                assert_eq!(
                    stored[[k, j]].to_bits(),
                    table.scores[[row, j]].to_bits(),
                    "{}: row {row}, output {j}",
                    d.display()
                );
            }
        }
    }
}
