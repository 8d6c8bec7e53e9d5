//! Prediction by pre-image: `f(x) = argmin_y l(y, y) − 2 score(x, y)` over a candidate set, or,
//! with a linear output kernel, the closed form `f(x) = Σᵢ yᵢ [W k_x]ᵢ` (the minimiser of
//! `‖y‖² − 2 yᵀ g(x)` over all of R^m). On an input factor the model keeps the landmarks and
//! the folded operator, not the training inputs.

use ndarray::{s, Array2, ArrayView2, Axis};

use super::score::ScoreOperator;
use crate::kernels::{cross_gram, FeatureMap, Kernel};
use crate::linalg::{matmul, matmul_tn};
use crate::methods::{Model, ModelParts};
use crate::util::choice::{choice_enum, Choice};
use crate::Result;

/// The model kind KDE saves (`methods::load_model`).
pub(crate) const KIND: &str = "kde";

/// Test rows scored per block (bounds the candidates × rows score matrix).
const ROWS_PER_BLOCK: usize = 512;

choice_enum! {
    /// How a prediction is read off the scores.
    pub enum Preimage: "preimage" {
        /// The argmin over a candidate set.
        Candidates = "candidates",
        /// The weighted sum of training outputs (linear output kernel only).
        ClosedForm = "closed-form",
    }
}

/// How a test input reaches the score.
pub(crate) enum Scoring {
    /// `score = L_cand W k_x` with `k_x = K(X, x)` (the exact solve).
    Kernel {
        kernel: Kernel,
        x_train: Array2<f64>,
        op: ScoreOperator,
        output_side: OutputSide,
    },
    /// On a factor `K ≈ ZZᵀ` the model sees x only through `k_x ≈ Z z(x)`, so
    /// `score = L_cand W Z z(x)` with `L_cand W Z` folded once into `op` (c×r factored; for the
    /// closed form `Yᵀ W Z`, m×r).
    Features { map: FeatureMap, op: ScoreOperator },
}

/// What the kernel scoring's operator already holds of the output side.
pub(crate) enum OutputSide {
    /// Folded in at fit time: `op` maps `k_x` to the candidates' scores `L_cand W k_x` (c
    /// rows), or for the closed form to `Yᵀ W k_x` (m rows).
    Folded,
    /// `op` is W itself (n rows), multiplied at each prediction by the candidates' Gram rows
    /// (c×n; empty for the closed form, which multiplies by Yᵀ): sessions saved before
    /// 2026-12-02 hold this form.
    Unfolded { cand_gram: Array2<f64> },
}

/// The fitted KDE: input kernel expansion into the output feature space, then a pre-image.
pub(crate) struct KdeModel {
    pub scoring: Scoring,
    /// The training outputs (ℓ×m).
    pub y_train: Array2<f64>,
    pub preimage: Preimage,
    /// Candidate outputs (c×m) and l(y, y) for each.
    pub candidates: Array2<f64>,
    pub(crate) cand_self: Vec<f64>,
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

/// The output side of a fit, shared by both ways of scoring: the training outputs, the output
/// kernel l, and the pre-image rule with its candidate outputs (c×m).
pub struct Outputs {
    /// The training outputs (ℓ×m).
    pub y_train: Array2<f64>,
    /// The output kernel l.
    pub kernel: Kernel,
    /// How a prediction is mapped back to an output.
    pub preimage: Preimage,
    /// The candidate outputs (c×m) the pre-image searches (empty for the closed form).
    pub candidates: Array2<f64>,
}

impl KdeModel {
    /// The model scoring with input kernel `kernel` on `x_train` through `op`, decoding with
    /// `out`. `op` is W, or already carries its output side when `folded` (`Lg W` with the
    /// training outputs as candidates, `Yᵀ W` for the closed form); any other output side is
    /// multiplied into `op`'s left factor here, once.
    pub fn on_kernel(
        kernel: Kernel,
        x_train: Array2<f64>,
        op: ScoreOperator,
        out: Outputs,
        folded: bool,
    ) -> Result<Self> {
        let (op, cand_self) = if folded {
            let cand_self = match out.preimage {
                Preimage::ClosedForm => Vec::new(),
                Preimage::Candidates => self_kernel(&out.kernel, out.candidates.view()),
            };
            (op, cand_self)
        } else {
            let (left, cand_self) = fold_output_side(&out, &op.left)?;
            (ScoreOperator { left, ..op }, cand_self)
        };
        Ok(KdeModel {
            scoring: Scoring::Kernel {
                kernel,
                x_train,
                op,
                output_side: OutputSide::Folded,
            },
            y_train: out.y_train,
            preimage: out.preimage,
            candidates: out.candidates,
            cand_self,
        })
    }

    /// The model on an input factor `Z` (n×r) with feature map `map`: `W Z = c0 Z + left
    /// (right Z)` is kept factored as `[left | Z] [right Z; c0 I]`, and its output side is
    /// multiplied out once — by the candidates' kernel rows (in blocks, never c×n whole) or,
    /// for the closed form, by Yᵀ.
    pub(crate) fn on_features(
        map: FeatureMap,
        z: ArrayView2<f64>,
        op: ScoreOperator,
        out: Outputs,
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
                    right.slice_mut(s![q.., ..]).diag_mut().fill(c0);
                    (left, Some(right))
                }
            }
        };
        let (outer, cand_self) = fold_output_side(&out, &left)?;
        drop(left);
        Ok(KdeModel {
            scoring: Scoring::Features {
                map,
                op: ScoreOperator {
                    c0: 0.0,
                    left: outer,
                    right,
                },
            },
            y_train: out.y_train,
            preimage: out.preimage,
            candidates: out.candidates,
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
                output_side,
            } => {
                let wk = op.apply(cross_gram(kernel, x_train.view(), x)?.view());
                Ok(match output_side {
                    OutputSide::Folded => wk,
                    OutputSide::Unfolded { cand_gram } => matmul(cand_gram.view(), wk.view()),
                })
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
                output_side,
            } => {
                let coef = op.apply(cross_gram(kernel, x_train.view(), x)?.view());
                Ok(match output_side {
                    OutputSide::Folded => coef.reversed_axes(),
                    OutputSide::Unfolded { .. } => matmul_tn(coef.view(), self.y_train.view()),
                })
            }
            Scoring::Features { map, op } => Ok(op.apply(map.features(x)?.t()).reversed_axes()),
        }
    }
}

/// The output side multiplied into a score operator's left factor (n×k, n training rows):
/// `Yᵀ left` (m×k) for the closed form; for candidates, their output kernel rows against the
/// training outputs times `left` (c×k, a block of candidates at a time, never c×n whole), with
/// the candidates' self-kernels `l(y, y)`.
fn fold_output_side(out: &Outputs, left: &Array2<f64>) -> Result<(Array2<f64>, Vec<f64>)> {
    Ok(match out.preimage {
        Preimage::ClosedForm => (matmul_tn(out.y_train.view(), left.view()), Vec::new()),
        Preimage::Candidates => {
            let candidates = &out.candidates;
            let mut outer = Array2::<f64>::zeros((candidates.nrows(), left.ncols()));
            let mut start = 0;
            while start < candidates.nrows() {
                let end = (start + ROWS_PER_BLOCK).min(candidates.nrows());
                let g = cross_gram(
                    &out.kernel,
                    candidates.slice(s![start..end, ..]),
                    out.y_train.view(),
                )?;
                outer
                    .slice_mut(s![start..end, ..])
                    .assign(&matmul(g.view(), left.view()));
                start = end;
            }
            (outer, self_kernel(&out.kernel, candidates.view()))
        }
    })
}

/// The KDE model back from its saved parts: the candidates' Gram rows (or, on a factor, the
/// folded operator) and self-kernels are saved as computed, so no output kernel is evaluated
/// again (bit-for-bit predictions).
pub(crate) fn model_from_parts(mut parts: ModelParts) -> Result<KdeModel> {
    let name: String = parts.setting("preimage")?;
    let preimage = Preimage::parse(&name)
        .map_err(|_| parts.mismatch(&format!("unknown pre-image `{name}`")))?;
    // Sessions saved before the factor route have no `scoring`: they are on the kernel.
    let scoring: String = if parts.settings.contains_key("scoring") {
        parts.setting("scoring")?
    } else {
        "kernel".to_string()
    };
    let c0 = parts.setting("c0")?;
    let has_right: bool = parts.setting("has_right")?;
    let y_train = parts.take_array("y_train")?;
    let left = parts.take_array("score_left")?;
    let right = if has_right {
        Some(parts.take_array("score_right")?)
    } else {
        None
    };
    let candidates = parts.take_array("candidates")?;
    let cand_self = parts.take_array("candidate_self")?;
    let op = ScoreOperator { c0, left, right };
    let candidates_ok = |rows_of_score: usize| match preimage {
        Preimage::ClosedForm => true,
        Preimage::Candidates => {
            candidates.ncols() == y_train.ncols()
                && rows_of_score == candidates.nrows()
                && cand_self.dim() == (candidates.nrows(), 1)
        }
    };
    // A folded operator's rows: the candidates' scores, or Yᵀ W's m rows for the closed form.
    let output_rows_ok = |rows: usize| match preimage {
        Preimage::ClosedForm => rows == y_train.ncols(),
        Preimage::Candidates => candidates_ok(rows),
    };
    let inner_ok = |op: &ScoreOperator, cols: usize| match &op.right {
        Some(r) => op.left.ncols() == r.nrows() && r.ncols() == cols,
        None => op.left.ncols() == cols,
    };
    let scoring = match scoring.as_str() {
        "kernel" => {
            let kernel = parts.setting("kernel")?;
            let x_train = parts.take_array("x_train")?;
            // Sessions saved before the output side was folded at fit time have no `folded`.
            let folded = parts.settings.contains_key("folded") && parts.setting("folded")?;
            let output_side = if folded {
                OutputSide::Folded
            } else {
                OutputSide::Unfolded {
                    cand_gram: parts.take_array("candidate_gram")?,
                }
            };
            let n = x_train.nrows();
            let rows_ok = match &output_side {
                OutputSide::Folded => output_rows_ok(op.left.nrows()),
                OutputSide::Unfolded { cand_gram } => {
                    op.left.nrows() == n
                        && candidates_ok(cand_gram.nrows())
                        && (preimage == Preimage::ClosedForm || cand_gram.ncols() == n)
                }
            };
            if !(y_train.nrows() == n && inner_ok(&op, n) && rows_ok) {
                let cand_gram = match &output_side {
                    OutputSide::Folded => None,
                    OutputSide::Unfolded { cand_gram } => Some(cand_gram.dim()),
                };
                return Err(parts.mismatch(&format!(
                    "x_train {:?}, y_train {:?}, score_left {:?}, score_right {:?}, candidates \
                     {:?}, candidate_gram {:?}, candidate_self {:?}",
                    x_train.dim(),
                    y_train.dim(),
                    op.left.dim(),
                    op.right.as_ref().map(|r| r.dim()),
                    candidates.dim(),
                    cand_gram,
                    cand_self.dim()
                )));
            }
            Scoring::Kernel {
                kernel,
                x_train,
                op,
                output_side,
            }
        }
        "features" => {
            let map = crate::methods::expansion::map_from_parts(&mut parts)?;
            // `op` maps z(x) (r) to the candidates' scores (c), or to Yᵀ W k_x (m).
            let r = match &map {
                FeatureMap::Nystrom { l_s, .. } => l_s.nrows(),
                FeatureMap::Linear => op.right.as_ref().map_or(op.left.ncols(), |r| r.ncols()),
            };
            let ok = inner_ok(&op, r) && output_rows_ok(op.left.nrows());
            if !ok {
                return Err(parts.mismatch(&format!(
                    "rank {r}, y_train {:?}, score_left {:?}, score_right {:?}, candidates {:?}, \
                     candidate_self {:?}",
                    y_train.dim(),
                    op.left.dim(),
                    op.right.as_ref().map(|r| r.dim()),
                    candidates.dim(),
                    cand_self.dim()
                )));
            }
            Scoring::Features { map, op }
        }
        other => return Err(parts.mismatch(&format!("unknown scoring `{other}`"))),
    };
    Ok(KdeModel {
        scoring,
        y_train,
        preimage,
        candidates,
        cand_self: cand_self.column(0).to_vec(),
    })
}

impl Model for KdeModel {
    fn parts(&self) -> ModelParts {
        let parts = ModelParts::new(KIND).with_setting("preimage", &self.preimage.name());
        let (parts, op) = match &self.scoring {
            Scoring::Kernel {
                kernel,
                x_train,
                op,
                output_side,
            } => {
                let parts = parts
                    .with_setting("scoring", &"kernel")
                    .with_setting("kernel", kernel)
                    .with_array("x_train", x_train.clone());
                let parts = match output_side {
                    OutputSide::Folded => parts.with_setting("folded", &true),
                    OutputSide::Unfolded { cand_gram } => {
                        parts.with_array("candidate_gram", cand_gram.clone())
                    }
                };
                (parts, op)
            }
            Scoring::Features { map, op } => (
                crate::methods::expansion::with_map(
                    parts.with_setting("scoring", &"features"),
                    map,
                ),
                op,
            ),
        };
        let mut parts = parts
            .with_setting("c0", &op.c0)
            .with_setting("has_right", &op.right.is_some())
            .with_array("y_train", self.y_train.clone())
            .with_array("score_left", op.left.clone());
        if let Some(r) = &op.right {
            parts = parts.with_array("score_right", r.clone());
        }
        let cand_self = Array2::from_shape_vec((self.cand_self.len(), 1), self.cand_self.clone())
            .expect("a column of the candidates' self-kernels");
        parts
            .with_array("candidates", self.candidates.clone())
            .with_array("candidate_self", cand_self)
    }

    fn n_features(&self) -> Option<usize> {
        match &self.scoring {
            Scoring::Kernel { x_train, .. } => Some(x_train.ncols()),
            Scoring::Features { map, .. } => crate::methods::expansion::map_features(map),
        }
    }

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
