//! OKL's objective and its pieces in the eigenbasis of K (docs/methods.md §1).
//!
//! With `K = U diag(s) Uᵀ`, `C̃ = UᵀC` and `Ỹ = UᵀY`, every quantity the solvers need costs
//! O(ℓm² + m³): `E = KC` becomes `diag(s) C̃`, `EᵀE = C̃ᵀ diag(s²) C̃`, `CᵀKC = C̃ᵀ diag(s) C̃`, and
//! Frobenius norms are unchanged because U is orthogonal. U itself is needed only to map the
//! final C̃ back.
//!
//! On a low-rank input kernel `K̃ = ZZᵀ` (`methods::input`) U has r columns; the null-space
//! rows of eq. (6) are `λ c̃ᵢ = ỹᵢ` whatever L is, so they add the constant `‖Y − UUᵀY‖²/(2λ)`
//! to Q and f and nothing to gradients, `CᵀKC`, or predictions.

use ndarray::{Array1, Array2, ArrayView2, Axis, Zip};

use crate::linalg::{
    divide_by_spectrum, eigh, frobenius, frobenius_sq, lu, matmul, matmul_tn, symmetrize,
};
use crate::methods::input::{Basis, InputSpectrum};
use crate::{OvkError, Result};

/// K's eigendecomposition with the targets rotated into its eigenbasis.
#[derive(Debug, Clone)]
pub struct Spectral {
    /// How C̃ maps back: K's eigenvectors (ℓ×ℓ), or a factor's basis.
    pub(crate) basis: Basis,
    /// Eigenvalues of K (or K̃), ascending, rounding negatives clamped to 0.
    pub s: Array1<f64>,
    /// Ỹ = UᵀY (one row per eigenvalue).
    pub yt: Array2<f64>,
    /// `‖Y − UUᵀY‖²`: the targets in K̃'s null space (0 on the exact route).
    pub(crate) null_sq: f64,
    /// Ridge weight λ.
    pub lambda: f64,
    /// ‖Y‖_F.
    pub y_norm: f64,
    /// The most negative eigenvalue of K before clamping (0 when K was PSD).
    pub clamped: f64,
}

/// f(L) of the reduced problem evaluated at one L: its value, gradient, and the C̃ that
/// eliminates C (not `lowrank_okl::Reduced`, which holds the low-rank problem itself).
#[derive(Debug, Clone)]
pub struct Evaluation {
    /// f(L) = ½ Σᵢ ỹᵢᵀ (sᵢL + λI)⁻¹ ỹᵢ + ½‖L‖²_F, equal to Q(L, C(L)).
    pub value: f64,
    /// ∇f(L) = L − ½ CᵀKC, symmetric.
    pub grad: Array2<f64>,
    /// C̃(L) = UᵀC(L), the solution of eq. (6) in the eigenbasis.
    pub ct: Array2<f64>,
}

impl Spectral {
    /// Eigendecompose K (O(ℓ³), once) and rotate Y.
    pub fn new(k: ArrayView2<f64>, y: ArrayView2<f64>, lambda: f64) -> Result<Self> {
        if k.nrows() != y.nrows() {
            return Err(OvkError::internal(format!(
                "okl: {}×{} Gram matrix for {} target rows",
                k.nrows(),
                k.ncols(),
                y.nrows()
            )));
        }
        check_lambda(lambda)?;
        Self::from_input(
            InputSpectrum::exact(k.to_owned(), y)?,
            frobenius(&y),
            lambda,
        )
    }

    /// From any route's spectrum (`methods::input`); `y_norm` is ‖Y‖_F.
    pub(crate) fn from_input(input: InputSpectrum, y_norm: f64, lambda: f64) -> Result<Self> {
        check_lambda(lambda)?;
        let InputSpectrum {
            s,
            clamped,
            yt,
            null_sq,
            basis,
            ..
        } = input;
        Ok(Spectral {
            basis,
            s,
            yt,
            null_sq,
            lambda,
            y_norm,
            clamped,
        })
    }

    /// Number of outputs m.
    pub fn n_outputs(&self) -> usize {
        self.yt.ncols()
    }

    /// C̃ solving eq. (6), `K C L + λ C = Y`, for a symmetric L = V diag(t) Vᵀ:
    /// `C̃ = [(ỸV) ⊘ (s tᵀ + λ)] Vᵀ`. Also returns t's smallest entry (L's smallest eigenvalue).
    pub fn c_step(&self, l: ArrayView2<f64>) -> Result<(Array2<f64>, f64)> {
        let e = eigh(l)?;
        let (v, t) = (&e.vectors, &e.values);
        self.check_denominators(t.iter().copied().fold(f64::INFINITY, f64::min))?;
        let w = divide_by_spectrum(
            matmul(self.yt.view(), v.view()).view(),
            self.s.view(),
            t.view(),
            self.lambda,
        );
        Ok((matmul(w.view(), v.t()), t[0]))
    }

    /// C̃ solving eq. (6) for any square L (the literal update makes L non-symmetric): row i of
    /// `diag(s) C̃ L + λ C̃ = Ỹ` is `(sᵢ Lᵀ + λ I) c̃ᵢ = ỹᵢ`, O(ℓm³).
    pub fn c_step_general(&self, l: ArrayView2<f64>) -> Result<Array2<f64>> {
        let m = self.n_outputs();
        let mut ct = Array2::<f64>::zeros(self.yt.dim());
        for (i, (mut row, y)) in ct
            .axis_iter_mut(Axis(0))
            .zip(self.yt.axis_iter(Axis(0)))
            .enumerate()
        {
            let mut a = l.t().mapv(|v| v * self.s[i]);
            a.diag_mut().mapv_inplace(|v| v + self.lambda);
            let b = y.to_owned().into_shape_with_order((m, 1)).map_err(|e| {
                OvkError::internal(format!("okl: reshaping a target row failed: {e}"))
            })?;
            let c = lu(a.view())?.solve(b.view());
            if c.iter().any(|v| !v.is_finite()) {
                return Err(singular_sylvester());
            }
            row.assign(&c.column(0));
        }
        Ok(ct)
    }

    /// `EᵀE = C̃ᵀ diag(s²) C̃` (E = KC).
    pub(crate) fn ete(&self, ct: &Array2<f64>) -> Array2<f64> {
        let sc = self.scale_rows(ct, |s| s);
        symmetrize(&matmul_tn(sc.view(), sc.view()))
    }

    /// `CᵀKC = C̃ᵀ diag(s) C̃`, exactly symmetric.
    pub(crate) fn ctkc(&self, ct: &Array2<f64>) -> Array2<f64> {
        let sc = self.scale_rows(ct, f64::sqrt);
        symmetrize(&matmul_tn(sc.view(), sc.view()))
    }

    /// `EᵀY = C̃ᵀ diag(s) Ỹ`.
    pub(crate) fn ety(&self, ct: &Array2<f64>) -> Array2<f64> {
        matmul_tn(self.scale_rows(ct, |s| s).view(), self.yt.view())
    }

    /// The paper's eq. (3): `Q(L, C) = ‖Y − KCL‖²_F/(2λ) + ⟨CᵀKC, L⟩_F/2 + ‖L‖²_F/2`.
    pub fn objective(&self, l: &Array2<f64>, ct: &Array2<f64>) -> f64 {
        let e = self.scale_rows(ct, |s| s);
        let fit = frobenius_sq(&(&self.yt - &matmul(e.view(), l.view()))) + self.null_sq;
        let coupling = (&self.ctkc(ct) * l).sum();
        fit / (2.0 * self.lambda) + coupling / 2.0 + frobenius_sq(l) / 2.0
    }

    /// Algorithm 1's stopping quantity `‖Z + λC − Y‖_F` with `Z = E L` (E = KC).
    pub fn sylvester_residual(&self, l: &Array2<f64>, ct: &Array2<f64>) -> f64 {
        let e = self.scale_rows(ct, |s| s);
        let r = matmul(e.view(), l.view()) + ct * self.lambda - &self.yt;
        frobenius_sq(&r).sqrt()
    }

    /// The reduced objective with C eliminated (the paper's Appendix; docs/methods.md §1):
    /// `f(L) = ½ Σᵢ ỹᵢᵀ (sᵢL + λI)⁻¹ ỹᵢ + ½‖L‖²_F`, `∇f = L − ½ V [Wᵀ diag(s) W] Vᵀ`,
    /// `W = (ỸV) ⊘ (s tᵀ + λ)`, for a symmetric PSD L = V diag(t) Vᵀ.
    pub fn evaluate(&self, l: &Array2<f64>) -> Result<Evaluation> {
        let e = eigh(l.view())?;
        let (v, t) = (&e.vectors, &e.values);
        self.check_denominators(t.iter().copied().fold(f64::INFINITY, f64::min))?;
        let yv = matmul(self.yt.view(), v.view());
        let w = divide_by_spectrum(yv.view(), self.s.view(), t.view(), self.lambda);
        // Null-space rows: ỹᵢᵀ(0·L + λI)⁻¹ỹᵢ = ‖ỹᵢ‖²/λ.
        let value =
            0.5 * (&yv * &w).sum() + 0.5 * self.null_sq / self.lambda + 0.5 * frobenius_sq(l);
        let sw = self.scale_rows(&w, f64::sqrt);
        let g = matmul_tn(sw.view(), sw.view()); // Wᵀ diag(s) W
        let ctkc = matmul(matmul(v.view(), g.view()).view(), v.t());
        let grad = symmetrize(&(l - &(ctkc * 0.5)));
        Ok(Evaluation {
            value,
            grad,
            ct: matmul(w.view(), v.t()),
        })
    }

    /// C = U C̃ in the original basis (ℓ×m), O(ℓ²m); on a factor `ZᵀC` (r×m).
    pub fn coefficients(&self, ct: &Array2<f64>) -> Array2<f64> {
        self.basis.lift(ct.view())
    }

    /// diag(φ(s)) A.
    fn scale_rows(&self, a: &Array2<f64>, phi: impl Fn(f64) -> f64) -> Array2<f64> {
        let mut out = a.clone();
        Zip::from(out.rows_mut())
            .and(&self.s)
            .for_each(|mut row, &s| row.mapv_inplace(|v| v * phi(s)));
        out
    }

    /// Every `sᵢL + λI` must be positive definite (all `sᵢ tⱼ + λ > 0`): then eq. (6) has a
    /// unique solution and it minimises Q over C.
    fn check_denominators(&self, t_min: f64) -> Result<()> {
        let s_max = self.s.iter().copied().fold(0.0, f64::max);
        let margin = s_max * t_min.min(0.0) + self.lambda;
        if margin.is_nan() || margin <= 1e-10 * self.lambda {
            return Err(singular_sylvester());
        }
        Ok(())
    }
}

fn check_lambda(lambda: f64) -> Result<()> {
    if lambda > 0.0 && lambda.is_finite() {
        Ok(())
    } else {
        Err(OvkError::input(format!(
            "okl: λ must be a positive number, got {lambda}"
        )))
    }
}

fn singular_sylvester() -> OvkError {
    OvkError::numerical(
        "okl: the output kernel L became so indefinite that the Sylvester equation K C L + λC = Y \
         is singular; use --l-update symmetric (the default) or a larger --lambda",
    )
}
