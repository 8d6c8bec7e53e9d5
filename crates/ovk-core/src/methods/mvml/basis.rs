//! The eigenbasis of `S = Σ_l w_l² Ψ_l Ψ_lᵀ` that the default route (spectral.rs) works in,
//! computed once per fit and shared by every output. Every quantity the route needs is `Pᵀ`
//! or `P` applied to a few columns, so on the thin route P itself is never formed.

use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis};

use super::grams::Features;
use crate::linalg::{eigh, gram_tn, matmul, matmul_tn, select_rows, Reflectors};
use crate::Result;

/// The eigenbasis of S: orthonormal P (n×R') spanning range(S), and S's eigenvalues on it.
pub struct Basis {
    frame: Frame,
    /// σ² (R'), S's eigenvalues on range(P).
    pub(crate) sigma2: Array1<f64>,
    /// View weights w (fixed on this route).
    pub w: Array1<f64>,
}

/// P itself, or what stands in for it on the thin route.
enum Frame {
    /// S's eigenvectors (n×n), when v·r ≥ n.
    Dense(Array2<f64>),
    Thin(Box<Thin>),
}

/// v·r < n: the significant columns of `Ψ_w = [w_1 Ψ_1 … w_v Ψ_v]` are `QR` and
/// `RRᵀ = V Σ² Vᵀ`, so `P = Q V` — never formed (n×R', as costly as the QR again): the route
/// needs only `PᵀΨ_w X = Vᵀ (R X_kept + Qᵀ Ψ_cut X_cut)`, `Ψ_wᵀ P C̃` and `Pᵀy = Vᵀ Qᵀy`, with
/// Q applied through its reflectors. The QR, not the eigenvectors of Ψ_wᵀΨ_w mapped through
/// Ψ_w/σ: P stays orthonormal to rounding even where σ is tiny. The cut columns are read
/// from the features per use, not rotated once for all: at n = 16 000 most of Ψ_w's columns
/// can be below the cut, and Ψ_w is never copied whole.
struct Thin {
    r: Array2<f64>,
    v: Array2<f64>,
    q: Reflectors,
    kept: Vec<usize>,
    cut: Vec<usize>,
}

impl Thin {
    /// The frame and σ² (v·r < n).
    fn new(f: &Features, w: &Array1<f64>) -> Result<(Self, Array1<f64>)> {
        let (kept, cut) = significant_columns(f, w);
        let mut psi_kept = Array2::<f64>::zeros((f.n(), kept.len()));
        for (i, &j) in kept.iter().enumerate() {
            let (l, c) = (j / f.r(), j % f.r());
            psi_kept.column_mut(i).scaled_add(w[l], &f.psi[l].column(c));
        }
        let q = Reflectors::new(psi_kept.view())?;
        drop(psi_kept);
        let r = q.r();
        let e = eigh(gram_tn(r.t()).view())?;
        let thin = Thin {
            r,
            v: e.vectors,
            q,
            kept,
            cut,
        };
        Ok((thin, e.values.mapv(|x| x.max(0.0))))
    }

    /// `Ψ_cut X_cut` (n×m): the cut columns of Ψ_w times their rows of X (vr×m), as the
    /// features' product with the kept rows zeroed — no copy of the columns.
    fn cut_product(&self, f: &Features, w: &Array1<f64>, x: ArrayView2<f64>) -> Array2<f64> {
        let mut xc = Array2::<f64>::zeros(x.raw_dim());
        for &j in &self.cut {
            xc.row_mut(j).assign(&x.row(j));
        }
        f.combine(w, xc.view())
    }

    /// `Pᵀ Y` (R'×m) for Y (n×m).
    fn rotate(&self, y: ArrayView2<f64>) -> Array2<f64> {
        matmul_tn(self.v.view(), self.q.qt(y).view())
    }

    /// `Pᵀ Ψ_w X` (R'×m) for stacked columns X (vr×m).
    fn project(&self, f: &Features, w: &Array1<f64>, x: ArrayView2<f64>) -> Array2<f64> {
        let mut t = matmul(self.r.view(), select_rows(x.view(), &self.kept).view());
        if !self.cut.is_empty() {
            t += &self.q.qt(self.cut_product(f, w, x).view());
        }
        matmul_tn(self.v.view(), t.view())
    }

    /// `Ψ_wᵀ P C̃` (vr×m) for C̃ (R'×m).
    fn lift(&self, f: &Features, w: &Array1<f64>, ct: ArrayView2<f64>) -> Array2<f64> {
        let u = matmul(self.v.view(), ct);
        let mut h = Array2::<f64>::zeros((self.kept.len() + self.cut.len(), u.ncols()));
        let hk = matmul_tn(self.r.view(), u.view());
        for (i, &j) in self.kept.iter().enumerate() {
            h.row_mut(j).assign(&hk.row(i));
        }
        if !self.cut.is_empty() {
            // one product per view for all its columns; the cut rows are kept
            let hv = f.spread(w, self.q.q(u.view()).view());
            for &j in &self.cut {
                h.row_mut(j).assign(&hv.row(j));
            }
        }
        h
    }
}

impl Basis {
    /// The eigenbasis P of `S = Σ_l w_l² Ψ_l Ψ_lᵀ` for features `f` and view weights `w`.
    pub fn new(f: &Features, w: &Array1<f64>) -> Result<Self> {
        let (n, v) = (f.n(), f.n_views());
        let (frame, sigma2) = if v * f.r() >= n {
            let mut s = Array2::<f64>::zeros((n, n));
            for l in 0..v {
                s.scaled_add(w[l] * w[l], &matmul(f.psi[l].view(), f.psi[l].t()));
            }
            let s = (&s + &s.t()) * 0.5;
            let e = eigh(s.view())?;
            (Frame::Dense(e.vectors), e.values.mapv(|x| x.max(0.0)))
        } else {
            let (thin, sigma2) = Thin::new(f, w)?;
            (Frame::Thin(Box::new(thin)), sigma2)
        };
        Ok(Basis {
            frame,
            sigma2,
            w: w.clone(),
        })
    }

    /// `Pᵀ Y` for n×m columns Y.
    pub(crate) fn rotate(&self, y: ArrayView2<f64>) -> Array2<f64> {
        match &self.frame {
            Frame::Dense(p) => matmul_tn(p.view(), y),
            Frame::Thin(t) => t.rotate(y),
        }
    }

    /// `Pᵀ Ψ x` for a stacked x ∈ R^{vr}.
    pub(crate) fn project(&self, f: &Features, x: ArrayView1<f64>) -> Array1<f64> {
        self.project_all(f, &x.to_owned().insert_axis(Axis(1)))
            .remove_axis(Axis(1))
    }

    /// `Pᵀ Ψ X` for stacked columns X (vr×m): one product per view for all outputs.
    pub(crate) fn project_all(&self, f: &Features, x: &Array2<f64>) -> Array2<f64> {
        match &self.frame {
            Frame::Dense(p) => matmul_tn(p.view(), f.combine(&self.w, x.view()).view()),
            Frame::Thin(t) => t.project(f, &self.w, x.view()),
        }
    }

    /// `Ψᵀ P C̃` (vr×m) for all outputs at once.
    pub(crate) fn lift_all(&self, f: &Features, ct: &Array2<f64>) -> Array2<f64> {
        match &self.frame {
            Frame::Dense(p) => f.spread(&self.w, matmul(p.view(), ct.view()).view()),
            Frame::Thin(t) => t.lift(f, &self.w, ct.view()),
        }
    }

    /// `h = Ψᵀ P c̃` (stacked), i.e. `Ψᵀ c` for `c = P c̃ (+ the part outside range(P))`.
    pub(crate) fn lift(&self, f: &Features, ct: ArrayView1<f64>) -> Array1<f64> {
        self.lift_all(f, &ct.to_owned().insert_axis(Axis(1)))
            .remove_axis(Axis(1))
    }
}

/// The columns of Ψ_w (stacked index j = l·r + c) whose squared norm exceeds 10⁻¹⁶ of the
/// largest, and the others: in the Nyström coordinates column c of Ψ_l has squared norm σ_c⁴
/// (Ψ_lᵀΨ_l = Σ_l⁴), so the others are the directions the landmark Gram's pseudo-inverse cut,
/// whose share of S is below rounding — the thin QR of S's range need not carry them.
fn significant_columns(f: &Features, w: &Array1<f64>) -> (Vec<usize>, Vec<usize>) {
    let norms: Vec<f64> = (0..f.n_views())
        .flat_map(|l| {
            f.psi[l]
                .columns()
                .into_iter()
                .map(move |c| w[l] * w[l] * c.dot(&c))
        })
        .collect();
    let top = norms.iter().copied().fold(0.0_f64, f64::max);
    (0..norms.len()).partition(|&j| norms[j] > 1e-16 * top)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::rng::Rng;
    use ndarray::s;

    /// The thin route's basis, which never forms P, against S = Ψ_w Ψ_wᵀ formed densely:
    /// quantities that do not depend on how P is rotated within an eigenspace.
    #[test]
    fn the_thin_basis_agrees_with_s_formed_densely() {
        let (n, r, v) = (30, 4, 3);
        let mut g = Rng::new(8);
        let mut psi: Vec<Array2<f64>> = (0..v)
            .map(|_| Array2::from_shape_fn((n, r), |_| g.normal()))
            .collect();
        // a column below the QR's cut still reaches PᵀΨ
        psi[1].column_mut(3).mapv_inplace(|x| x * 1e-9);
        let f = Features {
            psi,
            back: Some(vec![Array2::eye(r); v]),
            root: false,
        };
        let w = Array1::from_vec(vec![0.5, 0.3, 0.2]);
        let basis = Basis::new(&f, &w).unwrap();
        assert!(matches!(basis.frame, Frame::Thin(_)));
        let psi_w = f.weighted(&w);
        let s_dense = matmul(psi_w.view(), psi_w.t());
        let x = Array1::from_shape_fn(v * r, |_| g.normal());
        let y = Array2::from_shape_fn((n, 2), |_| g.normal());
        // Ψᵀ P Pᵀ Ψ x = ΨᵀΨ x, as Ψx lies in range(P)
        let px = basis.project(&f, x.view());
        let back = basis.lift(&f, px.view());
        let want = psi_w.t().dot(&psi_w.dot(&x));
        let err = (&back - &want).iter().fold(0.0_f64, |m, d| m.max(d.abs()));
        assert!(
            err < 1e-10 * want.iter().fold(0.0_f64, |m, d| m.max(d.abs())),
            "{err}"
        );
        // yᵀ S y = Σ σ_j² ỹ_j², and the batched forms equal the one-column ones
        let yt = basis.rotate(y.view());
        for k in 0..2 {
            let yk = y.column(k);
            let sy: f64 = yk.dot(&s_dense.dot(&yk));
            let got: f64 = yt
                .column(k)
                .iter()
                .zip(&basis.sigma2)
                .map(|(a, s)| a * a * s)
                .sum();
            assert!((got - sy).abs() < 1e-10 * sy, "{got} {sy}");
            let single = basis.rotate(yk.insert_axis(Axis(1)));
            assert!((&single.column(0) - &yt.column(k))
                .iter()
                .all(|d| d.abs() < 1e-12));
        }
        let xs = Array2::from_shape_fn((v * r, 2), |_| g.normal());
        let all = basis.project_all(&f, &xs);
        for k in 0..2 {
            let one = basis.project(&f, xs.column(k));
            assert!((&all.column(k) - &one).iter().all(|d| d.abs() < 1e-10));
        }
        let lifted = basis.lift_all(&f, &all);
        let one = basis.lift(&f, all.column(1));
        assert!((&lifted.column(1) - &one).iter().all(|d| d.abs() < 1e-10));
    }

    #[test]
    fn dropped_columns_leave_the_range_of_s_unchanged() {
        let mut g = Rng::new(6);
        let mut psi = Array2::from_shape_fn((20, 6), |_| g.normal());
        psi.column_mut(2).mapv_inplace(|x| x * 1e-9);
        // two views of three columns, the second weighted down: the cut reads the weights
        let f = Features {
            psi: vec![
                psi.slice(s![.., ..3]).to_owned(),
                psi.slice(s![.., 3..]).to_owned(),
            ],
            back: None,
            root: false,
        };
        let (kept, cut) = significant_columns(&f, &Array1::from_vec(vec![1.0, 1.0]));
        assert_eq!((kept.len(), cut), (5, vec![2]));
        let (_, cut) = significant_columns(&f, &Array1::from_vec(vec![1.0, 1e-9]));
        assert_eq!(cut, vec![2, 3, 4, 5]);
        let kept = psi.select(Axis(1), &kept);
        let s_full = matmul(psi.view(), psi.t());
        let s_kept = matmul(kept.view(), kept.t());
        let err = (&s_full - &s_kept)
            .iter()
            .fold(0.0_f64, |m, x| m.max(x.abs()));
        assert!(err < 1e-15 * 20.0, "{err}");
    }
}
