//! Feature scaling fitted on the training rows and applied unchanged to any other rows; target
//! scaling fitted on the labeled training rows and undone on every prediction.

use ndarray::{Array2, ArrayView2, Axis};
use rayon::prelude::*;

use super::{Scale, Scaler, TargetScale};

impl Scaler {
    /// The identity scaling for `p` features (mean 0, std 1).
    pub fn identity(p: usize) -> Scaler {
        Scaler {
            mean: vec![0.0; p],
            std: vec![1.0; p],
        }
    }

    /// Column means and population standard deviations (ddof = 0) of `x`; a constant column
    /// keeps std 1 so it is only centred.
    pub fn fit(x: &Array2<f64>, scale: Scale) -> Scaler {
        match scale {
            Scale::None => Scaler::identity(x.ncols()),
            Scale::Standard => {
                let n = x.nrows().max(1) as f64;
                // A single contiguous column is summed as ndarray sums a slice; otherwise row
                // by row, which reads a row-major matrix once in order and still adds each
                // column's entries in row order — the rounding of summing the column alone.
                let mean: Vec<f64> = if x.ncols() == 1 {
                    vec![x.sum() / n]
                } else {
                    column_sums(x, |_, v| v)
                        .into_iter()
                        .map(|s| s / n)
                        .collect()
                };
                let sq = column_sums(x, |j, v| (v - mean[j]) * (v - mean[j]));
                let std = sq
                    .into_iter()
                    .map(|q| {
                        let s = (q / n).sqrt();
                        if s > 0.0 && s.is_finite() {
                            s
                        } else {
                            1.0
                        }
                    })
                    .collect();
                Scaler { mean, std }
            }
        }
    }

    /// Per output: the mean (and, for `Standard`, the population std) of the finite entries of
    /// `y` — NaN marks an unlabeled row; `None` for `TargetScale::None`. An output with no
    /// finite entry keeps mean 0, a constant one std 1.
    pub(crate) fn fit_targets(y: ArrayView2<f64>, how: TargetScale) -> Option<Scaler> {
        if how.is_none() {
            return None;
        }
        let mut mean = Vec::with_capacity(y.ncols());
        let mut std = Vec::with_capacity(y.ncols());
        for (_, m, sd) in finite_moments(y) {
            mean.push(m);
            std.push(
                if how == TargetScale::Standard && sd > 0.0 && sd.is_finite() {
                    sd
                } else {
                    1.0
                },
            );
        }
        Some(Scaler { mean, std })
    }

    /// `y · std + mean`, column by column, in place: a scaled prediction in the data's units.
    pub(crate) fn invert(&self, y: &mut Array2<f64>) {
        for (j, mut c) in y.axis_iter_mut(Axis(1)).enumerate() {
            let (m, s) = (self.mean[j], self.std[j]);
            c.mapv_inplace(|v| v * s + m);
        }
    }

    /// `(x − mean) / std`, in place, rows in parallel.
    pub fn apply(&self, x: &mut Array2<f64>) {
        let scale_row = |row: &mut [f64]| {
            for ((v, m), s) in row.iter_mut().zip(&self.mean).zip(&self.std) {
                *v = (*v - m) / s;
            }
        };
        let p = x.ncols().max(1);
        match x.as_slice_mut() {
            Some(all) => all.par_chunks_mut(p).for_each(scale_row),
            None => {
                for (j, mut c) in x.axis_iter_mut(Axis(1)).enumerate() {
                    let (m, s) = (self.mean[j], self.std[j]);
                    c.mapv_inplace(|v| (v - m) / s);
                }
            }
        }
    }
}

/// Per column j of `x`, the sum of `f(j, x_ij)` over the rows, added in row order (the rounding
/// of summing the column alone); ranges of columns in parallel.
fn column_sums(x: &Array2<f64>, f: impl Fn(usize, f64) -> f64 + Sync) -> Vec<f64> {
    let p = x.ncols();
    let per = p.div_ceil(rayon::current_num_threads().max(1)).max(1);
    let starts: Vec<usize> = (0..p).step_by(per).collect();
    let parts: Vec<Vec<f64>> = starts
        .into_par_iter()
        .map(|lo| {
            let hi = (lo + per).min(p);
            let mut s = vec![0.0; hi - lo];
            for row in x.rows() {
                for (k, s) in s.iter_mut().enumerate() {
                    *s += f(lo + k, row[lo + k]);
                }
            }
            s
        })
        .collect();
    parts.concat()
}

/// Per column of `y`: how many entries are finite (NaN marks an unlabeled row), their mean and
/// population std (0 and 0 when none is).
pub(crate) fn finite_moments(y: ArrayView2<f64>) -> Vec<(usize, f64, f64)> {
    y.axis_iter(Axis(1))
        .map(|c| {
            let known: Vec<f64> = c.iter().copied().filter(|v| v.is_finite()).collect();
            let n = known.len().max(1) as f64;
            let m = known.iter().sum::<f64>() / n;
            let sd = (known.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / n).sqrt();
            (known.len(), m, sd)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn standard_uses_population_std_and_spares_constant_columns() {
        let x = array![[1.0, 5.0], [2.0, 5.0], [3.0, 5.0], [6.0, 5.0]];
        let s = Scaler::fit(&x, Scale::Standard);
        assert_eq!(s.mean, vec![3.0, 5.0]);
        // ddof = 0: var = (4 + 1 + 0 + 9) / 4 = 3.5
        assert!((s.std[0] - 3.5f64.sqrt()).abs() < 1e-15);
        assert_eq!(s.std[1], 1.0);
        let mut z = x.clone();
        s.apply(&mut z);
        let col0: Vec<f64> = z.column(0).to_vec();
        assert!(col0.iter().sum::<f64>().abs() < 1e-12);
        assert!((col0.iter().map(|v| v * v).sum::<f64>() / 4.0 - 1.0).abs() < 1e-12);
        assert!(z.column(1).iter().all(|v| *v == 0.0));
    }

    #[test]
    fn targets_skip_unlabeled_rows_and_invert_back() {
        let y = array![[1.0, 10.0], [f64::NAN, f64::NAN], [3.0, 10.0], [8.0, 10.0]];
        assert!(Scaler::fit_targets(y.view(), TargetScale::None).is_none());
        let c = Scaler::fit_targets(y.view(), TargetScale::Center).unwrap();
        assert_eq!(c.mean, vec![4.0, 10.0]);
        assert_eq!(c.std, vec![1.0, 1.0]);
        let s = Scaler::fit_targets(y.view(), TargetScale::Standard).unwrap();
        // ddof = 0 over the labeled rows: var = (9 + 1 + 16) / 3
        assert!((s.std[0] - (26.0f64 / 3.0).sqrt()).abs() < 1e-15);
        assert_eq!(s.std[1], 1.0, "a constant output is only centred");
        let mut z = y.clone();
        s.apply(&mut z);
        assert!(z[[1, 0]].is_nan());
        s.invert(&mut z);
        for (a, b) in z.iter().zip(y.iter()).filter(|(_, b)| b.is_finite()) {
            assert!((a - b).abs() < 1e-14, "{a} {b}");
        }
    }

    #[test]
    fn none_is_identity() {
        let x = array![[1.0, -2.0], [3.0, 4.0]];
        let s = Scaler::fit(&x, Scale::None);
        assert_eq!(s, Scaler::identity(2));
        let mut z = x.clone();
        s.apply(&mut z);
        assert_eq!(z, x);
    }
}
