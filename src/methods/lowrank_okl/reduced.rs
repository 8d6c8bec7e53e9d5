//! The low-rank OKL problem in the eigenbasis of K and the row space of Ỹ (methods.md §2).
//!
//! `K = U diag(s) Uᵀ` once; thin QR `Ỹᵀ = Yᵀ U = Q_m R` once. After the first update every
//! iterate is `B = Q_m B̂`, so `BᵀB = B̂ᵀB̂` and `Ỹ B = Rᵀ B̂`: the loop works on r×p matrices
//! (r = min(ℓ, m)) and never touches the m outputs.

use ndarray::{s, Array1, Array2, ArrayView2, Axis};

use crate::linalg::{cholesky, divide_by_spectrum, eigh, matmul, matmul_tn, qr_thin};
use crate::Result;

/// Where B currently is: the paper's start `I_{m×p}`, or a point `Q_m B̂` of the row space.
#[derive(Debug, Clone)]
pub enum Factor {
    Identity(usize),
    Reduced(Array2<f64>),
}

/// Result of the A-step (the exact minimiser of eq. (4) over A for fixed B), in the eigenbases:
/// `A = U V U_Yᵀ` and `K A = U E U_Yᵀ`.
#[derive(Debug, Clone)]
pub struct AStep {
    pub u_y: Array2<f64>,
    pub lam_y: Array1<f64>,
    pub v: Array2<f64>,
    pub e: Array2<f64>,
}

/// A fitted point: `B = Q_m B̂` with its optimal A.
#[derive(Debug, Clone)]
pub struct Solution {
    pub bhat: Array2<f64>,
    pub a: AStep,
}

pub struct Reduced {
    /// `U_X`, eigenvectors of K (ℓ×ℓ).
    pub u: Array2<f64>,
    /// `λ_X`, eigenvalues of K clamped at 0.
    pub s: Array1<f64>,
    /// Orthonormal basis of the row space of Ỹ (m×r).
    pub q_m: Array2<f64>,
    /// `Rᵀ` (ℓ×r): `Ỹ = Rᵀ Q_mᵀ`.
    pub rt: Array2<f64>,
    /// Numerical rank of K (eigenvalues above `ℓ·ε·max λ_X`).
    pub rank_k: usize,
    pub m: usize,
    /// `α = √‖YᵀKY‖₂`: for λ ≥ α the optimum is L = 0.
    pub alpha: f64,
}

impl Reduced {
    /// Eigendecompose K and factor the outputs — the only O(ℓ³) and O(ℓ m r) work of a fit.
    pub fn new(k: ArrayView2<f64>, y: ArrayView2<f64>) -> Result<Self> {
        let ell = k.nrows();
        let e = eigh(k)?;
        let s = e.values.mapv(|v| v.max(0.0));
        let s_max = s.iter().copied().fold(0.0, f64::max);
        let threshold = s_max * ell as f64 * f64::EPSILON;
        let rank_k = s.iter().filter(|&&v| v > threshold).count();
        // Yᵀ = Q₀ R₀ gives Ỹᵀ = Yᵀ U = Q₀ (R₀ U): no ℓ×m copy of Ỹ is ever made.
        let qr = qr_thin(y.t())?;
        let rt = matmul_tn(e.vectors.view(), qr.r.t()); // Rᵀ = Uᵀ R₀ᵀ
        let mut red = Reduced {
            u: e.vectors,
            s,
            q_m: qr.q,
            rt,
            rank_k,
            m: y.ncols(),
            alpha: 0.0,
        };
        red.alpha = red.compute_alpha()?;
        Ok(red)
    }

    pub fn ell(&self) -> usize {
        self.u.nrows()
    }

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
        Ok(AStep { u_y, lam_y, v, e })
    }

    /// Algorithm 1, second half: `B ← Ỹᵀ E (EᵀE + λI)⁻¹ U_Yᵀ`, i.e.
    /// `B̂ ← R E (EᵀE + λI)⁻¹ U_Yᵀ` in the row space.
    pub fn b_step(&self, a: &AStep, lambda: f64) -> Result<Array2<f64>> {
        let mut m = matmul_tn(a.e.view(), a.e.view());
        m.diag_mut().mapv_inplace(|d| d + lambda);
        let re = matmul_tn(self.rt.view(), a.e.view()); // R E, r×p
        let x = cholesky(m.view())?.solve(re.t()); // (EᵀE + λI)⁻¹ (R E)ᵀ, p×r
        Ok(matmul(x.t(), a.u_y.t()))
    }

    /// Eq. (4), `Q(A, B) = ‖Y − K A Bᵀ‖²/(2λ) + ⟨A, K A⟩/2 + ‖B‖²/2`, at `A` of `a` and
    /// `B = Q_m B̂`. Returns `(Q, ‖Y − K A Bᵀ‖²_F)`; exact because `Y − K A Bᵀ = U (Rᵀ − E U_Yᵀ
    /// B̂ᵀ) Q_mᵀ` with U orthogonal and Q_m orthonormal.
    pub fn objective(&self, a: &AStep, bhat: &Array2<f64>, lambda: f64) -> (f64, f64) {
        let w = matmul(a.u_y.t(), bhat.t()); // U_Yᵀ B̂ᵀ, p×r
        let fitted = matmul(a.e.view(), w.view()); // ℓ×r
        let fit_sq: f64 = self
            .rt
            .iter()
            .zip(fitted.iter())
            .map(|(y, f)| (y - f) * (y - f))
            .sum();
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
    pub fn step_norm(&self, prev: &Factor, bhat: &Array2<f64>) -> f64 {
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

    /// `A = U V U_Yᵀ` (ℓ×p).
    pub fn coefficients(&self, sol: &Solution) -> Array2<f64> {
        matmul(matmul(self.u.view(), sol.a.v.view()).view(), sol.a.u_y.t())
    }

    /// `K A = U E U_Yᵀ` (ℓ×p): the rows are the embedding of the training points.
    pub fn embedding(&self, sol: &Solution) -> Array2<f64> {
        matmul(matmul(self.u.view(), sol.a.e.view()).view(), sol.a.u_y.t())
    }

    /// `B = Q_m B̂` (m×p).
    pub fn factor_b(&self, sol: &Solution) -> Array2<f64> {
        matmul(self.q_m.view(), sol.bhat.view())
    }

    /// The model's coefficients `A Bᵀ = (A B̂ᵀ) Q_mᵀ` (ℓ×m).
    pub fn expansion(&self, sol: &Solution) -> Array2<f64> {
        let abt = matmul(self.coefficients(sol).view(), sol.bhat.t()); // ℓ×r
        matmul(abt.view(), self.q_m.t())
    }

    /// `√‖Yᵀ K Y‖₂`: above this λ the optimum is L = 0 (methods.md §2). `‖YᵀKY‖₂ =
    /// ‖diag(√s) Rᵀ R diag(√s)‖₂`, an ℓ×ℓ matrix, since `Ỹ Ỹᵀ = Rᵀ R`.
    fn compute_alpha(&self) -> Result<f64> {
        let mut srt = self.rt.clone();
        for (mut row, &si) in srt.axis_iter_mut(Axis(0)).zip(self.s.iter()) {
            row *= si.sqrt();
        }
        let g = matmul(srt.view(), srt.t());
        let top = eigh(g.view())?.values.iter().copied().fold(0.0, f64::max);
        Ok(top.sqrt())
    }
}

pub fn frob(a: &Array2<f64>) -> f64 {
    a.iter().map(|x| x * x).sum::<f64>().sqrt()
}

pub fn frob_diff(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    a.iter()
        .zip(b.iter())
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt()
}
