//! Pivoted incomplete Cholesky of a positive semi-definite matrix given by its diagonal and a
//! column oracle: `A ≈ G Gᵀ` with G n×r, touching only r columns (Fine & Scheinberg, 2001).

use ndarray::{Array2, Axis};

/// Factor `A ≈ G Gᵀ` with at most `max_rank` columns, stopping early once the largest remaining
/// diagonal of the residual falls below `tol · trace(A)`. `column(i)` returns column i of A.
pub fn pivoted_cholesky(
    diag: &[f64],
    mut column: impl FnMut(usize) -> crate::Result<Vec<f64>>,
    max_rank: usize,
    tol: f64,
) -> crate::Result<Array2<f64>> {
    let n = diag.len();
    let r_max = max_rank.min(n);
    let mut d: Vec<f64> = diag.to_vec();
    let trace: f64 = d.iter().map(|v| v.max(0.0)).sum();
    let mut g = Array2::<f64>::zeros((n, r_max));
    let mut rank = 0;
    while rank < r_max {
        let (p, &dp) = d
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .unwrap_or((0, &0.0));
        if dp <= tol * trace || dp <= 0.0 {
            break;
        }
        let a_p = column(p)?;
        let root = dp.sqrt();
        let mut col = Vec::with_capacity(n);
        for i in 0..n {
            let mut v = a_p[i];
            for c in 0..rank {
                v -= g[[i, c]] * g[[p, c]];
            }
            col.push(v / root);
        }
        for i in 0..n {
            g[[i, rank]] = col[i];
            d[i] -= col[i] * col[i];
        }
        d[p] = 0.0;
        rank += 1;
    }
    Ok(g.select(Axis(1), &(0..rank).collect::<Vec<_>>()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn full_rank_reconstructs() {
        let a = array![[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]];
        let diag: Vec<f64> = a.diag().to_vec();
        let g = pivoted_cholesky(&diag, |i| Ok(a.column(i).to_vec()), 3, 0.0).unwrap();
        let rec = g.dot(&g.t());
        assert!((&rec - &a).iter().all(|d| d.abs() < 1e-12));
    }

    #[test]
    fn rank_one_stops_early() {
        let v = array![1.0, 2.0, 3.0];
        let a = Array2::from_shape_fn((3, 3), |(i, j)| v[i] * v[j]);
        let diag: Vec<f64> = a.diag().to_vec();
        let g = pivoted_cholesky(&diag, |i| Ok(a.column(i).to_vec()), 3, 1e-12).unwrap();
        assert_eq!(g.ncols(), 1);
    }
}
