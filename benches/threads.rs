//! One thread against two, per operation and size: faer's eigh, Cholesky and products (`Par`),
//! and the kernel Gram matrix and factor on rayon's pool. Each pair runs interleaved (1, 2, 1,
//! 2, …) so a shared machine's load falls on both sides alike; the figure is the median of the
//! per-pair ratios (two threads ÷ one, < 1: threads pay). Prints a Markdown table; asserts
//! nothing. Run: `cargo bench --bench threads` (`THREADS_QUICK=1`: sizes up to 1000,
//! `THREADS_PAIRS=k`: k pairs, 3 by default).

use std::time::Instant;

use ndarray::Array2;
use ovk_core::data::rng::Rng;
use ovk_core::kernels::{gram, input_factor, Kernel, Landmarks};
use ovk_core::linalg::{cholesky, eigh, gram_tn, matmul};

fn random(rows: usize, cols: usize, seed: u64) -> Array2<f64> {
    let mut r = Rng::new(seed);
    Array2::from_shape_simple_fn((rows, cols), || r.normal())
}

fn spd(n: usize) -> Array2<f64> {
    let x = random(n, 10, 1);
    let mut k = gram(&Kernel::Gaussian { sigma: 3.0 }, x.view()).unwrap();
    k.diag_mut().mapv_inplace(|v| v + 0.1);
    k
}

/// One timed operation, run on whichever pool `timed` installs.
type Op<'a> = Box<dyn Fn() + Sync + 'a>;

/// Seconds of `f` with faer and rayon both on `threads` threads.
fn timed(threads: usize, f: &(dyn Fn() + Sync)) -> f64 {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("rayon pool");
    faer::set_global_parallelism(if threads > 1 {
        faer::Par::Rayon(std::num::NonZeroUsize::new(threads).expect("threads > 0"))
    } else {
        faer::Par::Seq
    });
    pool.install(|| {
        let t = Instant::now();
        f();
        t.elapsed().as_secs_f64()
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let quick = std::env::var("THREADS_QUICK").is_ok();
    let pairs: usize = std::env::var("THREADS_PAIRS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "load average at start: {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!("\n| operation | size | 1 thread | 2 threads | 2 ÷ 1 (median of {pairs} pairs) |");
    println!("|---|---:|---:|---:|---:|");
    let sizes: &[usize] = if quick {
        &[250, 500, 1000]
    } else {
        &[250, 500, 1000, 2000, 4000]
    };
    let kernel = Kernel::Gaussian { sigma: 3.0 };
    for &n in sizes {
        let k = spd(n);
        let a = random(n, n, 2);
        let x = random(n * 25, 10, 3);
        let z = random(n * 25, n.min(1000), 4);
        let ops: Vec<(&str, String, Op<'_>)> = vec![
            (
                "eigh",
                format!("{n}×{n}"),
                Box::new(|| drop(eigh(k.view()).unwrap())),
            ),
            (
                "Cholesky",
                format!("{n}×{n}"),
                Box::new(|| drop(cholesky(k.view()).unwrap())),
            ),
            (
                "GEMM A·A",
                format!("{n}×{n}"),
                Box::new(|| drop(matmul(a.view(), a.view()))),
            ),
            (
                "ZᵀZ",
                format!("{}×{}", z.nrows(), z.ncols()),
                Box::new(|| drop(gram_tn(z.view()))),
            ),
            (
                "Gram K(X, X)",
                format!("{n}×{n}"),
                Box::new(|| drop(gram(&kernel, x.slice(ndarray::s![..n, ..])).unwrap())),
            ),
            (
                "factor (RPCholesky)",
                format!("{}×{}", x.nrows(), n / 4),
                Box::new(|| {
                    drop(
                        input_factor(
                            &kernel,
                            x.view(),
                            n / 4,
                            Landmarks::Rpcholesky,
                            0,
                            &mut |_| Ok(()),
                        )
                        .unwrap(),
                    )
                }),
            ),
        ];
        for (name, size, f) in &ops {
            if *name == "eigh" && n > 2000 && quick {
                continue;
            }
            let (mut one, mut two, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
            for _ in 0..pairs {
                let s1 = timed(1, f.as_ref());
                let s2 = timed(2, f.as_ref());
                one.push(s1);
                two.push(s2);
                ratio.push(s2 / s1);
            }
            println!(
                "| {name} | {size} | {:.3} s | {:.3} s | {:.2} |",
                median(one),
                median(two),
                median(ratio)
            );
        }
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "\nload average at the end: {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
}
