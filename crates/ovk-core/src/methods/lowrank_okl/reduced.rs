//! The low-rank OKL problem in the eigenbasis of K and the row space of Ỹ (docs/methods.md §2).
//!
//! `K = U diag(s) Uᵀ` once; thin QR `Ỹ₊ᵀ = Yᵀ U₊ = Q_m R` once, where `U₊` holds the
//! eigenvectors of K's numerically nonzero eigenvalues (ℓ₊ = rank K of them). After the first
//! update every iterate is `B = Q_m B̂`, so `BᵀB = B̂ᵀB̂` and `Ỹ₊ B = Rᵀ B̂`: the loop works on
//! ℓ₊×r and r×p matrices (r = min(ℓ₊, m)) and never touches the m outputs.
//!
//! On a low-rank input kernel `K̃ = ZZᵀ` (`methods::input`) the same holds with U of r columns:
//! the null space is then not represented at all — its rows add `‖Y − UUᵀY‖²` to the fit term
//! and nothing to the model, since `Zᵀ U₀ = 0`.
//!
//! K's null space is decoupled. With `Ỹ = [Ỹ₀; Ỹ₊]` split by eigenvalue (s₀ = 0), eq. (4)'s
//! fit term splits into `‖Ỹ₀‖²` (K A has no null component) plus the range part, and
//! `⟨A, K A⟩` ignores A's null rows; so `g(B) = ‖Ỹ₀‖²/(2λ) + g₊(B)` with `g₊` built from the
//! ℓ₊ range rows only. The gradient `B − (CᵀKC)B` only sees `CᵀKC = Σ_{sᵢ>0} sᵢ cᵢcᵢᵀ`, so the
//! iterates stay in the row space of `Ỹ₊` (dimension ≤ ℓ₊; projecting B onto it never raises g,
//! by a Schur-complement argument), and `A₀ = Ỹ₀ B / λ` (the limit sᵢ → 0 of the A-step, and
//! `A = C B` with `C = (Y − K A Bᵀ)/λ`) is only needed for the model.

use ndarray::{s, Array1, Array2, ArrayView2, Axis};

use crate::kernels::Kernel;
use crate::linalg::{cholesky, divide_by_spectrum, eigh, matmul, matmul_tn, qr_thin};
use crate::methods::input::{Basis, InputSpectrum};
use crate::Result;

/// Where B currently is: the paper's start `I_{m×p}`, or a point `Q_m B̂` of the row space.
#[derive(Debug, Clone)]
pub enum Factor {
    /// `I_{m×p}` with p columns (the paper's start).
    Identity(usize),
    /// `Q_m B̂`, stored as B̂ (r×p).
    Reduced(Array2<f64>),
}

/// Result of the A-step (the exact minimiser of eq. (4) over A for fixed B), in the eigenbases:
/// `A = U [V₀; V] U_Yᵀ` and `K A = U₊ E U_Yᵀ`; `V`, `E` are the range rows (ℓ₊×p), the null
/// rows `V₀ = Ỹ₀ B U_Y / λ` are formed on demand (`Reduced::v_full`).
#[derive(Debug, Clone)]
pub struct AStep {
    pub(crate) u_y: Array2<f64>,
    pub(crate) lam_y: Array1<f64>,
    /// V: the range rows of A in the eigenbases (ℓ₊×p).
    pub v: Array2<f64>,
    /// E: the range rows of K A in the eigenbases (ℓ₊×p).
    pub e: Array2<f64>,
    /// λ the A-step was taken at.
    pub lambda: f64,
}

/// A fitted point: `B = Q_m B̂` with its optimal A.
#[derive(Debug, Clone)]
pub struct Solution {
    /// B̂ (r×p): B = Q_m B̂.
    pub bhat: Array2<f64>,
    /// The optimal A for this B.
    pub a: AStep,
}

/// The problem reduced once per fit: K's eigenbasis, the outputs' row space, and α.
pub struct Reduced {
    /// `U_X = [U₀ U₊]`, eigenvectors of K (ℓ×ℓ), eigenvalues ascending: the first ℓ₀ = ℓ − ℓ₊
    /// columns span K's numerical null space (on a factor: the basis of K̃'s range).
    pub(crate) basis: Basis,
    /// Training rows ℓ.
    pub ell: usize,
    /// ℓ₀: eigenvalues of the basis below the rank threshold (the null rows of `[V₀; V]`).
    pub(crate) ell0: usize,
    /// `λ_X` of the range: the ℓ₊ eigenvalues of K above `ℓ·ε·max λ_X` (the rest count as 0).
    pub s: Array1<f64>,
    /// Orthonormal basis of the row space of Ỹ₊ (m×r).
    pub q_m: Array2<f64>,
    /// `Rᵀ` (ℓ₊×r): `Ỹ₊ = Rᵀ Q_mᵀ`.
    pub(crate) rt: Array2<f64>,
    /// `Ỹ₀ Q_m` (ℓ₀×r): the null rows seen from the row space, for `A₀ = Ỹ₀ B / λ`.
    pub(crate) rt_null: Array2<f64>,
    /// `‖Ỹ₀‖²_F`: the part of `‖Y − K A Bᵀ‖²_F` no A reaches.
    pub(crate) null_fit_sq: f64,
    /// Numerical rank of K (eigenvalues above `ℓ·ε·max λ_X`), ℓ₊.
    pub rank_k: usize,
    /// Number of outputs m.
    pub m: usize,
    /// `α = √‖YᵀKY‖₂`: for λ ≥ α the optimum is L = 0.
    pub alpha: f64,
}

impl Reduced {
    /// Eigendecompose K and factor the outputs — the only O(ℓ³) and O(ℓ m r) work of a fit.
    pub fn new(k: ArrayView2<f64>, y: ArrayView2<f64>) -> Result<Self> {
        Self::from_input(InputSpectrum::exact(k.to_owned(), y)?)
    }

    /// From any route's spectrum (`methods::input`).
    pub(crate) fn from_input(input: InputSpectrum) -> Result<Self> {
        let InputSpectrum {
            s: values,
            yt,
            null_sq,
            basis,
            n: ell,
            ..
        } = input;
        let m = yt.ncols();
        let s_max = values.iter().copied().fold(0.0, f64::max);
        let threshold = s_max * values.len() as f64 * f64::EPSILON;
        let rank_k = values.iter().filter(|&&v| v > threshold).count();
        let ell0 = values.len() - rank_k; // eigenvalues ascending: the null space comes first
        let s = values.slice(s![ell0..]).to_owned();
        let y_sq: f64 = yt.iter().map(|v| v * v).sum::<f64>() + null_sq;
        let (q_m, rt, rt_null) = if rank_k == 0 || m == 0 {
            let r = rank_k.min(m);
            (
                Array2::zeros((m, r)),
                Array2::zeros((rank_k, r)),
                Array2::zeros((ell0, r)),
            )
        } else {
            // Ỹ₊ᵀ = Yᵀ U₊ (m×ℓ₊) = Q_m R: the QR runs on ℓ₊ columns, not ℓ.
            let qr = qr_thin(yt.slice(s![ell0.., ..]).t())?;
            let rt_null = matmul(yt.slice(s![..ell0, ..]), qr.q.view()); // Ỹ₀ Q_m
            (qr.q, qr.r.t().to_owned(), rt_null)
        };
        // ‖Ỹ₀‖² = ‖Y‖² − ‖Ỹ₊‖² (U orthogonal), ‖Ỹ₊‖² = ‖R‖².
        let plus_sq: f64 = rt.iter().map(|v| v * v).sum();
        let mut red = Reduced {
            basis,
            ell,
            ell0,
            s,
            q_m,
            rt,
            rt_null,
            null_fit_sq: (y_sq - plus_sq).max(0.0),
            rank_k,
            m,
            alpha: 0.0,
        };
        red.alpha = red.compute_alpha()?;
        Ok(red)
    }

    /// Training rows ℓ.
    pub fn ell(&self) -> usize {
        self.ell
    }

    /// All rows of V, `[V₀; V]` (ℓ×p), with `V₀ = Ỹ₀ B U_Y / λ`.
    pub(crate) fn v_full(&self, sol: &Solution) -> Array2<f64> {
        let a = &sol.a;
        let v0 = matmul(
            matmul(self.rt_null.view(), sol.bhat.view()).view(),
            a.u_y.view(),
        ) / a.lambda;
        ndarray::concatenate(Axis(0), &[v0.view(), a.v.view()]).unwrap_or_else(|_| a.v.clone())
    }

    /// Rank r of the outputs' row space (columns of `q_m`).
    pub fn r(&self) -> usize {
        self.rt.ncols()
    }

    /// `Q_mᵀ I_{m×p}`: the paper's start seen from the row space.
    fn identity_projection(&self, p: usize) -> Array2<f64> {
        self.q_m.slice(s![..p, ..]).t().to_owned()
    }

    /// `BᵀB` and `Ỹ B` for the current factor.
    fn gram_and_yb(&self, f: &Factor) -> (Array2<f64>, Array2<f64>) {
        match f {
            Factor::Identity(p) => {
                let b0 = self.identity_projection(*p);
                (Array2::eye(*p), matmul(self.rt.view(), b0.view()))
            }
            Factor::Reduced(bhat) => (
                matmul_tn(bhat.view(), bhat.view()),
                matmul(self.rt.view(), bhat.view()),
            ),
        }
    }

    /// Algorithm 1, first half: `BᵀB = U_Y diag(λ_Y) U_Yᵀ; Q ← Ỹ B U_Y;
    /// V ← Q ⊘ (λ_X λ_Yᵀ + λ); E ← diag(λ_X) V`.
    pub fn a_step(&self, f: &Factor, lambda: f64) -> Result<AStep> {
        let (gram, yb) = self.gram_and_yb(f);
        let eg = eigh(gram.view())?;
        let lam_y = eg.values.mapv(|v| v.max(0.0));
        let u_y = eg.vectors;
        let q = matmul(yb.view(), u_y.view());
        let v = divide_by_spectrum(q.view(), self.s.view(), lam_y.view(), lambda);
        let mut e = v.clone();
        for (mut row, &si) in e.axis_iter_mut(Axis(0)).zip(self.s.iter()) {
            row *= si;
        }
        Ok(AStep {
            u_y,
            lam_y,
            v,
            e,
            lambda,
        })
    }

    /// Algorithm 1, second half: `B ← Ỹᵀ E (EᵀE + λI)⁻¹ U_Yᵀ`, i.e.
    /// `B̂ ← R E (EᵀE + λI)⁻¹ U_Yᵀ` in the row space (E's null rows are 0).
    pub(crate) fn b_step(&self, a: &AStep, lambda: f64) -> Result<Array2<f64>> {
        let mut m = matmul_tn(a.e.view(), a.e.view());
        m.diag_mut().mapv_inplace(|d| d + lambda);
        let re = matmul_tn(self.rt.view(), a.e.view()); // R E, r×p
        let x = cholesky(m.view())?.solve(re.t()); // (EᵀE + λI)⁻¹ (R E)ᵀ, p×r
        Ok(matmul(x.t(), a.u_y.t()))
    }

    /// Eq. (4), `Q(A, B) = ‖Y − K A Bᵀ‖²/(2λ) + ⟨A, K A⟩/2 + ‖B‖²/2`, at `A` of `a` and
    /// `B = Q_m B̂`. Returns `(Q, ‖Y − K A Bᵀ‖²_F)`; exact because `Y − K A Bᵀ = U (Rᵀ − E U_Yᵀ
    /// B̂ᵀ) Q_mᵀ` on the range rows with U orthogonal and Q_m orthonormal, plus `‖Ỹ₀‖²`.
    pub fn objective(&self, a: &AStep, bhat: &Array2<f64>, lambda: f64) -> (f64, f64) {
        let w = matmul(a.u_y.t(), bhat.t()); // U_Yᵀ B̂ᵀ, p×r
        let fitted = matmul(a.e.view(), w.view()); // ℓ×r
        let fit_sq: f64 = self.null_fit_sq
            + self
                .rt
                .iter()
                .zip(fitted.iter())
                .map(|(y, f)| (y - f) * (y - f))
                .sum::<f64>();
        // ⟨A, K A⟩ = Σᵢⱼ sᵢ Vᵢⱼ² (U, U_Y orthogonal).
        let reg: f64 =
            a.v.axis_iter(Axis(0))
                .zip(self.s.iter())
                .map(|(row, &si)| si * row.iter().map(|x| x * x).sum::<f64>())
                .sum();
        let b_sq: f64 = bhat.iter().map(|x| x * x).sum();
        (fit_sq / (2.0 * lambda) + reg / 2.0 + b_sq / 2.0, fit_sq)
    }

    /// `g(B) = min_A Q(A, B)`: one A-step, then eq. (4).
    pub fn value(&self, bhat: &Array2<f64>, lambda: f64) -> Result<f64> {
        let a = self.a_step(&Factor::Reduced(bhat.clone()), lambda)?;
        Ok(self.objective(&a, bhat, lambda).0)
    }

    /// `‖B_new − B_p‖_F` with `B_new = Q_m B̂`, computed without forming anything m×p.
    pub(crate) fn step_norm(&self, prev: &Factor, bhat: &Array2<f64>) -> f64 {
        match prev {
            Factor::Identity(p) => {
                let b0 = self.identity_projection(*p);
                let bb: f64 = bhat.iter().map(|x| x * x).sum();
                let cross: f64 = bhat.iter().zip(b0.iter()).map(|(a, b)| a * b).sum();
                (bb - 2.0 * cross + *p as f64).max(0.0).sqrt()
            }
            Factor::Reduced(prev) => frob_diff(prev, bhat),
        }
    }

    /// `A = U [V₀; V] U_Yᵀ` (ℓ×p); on a factor `ZᵀA` (r×p).
    pub fn coefficients(&self, sol: &Solution) -> Array2<f64> {
        let v = self.v_full(sol);
        matmul(self.basis.lift(v.view()).view(), sol.a.u_y.t())
    }

    /// `K A = U₊ E U_Yᵀ` (ℓ×p): the rows are the embedding of the training points. U is
    /// applied to `[0; E U_Yᵀ]` (its null columns weighted 0), never formed.
    pub fn embedding(&self, sol: &Solution, x_train: ArrayView2<f64>) -> Result<Array2<f64>> {
        let e_uy = matmul(sol.a.e.view(), sol.a.u_y.t());
        let mut ct = Array2::<f64>::zeros((self.ell0 + e_uy.nrows(), e_uy.ncols()));
        ct.slice_mut(s![self.ell0.., ..]).assign(&e_uy);
        self.basis.vectors_times(x_train, ct.view())
    }

    /// `K(x_new, X) [U₀ U₊]` split into its null and range columns (t×ℓ₀, t×ℓ₊).
    pub fn cross(
        &self,
        kernel: &Kernel,
        x_train: ArrayView2<f64>,
        x_new: ArrayView2<f64>,
    ) -> Result<(Array2<f64>, Array2<f64>)> {
        let k_u = self.basis.cross(kernel, x_train, x_new)?;
        Ok((
            k_u.slice(s![.., ..self.ell0]).to_owned(),
            k_u.slice(s![.., self.ell0..]).to_owned(),
        ))
    }

    /// `B = Q_m B̂` (m×p).
    pub fn factor_b(&self, sol: &Solution) -> Array2<f64> {
        matmul(self.q_m.view(), sol.bhat.view())
    }

    /// `√‖Yᵀ K Y‖₂`: above this λ the optimum is L = 0 (docs/methods.md §2). `‖YᵀKY‖₂ =
    /// ‖diag(√s) Rᵀ R diag(√s)‖₂` since `Ỹ₊ Ỹ₊ᵀ = Rᵀ R` (null rows add 0); with
    /// `A = diag(√s) Rᵀ` (ℓ₊×r) that is `‖AAᵀ‖₂ = ‖AᵀA‖₂`, an r×r eigenproblem (r ≤ m) where
    /// the ℓ₊×ℓ₊ one cost a second exact eigendecomposition.
    fn compute_alpha(&self) -> Result<f64> {
        let mut srt = self.rt.clone();
        for (mut row, &si) in srt.axis_iter_mut(Axis(0)).zip(self.s.iter()) {
            row *= si.sqrt();
        }
        let g = matmul(srt.t(), srt.view());
        let top = eigh(g.view())?.values.iter().copied().fold(0.0, f64::max);
        Ok(top.sqrt())
    }
}

pub(crate) fn frob(a: &Array2<f64>) -> f64 {
    a.iter().map(|x| x * x).sum::<f64>().sqrt()
}

pub(crate) fn frob_diff(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    a.iter()
        .zip(b.iter())
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt()
}
