//! Prediction by pre-image: `f(x) = argmin_y l(y, y) − 2 score(x, y)` over a candidate set, or,
//! with a linear output kernel, the closed form `f(x) = Σᵢ yᵢ [W k_x]ᵢ` (the minimiser of
//! `‖y‖² − 2 yᵀ g(x)` over all of R^m). On an input factor the model keeps the landmarks and
//! the folded operator, not the training inputs.

use ndarray::{s, Array2, ArrayView2, Axis};

use super::score::ScoreOperator;
use crate::kernels::{cross_gram, FeatureMap, Kernel};
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

/// How a test input reaches the score.
pub enum Scoring {
    /// `score = L_cand W k_x` with `k_x = K(X, x)` (the exact solve).
    Kernel {
        kernel: Kernel,
        x_train: Array2<f64>,
        op: ScoreOperator,
        /// The candidates' output kernel against the training outputs (c×n).
        cand_gram: Array2<f64>,
    },
    /// On a factor `K ≈ ZZᵀ` the model sees x only through `k_x ≈ Z z(x)`, so
    /// `score = L_cand W Z z(x)` with `L_cand W Z` folded once into `op` (c×r factored; for the
    /// closed form `Yᵀ W Z`, m×r).
    Features { map: FeatureMap, op: ScoreOperator },
}

/// The fitted KDE: input kernel expansion into the output feature space, then a pre-image.
pub struct KdeModel {
    pub scoring: Scoring,
    pub y_train: Array2<f64>,
    pub preimage: Preimage,
    /// Candidate outputs (c×m) and l(y, y) for each.
    pub candidates: Array2<f64>,
    pub cand_self: Vec<f64>,
}

/// `l(y, y)` for each row.
fn self_kernel(output_kernel: &Kernel, y: ArrayView2<f64>) -> Vec<f64> {
    y.rows()
        .into_iter()
        .map(|r| {
            let v = r.to_vec();
            output_kernel.eval(&v, &v)
        })
        .collect()
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
            Preimage::Candidates => (
                cross_gram(&output_kernel, candidates.view(), y_train.view())?,
                self_kernel(&output_kernel, candidates.view()),
            ),
        };
        Ok(KdeModel {
            scoring: Scoring::Kernel {
                kernel,
                x_train,
                op,
                cand_gram,
            },
            y_train,
            preimage,
            candidates,
            cand_self,
        })
    }

    /// The model on an input factor `Z` (n×r) with feature map `map`: `W Z = c0 Z + left
    /// (right Z)` is kept factored as `[left | Z] [right Z; c0 I]`, and its output side is
    /// multiplied out once — by the candidates' kernel rows (in blocks, never c×n whole) or,
    /// for the closed form, by Yᵀ.
    #[allow(clippy::too_many_arguments)]
    pub fn on_features(
        map: FeatureMap,
        z: ArrayView2<f64>,
        y_train: Array2<f64>,
        output_kernel: Kernel,
        op: ScoreOperator,
        preimage: Preimage,
        candidates: Array2<f64>,
    ) -> Result<Self> {
        let r = z.ncols();
        let ScoreOperator {
            c0,
            left: op_left,
            right: op_right,
        } = op;
        let (left, right) = match op_right {
            None => {
                let mut wz = matmul(op_left.view(), z);
                if c0 != 0.0 {
                    wz.scaled_add(c0, &z);
                }
                (wz, None)
            }
            Some(rt) => {
                let rz = matmul(rt.view(), z);
                drop(rt);
                if c0 == 0.0 {
                    (op_left, Some(rz))
                } else {
                    let q = op_left.ncols();
                    let mut left = Array2::<f64>::zeros((z.nrows(), q + r));
                    left.slice_mut(s![.., ..q]).assign(&op_left);
                    drop(op_left);
                    left.slice_mut(s![.., q..]).assign(&z);
                    let mut right = Array2::<f64>::zeros((q + r, r));
                    right.slice_mut(s![..q, ..]).assign(&rz);
                    right.slice_mut(s![q.., ..]).diag_mut().fill(op.c0);
                    (left, Some(right))
                }
            }
        };
        let (outer, cand_self) = match preimage {
            Preimage::ClosedForm => (matmul_tn(y_train.view(), left.view()), Vec::new()),
            Preimage::Candidates => {
                let mut outer = Array2::<f64>::zeros((candidates.nrows(), left.ncols()));
                let mut start = 0;
                while start < candidates.nrows() {
                    let end = (start + ROWS_PER_BLOCK).min(candidates.nrows());
                    let g = cross_gram(
                        &output_kernel,
                        candidates.slice(s![start..end, ..]),
                        y_train.view(),
                    )?;
                    outer
                        .slice_mut(s![start..end, ..])
                        .assign(&matmul(g.view(), left.view()));
                    start = end;
                }
                (outer, self_kernel(&output_kernel, candidates.view()))
            }
        };
        Ok(KdeModel {
            scoring: Scoring::Features {
                map,
                op: ScoreOperator {
                    c0: 0.0,
                    left: outer,
                    right,
                },
            },
            y_train,
            preimage,
            candidates,
            cand_self,
        })
    }

    /// `score(x, y)` for every candidate (rows) and input (columns).
    pub fn scores(&self, x: ArrayView2<f64>) -> Result<Array2<f64>> {
        match &self.scoring {
            Scoring::Kernel {
                kernel,
                x_train,
                op,
                cand_gram,
            } => {
                let kx = cross_gram(kernel, x_train.view(), x)?;
                Ok(matmul(cand_gram.view(), op.apply(kx.view()).view()))
            }
            Scoring::Features { map, op } => Ok(op.apply(map.features(x)?.t())),
        }
    }

    /// The closed-form pre-image `Σᵢ yᵢ [W k_x]ᵢ` for a block of inputs (t×m).
    fn closed_form(&self, x: ArrayView2<f64>) -> Result<Array2<f64>> {
        match &self.scoring {
            Scoring::Kernel {
                kernel,
                x_train,
                op,
                ..
            } => {
                let kx = cross_gram(kernel, x_train.view(), x)?;
                let coef = op.apply(kx.view());
                Ok(matmul_tn(coef.view(), self.y_train.view()))
            }
            Scoring::Features { map, op } => Ok(op.apply(map.features(x)?.t()).reversed_axes()),
        }
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
                    out.slice_mut(s![start..end, ..])
                        .assign(&self.closed_form(xb)?);
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
