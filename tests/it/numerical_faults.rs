//! The numerical-fault catalogue (issue 9, item 2): every method meets singular and
//! ill-conditioned Gram matrices, λ at its smallest allowed value, constant outputs, duplicated
//! points with conflicting outputs and a diverging step. Each case must end in a finished run
//! whose every saved matrix, metric and objective is finite — or in an error whose message
//! names the likely cause and the fix. Never a NaN written silently, never a panic.

use std::path::{Path, PathBuf};

use ovk_core::data::rng::Rng;
use ovk_core::data::DataConfig;
use ovk_core::kernels::{KernelName, KernelSpec, Sigma};
use ovk_core::methods::{Params, Silent, Value};
use ovk_core::train::{run, RunConfig, RunOutcome};
use ovk_core::OvkError;

const METHODS: &[&str] = &["krr", "okl", "lowrank-okl", "kde", "vvmr", "mvml"];

/// Rows of a small table: 2 + 2 features (two views `a`, `b`) and 3 outputs.
struct Table {
    x: Vec<[f64; 4]>,
    y: Vec<[f64; 3]>,
}

fn smooth_table(n: usize, seed: u64) -> Table {
    let mut r = Rng::new(seed);
    let mut x = Vec::new();
    let mut y = Vec::new();
    for _ in 0..n {
        let v = [r.normal(), r.normal(), r.normal(), r.normal()];
        y.push([
            (v[0]).sin() + 0.1 * r.normal(),
            v[1] * v[2] + 0.1 * r.normal(),
            v[0] - v[3] + 0.1 * r.normal(),
        ]);
        x.push(v);
    }
    Table { x, y }
}

fn write_csv(t: &Table, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ovk-faults-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.csv"));
    let mut s = String::from("a_0,a_1,b_0,b_1,y0,y1,y2\n");
    for (x, y) in t.x.iter().zip(&t.y) {
        let cells: Vec<String> = x.iter().chain(y.iter()).map(|v| format!("{v:e}")).collect();
        s.push_str(&cells.join(","));
        s.push('\n');
    }
    std::fs::write(&path, s).unwrap();
    path
}

fn config(method: &str, path: &Path, kernel: KernelSpec, params: Params) -> RunConfig {
    let mut data = DataConfig::new(path);
    data.targets = Some(vec!["y0".into(), "y1".into(), "y2".into()]);
    data.test_fraction = 0.25;
    if method == "mvml" {
        data.views = Some(vec!["a".into(), "b".into()]);
    }
    if method == "vvmr" {
        data.labeled = Some(0.6);
    }
    RunConfig {
        data,
        method: method.to_string(),
        kernel,
        params,
        name: None,
        cv: None,
        select_on: Default::default(),
    }
}

fn gaussian(sigma: f64) -> KernelSpec {
    KernelSpec {
        sigma: Sigma::Value(sigma),
        ..KernelSpec::default()
    }
}

fn linear() -> KernelSpec {
    KernelSpec {
        name: KernelName::Linear,
        ..KernelSpec::default()
    }
}

/// The smallest λ the parameter declarations admit that still makes sense to try.
const TINY: f64 = 1e-300;

/// The method's own regularisation key at `value` (vvmr calls it γ_A).
fn with_lambda(method: &str, value: f64) -> Params {
    let key = if method == "vvmr" {
        "gamma_a"
    } else {
        "lambda"
    };
    let p = Params::new().with(key, Value::Float(value));
    if method == "vvmr" {
        p.with("gamma_i", Value::Float(0.0))
    } else {
        p
    }
}

/// Finished with everything finite, or refused with a message naming cause and fix.
fn assert_sound(case: &str, method: &str, res: ovk_core::Result<RunOutcome>) -> &'static str {
    match res {
        Ok(out) => {
            let r = &out.record;
            if let Some(q) = r.objective {
                assert!(q.is_finite(), "{case}/{method}: objective {q}");
            }
            for (name, m) in &out.matrices {
                assert!(
                    m.iter().all(|v| v.is_finite()),
                    "{case}/{method}: matrix {name} is not finite"
                );
            }
            for (part, map) in [("train", &r.metrics.train), ("test", &r.metrics.test)] {
                for (k, v) in map {
                    // A metric may be undefined (AUC of one class); it must never be infinite.
                    assert!(!v.is_infinite(), "{case}/{method}: {part} {k} = {v}");
                    if k == "mse" || k == "rmse" || k == "mae" {
                        assert!(v.is_finite(), "{case}/{method}: {part} {k} = {v}");
                    }
                }
            }
            for t in &r.trace {
                assert!(
                    t.objective.is_finite(),
                    "{case}/{method}: trace objective {} at iteration {}",
                    t.objective,
                    t.iter
                );
            }
            "ok"
        }
        Err(e) => {
            let msg = e.to_string();
            assert!(
                matches!(
                    e,
                    OvkError::Numerical(_) | OvkError::Input(_) | OvkError::Resources(_)
                ),
                "{case}/{method}: not a user-facing error: {e:?}"
            );
            assert_eq!(e.exit_code(), 2, "{case}/{method}: {msg}");
            // The fix names a flag to change.
            assert!(
                msg.contains("--"),
                "{case}/{method}: the message names no flag to change: {msg}"
            );
            eprintln!("  {case}/{method}: {msg}");
            "refused"
        }
    }
}

/// Run every method on `table`; each must be sound, and those not in `may_refuse` must finish.
fn run_all(
    case: &str,
    table: &Table,
    kernel: KernelSpec,
    params: impl Fn(&str) -> Params,
    may_refuse: &[&str],
) {
    let path = write_csv(table, case);
    let mut seen = Vec::new();
    for &m in METHODS {
        let cfg = config(m, &path, kernel.clone(), params(m));
        let outcome = assert_sound(case, m, run(&cfg, &mut Silent));
        assert!(
            outcome == "ok" || may_refuse.contains(&m),
            "{case}/{m}: a well-posed fit was refused"
        );
        seen.push(format!("{m}: {outcome}"));
    }
    eprintln!("{case}: {}", seen.join(", "));
}

/// At λ = 1e-300 on a singular Gram any method may refuse (with cause and fix).
const ANY: &[&str] = METHODS;

fn duplicated(t: Table) -> Table {
    let x = t.x.iter().flat_map(|r| [*r, *r]).collect();
    let y = t.y.iter().flat_map(|r| [*r, *r]).collect();
    Table { x, y }
}

#[test]
fn singular_gram_from_duplicated_rows() {
    run_all(
        "duplicated",
        &duplicated(smooth_table(24, 1)),
        gaussian(1.5),
        |_| Params::new(),
        &[],
    );
}

#[test]
fn singular_gram_from_duplicated_rows_at_tiny_lambda() {
    run_all(
        "duplicated-tiny",
        &duplicated(smooth_table(24, 2)),
        gaussian(1.5),
        |m| with_lambda(m, TINY),
        ANY,
    );
}

#[test]
fn singular_linear_gram_with_more_points_than_features() {
    run_all(
        "linear",
        &smooth_table(40, 3),
        linear(),
        |_| Params::new(),
        &[],
    );
}

#[test]
fn singular_linear_gram_at_tiny_lambda() {
    run_all(
        "linear-tiny",
        &smooth_table(40, 4),
        linear(),
        |m| with_lambda(m, TINY),
        ANY,
    );
}

#[test]
fn ill_conditioned_gram_tiny_sigma() {
    run_all(
        "sigma-tiny",
        &smooth_table(40, 5),
        gaussian(1e-6),
        |_| Params::new(),
        &[],
    );
}

#[test]
fn ill_conditioned_gram_huge_sigma() {
    run_all(
        "sigma-huge",
        &smooth_table(40, 6),
        gaussian(1e6),
        |_| Params::new(),
        &[],
    );
}

#[test]
fn ill_conditioned_gram_huge_sigma_tiny_lambda() {
    run_all(
        "sigma-huge-tiny",
        &smooth_table(40, 7),
        gaussian(1e6),
        |m| with_lambda(m, TINY),
        ANY,
    );
}

#[test]
fn smallest_lambda_on_a_regular_problem() {
    // Distinct points: K is positive definite, so λ → 0 is interpolation. vvmr (γ_I = 0) has
    // no regulariser at all on its unlabeled rows and may refuse.
    run_all(
        "lambda-tiny",
        &smooth_table(40, 8),
        gaussian(1.5),
        |m| with_lambda(m, TINY),
        &["vvmr"],
    );
}

#[test]
fn all_outputs_constant() {
    let mut t = smooth_table(40, 9);
    for y in &mut t.y {
        *y = [3.0, 3.0, 3.0];
    }
    // KDE's output kernel width (median distance between outputs) is 0: it asks for a number.
    run_all(
        "constant-all",
        &t,
        gaussian(1.5),
        |_| Params::new(),
        &["kde"],
    );
}

#[test]
fn one_constant_output_column() {
    let mut t = smooth_table(40, 10);
    for y in &mut t.y {
        y[1] = -2.0;
    }
    run_all("constant-column", &t, gaussian(1.5), |_| Params::new(), &[]);
}

#[test]
fn duplicated_points_with_conflicting_outputs() {
    let t = smooth_table(24, 11);
    let x = t.x.iter().flat_map(|r| [*r, *r]).collect();
    let y = t.y.iter().flat_map(|r| [*r, r.map(|v| -v)]).collect();
    run_all(
        "conflicting",
        &Table { x, y },
        gaussian(1.5),
        |_| Params::new(),
        &[],
    );
    let t = smooth_table(24, 12);
    let x = t.x.iter().flat_map(|r| [*r, *r]).collect();
    let y = t.y.iter().flat_map(|r| [*r, r.map(|v| -v)]).collect();
    run_all(
        "conflicting-tiny",
        &Table { x, y },
        gaussian(1.5),
        |m| with_lambda(m, TINY),
        ANY,
    );
}

#[test]
fn diverging_step_size() {
    // MVML's A-step μ at its largest allowed value with a large η: μη ≫ ½.
    let path = write_csv(&smooth_table(40, 13), "step");
    for (eta, sparse) in [(0.01, false), (10.0, false), (10.0, true), (1e6, false)] {
        let params = Params::new()
            .with("mu", Value::Float(1e6))
            .with("eta", Value::Float(eta))
            .with("sparse", Value::Bool(sparse))
            .with("max_iter", Value::Int(20));
        let cfg = config("mvml", &path, gaussian(1.5), params);
        let res = run(&cfg, &mut Silent);
        // The A-step's line search backtracks until the objective decreases enough: the fit
        // must finish, and its objective never rises.
        let trace: Vec<f64> = res
            .as_ref()
            .map(|o| o.record.trace.iter().map(|r| r.objective).collect())
            .unwrap_or_default();
        assert_eq!(
            assert_sound("step", "mvml", res),
            "ok",
            "η={eta} sparse={sparse}"
        );
        assert!(
            trace.windows(2).all(|w| w[1] <= w[0]),
            "η={eta} sparse={sparse}: {trace:?}"
        );
    }
}
