//! OKL on digits (docs/methods.md §1): the fit against its floor (Gram + eigendecomposition of K),
//! the two solvers against each other, test accuracy, and faer's eigh with and without threads.
//! Prints figures; asserts nothing. Run: `cargo bench --bench okl`.
//!
//! The paper's experiments (§5.1 simulations, §5.2.1 USPS) run through the product's own path as
//! `ovk paper okl-sim` and `ovk paper okl-usps` (docs/papers.md).

use std::time::Instant;

use ndarray::{Array2, Axis};
use ovk_core::data::rng::Rng;
use ovk_core::data::Task;
use ovk_core::kernels::{gram, median_distance, Kernel};
use ovk_core::linalg::eigh;
use ovk_core::methods::okl::Okl;
use ovk_core::methods::{Fit, Method, Params, Problem, Silent, Value};

const LAMBDA: f64 = 0.1;

use ovk_lab::datasets::find as dataset;

/// Features and class labels of digits.csv (last column `digit`), by a tiny std CSV parse.
/// Kept separate so it can be swapped for `ovk_core::data::prepare`.
fn load_digits() -> (Array2<f64>, Vec<usize>) {
    let path = dataset("digits.csv")
        .expect("digits.csv not found in datasets/, $OVK_SHARED_DATA or ../shared/datasets/");
    let text = std::fs::read_to_string(path).expect("read digits.csv");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let class_col = header
        .iter()
        .position(|h| *h == "digit")
        .expect("digit column");
    let mut feats = Vec::new();
    let mut labels = Vec::new();
    let mut rows = 0;
    for line in lines.filter(|l| !l.trim().is_empty()) {
        for (j, cell) in line.split(',').enumerate() {
            let v: f64 = cell.trim().parse().expect("number");
            if j == class_col {
                labels.push(v as usize);
            } else {
                feats.push(v);
            }
        }
        rows += 1;
    }
    let d = header.len() - 1;
    (
        Array2::from_shape_vec((rows, d), feats).expect("shape"),
        labels,
    )
}

/// Seeded 75/25 split, features standardised on the training part, ±1 one-hot targets.
struct Split {
    x_train: Array2<f64>,
    y_train: Array2<f64>,
    x_test: Array2<f64>,
    labels_test: Vec<usize>,
}

fn split(x: &Array2<f64>, labels: &[usize]) -> Split {
    let n = x.nrows();
    let mut idx: Vec<usize> = (0..n).collect();
    Rng::new(0).shuffle(&mut idx);
    let n_train = n * 3 / 4;
    let (tr, te) = idx.split_at(n_train);
    let mut x_train = x.select(Axis(0), tr);
    let mut x_test = x.select(Axis(0), te);
    let mean = x_train.mean_axis(Axis(0)).expect("rows");
    let std = x_train
        .std_axis(Axis(0), 0.0)
        .mapv(|s| if s > 0.0 { s } else { 1.0 });
    for xs in [&mut x_train, &mut x_test] {
        *xs -= &mean;
        *xs /= &std;
    }
    let m = labels.iter().max().map_or(0, |c| c + 1);
    let y_train = Array2::from_shape_fn(
        (n_train, m),
        |(i, j)| {
            if labels[tr[i]] == j {
                1.0
            } else {
                -1.0
            }
        },
    );
    Split {
        x_train,
        y_train,
        x_test,
        labels_test: te.iter().map(|&i| labels[i]).collect(),
    }
}

fn accuracy(fit: &Fit, s: &Split) -> f64 {
    let scores = fit.model.predict(s.x_test.view()).expect("predict");
    let hits = scores
        .rows()
        .into_iter()
        .zip(&s.labels_test)
        .filter(|(r, &c)| {
            let arg = (0..r.len())
                .max_by(|&a, &b| r[a].total_cmp(&r[b]))
                .unwrap_or(0);
            arg == c
        })
        .count();
    hits as f64 / s.labels_test.len() as f64
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let t = Instant::now();
    let out = f();
    (out, t.elapsed().as_secs_f64())
}

fn main() {
    ovk_core::linalg::configure_parallelism();
    let (x, labels) = load_digits();
    let s = split(&x, &labels);
    let sigma = median_distance(s.x_train.view());
    let kernel = Kernel::Gaussian { sigma };
    let (l, m) = s.y_train.dim();
    println!("digits: ℓ = {l} training rows, m = {m} outputs, σ = {sigma:.4}, λ = {LAMBDA}");

    let (_, floor) = timed(|| {
        let k = gram(&kernel, s.x_train.view()).expect("gram");
        eigh(k.view()).expect("eigh")
    });
    println!("floor  (Gram + eigh of K): {:8.3} s", floor);

    let problem = Problem::new(s.x_train.clone(), s.y_train.clone(), kernel)
        .with_holdout(s.x_test.clone(), Array2::zeros((s.x_test.nrows(), m)))
        .with_task(Task::Multiclass);
    let fit_with = |pairs: &[(&str, Value)]| {
        let mut p = Params::new().with("lambda", Value::Float(LAMBDA));
        for (k, v) in pairs {
            p.set(k, v.clone());
        }
        timed(|| Okl.fit(&problem, &p, &mut Silent).expect("fit"))
    };

    let (qn, t_qn) = fit_with(&[]);
    println!(
        "qn fit (full, tol 1e-8):    {:8.3} s   ratio to floor {:.2} (target ≤ 2)   \
         {} L-BFGS iterations, converged {}, Q = {:.12e}, fixed-point residual {:.2e}",
        t_qn,
        t_qn / floor,
        qn.iterations,
        qn.converged,
        qn.objective.unwrap_or(f64::NAN),
        qn.details["fixed_point_residual"]
            .as_f64()
            .unwrap_or(f64::NAN)
    );

    for tol in [1e-6, 1e-8] {
        let (bcd, t_bcd) = fit_with(&[
            ("solver", Value::Text("bcd".into())),
            ("tol", Value::Float(tol)),
            ("max_iter", Value::Int(100_000)),
        ]);
        let (q_bcd, q_qn) = (
            bcd.objective.unwrap_or(f64::NAN),
            qn.objective.unwrap_or(f64::NAN),
        );
        let rel = (q_bcd - q_qn).abs() / q_qn.abs();
        println!(
            "bcd fit (tol {tol:.0e}):       {:8.3} s   {} sweeps, converged {}, Q = {:.12e}, \
             |ΔQ|/Q vs qn = {:.1e} ({} to 6 digits)",
            t_bcd,
            bcd.iterations,
            bcd.converged,
            q_bcd,
            rel,
            if rel < 5e-7 { "matches" } else { "DIFFERS" }
        );
    }

    println!(
        "test accuracy (25%, {} rows): qn {:.4}",
        s.labels_test.len(),
        accuracy(&qn, &s)
    );
    let krr = ovk_core::methods::find("krr").expect("krr");
    let p = Params::new().with("lambda", Value::Float(LAMBDA));
    let base = krr.fit(&problem, &p, &mut Silent).expect("krr fit");
    println!(
        "                                   krr (L = I) baseline {:.4}",
        accuracy(&base, &s)
    );

    println!("faer eigh, sequential vs rayon(2):");
    for n in [1000usize, 2000] {
        let mut rng = Rng::new(n as u64);
        let a = Array2::from_shape_fn((n, n), |_| rng.normal());
        let sym = &a + &a.t();
        let mut times = Vec::new();
        for par in [faer::Par::Seq, faer::Par::rayon(2)] {
            faer::set_global_parallelism(par);
            let (_, t) = timed(|| eigh(sym.view()).expect("eigh"));
            times.push(t);
        }
        println!(
            "  n = {n}: seq {:.3} s, rayon(2) {:.3} s, speed-up {:.2}×",
            times[0],
            times[1],
            times[0] / times[1]
        );
    }
    ovk_core::linalg::configure_parallelism();
}
