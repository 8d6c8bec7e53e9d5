//! Neighbourhood graphs and their Laplacians, for manifold regularisation (docs/methods.md §4):
//! a k-nearest-neighbour graph symmetrised by OR, binary or heat-kernel weights, the
//! normalised or unnormalised Laplacian, its powers, and the pseudo-inverse of a PSD matrix;
//! dense for small N, and as a sparse operator (`SparseLaplacian`) for the low-rank route.

use ndarray::{Array1, Array2, ArrayView2, Axis};
use rayon::prelude::*;

use super::gram::sq_dists;
use super::knn::SparseGraph;
use crate::linalg::{eigh, matmul};
use crate::util::choice::choice_enum;
use crate::{OvkError, Result};

choice_enum! {
    /// Edge weights of a k-NN graph.
    pub enum GraphWeights: "graph_weights" {
        /// `exp(−‖xᵢ − xⱼ‖² / (2t²))`, t = the mean length of the graph's edges (a scale-free
        /// default; 1 on every edge when all edges have length 0).
        Heat = "heat",
        /// 1 on every edge.
        Binary = "binary",
    }
}

choice_enum! {
    /// Which graph Laplacian.
    pub enum LaplacianKind: "laplacian" {
        /// `I − D^{-1/2} W D^{-1/2}`; an isolated node gets a zero row and column (Chung's
        /// convention: nothing to be smooth with, so no penalty).
        Normalized = "normalized",
        /// `D − W`.
        Unnormalized = "unnormalized",
    }
}

/// k-NN graph over the rows of `x` (Euclidean), symmetrised by OR: i ~ j when j is among the
/// k nearest of i or i among the k nearest of j. `k` is capped at (rows − 1); ties are broken
/// by row order so the graph is deterministic.
pub fn knn_graph(x: ArrayView2<f64>, k: usize, weights: GraphWeights) -> Result<Array2<f64>> {
    if x.iter().any(|v| !v.is_finite()) {
        return Err(OvkError::input(
            "k-NN graph: the inputs contain NaN or infinite values",
        ));
    }
    knn_graph_from_sq_dists(&sq_dists(x), k, weights)
}

/// As [`knn_graph`], from a matrix of squared distances.
pub(crate) fn knn_graph_from_sq_dists(
    d2: &Array2<f64>,
    k: usize,
    weights: GraphWeights,
) -> Result<Array2<f64>> {
    let n = d2.nrows();
    if k == 0 {
        return Err(OvkError::input(
            "k-NN graph: the number of neighbours k must be at least 1",
        ));
    }
    let k = k.min(n.saturating_sub(1));
    let mut adj = Array2::<bool>::from_elem((n, n), false);
    let mut order: Vec<usize> = Vec::with_capacity(n);
    for i in 0..n {
        order.clear();
        order.extend((0..n).filter(|&j| j != i));
        if k < order.len() {
            order.select_nth_unstable_by(k - 1, |&a, &b| {
                d2[[i, a]].total_cmp(&d2[[i, b]]).then(a.cmp(&b))
            });
        }
        for &j in &order[..k] {
            adj[[i, j]] = true;
            adj[[j, i]] = true;
        }
    }
    let mut w = adj.mapv(|e| if e { 1.0 } else { 0.0 });
    if weights == GraphWeights::Heat {
        let (mut sum, mut edges) = (0.0, 0usize);
        for i in 0..n {
            for j in 0..i {
                if adj[[i, j]] {
                    sum += d2[[i, j]].max(0.0).sqrt();
                    edges += 1;
                }
            }
        }
        let t = if edges > 0 { sum / edges as f64 } else { 0.0 };
        if t > 0.0 {
            for ((i, j), v) in w.indexed_iter_mut() {
                if adj[[i, j]] {
                    *v = (-d2[[i, j]].max(0.0) / (2.0 * t * t)).exp();
                }
            }
        }
    }
    Ok(w)
}

/// The graph Laplacian of a symmetric nonnegative weight matrix.
pub fn laplacian(w: &Array2<f64>, kind: LaplacianKind) -> Array2<f64> {
    let n = w.nrows();
    let d: Array1<f64> = w.sum_axis(ndarray::Axis(1));
    match kind {
        LaplacianKind::Unnormalized => {
            let mut l = -w;
            for i in 0..n {
                l[[i, i]] += d[i];
            }
            l
        }
        LaplacianKind::Normalized => {
            let s = d.mapv(|v| if v > 0.0 { 1.0 / v.sqrt() } else { 0.0 });
            let mut l = Array2::from_shape_fn((n, n), |(i, j)| -s[i] * w[[i, j]] * s[j]);
            for i in 0..n {
                l[[i, i]] += if d[i] > 0.0 { 1.0 } else { 0.0 };
            }
            l
        }
    }
}

/// `Lᵖ` for p ≥ 1 by repeated squaring, exactly symmetrised.
pub fn laplacian_power(l: &Array2<f64>, p: usize) -> Array2<f64> {
    let mut result: Option<Array2<f64>> = None;
    let mut base = l.clone();
    let mut e = p.max(1);
    loop {
        if e & 1 == 1 {
            result = Some(match result {
                None => base.clone(),
                Some(r) => matmul(r.view(), base.view()),
            });
        }
        e >>= 1;
        if e == 0 {
            break;
        }
        base = matmul(base.view(), base.view());
    }
    let r = result.unwrap_or(base);
    (&r + &r.t()) * 0.5
}

/// Rows per parallel task when applying a sparse Laplacian.
const APPLY_ROWS: usize = 1024;

/// The Laplacian of a sparse graph as an operator, `L v = a ⊙ v − C v` with C the scaled
/// weights (`D − W`: a = d, C = W; normalised: `a = [d > 0]`, `C = D^{-1/2} W D^{-1/2}`) — the
/// same matrix as `laplacian` on the dense weights, never formed.
#[derive(Debug, Clone)]
pub struct SparseLaplacian {
    graph: SparseGraph,
    diag: Vec<f64>,
    /// Off-diagonal magnitudes, aligned with `graph.indices`.
    off: Vec<f64>,
    /// `Lᵖ` is what `apply` applies.
    pub power: usize,
}

impl SparseLaplacian {
    /// The Laplacian of `kind` of `graph`, raised to `power` when applied.
    pub fn new(graph: SparseGraph, kind: LaplacianKind, power: usize) -> Self {
        let d = graph.degrees();
        let (diag, off) = match kind {
            LaplacianKind::Unnormalized => (d, graph.weights.clone()),
            LaplacianKind::Normalized => {
                let s: Vec<f64> = d
                    .iter()
                    .map(|&v| if v > 0.0 { 1.0 / v.sqrt() } else { 0.0 })
                    .collect();
                let mut off = Vec::with_capacity(graph.edges());
                for i in 0..graph.nodes() {
                    off.extend(graph.row(i).map(|(j, w)| s[i] * w * s[j]));
                }
                (
                    d.iter().map(|&v| if v > 0.0 { 1.0 } else { 0.0 }).collect(),
                    off,
                )
            }
        };
        SparseLaplacian {
            graph,
            diag,
            off,
            power: power.max(1),
        }
    }

    pub(crate) fn nodes(&self) -> usize {
        self.graph.nodes()
    }

    /// The graph it is the Laplacian of.
    pub fn graph(&self) -> &SparseGraph {
        &self.graph
    }

    /// `L v` (one power) for the columns of v (N×c), rows in parallel.
    pub(crate) fn apply_once(&self, v: ArrayView2<f64>) -> Array2<f64> {
        let mut out = Array2::<f64>::zeros(v.dim());
        let chunks: Vec<_> = out.axis_chunks_iter_mut(Axis(0), APPLY_ROWS).collect();
        chunks
            .into_par_iter()
            .enumerate()
            .for_each(|(c, mut block)| {
                self.rows_into(v, c * APPLY_ROWS, &mut block);
            });
        out
    }

    /// Rows `start..end` of `L v` (one power), for blocked products that never hold `L v`
    /// whole.
    pub(crate) fn apply_once_rows(
        &self,
        v: ArrayView2<f64>,
        start: usize,
        end: usize,
    ) -> Array2<f64> {
        let mut out = Array2::<f64>::zeros((end - start, v.ncols()));
        self.rows_into(v, start, &mut out.view_mut());
        out
    }

    fn rows_into(&self, v: ArrayView2<f64>, start: usize, block: &mut ndarray::ArrayViewMut2<f64>) {
        for (b, mut row) in block.rows_mut().into_iter().enumerate() {
            let i = start + b;
            row.scaled_add(self.diag[i], &v.row(i));
            for e in self.graph.indptr[i]..self.graph.indptr[i + 1] {
                row.scaled_add(-self.off[e], &v.row(self.graph.indices[e]));
            }
        }
    }

    /// `Lᵖ v`: p sparse products, never the dense power.
    pub fn apply(&self, v: ArrayView2<f64>) -> Array2<f64> {
        let mut out = self.apply_once(v);
        for _ in 1..self.power {
            out = self.apply_once(out.view());
        }
        out
    }

    /// `Lᵖ` as a dense matrix (tests and small N only).
    pub fn to_dense(&self) -> Array2<f64> {
        self.apply(Array2::<f64>::eye(self.nodes()).view())
    }
}

/// Pseudo-inverse of a symmetric positive semidefinite matrix: eigenvalues below
/// `rel_tol · λ_max` count as zero (a graph Laplacian's null space is exactly singular, but
/// its computed eigenvalues are only ≈ 0).
pub fn pinv_psd(a: &Array2<f64>, rel_tol: f64) -> Result<Array2<f64>> {
    let n = a.nrows();
    if n == 0 {
        return Ok(Array2::zeros((0, 0)));
    }
    let e = eigh(a.view())?;
    let top = e.values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let cut = rel_tol * top;
    let inv = e
        .values
        .mapv(|v| if v > cut && v > 0.0 { 1.0 / v } else { 0.0 });
    let scaled = &e.vectors * &inv.view().insert_axis(ndarray::Axis(0));
    let p = matmul(scaled.view(), e.vectors.t());
    Ok((&p + &p.t()) * 0.5)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn knn_or_symmetrised() {
        // Points on a line at 0, 1, 3, 10: with k = 1, 0→1, 1→0, 3→1, 10→3.
        let x = array![[0.0], [1.0], [3.0], [10.0]];
        let w = knn_graph(x.view(), 1, GraphWeights::Binary).unwrap();
        let want = array![
            [0.0, 1.0, 0.0, 0.0],
            [1.0, 0.0, 1.0, 0.0],
            [0.0, 1.0, 0.0, 1.0],
            [0.0, 0.0, 1.0, 0.0]
        ];
        assert_eq!(w, want);
    }

    #[test]
    fn normalized_laplacian_isolated_node_is_zero() {
        let w = array![[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]];
        let l = laplacian(&w, LaplacianKind::Normalized);
        assert_eq!(l.row(2).sum(), 0.0);
        assert_eq!(l[[0, 0]], 1.0);
        assert_eq!(l[[0, 1]], -1.0);
    }

    #[test]
    fn power_matches_product() {
        let w = array![[0.0, 1.0, 0.5], [1.0, 0.0, 0.2], [0.5, 0.2, 0.0]];
        let l = laplacian(&w, LaplacianKind::Unnormalized);
        let l3 = laplacian_power(&l, 3);
        let d = &l3 - &l.dot(&l).dot(&l);
        assert!(d.iter().all(|v| v.abs() < 1e-12));
    }
}
