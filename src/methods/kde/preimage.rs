//! Prediction by pre-image: `f(x) = argmin_y l(y, y) − 2 score(x, y)` over a candidate set, or,
//! with a linear output kernel, the closed form `f(x) = Σᵢ yᵢ [W k_x]ᵢ` (the minimiser of
//! `‖y‖² − 2 yᵀ g(x)` over all of R^m).

use ndarray::{s, Array2, ArrayView2, Axis};

use super::score::ScoreOperator;
use crate::kernels::{cross_gram, Kernel};
use crate::linalg::{matmul, matmul_tn};
use crate::methods::Model;
use crate::Result;

/// Test rows scored per block (bounds the candidates × rows score matrix).
const ROWS_PER_BLOCK: usize = 512;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preimage {
    Candidates,
    ClosedForm,
}

impl Preimage {
    pub fn name(self) -> &'static str {
        match self {
            Preimage::Candidates => "candidates",
            Preimage::ClosedForm => "closed-form",
        }
    }
}

/// The fitted KDE: input kernel expansion into the output feature space, then a pre-image.
pub struct KdeModel {
    pub kernel: Kernel,
    pub x_train: Array2<f64>,
    pub y_train: Array2<f64>,
    pub op: ScoreOperator,
    pub preimage: Preimage,
    /// Candidate outputs (c×m), their kernel against the training outputs (c×n) and l(y, y).
    pub candidates: Array2<f64>,
    pub cand_gram: Array2<f64>,
    pub cand_self: Vec<f64>,
}

impl KdeModel {
    pub fn new(
        kernel: Kernel,
        x_train: Array2<f64>,
        y_train: Array2<f64>,
        output_kernel: Kernel,
        op: ScoreOperator,
        preimage: Preimage,
        candidates: Array2<f64>,
    ) -> Result<Self> {
        let (cand_gram, cand_self) = match preimage {
            Preimage::ClosedForm => (Array2::zeros((0, 0)), Vec::new()),
            Preimage::Candidates => {
                crate::kernels::check_fits_or(
                    crate::kernels::dense_bytes(candidates.nrows(), y_train.nrows()),
                    &format!(
                        "the candidate pre-image ({} candidates × {} training outputs)",
                        candidates.nrows(),
                        y_train.nrows()
                    ),
                    "use --output-kernel linear --preimage closed-form, fewer candidates, or \
                     fewer training points",
                )?;
                let g = cross_gram(&output_kernel, candidates.view(), y_train.view())?;
                let d = candidates
                    .rows()
                    .into_iter()
                    .map(|r| {
                        let v = r.to_vec();
                        output_kernel.eval(&v, &v)
                    })
                    .collect();
                (g, d)
            }
        };
        Ok(KdeModel {
            kernel,
            x_train,
            y_train,
            op,
            preimage,
            candidates,
            cand_gram,
            cand_self,
        })
    }

    /// `score(x, y)` for every candidate (rows) and input (columns).
    pub fn scores(&self, x: ArrayView2<f64>) -> Result<Array2<f64>> {
        let kx = cross_gram(&self.kernel, self.x_train.view(), x)?;
        Ok(matmul(
            self.cand_gram.view(),
            self.op.apply(kx.view()).view(),
        ))
    }
}

impl Model for KdeModel {
    fn predict(&self, x: ArrayView2<f64>) -> Result<Array2<f64>> {
        let m = self.y_train.ncols();
        let mut out = Array2::<f64>::zeros((x.nrows(), m));
        let mut start = 0;
        while start < x.nrows() {
            let end = (start + ROWS_PER_BLOCK).min(x.nrows());
            let xb = x.slice(s![start..end, ..]);
            match self.preimage {
                Preimage::ClosedForm => {
                    let kx = cross_gram(&self.kernel, self.x_train.view(), xb)?;
                    let coef = self.op.apply(kx.view());
                    out.slice_mut(s![start..end, ..])
                        .assign(&matmul_tn(coef.view(), self.y_train.view()));
                }
                Preimage::Candidates => {
                    let sc = self.scores(xb)?;
                    for (t, col) in sc.axis_iter(Axis(1)).enumerate() {
                        let best = col
                            .iter()
                            .zip(&self.cand_self)
                            .map(|(s, l)| l - 2.0 * s)
                            .enumerate()
                            .min_by(|a, b| a.1.total_cmp(&b.1))
                            .map(|(c, _)| c)
                            .unwrap_or(0);
                        out.row_mut(start + t).assign(&self.candidates.row(best));
                    }
                }
            }
            start = end;
        }
        Ok(out)
    }
}
