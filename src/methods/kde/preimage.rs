//! Prediction by pre-image: `f(x) = argmin_y l(y, y) − 2 score(x, y)` over a candidate set, or,
//! with a linear output kernel, the closed form `f(x) = Σᵢ yᵢ [W k_x]ᵢ` (the minimiser of
//! `‖y‖² − 2 yᵀ g(x)` over all of R^m).

use ndarray::{s, Array2, ArrayView2, Axis};

use super::score::ScoreOperator;
use crate::kernels::{cross_gram, Kernel};
use crate::linalg::{matmul, matmul_tn};
use crate::methods::{Model, ModelParts};
use crate::Result;

/// The model kind KDE saves (`methods::load_model`).
pub const KIND: &str = "kde";

/// Test rows scored per block (bounds the candidates × rows score matrix).
const ROWS_PER_BLOCK: usize = 512;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preimage {
    Candidates,
    ClosedForm,
}

impl Preimage {
    fn parse(s: &str) -> Option<Preimage> {
        [Preimage::Candidates, Preimage::ClosedForm]
            .into_iter()
            .find(|p| p.name() == s)
    }

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

/// The KDE model back from its saved parts: the candidates' Gram rows and self-kernels are
/// saved as computed, so no output kernel is evaluated again (bit-for-bit predictions).
pub fn model_from_parts(mut parts: ModelParts) -> Result<KdeModel> {
    let kernel = parts.setting("kernel")?;
    let name: String = parts.setting("preimage")?;
    let preimage = Preimage::parse(&name)
        .ok_or_else(|| parts.mismatch(&format!("unknown pre-image `{name}`")))?;
    let c0 = parts.setting("c0")?;
    let has_right: bool = parts.setting("has_right")?;
    let x_train = parts.take_array("x_train")?;
    let y_train = parts.take_array("y_train")?;
    let left = parts.take_array("score_left")?;
    let right = if has_right {
        Some(parts.take_array("score_right")?)
    } else {
        None
    };
    let candidates = parts.take_array("candidates")?;
    let cand_gram = parts.take_array("candidate_gram")?;
    let cand_self = parts.take_array("candidate_self")?;
    let n = x_train.nrows();
    let inner = right.as_ref().map_or(n, |r| r.nrows());
    let ok = y_train.nrows() == n
        && left.nrows() == n
        && left.ncols() == inner
        && right.as_ref().is_none_or(|r| r.ncols() == n)
        && match preimage {
            Preimage::ClosedForm => true,
            Preimage::Candidates => {
                candidates.ncols() == y_train.ncols()
                    && cand_gram.dim() == (candidates.nrows(), n)
                    && cand_self.dim() == (candidates.nrows(), 1)
            }
        };
    if !ok {
        return Err(parts.mismatch(&format!(
            "x_train {:?}, y_train {:?}, score_left {:?}, score_right {:?}, candidates {:?}, \
             candidate_gram {:?}, candidate_self {:?}",
            x_train.dim(),
            y_train.dim(),
            left.dim(),
            right.as_ref().map(|r| r.dim()),
            candidates.dim(),
            cand_gram.dim(),
            cand_self.dim()
        )));
    }
    Ok(KdeModel {
        kernel,
        x_train,
        y_train,
        op: ScoreOperator { c0, left, right },
        preimage,
        candidates,
        cand_gram,
        cand_self: cand_self.column(0).to_vec(),
    })
}

impl Model for KdeModel {
    fn parts(&self) -> ModelParts {
        let mut parts = ModelParts::new(KIND)
            .with_setting("kernel", &self.kernel)
            .with_setting("preimage", &self.preimage.name())
            .with_setting("c0", &self.op.c0)
            .with_setting("has_right", &self.op.right.is_some())
            .with_array("x_train", self.x_train.clone())
            .with_array("y_train", self.y_train.clone())
            .with_array("score_left", self.op.left.clone());
        if let Some(r) = &self.op.right {
            parts = parts.with_array("score_right", r.clone());
        }
        let cand_self = Array2::from_shape_vec((self.cand_self.len(), 1), self.cand_self.clone())
            .expect("a column of the candidates' self-kernels");
        parts
            .with_array("candidates", self.candidates.clone())
            .with_array("candidate_gram", self.cand_gram.clone())
            .with_array("candidate_self", cand_self)
    }

    fn n_features(&self) -> Option<usize> {
        Some(self.x_train.ncols())
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
