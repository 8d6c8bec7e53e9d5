//! Synthetic tables shaped like real ones, written for benchmarks and tests that need sizes the
//! shipped data sets do not have.

use std::fmt::Write as _;
use std::path::Path;

use ovk_core::data::rng::Rng;

/// A text-like multi-label LIBSVM file (RCV1's shape at `rows` × `features`): each row holds
/// about `per_row` non-zeros drawn with skewed column frequencies (a few frequent "words",
/// many rare ones), values in (0.01, 2.01], and `labels` labels from a sparse linear rule.
/// Returns the fraction of non-zero cells.
pub fn write_text_like_libsvm(
    path: &Path,
    rows: usize,
    features: usize,
    per_row: usize,
    labels: usize,
    seed: u64,
) -> std::io::Result<f64> {
    let mut rng = Rng::new(seed);
    let w: Vec<f64> = (0..features * labels).map(|_| rng.normal()).collect();
    let (mut t, mut nnz) = (String::new(), 0usize);
    for _ in 0..rows {
        // u³ skews the draws towards the first columns.
        let mut idx: Vec<usize> = (0..per_row)
            .map(|_| (rng.uniform().powi(3) * features as f64) as usize)
            .collect();
        idx.sort_unstable();
        idx.dedup();
        nnz += idx.len();
        let vals: Vec<f64> = idx
            .iter()
            .map(|_| (rng.uniform() * 2e4).round() / 1e4 + 0.01)
            .collect();
        let set: Vec<String> = (0..labels)
            .filter(|&k| {
                let s: f64 = idx
                    .iter()
                    .zip(&vals)
                    .map(|(&j, v)| v * w[j * labels + k])
                    .sum();
                s > 0.0
            })
            .map(|k| k.to_string())
            .collect();
        let feats: Vec<String> = idx
            .iter()
            .zip(&vals)
            .map(|(j, v)| format!("{}:{v}", j + 1))
            .collect();
        let _ = writeln!(t, "{} {}", set.join(","), feats.join(" "));
    }
    std::fs::write(path, t)?;
    Ok(nnz as f64 / (rows as f64 * features as f64))
}
