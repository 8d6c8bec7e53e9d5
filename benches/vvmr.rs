//! Vector-valued manifold regularisation: does each ingredient help on emotions (input graph
//! γ_I, output graph γ_O), and how the Hessenberg Sylvester solve scales against the dense
//! (Nn)×(Nn) system. Run: `cargo bench --bench vvmr`.
//!
//! The paper's protocol (10 labeled draws, transductive and inductive AUC, γ_I = 0 / γ_O = 0)
//! runs through the product's own path as `ovk paper vvmr-multilabel` (docs/papers.md).

use std::time::Instant;

use ndarray::{Array2, Axis};
use ovk_core::data::rng::Rng;
use ovk_core::data::Task;
use ovk_core::kernels::{gram, GraphWeights, Kernel, KernelSpec, LaplacianKind};
use ovk_core::linalg::lu;
use ovk_core::methods::vvmr::{self, Vvmr};
use ovk_core::methods::{Method, Params, Problem, Silent, Value};

const DRAWS: usize = 10;
const N_LABELED: usize = 100;
const N_TEST: usize = 193;

fn main() {
    ovk_core::linalg::configure_parallelism();
    match load_emotions() {
        Some((x, y, names)) => accuracy_table(&x, &y, &names),
        None => println!("emotions.csv not found: skipping the accuracy table"),
    }
    timing_table();
}

use ovk_lab::datasets::find as dataset;

/// A minimal CSV reader: header row, comma-separated numbers.
fn read_csv(path: &std::path::Path) -> Option<(Vec<String>, Vec<Vec<f64>>)> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()?
        .split(',')
        .map(|s| s.trim().to_string())
        .collect();
    let rows = lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            l.split(',')
                .map(|v| v.trim().parse::<f64>().unwrap_or(f64::NAN))
                .collect()
        })
        .collect();
    Some((header, rows))
}

/// Standardised features and ±1 labels (`label_*` columns).
fn load_emotions() -> Option<(Array2<f64>, Array2<f64>, Vec<String>)> {
    let (header, rows) = read_csv(&dataset("emotions.csv")?)?;
    let label_cols: Vec<usize> = (0..header.len())
        .filter(|&j| header[j].starts_with("label_"))
        .collect();
    let feat_cols: Vec<usize> = (0..header.len())
        .filter(|j| !label_cols.contains(j))
        .collect();
    let n = rows.len();
    let mut x = Array2::from_shape_fn((n, feat_cols.len()), |(i, j)| rows[i][feat_cols[j]]);
    for mut col in x.columns_mut() {
        let mean = col.mean().unwrap_or(0.0);
        let sd = col
            .mapv(|v| (v - mean) * (v - mean))
            .mean()
            .unwrap_or(0.0)
            .sqrt();
        col.mapv_inplace(|v| if sd > 0.0 { (v - mean) / sd } else { 0.0 });
    }
    let y = Array2::from_shape_fn((n, label_cols.len()), |(i, j)| {
        if rows[i][label_cols[j]] > 0.5 {
            1.0
        } else {
            -1.0
        }
    });
    let names = label_cols.iter().map(|&j| header[j].clone()).collect();
    Some((x, y, names))
}

/// Mean over labels of the Mann–Whitney AUC (ties count one half); labels with one class are
/// skipped.
fn mean_auc(scores: &Array2<f64>, y: &Array2<f64>) -> f64 {
    let mut total = 0.0;
    let mut count = 0;
    for j in 0..y.ncols() {
        let mut pairs: Vec<(f64, bool)> = (0..y.nrows())
            .map(|i| (scores[[i, j]], y[[i, j]] > 0.0))
            .collect();
        let pos = pairs.iter().filter(|p| p.1).count();
        let neg = pairs.len() - pos;
        if pos == 0 || neg == 0 {
            continue;
        }
        pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut rank_sum = 0.0;
        let mut i = 0;
        while i < pairs.len() {
            let mut k = i;
            while k + 1 < pairs.len() && pairs[k + 1].0 == pairs[i].0 {
                k += 1;
            }
            let avg_rank = (i + k) as f64 / 2.0 + 1.0;
            rank_sum += avg_rank * pairs[i..=k].iter().filter(|p| p.1).count() as f64;
            i = k + 1;
        }
        let u = rank_sum - (pos * (pos + 1)) as f64 / 2.0;
        total += u / (pos * neg) as f64;
        count += 1;
    }
    total / count.max(1) as f64
}

fn accuracy_table(x: &Array2<f64>, y: &Array2<f64>, names: &[String]) {
    let n = x.nrows();
    let mut rng = Rng::new(2011);
    let mut order: Vec<usize> = (0..n).collect();
    rng.shuffle(&mut order);
    let test: Vec<usize> = order[..N_TEST].to_vec();
    let train: Vec<usize> = order[N_TEST..].to_vec();
    let (x_tr, y_tr) = (x.select(Axis(0), &train), y.select(Axis(0), &train));
    let (x_te, y_te) = (x.select(Axis(0), &test), y.select(Axis(0), &test));
    let spec = KernelSpec::default();
    let kernel = match spec.resolve(x_tr.view()) {
        Ok(k) => k,
        Err(e) => {
            println!("kernel: {e}");
            return;
        }
    };
    println!(
        "emotions: {} train ({} labeled per draw, rest unlabeled), {} test, {} labels, \
         Gaussian σ = median, γ_A = 1e-2, k = 10 heat, normalised L; {} draws",
        train.len(),
        N_LABELED,
        test.len(),
        names.len(),
        DRAWS
    );
    println!(
        "{:>5} {:>5} | {:>18} | {:>18}",
        "γ_I", "γ_O", "AUC unlabeled", "AUC test"
    );
    let draws: Vec<Vec<bool>> = (0..DRAWS)
        .map(|_| {
            let pick = rng.sample(train.len(), N_LABELED);
            let mut m = vec![false; train.len()];
            for i in pick {
                m[i] = true;
            }
            m
        })
        .collect();
    for gamma_i in [0.0, 1e-3, 1e-2, 0.1] {
        for gamma_o in [0.0, 0.5, 0.9] {
            let (mut unl, mut tst) = (Vec::new(), Vec::new());
            for labeled in &draws {
                let mut p = Problem::new(x_tr.clone(), y_tr.clone(), kernel)
                    .with_labeled(labeled.clone())
                    .with_holdout(x_te.clone(), y_te.clone())
                    .with_kernel_spec(spec.clone())
                    .with_task(Task::Multilabel);
                p.output_names = names.to_vec();
                let params = Params::new()
                    .with("gamma_i", Value::Float(gamma_i))
                    .with("gamma_o", Value::Float(gamma_o));
                let fit = match Vvmr.fit(&p, &params, &mut Silent) {
                    Ok(f) => f,
                    Err(e) => {
                        println!("fit failed: {e}");
                        return;
                    }
                };
                let unl_rows: Vec<usize> = (0..train.len()).filter(|&i| !labeled[i]).collect();
                let pu = fit
                    .matrices
                    .iter()
                    .find(|(n, _)| n == "predictions_unlabeled")
                    .map(|(_, m)| m.clone())
                    .unwrap_or_default();
                unl.push(mean_auc(&pu, &y_tr.select(Axis(0), &unl_rows)));
                match fit.model.predict(x_te.view()) {
                    Ok(pt) => tst.push(mean_auc(&pt, &y_te)),
                    Err(e) => println!("predict failed: {e}"),
                }
            }
            println!(
                "{:>5} {:>5} | {:>18} | {:>18}",
                gamma_i,
                gamma_o,
                mean_sd(&unl),
                mean_sd(&tst)
            );
        }
    }
}

fn mean_sd(v: &[f64]) -> String {
    let n = v.len().max(1) as f64;
    let m = v.iter().sum::<f64>() / n;
    let sd = (v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n).sqrt();
    format!("{:.2} ± {:.2}", 100.0 * m, 100.0 * sd)
}

struct Synthetic {
    g: Array2<f64>,
    l: Array2<f64>,
    labeled: Vec<bool>,
    q: Array2<f64>,
    y: Array2<f64>,
}

fn synthetic(n_all: usize, n_out: usize, seed: u64) -> Synthetic {
    let mut rng = Rng::new(seed);
    let x = Array2::from_shape_fn((n_all, 10), |_| rng.normal());
    let kernel = Kernel::Gaussian { sigma: 4.0 };
    let g = gram(&kernel, x.view()).unwrap_or_default();
    let l = vvmr::input_laplacian(
        x.view(),
        10,
        GraphWeights::Heat,
        LaplacianKind::Normalized,
        1,
    )
    .unwrap_or_default();
    let labeled: Vec<bool> = (0..n_all).map(|i| i % 4 == 0).collect();
    let mut y = Array2::from_shape_fn(
        (n_all, n_out),
        |_| {
            if rng.uniform() < 0.5 {
                -1.0
            } else {
                1.0
            }
        },
    );
    for (i, mut row) in y.rows_mut().into_iter().enumerate() {
        if !labeled[i] {
            row.fill(0.0);
        }
    }
    let rows: Vec<usize> = (0..n_all).filter(|&i| labeled[i]).collect();
    let (_, q) = vvmr::output_kernel(y.select(Axis(0), &rows).view(), 3, GraphWeights::Heat, 0.5)
        .unwrap_or_default();
    Synthetic {
        g,
        l,
        labeled,
        q,
        y,
    }
}

fn fast(s: &Synthetic) -> (f64, Array2<f64>) {
    let t = Instant::now();
    let a = vvmr::Terms {
        g: s.g.view(),
        l: s.l.view(),
        labeled: &s.labeled,
        q: s.q.view(),
        y: s.y.view(),
        gamma_a: 1e-2,
        gamma_i: 0.1,
    }
    .solve()
    .unwrap_or_default();
    (t.elapsed().as_secs_f64(), a)
}

/// The dense (Nn)×(Nn) system of eq. (17) by LU — the baseline.
fn dense(s: &Synthetic) -> (f64, Array2<f64>) {
    let t = Instant::now();
    let (n_all, n_out) = s.y.dim();
    let ell = s.labeled.iter().filter(|&&b| b).count() as f64;
    let m = vvmr::left_matrix(s.g.view(), s.l.view(), &s.labeled, 0.1);
    let size = n_all * n_out;
    let mut big = Array2::<f64>::zeros((size, size));
    for a in 0..n_out {
        for b in 0..n_out {
            let qab = s.q[[a, b]];
            for i in 0..n_all {
                for j in 0..n_all {
                    big[[a * n_all + i, b * n_all + j]] = qab * m[[i, j]];
                }
            }
        }
    }
    big.diag_mut().mapv_inplace(|v| v + ell * 1e-2);
    let rhs = Array2::from_shape_fn((size, 1), |(k, _)| s.y[[k % n_all, k / n_all]]);
    let v = match lu(big.view()) {
        Ok(f) => f.solve(rhs.view()),
        Err(_) => Array2::zeros((size, 1)),
    };
    let a = Array2::from_shape_fn((n_all, n_out), |(i, o)| v[[o * n_all + i, 0]]);
    (t.elapsed().as_secs_f64(), a)
}

fn timing_table() {
    println!();
    println!("Sylvester solve of eq. (17), synthetic data (d = 10, ℓ = N/4), one thread:");
    println!(
        "{:>6} {:>4} | {:>10} | {:>10} | {:>8} | {:>10}",
        "N", "n", "fast (s)", "dense (s)", "speed-up", "rel. diff"
    );
    let s = synthetic(300, 6, 1);
    let (tf, af) = fast(&s);
    let (td, ad) = dense(&s);
    let diff = (&af - &ad).mapv(|v| v * v).sum().sqrt() / ad.mapv(|v| v * v).sum().sqrt();
    println!(
        "{:>6} {:>4} | {:>10.3} | {:>10.3} | {:>7.1}× | {:>10.1e}",
        300,
        6,
        tf,
        td,
        td / tf,
        diff
    );
    for n_all in [1000, 3000] {
        for n_out in [6, 25] {
            let s = synthetic(n_all, n_out, 2);
            let (tf, _) = fast(&s);
            println!(
                "{:>6} {:>4} | {:>10.3} | {:>10} | {:>8} | {:>10}",
                n_all, n_out, tf, "—", "—", "—"
            );
        }
    }
}
