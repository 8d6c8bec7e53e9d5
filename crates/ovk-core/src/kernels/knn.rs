//! The k-nearest-neighbour graph over many points, kept sparse (N·k edges, never an N×N
//! matrix): blocked brute force through matrix products, `‖xᵢ‖² + ‖xⱼ‖² − 2 xᵢᵀxⱼ` one row
//! block at a time, the k smallest of each row kept by insertion into a sorted list, row blocks
//! in parallel. Measured on tmc2007 (N = 21 519, d = 500) in docs/performance.md.

use ndarray::{s, Array2, ArrayView2, Axis};
use rayon::prelude::*;

use super::graph::GraphWeights;
use crate::linalg::matmul_into;
use crate::{OvkError, Result};

/// Rows per block of the distance product: B×N distances per task.
pub(crate) const KNN_BLOCK: usize = 256;
/// Blocks searched between two progress reports (and cancellation checks).
const BLOCKS_PER_STEP: usize = 8;

/// A symmetric weighted graph in compressed sparse rows: row i's neighbours are
/// `indices[indptr[i]..indptr[i + 1]]` (ascending, no self loops) with `weights` alongside.
#[derive(Debug, Clone, PartialEq)]
pub struct SparseGraph {
    pub(crate) indptr: Vec<usize>,
    /// Column index of each edge, rows concatenated.
    pub indices: Vec<usize>,
    /// Weight wᵢⱼ of each edge, aligned with `indices`.
    pub weights: Vec<f64>,
}

impl SparseGraph {
    /// `nodes` nodes and no edge: the graph of a fit whose graph term is weighted 0.
    pub(crate) fn empty(nodes: usize) -> Self {
        SparseGraph {
            indptr: vec![0; nodes + 1],
            indices: Vec::new(),
            weights: Vec::new(),
        }
    }

    pub(crate) fn nodes(&self) -> usize {
        self.indptr.len() - 1
    }

    /// Stored entries: each undirected edge counts twice (once per end).
    pub fn edges(&self) -> usize {
        self.indices.len()
    }

    /// Row i as (neighbour, weight) pairs.
    pub fn row(&self, i: usize) -> impl Iterator<Item = (usize, f64)> + '_ {
        let r = self.indptr[i]..self.indptr[i + 1];
        self.indices[r.clone()]
            .iter()
            .copied()
            .zip(self.weights[r].iter().copied())
    }

    /// Weighted degrees `dᵢ = Σⱼ wᵢⱼ`.
    pub(crate) fn degrees(&self) -> Vec<f64> {
        (0..self.nodes())
            .map(|i| self.row(i).map(|e| e.1).sum())
            .collect()
    }

    /// The dense weight matrix (tests and small N only).
    pub fn to_dense(&self) -> Array2<f64> {
        let n = self.nodes();
        let mut w = Array2::zeros((n, n));
        for i in 0..n {
            for (j, v) in self.row(i) {
                w[[i, j]] = v;
            }
        }
        w
    }

    /// Bytes held, for memory estimates: `edges` stored entries (index + weight) and the row
    /// pointers.
    pub fn bytes(nodes: usize, edges: usize) -> u64 {
        (edges as u64) * 16 + (nodes as u64 + 1) * 8
    }
}

/// The k nearest rows of every row of `x` (Euclidean, itself excluded), ascending by distance
/// with ties broken by row order — the same choice as `knn_graph`. `progress(rows_done)` is
/// called between groups of blocks; its error (cancellation) stops the search.
pub(crate) fn nearest_neighbours(
    x: ArrayView2<f64>,
    k: usize,
    progress: &mut dyn FnMut(usize) -> Result<()>,
) -> Result<Vec<Vec<(f64, usize)>>> {
    if x.iter().any(|v| !v.is_finite()) {
        return Err(OvkError::input(
            "k-NN graph: the inputs contain NaN or infinite values",
        ));
    }
    let n = x.nrows();
    let k = k.min(n.saturating_sub(1));
    let packed = super::packed::is_packed(x);
    // With packed rows the block holds −½‖xᵢ − xⱼ‖², so zero norms give the distance back.
    let norms: Vec<f64> = if packed {
        vec![0.0; n]
    } else {
        x.rows().into_iter().map(|r| r.dot(&r)).collect()
    };
    let blocks: Vec<usize> = (0..n).step_by(KNN_BLOCK).collect();
    let mut out: Vec<Vec<(f64, usize)>> = Vec::with_capacity(n);
    // One B×N buffer per thread, allocated here and reused by every group. Allocated by the
    // worker threads (one per task), they were freed into those threads' malloc arenas and
    // stayed resident, `malloc_trim` or not: about 7 MiB through the rest of a vvmr fit at
    // N = 4000 (estimate ÷ peak 0.84–0.85).
    let per_task = BLOCKS_PER_STEP.div_ceil(rayon::current_num_threads().max(1));
    let mut buffers: Vec<Array2<f64>> = (0..BLOCKS_PER_STEP.div_ceil(per_task))
        .map(|_| Array2::<f64>::zeros((KNN_BLOCK.min(n), n)))
        .collect();
    let norms = &norms;
    for group in blocks.chunks(BLOCKS_PER_STEP) {
        let found: Vec<Vec<Vec<(f64, usize)>>> = group
            .par_chunks(per_task)
            .zip(buffers.par_iter_mut())
            .flat_map_iter(|(starts, buf)| {
                starts.iter().map(move |&start| {
                    let end = (start + KNN_BLOCK).min(n);
                    let mut g = buf.slice_mut(s![..end - start, ..]);
                    if packed {
                        // Sparse rows: ‖xᵢ‖² + ‖xⱼ‖² − 2 gᵢⱼ comes out as distances already.
                        let d2 = super::packed::cross_sq_dists(x.slice(s![start..end, ..]), x)
                            .expect("one matrix is packed alike");
                        g.zip_mut_with(&d2, |g, &d| *g = -0.5 * d);
                    } else {
                        matmul_into(&mut g, x.slice(s![start..end, ..]), x.t());
                        // B×N inner products
                    }
                    g.axis_iter(Axis(0))
                        .enumerate()
                        .map(|(b, row)| {
                            let i = start + b;
                            let mut best: Vec<(f64, usize)> = Vec::with_capacity(k + 1);
                            for (j, &gij) in row.iter().enumerate() {
                                if j == i {
                                    continue;
                                }
                                let d2 = (norms[i] + norms[j] - 2.0 * gij).max(0.0);
                                insert_smallest(&mut best, k, (d2, j));
                            }
                            best
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        out.extend(found.into_iter().flatten());
        progress(out.len())?;
    }
    Ok(out)
}

/// Keep `best` the k smallest (distance, index) pairs seen so far, sorted ascending.
fn insert_smallest(best: &mut Vec<(f64, usize)>, k: usize, e: (f64, usize)) {
    let less = |a: &(f64, usize), b: &(f64, usize)| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1));
    if k == 0 {
        return;
    }
    if best.len() == k {
        if less(&e, &best[k - 1]).is_ge() {
            return;
        }
        best.pop();
    }
    let at = best.partition_point(|b| less(b, &e).is_lt());
    best.insert(at, e);
}

/// The k-NN graph of `x`, symmetrised by OR (i ~ j when either is among the other's k
/// nearest), with binary or heat weights `exp(−‖xᵢ − xⱼ‖²/(2t²))`, t the mean edge length —
/// the sparse counterpart of `knn_graph`.
pub fn knn_sparse(
    x: ArrayView2<f64>,
    k: usize,
    weights: GraphWeights,
    progress: &mut dyn FnMut(usize) -> Result<()>,
) -> Result<SparseGraph> {
    if k == 0 {
        return Err(OvkError::input(
            "k-NN graph: the number of neighbours k must be at least 1",
        ));
    }
    let n = x.nrows();
    let packed = super::packed::is_packed(x);
    let nearest = nearest_neighbours(x, k, progress)?;
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, list) in nearest.iter().enumerate() {
        for &(_, j) in list {
            adj[i].push(j);
            adj[j].push(i);
        }
    }
    drop(nearest);
    let mut indptr = Vec::with_capacity(n + 1);
    let mut indices = Vec::new();
    indptr.push(0);
    for mut row in adj {
        row.sort_unstable();
        row.dedup();
        indices.extend(row);
        indptr.push(indices.len());
    }
    // Exact squared lengths, one per stored entry: symmetric by construction.
    let d2: Vec<f64> = (0..n)
        .into_par_iter()
        .flat_map_iter(|i| {
            let xi = x.row(i);
            indices[indptr[i]..indptr[i + 1]].iter().map(move |&j| {
                if packed {
                    return super::packed::sq_dist_of_rows(x.row(i), x.row(j));
                }
                xi.iter()
                    .zip(x.row(j))
                    .map(|(a, b)| (a - b) * (a - b))
                    .sum::<f64>()
            })
        })
        .collect();
    let w = match weights {
        GraphWeights::Binary => vec![1.0; d2.len()],
        GraphWeights::Heat => {
            // Each undirected edge once (j < i), as the dense graph averages them.
            let (mut sum, mut edges) = (0.0, 0usize);
            for i in 0..n {
                for e in indptr[i]..indptr[i + 1] {
                    if indices[e] < i {
                        sum += d2[e].sqrt();
                        edges += 1;
                    }
                }
            }
            let t = if edges > 0 { sum / edges as f64 } else { 0.0 };
            if t > 0.0 {
                d2.iter().map(|v| (-v / (2.0 * t * t)).exp()).collect()
            } else {
                vec![1.0; d2.len()]
            }
        }
    };
    Ok(SparseGraph {
        indptr,
        indices,
        weights: w,
    })
}
