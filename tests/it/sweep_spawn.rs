//! The workbench's sweep runner (`train::spawn_sweep`): the engine's CV sweep on a background
//! thread, one message per scored configuration, then the best refitted and returned like a
//! fit; cancelling reaches a fit running inside the sweep.

use std::time::Duration;

use ovk_core::data::DataConfig;
use ovk_core::kernels::{KernelSpec, Sigma};
use ovk_core::methods::{Params, Value};
use ovk_core::train::sweep::{run_sweep, SweepResult, SweepRow};
use ovk_core::train::{spawn_sweep, RunConfig, RunMessage, RunOutcome};

fn iris(method: &str, params: Params) -> RunConfig {
    let mut data = DataConfig::new("datasets/iris.csv");
    data.class = Some("species".into());
    RunConfig {
        data,
        method: method.into(),
        kernel: KernelSpec {
            sigma: Sigma::Value(1.0),
            ..KernelSpec::default()
        },
        params,
        name: None,
        cv: None,
        select_on: Default::default(),
    }
}

fn lambdas(values: &[f64]) -> Vec<RunConfig> {
    values
        .iter()
        .map(|&l| iris("krr", Params::new().with("lambda", Value::Float(l))))
        .collect()
}

/// Every message until the last one, which is returned apart.
fn drain(h: &ovk_core::train::RunHandle) -> (Vec<SweepRow>, RunMessage) {
    let mut rows = Vec::new();
    loop {
        let msg =
            h.rx.recv_timeout(Duration::from_secs(300))
                .expect("the sweep thread answers");
        match msg {
            RunMessage::SweepRow(r) => rows.push(*r),
            m @ (RunMessage::Finished(_) | RunMessage::Failed { .. } | RunMessage::Cancelled) => {
                return (rows, m)
            }
            _ => {}
        }
    }
}

#[test]
fn rows_arrive_then_the_best_is_refitted_with_the_sweep_inside() {
    let values = [1e-4, 1e-2, 1.0, 1e2];
    let configs = lambdas(&values);
    let h = spawn_sweep(configs.clone(), Some(3), 2);
    let (rows, last) = drain(&h);
    let RunMessage::Finished(outcome) = last else {
        panic!("expected Finished, got {last:?}")
    };
    let RunOutcome { record, .. } = *outcome;
    assert_eq!(rows.len(), values.len());
    // The same sweep run directly: the same scores and the same best (fits are deterministic).
    let direct = run_sweep(&configs, Some(3), 1, Default::default(), |_| {}).unwrap();
    let best = direct.best.expect("a best row");
    let mut by_index = rows.clone();
    by_index.sort_by_key(|r| r.index);
    for (a, b) in by_index.iter().zip(&direct.rows) {
        assert_eq!(a.fold_scores, b.fold_scores, "row {}", a.index);
    }
    let top = direct.rows.iter().map(|r| r.mean).fold(f64::MIN, f64::max);
    assert_eq!(direct.rows[best].mean, top, "accuracy: higher is better");
    // The refit: the best λ, the whole training part, named -best, the sweep in its details.
    assert_eq!(record.params.0["lambda"], Value::Float(values[best]));
    assert!(record.config.data.cv.is_none());
    assert!(record.name.ends_with("-best"), "{}", record.name);
    let saved: SweepResult = serde_json::from_value(record.details["sweep"].clone()).unwrap();
    assert_eq!(saved.best, Some(best));
    assert_eq!(saved.rows.len(), values.len());
    assert!(!saved.interrupted);
}

#[test]
fn a_range_that_no_fit_accepts_fails_with_the_reason() {
    // max_iter is not a krr parameter: every configuration is refused before any fit.
    let cfg = iris("krr", Params::new().with("max_iter", Value::Int(5)));
    let h = spawn_sweep(vec![cfg], Some(2), 1);
    let (rows, last) = drain(&h);
    assert!(rows.is_empty());
    let RunMessage::Failed { message, exit_code } = last else {
        panic!("expected Failed, got {last:?}")
    };
    assert_eq!(exit_code, 2, "{message}");
    assert!(message.contains("max_iter"), "{message}");
}

#[test]
fn cancel_reaches_a_fit_inside_the_sweep() {
    // Block coordinate descent to a tolerance it never reaches: each fit would run for hours.
    let slow = |l: f64| {
        iris(
            "okl",
            Params::new()
                .with("solver", Value::Text("bcd".into()))
                .with("lambda", Value::Float(l))
                .with("tol", Value::Float(1e-15))
                .with("max_iter", Value::Int(10_000_000)),
        )
    };
    let h = spawn_sweep(vec![slow(1e-4), slow(1e-3)], Some(2), 1);
    // Let the first fit start iterating, then cancel.
    std::thread::sleep(Duration::from_millis(300));
    h.cancel();
    let (rows, last) = drain(&h);
    assert!(matches!(last, RunMessage::Cancelled), "{last:?}");
    assert!(rows.is_empty(), "no configuration can finish: {rows:?}");
    h.join();
}
