//! The gp-mix generator of the low-rank OKL benchmark (docs/methods.md §2).

use ovk_core::data::gpmix::{columns, gp_mix, gp_mix_parts, GRID};
use ovk_core::data::{write_table, Format};

#[test]
fn shape_and_grid() {
    let (x, y) = gp_mix(7, 1);
    assert_eq!(x.dim(), (GRID, 1));
    assert_eq!(y.dim(), (GRID, 7));
    assert_eq!(x[[0, 0]], -1.0);
    assert!((x[[GRID - 1, 0]] - 1.0).abs() < 1e-12);
    assert!(y.iter().all(|v| v.is_finite()));
}

#[test]
fn reproducible_for_a_seed() {
    assert_eq!(gp_mix(5, 42).1, gp_mix(5, 42).1);
    assert_ne!(gp_mix(5, 42).1, gp_mix(5, 43).1);
}

#[test]
fn signal_to_noise_is_one_to_one() {
    let parts = gp_mix_parts(300, 3);
    let vs = parts.signal.var_axis(ndarray::Axis(0), 0.0);
    let vn = parts.noise.var_axis(ndarray::Axis(0), 0.0);
    let ratios: Vec<f64> = vs.iter().zip(vn.iter()).map(|(s, n)| s / n).collect();
    let mean = ratios.iter().sum::<f64>() / ratios.len() as f64;
    assert!((mean - 1.0).abs() < 0.05, "mean SNR {mean}");
    // 200 noise draws per output: each ratio is within sampling error of 1.
    assert!(ratios.iter().all(|r| (0.6..1.6).contains(r)));
    // Mixing 50 shared paths makes the outputs strongly correlated (what a low-rank L uses).
    let s0 = parts.signal.column(0);
    let s1 = parts.signal.column(1);
    let c = {
        let (m0, m1) = (s0.mean().unwrap(), s1.mean().unwrap());
        let cov: f64 = s0
            .iter()
            .zip(s1.iter())
            .map(|(a, b)| (a - m0) * (b - m1))
            .sum();
        cov / (s0.mapv(|a| (a - m0).powi(2)).sum() * s1.mapv(|b| (b - m1).powi(2)).sum()).sqrt()
    };
    assert!(c > 0.3, "outputs 0 and 1 correlate only {c}");
}

#[test]
fn csv_columns_with_header() {
    let (x, y) = gp_mix(3, 2);
    let mut bytes = Vec::new();
    write_table(
        &mut bytes,
        Format::Csv { separator: b',' },
        &columns(&x, &y),
    )
    .unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next().unwrap(), "x,y0,y1,y2");
    let first: Vec<f64> = lines
        .next()
        .unwrap()
        .split(',')
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(first, vec![x[[0, 0]], y[[0, 0]], y[[0, 1]], y[[0, 2]]]);
    assert_eq!(text.lines().count(), GRID + 1);
}
