//! Gram and cross-Gram matrices, computed in row blocks on rayon's pool: each block is one
//! matrix product (inner products) followed by the kernel's element-wise map.

use ndarray::{s, Array1, Array2, ArrayView2, Axis};
use rayon::prelude::*;

use super::memory::{check_fits, dense_bytes};
use super::spec::Kernel;
use crate::linalg::matmul;
use crate::{OvkError, Result};

/// Rows per parallel block: large enough for an efficient product, small enough to balance.
const BLOCK_ROWS: usize = 256;

/// Rows of the inner-product blocks a Gram matrix against `n` columns holds in flight beside
/// its result, for memory estimates: one 256-row block per thread, and one more measured
/// (`ovk bench scaling --methods krr`: 23 MiB beyond K at n = 4000 on 2 threads).
pub(crate) fn gram_block_rows() -> usize {
    BLOCK_ROWS * (rayon::current_num_threads() + 1)
}

/// Relative size below which an expanded squared distance is recomputed exactly.
const NEAR: f64 = 1e-6;

/// K[i, j] = k(xᵢ, xⱼ), exactly symmetric.
pub fn gram(kernel: &Kernel, x: ArrayView2<f64>) -> Result<Array2<f64>> {
    let mut k = cross_gram(kernel, x, x)?;
    let n = k.nrows();
    // Blocked products round (i, j) and (j, i) differently; make K exactly symmetric.
    for i in 0..n {
        for j in 0..i {
            let v = k[[i, j]];
            k[[j, i]] = v;
        }
    }
    if kernel.is_distance_based() {
        k.diag_mut().fill(kernel.of_inner_or_dist(0.0));
    }
    if *kernel == Kernel::Cosine {
        // exactly 1 (0 for a zero row), not 1 ± rounding
        let d = super::lowrank::kernel_diagonal(kernel, x);
        k.diag_mut().assign(&ndarray::Array1::from(d));
    }
    Ok(k)
}

/// K[i, j] = k(xᵢ, zⱼ) for rows of `x` (e.g. test points) against rows of `z` (training points).
pub fn cross_gram(kernel: &Kernel, x: ArrayView2<f64>, z: ArrayView2<f64>) -> Result<Array2<f64>> {
    if *kernel == Kernel::Precomputed {
        check_fits(
            dense_bytes(x.nrows(), z.nrows()),
            &format!("the {}×{} Gram matrix", x.nrows(), z.nrows()),
        )?;
        return super::precomputed::cross_lookup(x, z);
    }
    if super::packed::is_packed(x) || super::packed::is_packed(z) {
        check_fits(
            dense_bytes(x.nrows(), z.nrows()),
            &format!("the {}×{} Gram matrix", x.nrows(), z.nrows()),
        )?;
        return super::packed::cross_gram(kernel, x, z);
    }
    if x.ncols() != z.ncols() {
        return Err(OvkError::internal(format!(
            "cross-Gram of {}-feature and {}-feature points",
            x.ncols(),
            z.ncols()
        )));
    }
    check_fits(
        dense_bytes(x.nrows(), z.nrows()),
        &format!("the {}×{} Gram matrix", x.nrows(), z.nrows()),
    )?;
    let (n, m) = (x.nrows(), z.nrows());
    let mut out = Array2::<f64>::zeros((n, m));
    let zn: Array1<f64> = z.rows().into_iter().map(|r| r.dot(&r)).collect();
    let zt = z.t();
    let blocks: Vec<_> = out.axis_chunks_iter_mut(Axis(0), BLOCK_ROWS).collect();
    blocks
        .into_par_iter()
        .enumerate()
        .for_each(|(b, mut block)| {
            let start = b * BLOCK_ROWS;
            let xb = x.slice(s![start..start + block.nrows(), ..]);
            let inner = matmul(xb, zt);
            for (i, (mut orow, irow)) in block.rows_mut().into_iter().zip(inner.rows()).enumerate()
            {
                if kernel.is_distance_based() {
                    let xi = xb.row(i);
                    let xn = xi.dot(&xi);
                    for j in 0..m {
                        let mut d2 = xn + zn[j] - 2.0 * irow[j];
                        // ‖x‖² + ‖z‖² − 2xᵀz cancels catastrophically for near-equal points,
                        // and the Laplacian's √ magnifies that: recompute those pairs directly.
                        if d2 < NEAR * (xn + zn[j]) {
                            d2 = xi
                                .iter()
                                .zip(z.row(j))
                                .map(|(a, b)| (a - b) * (a - b))
                                .sum();
                        }
                        orow[j] = kernel.of_inner_or_dist(d2);
                    }
                } else if *kernel == Kernel::Cosine {
                    let xi = xb.row(i);
                    let xn = xi.dot(&xi);
                    for j in 0..m {
                        orow[j] = super::spec::cosine(irow[j], xn, zn[j]);
                    }
                } else {
                    for j in 0..m {
                        orow[j] = kernel.of_inner_or_dist(irow[j]);
                    }
                }
            }
        });
    Ok(out)
}

/// Squared Euclidean distances between all rows of `x` (used by the median heuristic and kNN).
pub(crate) fn sq_dists(x: ArrayView2<f64>) -> Array2<f64> {
    if super::packed::is_packed(x) {
        return super::packed::sq_dists(x);
    }
    let n = x.nrows();
    let g = matmul(x, x.t());
    let d = g.diag().to_owned();
    Array2::from_shape_fn((n, n), |(i, j)| {
        if i == j {
            0.0
        } else {
            (d[i] + d[j] - 2.0 * g[[i, j]]).max(0.0)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    fn brute(kernel: &Kernel, x: ArrayView2<f64>, z: ArrayView2<f64>) -> Array2<f64> {
        Array2::from_shape_fn((x.nrows(), z.nrows()), |(i, j)| {
            kernel.eval(x.row(i).as_slice().unwrap(), z.row(j).as_slice().unwrap())
        })
    }

    #[test]
    fn gram_matches_pointwise_for_every_kernel() {
        let x = Array2::from_shape_fn((300, 3), |(i, j)| ((i * 7 + j * 3) % 11) as f64 / 5.0 - 1.0);
        let z = array![[0.1, 0.2, 0.3], [1.0, -1.0, 0.5]];
        for k in [
            Kernel::Linear,
            Kernel::Gaussian { sigma: 0.7 },
            Kernel::Polynomial {
                degree: 3,
                coef0: 1.0,
            },
            Kernel::Laplacian { sigma: 1.3 },
            Kernel::Cosine,
        ] {
            let g = gram(&k, x.view()).unwrap();
            let b = brute(&k, x.view(), x.view());
            assert!((&g - &b).iter().all(|d| d.abs() < 1e-10), "{k:?}");
            assert_eq!(g, g.t());
            let c = cross_gram(&k, z.view(), x.view()).unwrap();
            let cb = brute(&k, z.view(), x.view());
            assert!((&c - &cb).iter().all(|d| d.abs() < 1e-10), "{k:?}");
        }
    }

    /// Degree 3 against its explicit feature map φ(x)_{ijk} = x̃ᵢ x̃ⱼ x̃ₖ with x̃ = (x, √c): the
    /// kernel is ⟨φ(x), φ(z)⟩ (kde-ocr's letter-image kernel).
    #[test]
    fn cubic_polynomial_is_the_inner_product_of_its_feature_map() {
        let x = Array2::from_shape_fn((6, 4), |(i, j)| ((i * 5 + j * 3) % 7) as f64 / 3.0 - 1.0);
        let c: f64 = 0.4;
        let k = Kernel::Polynomial {
            degree: 3,
            coef0: c,
        };
        let phi = |r: usize| -> Vec<f64> {
            let mut t: Vec<f64> = x.row(r).to_vec();
            t.push(c.sqrt());
            let mut out = Vec::new();
            for a in &t {
                for b in &t {
                    for d in &t {
                        out.push(a * b * d);
                    }
                }
            }
            out
        };
        let g = gram(&k, x.view()).unwrap();
        for i in 0..6 {
            for j in 0..6 {
                let f: f64 = phi(i).iter().zip(phi(j)).map(|(a, b)| a * b).sum();
                assert!((g[[i, j]] - f).abs() < 1e-12 * f.abs().max(1.0), "{i} {j}");
            }
        }
    }
}
