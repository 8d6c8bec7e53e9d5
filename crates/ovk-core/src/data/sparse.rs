//! A file's sparse feature columns (LIBSVM, sparse ARFF) kept in compressed sparse rows, and
//! the choice of keeping them so or writing them out as ordinary columns.
//!
//! Kept sparse, they reach the kernels as packed rows (`kernels::packed`): the standardised
//! features' geometry without ever forming the dense, mostly-zero matrix.

use ndarray::Array2;

use super::raw::{Cells, Numbers, RawColumn};
use super::{Scale, Scaler};
use crate::util::choice::choice_enum;
use crate::Result;

choice_enum! {
    /// Whether a sparse file's features stay sparse (`--sparse`).
    #[derive(Default)]
    pub enum SparseChoice: "sparse" {
        /// Sparse when the dense matrix would be large and mostly zeros (`AUTO_*`).
        #[default]
        Auto = "auto",
        /// Always sparse (features must be the file's whole sparse block).
        Yes = "yes",
        /// Always written out as dense columns, as a CSV of the same table would be.
        No = "no",
    }
}

impl SparseChoice {
    /// Whether the choice is the default (left out of saved configs).
    pub fn is_auto(&self) -> bool {
        *self == SparseChoice::Auto
    }
}

/// Under `--sparse auto`, a block stays sparse when its dense form would take more than this…
pub const AUTO_DENSE_BYTES: u64 = 64 << 20;
/// …and at most this fraction of its cells are non-zero.
pub const AUTO_DENSITY: f64 = 0.1;

/// Feature columns in compressed sparse rows: row i's non-zeros are `indices[indptr[i]..
/// indptr[i + 1]]` (ascending column positions in `names`) with `values` alongside.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SparseFeatures {
    /// One name per column (`f1`, `f2` … for LIBSVM).
    pub names: Vec<String>,
    /// Where each column stands among all the file's columns (ARFF: its attribute index),
    /// so that written out they take their places; `None`: after the ordinary columns.
    pub positions: Option<Vec<usize>>,
    pub indptr: Vec<usize>,
    pub indices: Vec<u32>,
    pub values: Vec<f64>,
}

impl SparseFeatures {
    /// Rows from per-row `(column, value)` lists, columns ascending within a row.
    pub fn from_rows(names: Vec<String>, rows: impl Iterator<Item = Vec<(u32, f64)>>) -> Self {
        let mut s = SparseFeatures {
            names,
            positions: None,
            indptr: vec![0],
            indices: Vec::new(),
            values: Vec::new(),
        };
        for r in rows {
            for (i, v) in r {
                if v != 0.0 {
                    s.indices.push(i);
                    s.values.push(v);
                }
            }
            s.indptr.push(s.indices.len());
        }
        s
    }

    pub fn n_rows(&self) -> usize {
        self.indptr.len() - 1
    }

    pub fn n_cols(&self) -> usize {
        self.names.len()
    }

    pub fn nnz(&self) -> usize {
        self.values.len()
    }

    /// Row i's column positions and values.
    pub fn row(&self, i: usize) -> (&[u32], &[f64]) {
        let r = self.indptr[i]..self.indptr[i + 1];
        (&self.indices[r.clone()], &self.values[r])
    }

    /// Fraction of cells that are non-zero.
    pub fn density(&self) -> f64 {
        let cells = self.n_rows() as f64 * self.n_cols() as f64;
        if cells > 0.0 {
            self.nnz() as f64 / cells
        } else {
            0.0
        }
    }

    /// Bytes of the dense matrix the block stands for.
    pub fn dense_bytes(&self) -> u64 {
        crate::kernels::dense_bytes(self.n_rows(), self.n_cols())
    }

    /// Whether `choice` keeps this block sparse.
    pub fn stays_sparse(&self, choice: SparseChoice) -> bool {
        match choice {
            SparseChoice::Yes => true,
            SparseChoice::No => false,
            SparseChoice::Auto => {
                self.dense_bytes() > AUTO_DENSE_BYTES && self.density() <= AUTO_DENSITY
            }
        }
    }

    /// The widest row's non-zero count over `rows`.
    pub fn width(&self, rows: &[usize]) -> usize {
        rows.iter()
            .map(|&i| self.indptr[i + 1] - self.indptr[i])
            .max()
            .unwrap_or(0)
    }

    /// Column means and population standard deviations over `rows`, as `Scaler::fit` computes
    /// them on the dense columns (the implicit zeros included; a constant column keeps std 1).
    pub fn scaler(&self, rows: &[usize], scale: Scale) -> Scaler {
        let d = self.n_cols();
        if scale == Scale::None {
            return Scaler::identity(d);
        }
        let n = rows.len().max(1) as f64;
        let mut mean = vec![0.0; d];
        for &i in rows {
            let (idx, val) = self.row(i);
            for (&j, &v) in idx.iter().zip(val) {
                mean[j as usize] += v;
            }
        }
        mean.iter_mut().for_each(|m| *m /= n);
        // Σ (v − μ)² over the stored values, plus μ² for each implicit zero.
        let mut ss = vec![0.0; d];
        let mut stored = vec![0usize; d];
        for &i in rows {
            let (idx, val) = self.row(i);
            for (&j, &v) in idx.iter().zip(val) {
                let j = j as usize;
                ss[j] += (v - mean[j]) * (v - mean[j]);
                stored[j] += 1;
            }
        }
        let std = (0..d)
            .map(|j| {
                let zeros = rows.len() - stored[j];
                let s = ((ss[j] + zeros as f64 * mean[j] * mean[j]) / n).sqrt();
                if s > 0.0 && s.is_finite() {
                    s
                } else {
                    1.0
                }
            })
            .collect();
        Scaler { mean, std }
    }

    /// The packed rows `rows` (`kernels::packed`), scaled by `scaler`, at least `width` wide.
    pub fn pack(&self, rows: &[usize], scaler: &Scaler, width: usize) -> Array2<f64> {
        crate::kernels::packed::pack(
            rows.iter().map(|&i| self.row(i)),
            width.max(self.width(rows)),
            &scaler.mean,
            &scaler.std,
        )
    }

    /// Every row packed (`pack`).
    pub fn pack_all(&self, scaler: &Scaler, width: usize) -> Array2<f64> {
        let rows: Vec<usize> = (0..self.n_rows()).collect();
        self.pack(&rows, scaler, width)
    }

    /// The largest magnitude stored in `rows`, with its row and column.
    pub fn largest(&self, rows: &[usize]) -> Option<(f64, usize, usize)> {
        let mut best: Option<(f64, usize, usize)> = None;
        for &i in rows {
            let (idx, val) = self.row(i);
            for (&j, &v) in idx.iter().zip(val) {
                if best.is_none_or(|b| v.abs() > b.0) {
                    best = Some((v.abs(), i, j as usize));
                }
            }
        }
        best
    }

    /// Per column, what a preview shows of it (`table::summarise` on the dense column).
    pub fn summaries(&self) -> Vec<super::ColumnSummary> {
        let d = self.n_cols();
        let (mut min, mut max) = (vec![f64::INFINITY; d], vec![f64::NEG_INFINITY; d]);
        let (mut sum, mut stored) = (vec![0.0; d], vec![0usize; d]);
        for (&j, &v) in self.indices.iter().zip(&self.values) {
            let j = j as usize;
            min[j] = min[j].min(v);
            max[j] = max[j].max(v);
            sum[j] += v;
            stored[j] += 1;
        }
        let n = self.n_rows();
        for j in 0..d {
            // A row without the column holds 0 there.
            if stored[j] < n {
                min[j] = min[j].min(0.0);
                max[j] = max[j].max(0.0);
            }
        }
        (0..d)
            .map(|j| super::ColumnSummary {
                name: self.names[j].clone(),
                dtype: "f64".into(),
                min: (n > 0).then_some(min[j]),
                max: (n > 0).then_some(max[j]),
                mean: (n > 0).then(|| sum[j] / n as f64),
                ..Default::default()
            })
            .collect()
    }

    /// Take the columns `cols` (block positions) out of the block, as ordinary columns; the
    /// others keep their order.
    pub fn take_columns(&mut self, cols: &[usize]) -> Vec<RawColumn> {
        let d = self.n_cols();
        let mut out_at = vec![None::<usize>; d];
        for (k, &c) in cols.iter().enumerate() {
            out_at[c] = Some(k);
        }
        let mut keep_at = vec![0u32; d];
        let mut kept = 0u32;
        for j in 0..d {
            if out_at[j].is_none() {
                keep_at[j] = kept;
                kept += 1;
            }
        }
        let n = self.n_rows();
        let mut taken = vec![vec![0.0; n]; cols.len()];
        let (mut indptr, mut indices, mut values) = (vec![0], Vec::new(), Vec::new());
        for (i, r) in self.indptr.windows(2).enumerate() {
            for k in r[0]..r[1] {
                let j = self.indices[k] as usize;
                match out_at[j] {
                    Some(t) => taken[t][i] = self.values[k],
                    None => {
                        indices.push(keep_at[j]);
                        values.push(self.values[k]);
                    }
                }
            }
            indptr.push(indices.len());
        }
        let names: Vec<String> = cols.iter().map(|&c| self.names[c].clone()).collect();
        let kept = |j: &usize| out_at[*j].is_none();
        self.names = (0..d)
            .filter(kept)
            .map(|j| std::mem::take(&mut self.names[j]))
            .collect();
        self.positions = self
            .positions
            .take()
            .map(|p| (0..d).filter(kept).map(|j| p[j]).collect());
        (self.indptr, self.indices, self.values) = (indptr, indices, values);
        names
            .into_iter()
            .zip(taken)
            .map(|(name, cells)| RawColumn {
                name,
                dtype: "f64".into(),
                cells: Cells::Numeric(Numbers::dense(cells)),
            })
            .collect()
    }

    /// The block as ordinary columns (what `--sparse no` and a new-rows file read), refused
    /// before allocating when it would not fit in memory.
    pub fn into_columns(self, path: &std::path::Path) -> Result<Vec<RawColumn>> {
        super::cells_fit::check_cells_fit(path, self.n_rows() as u64, self.n_cols() as u64)?;
        let n = self.n_rows();
        let mut cols = vec![vec![0.0; n]; self.n_cols()];
        for (i, r) in self.indptr.windows(2).enumerate() {
            for k in r[0]..r[1] {
                cols[self.indices[k] as usize][i] = self.values[k];
            }
        }
        Ok(self
            .names
            .into_iter()
            .zip(cols)
            .map(|(name, cells)| RawColumn {
                name,
                dtype: "f64".into(),
                cells: Cells::Numeric(Numbers::dense(cells)),
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block() -> SparseFeatures {
        SparseFeatures::from_rows(
            vec!["a".into(), "b".into(), "c".into()],
            vec![
                vec![(0, 1.0), (2, 4.0)],
                vec![(1, -2.0)],
                vec![(0, 3.0), (1, 0.0)],
            ]
            .into_iter(),
        )
    }

    #[test]
    fn moments_equal_the_dense_scalers() {
        let s = block();
        assert_eq!(s.nnz(), 4, "a stored zero is dropped");
        let cols = s.clone().into_columns(std::path::Path::new("t")).unwrap();
        let mut dense = Array2::zeros((3, 3));
        for (j, c) in cols.iter().enumerate() {
            let Cells::Numeric(v) = &c.cells else {
                panic!()
            };
            for (i, x) in v.values.iter().enumerate() {
                dense[[i, j]] = *x;
            }
        }
        let want = Scaler::fit(&dense, Scale::Standard);
        let got = s.scaler(&[0, 1, 2], Scale::Standard);
        for j in 0..3 {
            assert!((want.mean[j] - got.mean[j]).abs() < 1e-15);
            assert!((want.std[j] - got.std[j]).abs() < 1e-15);
        }
        let sub = s.scaler(&[1], Scale::Standard);
        assert_eq!(sub.std, vec![1.0; 3], "one row: every column is constant");
    }

    #[test]
    fn taken_columns_leave_the_others_in_order() {
        let mut s = block();
        s.positions = Some(vec![4, 7, 9]);
        let taken = s.take_columns(&[1]);
        assert_eq!(taken.len(), 1);
        assert_eq!(taken[0].name, "b");
        assert_eq!(
            taken[0].cells,
            Cells::Numeric(Numbers::dense(vec![0.0, -2.0, 0.0]))
        );
        assert_eq!(s.names, ["a", "c"]);
        assert_eq!(s.positions, Some(vec![4, 9]));
        assert_eq!(s.row(0), (&[0u32, 1][..], &[1.0, 4.0][..]));
        assert_eq!(s.row(1), (&[][..], &[][..]));
        assert_eq!(s.row(2), (&[0u32][..], &[3.0][..]));
    }

    #[test]
    fn auto_keeps_only_large_mostly_zero_blocks() {
        let s = block();
        assert!(!s.stays_sparse(SparseChoice::Auto));
        assert!(s.stays_sparse(SparseChoice::Yes));
        assert!(!s.stays_sparse(SparseChoice::No));
        assert_eq!(s.width(&[0, 1, 2]), 2);
        assert_eq!(s.largest(&[0, 1, 2]), Some((4.0, 0, 2)));
    }
}
