//! MVML speed and accuracy: exact vs block Nyström (6%, 12%, 24%) on mfeat (binary digits 0–4
//! vs 5–9, six views) and enb (heating load, two views), and fit time versus n. Writes the very
//! same standardised splits and hyperparameters to `$MVML_BENCH_DIR` (default
//! /tmp/ovk_mvml_bench) for `peers/mvml_peer.sh`, which runs scikit-multimodallearn's MVML on
//! them. Ratios are against the exact fit measured in the same run.
//!
//! `cargo bench --bench mvml` (set MVML_BENCH_QUICK=1 to skip n = 2000).
//!
//! The paper's Table 1 protocol (MVML, MVML-sparse, MVML_Cov, MVML_I and single views, four
//! samples) runs through the product's own path as `ovk paper mvml-views` (docs/papers.md).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use ndarray::{s, Array2, Axis};
use ovk_core::data::rng::Rng;
use ovk_core::data::View;
use ovk_core::kernels::{median_distance, KernelSpec, Sigma};
use ovk_core::methods::{Params, Problem, Silent, Value};

const LAMBDA: f64 = 0.1;
const ETA: f64 = 0.01;
const MU: f64 = 0.5;
/// The reference's round cap (its default); ovk runs to convergence under its own cap.
const LOOPS: i64 = 6;
const OVK_MAX_ITER: i64 = 50;
const FRACTIONS: [f64; 3] = [0.06, 0.12, 0.24];
const SEED: u64 = 0;

/// A tiny CSV reader: one header row, plain numbers, no quoting (the shared datasets' format).
fn read_csv(path: &Path) -> (Vec<String>, Array2<f64>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<String> = lines
        .next()
        .map(|h| h.split(',').map(|c| c.trim().to_string()).collect())
        .unwrap_or_default();
    let rows: Vec<Vec<f64>> = lines
        .map(|l| {
            l.split(',')
                .map(|c| c.trim().parse::<f64>().unwrap_or(f64::NAN))
                .collect()
        })
        .collect();
    let mut a = Array2::zeros((rows.len(), header.len()));
    for (i, r) in rows.iter().enumerate() {
        for (j, v) in r.iter().enumerate().take(header.len()) {
            a[[i, j]] = *v;
        }
    }
    (header, a)
}

/// `name` from the bundled or shared datasets (the path under datasets/ when absent, for the message).
fn dataset(name: &str) -> PathBuf {
    ovk_lab::datasets::find(name).unwrap_or_else(|| PathBuf::from("datasets").join(name))
}

/// A split: standardised features (training statistics), views, target (one column).
struct Task1 {
    name: String,
    regression: bool,
    x_train: Array2<f64>,
    y_train: Array2<f64>,
    x_test: Array2<f64>,
    y_test: Array2<f64>,
    views: Vec<View>,
    sigmas: Vec<f64>,
}

fn standardise(train: &Array2<f64>, test: &Array2<f64>) -> (Array2<f64>, Array2<f64>) {
    let mean = train.mean_axis(Axis(0)).unwrap_or_default();
    let std = train
        .std_axis(Axis(0), 0.0)
        .mapv(|s| if s > 0.0 { s } else { 1.0 });
    ((train - &mean) / &std, (test - &mean) / &std)
}

fn make_task(name: &str, x: Array2<f64>, y: Vec<f64>, views: Vec<View>, regression: bool) -> Task1 {
    let test: Vec<usize> = (0..x.nrows()).filter(|i| i % 4 == 0).collect();
    let train: Vec<usize> = (0..x.nrows()).filter(|i| i % 4 != 0).collect();
    let (xtr, xte) = standardise(&x.select(Axis(0), &train), &x.select(Axis(0), &test));
    let mut ytr: Vec<f64> = train.iter().map(|&i| y[i]).collect();
    let mut yte: Vec<f64> = test.iter().map(|&i| y[i]).collect();
    if regression {
        let m = ytr.iter().sum::<f64>() / ytr.len() as f64;
        ytr.iter_mut().for_each(|v| *v -= m);
        yte.iter_mut().for_each(|v| *v -= m);
    }
    let sigmas = views
        .iter()
        .map(|v| median_distance(xtr.select(Axis(1), &v.columns).view()))
        .collect();
    Task1 {
        name: name.into(),
        regression,
        y_train: Array2::from_shape_vec((ytr.len(), 1), ytr).unwrap_or_default(),
        y_test: Array2::from_shape_vec((yte.len(), 1), yte).unwrap_or_default(),
        x_train: xtr,
        x_test: xte,
        views,
        sigmas,
    }
}

fn views_by_prefix(header: &[String], prefixes: &[&str]) -> Vec<View> {
    prefixes
        .iter()
        .map(|p| View {
            name: p.to_string(),
            columns: (0..header.len())
                .filter(|&j| header[j].starts_with(&format!("{p}_")))
                .collect(),
        })
        .collect()
}

fn mfeat_binary(rows: Option<usize>) -> Task1 {
    let (header, a) = read_csv(&dataset("mfeat.csv"));
    let d = header.len() - 1;
    let views = views_by_prefix(&header[..d], &["fou", "fac", "kar", "pix", "zer", "mor"]);
    let base = a.slice(s![.., ..d]).to_owned();
    let digits: Vec<f64> = a.column(d).to_vec();
    // larger n: repeat the rows with a small seeded jitter (the time-versus-n series)
    let n = rows.unwrap_or(base.nrows());
    let mut r = Rng::new(7);
    let x = Array2::from_shape_fn((n, d), |(i, j)| {
        let v = base[[i % base.nrows(), j]];
        if i >= base.nrows() {
            v + 0.05 * r.normal()
        } else {
            v
        }
    });
    let y = (0..n)
        .map(|i| {
            if digits[i % base.nrows()] <= 4.0 {
                1.0
            } else {
                -1.0
            }
        })
        .collect();
    make_task(&format!("mfeat-binary-n{n}"), x, y, views, false)
}

fn enb_two_views() -> Task1 {
    let (header, a) = read_csv(&dataset("enb.csv"));
    let views = vec![
        View {
            name: "shape".into(),
            columns: (0..5).collect(),
        },
        View {
            name: "glazing".into(),
            columns: (5..8).collect(),
        },
    ];
    let x = a.slice(s![.., ..8]).to_owned();
    let yi = header
        .iter()
        .position(|h| h == "target_heating_load")
        .unwrap_or(8);
    make_task("enb-heating", x, a.column(yi).to_vec(), views, true)
}

fn problem(t: &Task1) -> Problem {
    let spec = KernelSpec {
        sigma: Sigma::Median,
        ..KernelSpec::default()
    };
    let kernel = spec.resolve(t.x_train.view()).expect("kernel");
    Problem::new(t.x_train.clone(), t.y_train.clone(), kernel)
        .with_holdout(t.x_test.clone(), t.y_test.clone())
        .with_kernel_spec(spec)
        .with_views(t.views.clone())
        .with_seed(SEED)
}

fn score(t: &Task1, pred: &Array2<f64>) -> f64 {
    let y = t.y_test.column(0);
    let p = pred.column(0);
    if t.regression {
        let mean = y.mean().unwrap_or(0.0);
        let ss_res: f64 = y.iter().zip(p).map(|(a, b)| (a - b) * (a - b)).sum();
        let ss_tot: f64 = y.iter().map(|a| (a - mean) * (a - mean)).sum();
        1.0 - ss_res / ss_tot
    } else {
        y.iter()
            .zip(p)
            .filter(|(a, b)| a.signum() == b.signum())
            .count() as f64
            / y.len() as f64
    }
}

fn fit_once(t: &Task1, fraction: Option<f64>) -> (f64, f64, usize) {
    fit_in(t, fraction, "gram")
}

/// `space`: the metric's coordinates (`--metric-space gram|root`, docs/mvml.md).
fn fit_in(t: &Task1, fraction: Option<f64>, space: &str) -> (f64, f64, usize) {
    let mut params = Params::new()
        .with("metric_space", Value::Text(space.into()))
        .with("lambda", Value::Float(LAMBDA))
        .with("eta", Value::Float(ETA))
        .with("mu", Value::Float(MU))
        .with("max_iter", Value::Int(OVK_MAX_ITER))
        .with("tol", Value::Float(1e-4));
    if let Some(f) = fraction {
        params.set("nystrom", Value::Float(f));
    }
    let method = ovk_core::methods::find("mvml").expect("mvml registered");
    let p = problem(t);
    let start = Instant::now();
    let fit = method.fit(&p, &params, &mut Silent).expect("fit");
    let secs = start.elapsed().as_secs_f64();
    if !fit.converged {
        println!(
            "  ({} {:?}: not converged in {} rounds)",
            t.name, fraction, fit.iterations
        );
    }
    let pred = fit.model.predict(t.x_test.view()).expect("predict");
    (score(t, &pred), secs, fit.iterations)
}

/// The split exactly as the Rust fit sees it, for the Python peer. Training rows are written in
/// the order of `Rng::new(seed).sample(n, n)`, so the reference's "first p columns" Nyström
/// sample is the very sample ovk draws.
fn export(t: &Task1, dir: &Path) -> String {
    let n = t.x_train.nrows();
    let order = Rng::new(SEED).sample(n, n);
    let mut csv = String::new();
    let cols: Vec<usize> = t.views.iter().flat_map(|v| v.columns.clone()).collect();
    for (split, x, y, rows) in [
        ("train", &t.x_train, &t.y_train, order),
        (
            "test",
            &t.x_test,
            &t.y_test,
            (0..t.x_test.nrows()).collect::<Vec<_>>(),
        ),
    ] {
        for &i in &rows {
            let _ = write!(csv, "{split},{}", y[[i, 0]]);
            for &j in &cols {
                let _ = write!(csv, ",{}", x[[i, j]]);
            }
            csv.push('\n');
        }
    }
    let file = dir.join(format!("{}.csv", t.name));
    std::fs::write(&file, csv).expect("write split");
    let sizes: Vec<String> = t
        .views
        .iter()
        .map(|v| v.columns.len().to_string())
        .collect();
    let sig: Vec<String> = t.sigmas.iter().map(|s| format!("{s:.17e}")).collect();
    let names: Vec<String> = t.views.iter().map(|v| format!("\"{}\"", v.name)).collect();
    format!(
        "{{\"name\":\"{}\",\"file\":\"{}\",\"regression\":{},\"view_sizes\":[{}],\"view_names\":[{}],\"sigmas\":[{}]}}",
        t.name,
        file.display(),
        t.regression,
        sizes.join(","),
        names.join(","),
        sig.join(",")
    )
}

fn main() {
    ovk_core::linalg::configure_parallelism();
    let dir = PathBuf::from(
        std::env::var("MVML_BENCH_DIR").unwrap_or_else(|_| "/tmp/ovk_mvml_bench".into()),
    );
    std::fs::create_dir_all(&dir).expect("bench dir");
    let quick = std::env::var("MVML_BENCH_QUICK").is_ok();
    let mut tasks_json = Vec::new();
    // ovk's figures for peers/peers.py: {task, variant, p, score, fit_s}
    let mut results_json: Vec<String> = Vec::new();
    let mut result = |task: &str, variant: String, p: usize, score: f64, secs: f64| {
        results_json.push(format!(
            "{{\"task\":\"{task}\",\"variant\":\"{variant}\",\"p\":{p},\"score\":{score},\"fit_s\":{secs}}}"
        ));
    };

    println!("mvml: λ = {LAMBDA}, η = {ETA}, to convergence (tol 1e-4, at most {OVK_MAX_ITER} rounds; the reference: {LOOPS}), Gaussian kernels, σ = per-view median");
    println!(
        "{:<22} {:>8} {:>6} {:>10} {:>10} {:>8}",
        "task", "variant", "p", "score", "fit (s)", "vs exact"
    );
    for t in [mfeat_binary(None), enb_two_views()] {
        tasks_json.push(export(&t, &dir));
        let n = t.x_train.nrows();
        let (s_exact, t_exact, _) = fit_once(&t, None);
        result(&t.name, "exact".into(), n, s_exact, t_exact);
        let metric = if t.regression { "R²" } else { "acc" };
        println!(
            "{:<22} {:>8} {:>6} {:>6} {:.4} {:>10.3} {:>8}",
            t.name, "exact", n, metric, s_exact, t_exact, "1.00"
        );
        let (s_root, t_root, _) = fit_in(&t, None, "root");
        result(&t.name, "exact root".into(), n, s_root, t_root);
        println!(
            "{:<22} {:>8} {:>6} {:>6} {:.4} {:>10.3} {:>8.3}",
            t.name,
            "ex. root",
            n,
            metric,
            s_root,
            t_root,
            t_root / t_exact
        );
        for f in FRACTIONS {
            let p = ((f * n as f64).floor() as usize).clamp(1, n);
            let (sr, tr, _) = fit_in(&t, Some(f), "root");
            result(&t.name, format!("{:.0}% root", f * 100.0), p, sr, tr);
            println!(
                "{:<22} {:>2.0}% root {:>6} {:>6} {:.4} {:>10.3} {:>8.3}",
                t.name,
                f * 100.0,
                p,
                metric,
                sr,
                tr,
                tr / t_exact
            );
            let (sc, secs, _) = fit_once(&t, Some(f));
            result(&t.name, format!("{:.0}%", f * 100.0), p, sc, secs);
            println!(
                "{:<22} {:>7.0}% {:>6} {:>6} {:.4} {:>10.3} {:>8.3}",
                t.name,
                f * 100.0,
                p,
                metric,
                sc,
                secs,
                secs / t_exact
            );
        }
    }

    println!("\nfit time versus n (mfeat-binary; n > 1000 repeats rows with jitter)");
    println!(
        "{:>6} {:>12} {:>14} {:>8}",
        "n", "exact (s)", "Nyström 12% (s)", "ratio"
    );
    let sizes: &[usize] = if quick {
        &[200, 500, 1000]
    } else {
        &[200, 500, 1000, 2000]
    };
    for &rows in sizes {
        // n counts training rows: the split keeps 3/4, so draw 4n/3 rows
        let mut t = mfeat_binary(Some(rows * 4 / 3));
        t.name = format!("mfeat-time-n{rows}");
        tasks_json.push(export(&t, &dir));
        let n = t.x_train.nrows();
        let (se, te, _) = fit_once(&t, None);
        let (sn, tn, _) = fit_once(&t, Some(0.12));
        let (sr, _, _) = fit_in(&t, None, "root");
        result(&t.name, "exact root".into(), n, sr, 0.0);
        println!("  accuracy: exact {se:.4}, Nyström 12% {sn:.4}, exact root {sr:.4}");
        result(&t.name, "exact".into(), n, se, te);
        result(
            &t.name,
            "12%".into(),
            (0.12 * n as f64).floor() as usize,
            sn,
            tn,
        );
        println!(
            "{:>6} {:>12.3} {:>14.3} {:>8.3}",
            t.x_train.nrows(),
            te,
            tn,
            tn / te
        );
    }
    let setup = format!(
        "{{\"lambda\":{LAMBDA},\"eta\":{ETA},\"mu\":{MU},\"n_loops\":{LOOPS},\"precision\":1e-4,\"fractions\":[{}],\"tasks\":[{}]}}",
        FRACTIONS.map(|f| f.to_string()).join(","),
        tasks_json.join(",")
    );
    std::fs::write(dir.join("setup.json"), setup).expect("write setup");
    std::fs::write(
        dir.join("results.json"),
        format!("[{}]", results_json.join(",")),
    )
    .expect("write results");
    println!(
        "\nsplits and hyperparameters for peers/mvml_peer.sh written to {}",
        dir.display()
    );
}
