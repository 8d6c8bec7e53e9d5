//! The precomputed kernel: a Gram matrix the user gives instead of a kernel function.
//!
//! Every other part of ovk evaluates a kernel on rows of an input matrix, so the Gram enters
//! as such a matrix: row i of the inputs is `[j | K[i, ·]]` — its own column index j in K's
//! column order, then its row of K — and `k(a, b) = a[1 + b[0]]`. Gram blocks, Nyström
//! columns, landmarks, saved models and predictions then need nothing of their own. The column
//! order puts the training rows first (`layout`), so a model's reference rows carry the index
//! of their column in a new-rows Gram (n_new × n_train) at prediction.

use std::path::PathBuf;

use ndarray::{Array2, ArrayView2};
use serde::{Deserialize, Serialize};

use super::spec::KernelName;
use crate::linalg::{cholesky, eigh};
use crate::{OvkError, Result};

/// One Gram file of a precomputed kernel, as given and as read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GramFile {
    /// The view it belongs to (multi-view methods); `None` for the single Gram.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view: Option<String>,
    /// The `.npy` file, as the user gave it.
    pub path: PathBuf,
    /// Hex SHA-256 of the file's bytes when the run read it (a replay refuses another file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

/// Relative asymmetry `max|K − Kᵀ| / max|K|` above which a Gram is refused.
pub(crate) const SYMMETRY_TOL: f64 = 1e-8;

/// Jitter of the PSD check, relative to the largest diagonal entry: `K + τI` must factor.
pub(crate) const PSD_JITTER: f64 = 1e-8;

/// Up to this many rows the PSD warning names K's smallest eigenvalue (a full eigh); beyond,
/// only the jittered Cholesky runs (its cost at n = 3000 is in docs/kernels.md).
pub(crate) const PSD_EIGH_MAX: usize = 1500;

/// A kernel name and its Gram files agree: files only with `precomputed`, and at least one.
pub(crate) fn check_gram_files(name: KernelName, files: &[GramFile]) -> Result<()> {
    match (name == KernelName::Precomputed, files.is_empty()) {
        (true, true) => Err(OvkError::input(
            "--kernel precomputed needs its Gram matrix: --gram K.npy (n × n over the table's \
             rows), or --gram-view NAME=FILE per view for a multi-view method",
        )),
        (false, false) => Err(OvkError::input(format!(
            "--gram and --gram-view go with --kernel precomputed, not --kernel {name}"
        ))),
        _ => {
            let single = files.iter().filter(|f| f.view.is_none()).count();
            if single > 0 && files.len() > single {
                return Err(OvkError::input(
                    "give either --gram (one Gram) or --gram-view NAME=FILE per view, not both",
                ));
            }
            if single > 1 {
                return Err(OvkError::input("--gram is given more than once"));
            }
            Ok(())
        }
    }
}

/// `k(a, b) = a[1 + b[0]]`: a's row of K at b's column index.
#[inline]
pub(crate) fn lookup(a: &[f64], b: &[f64]) -> f64 {
    a[1 + b[0] as usize]
}

/// `K[i, j] = x_i[1 + z_j[0]]`, refusing a column index outside x's rows of K.
pub(crate) fn cross_lookup(x: ArrayView2<f64>, z: ArrayView2<f64>) -> Result<Array2<f64>> {
    let width = x.ncols().saturating_sub(1);
    let cols: Vec<usize> = z.column(0).iter().map(|&v| v as usize).collect();
    if let Some(&c) = cols.iter().find(|&&c| c >= width) {
        return Err(OvkError::internal(format!(
            "precomputed kernel: column {c} of a Gram with {width} columns"
        )));
    }
    Ok(Array2::from_shape_fn((x.nrows(), z.nrows()), |(i, j)| {
        x[[i, 1 + cols[j]]]
    }))
}

/// The inputs of the rows `rows` of K (n × n): `[j | K[row, order]]` per row, where `order`
/// lists K's rows in the column order the inputs use and j is the row's place in `order`.
pub fn layout(k: ArrayView2<f64>, rows: &[usize], order: &[usize]) -> Array2<f64> {
    let mut at = vec![usize::MAX; k.nrows()];
    for (j, &o) in order.iter().enumerate() {
        at[o] = j;
    }
    let place = |r: usize| at[r];
    let mut x = Array2::<f64>::zeros((rows.len(), 1 + order.len()));
    for (i, &r) in rows.iter().enumerate() {
        x[[i, 0]] = place(r) as f64;
        for (j, &c) in order.iter().enumerate() {
            x[[i, 1 + j]] = k[[r, c]];
        }
    }
    x
}

/// `[n_ref + i | K_new[i, ·] | 0 …]` for a new-rows Gram (n_new × n_ref), `width` columns wide
/// as the training inputs were (only the first n_ref entries of K's row are ever read).
pub(crate) fn new_rows(k_new: ArrayView2<f64>, width: usize) -> Array2<f64> {
    let n_ref = k_new.ncols();
    let mut x = Array2::<f64>::zeros((k_new.nrows(), width.max(1 + n_ref)));
    for (i, row) in k_new.rows().into_iter().enumerate() {
        x[[i, 0]] = (n_ref + i) as f64;
        x.row_mut(i)
            .slice_mut(ndarray::s![1..1 + n_ref])
            .assign(&row);
    }
    x
}

/// What is wrong with a Gram as a kernel matrix over `n` rows, if anything: not square, the
/// wrong size, a non-finite entry, or asymmetric beyond `SYMMETRY_TOL`.
pub(crate) fn gram_problem(k: ArrayView2<f64>, n: usize) -> Option<String> {
    let (r, c) = k.dim();
    if r != c {
        return Some(format!("is {r} × {c}, not square"));
    }
    if r != n {
        return Some(format!(
            "is {r} × {r} but the table has {n} rows (K must be the kernel between all of them, \
             in the table's row order)"
        ));
    }
    if let Some(((i, j), v)) = k.indexed_iter().find(|(_, v)| !v.is_finite()) {
        return Some(format!(
            "holds {v} at [{i}, {j}]; a Gram matrix must be finite"
        ));
    }
    let scale = k
        .iter()
        .fold(0.0f64, |a, v| a.max(v.abs()))
        .max(f64::MIN_POSITIVE);
    let (mut worst, mut at) = (0.0f64, (0, 0));
    for i in 0..r {
        for j in 0..i {
            let d = (k[[i, j]] - k[[j, i]]).abs();
            if d > worst {
                (worst, at) = (d, (i, j));
            }
        }
    }
    if worst > SYMMETRY_TOL * scale {
        return Some(format!(
            "is not symmetric: |K[{0}, {1}] − K[{1}, {0}]| = {worst:.3e}, {2:.1e} of its largest \
             entry (tolerance {SYMMETRY_TOL:e})",
            at.0,
            at.1,
            worst / scale
        ));
    }
    None
}

/// A warning when K is clearly not positive semi-definite: `K + τI` (τ = `PSD_JITTER` · the
/// largest diagonal entry) has no Cholesky factor. It names the smallest eigenvalue up to
/// `PSD_EIGH_MAX` rows.
pub(crate) fn psd_warning(k: ArrayView2<f64>) -> Result<Option<String>> {
    let n = k.nrows();
    let top = k.diag().iter().fold(0.0f64, |a, v| a.max(v.abs()));
    let tau = PSD_JITTER * top.max(f64::MIN_POSITIVE);
    let mut shifted = k.to_owned();
    shifted.diag_mut().mapv_inplace(|v| v + tau);
    if cholesky(shifted.view()).is_ok() {
        return Ok(None);
    }
    drop(shifted);
    let figure = if n <= PSD_EIGH_MAX {
        let smallest = eigh(k)?
            .values
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
        format!("its smallest eigenvalue is {smallest:.3e}")
    } else {
        format!(
            "its smallest eigenvalue is below −{tau:.1e} (not computed above {PSD_EIGH_MAX} rows)"
        )
    };
    Ok(Some(format!(
        "is not positive semi-definite: {figure} (largest diagonal entry {top:.3e}); the fit \
         clamps negative eigenvalues to 0 on the exact route"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn the_layout_looks_up_k_by_column_index() {
        let k = array![[4.0, 1.0, 2.0], [1.0, 5.0, 3.0], [2.0, 3.0, 6.0]];
        let order = [2, 0, 1];
        let x = layout(k.view(), &[0, 2], &order);
        let z = layout(k.view(), &[1, 2], &order);
        let c = cross_lookup(x.view(), z.view()).unwrap();
        assert_eq!(c, array![[1.0, 2.0], [3.0, 6.0]]);
        assert!(gram_problem(k.view(), 3).is_none());
        assert!(gram_problem(k.view(), 4)
            .unwrap()
            .contains("table has 4 rows"));
        let neg = array![[1.0, 2.0], [2.0, 1.0]];
        assert!(psd_warning(neg.view())
            .unwrap()
            .unwrap()
            .contains("-1.000e0"));
        assert!(psd_warning(k.view()).unwrap().is_none());
    }
}
