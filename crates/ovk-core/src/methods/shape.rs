//! The sizes of a problem, known before any kernel matrix is built: what a method's memory
//! estimate (`Method::peak_bytes`) is computed from.

use ndarray::ArrayView2;

use super::input::Route;
use super::Problem;
use crate::kernels::{InputRank, KernelName, Landmarks};
use crate::Result;

/// The sizes of a problem and its input-kernel choice: what memory and time estimates need, without the data.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProblemShape {
    /// Training rows, labeled and unlabeled (N).
    pub n_train: usize,
    /// Training rows with labels (ℓ).
    pub n_labeled: usize,
    /// Held-out rows.
    pub n_test: usize,
    /// Feature columns.
    pub d: usize,
    /// Output columns.
    pub m: usize,
    /// Views (multi-view methods); 0 when the data has none.
    pub views: usize,
    /// The input-kernel choice (`--input-rank`, `--landmarks`) and whether the kernel is
    /// linear: with n and d they decide a method's `Route`.
    pub input_rank: InputRank,
    /// How a low-rank factor picks its landmarks.
    pub landmarks: Landmarks,
    /// Whether the input kernel is linear (a primal route may apply).
    pub linear: bool,
    /// Whether the input kernel is linear on packed sparse rows (okl's Krylov route).
    pub sparse_linear: bool,
}

impl ProblemShape {
    /// The shape of `p`.
    pub fn of(p: &Problem) -> Self {
        let (linear, sparse_linear) = linear_kind(p.kernel_spec.name, p.x.view());
        ProblemShape {
            n_train: p.n_train(),
            n_labeled: p.labeled.iter().filter(|&&b| b).count(),
            n_test: p.holdout.as_ref().map_or(0, |h| h.x.nrows()),
            d: p.x.ncols(),
            m: p.n_outputs(),
            views: p.views.len(),
            input_rank: p.kernel_spec.input_rank,
            landmarks: p.kernel_spec.landmarks,
            linear,
            sparse_linear,
        }
    }

    /// Bytes `Problem::labeled_part` copies: the labeled rows' inputs and targets when some
    /// training rows are unlabeled, nothing when all are labeled.
    pub fn labeled_part_bytes(&self) -> u64 {
        if self.n_labeled < self.n_train {
            mats(1, self.n_labeled, self.d + self.m)
        } else {
            0
        }
    }

    /// The route a method that can solve on a factor takes with `n` training rows.
    pub fn route(&self, n: usize) -> Result<Route> {
        Route::resolve(self.input_rank, self.landmarks, self.linear, n, self.d)
    }

    /// `route` for a method that also solves on a Krylov basis of Y (okl, krr): a linear kernel
    /// on sparse rows takes the Krylov route where `route` would be exact.
    pub fn route_or_krylov(&self, n: usize) -> Result<Route> {
        Ok(match self.route(n)? {
            Route::Exact if self.sparse_linear => Route::Krylov,
            r => r,
        })
    }
}

/// `(linear, sparse_linear)` of a `kernel` on rows `x`. Packed sparse rows are not the
/// features themselves: no primal route on them, but their linear kernel's products are cheap
/// (the Krylov route).
pub(crate) fn linear_kind(kernel: KernelName, x: ArrayView2<f64>) -> (bool, bool) {
    let linear = kernel == KernelName::Linear;
    let packed = crate::kernels::packed::is_packed(x);
    (linear && !packed, linear && packed)
}

/// What a fit adds to its process beside the matrices a method's `peak_bytes` counts: the
/// worker threads' stacks and heaps and the code paged in as it first runs (measured 2.5–5 MiB
/// over the estimate at n = 500, where the matrices are small, `ovk bench scaling`).
pub const RUNTIME_BYTES: u64 = 4 << 20;

/// What loading leaves resident beside the rows it returns: the readers' code paged in and the
/// thread pools' stacks and heaps. At the start of the fit VmRSS stood 5.9–7.4 MiB above the
/// process's base on 40- to 2000-row files (`ovk run`, 2026-12-02), `RUNTIME_BYTES` of it the
/// fit's own; the 9 MiB counted before the numeric CSV reader read 1.17–1.28× the peaks of
/// small low-rank fits (`ovk bench lowrank --suite compare`).
pub const LOADING_BYTES: u64 = 5 << 20;

/// What loading holds at its peak beside two copies of the rows: the readers' buffers and
/// threads (VmRSS peaked 11.5–13.1 MiB above the base while loading 40- to 2000-row files).
pub const LOADING_PEAK_BYTES: u64 = 9 << 20;

/// Bytes of `count` dense r×c matrices of f64 (saturating: an absurd size stays absurd).
pub fn mats(count: u64, r: usize, c: usize) -> u64 {
    crate::kernels::dense_bytes(r, c).saturating_mul(count)
}

/// glibc's largest dynamic mmap threshold on 64-bit (`DEFAULT_MMAP_THRESHOLD_MAX`). Freeing a
/// mapped block up to this size raises the threshold, so later blocks of that size come from
/// the heap, and a freed heap block stays resident; a larger block is always its own mapping,
/// returned when freed.
const GLIBC_MMAP_THRESHOLD_MAX: u64 = 32 << 20;

/// `mats(count, r, c)` for temporaries already freed at the peak, which still count while an
/// r×c block is small enough for glibc to keep (see `GLIBC_MMAP_THRESHOLD_MAX`), and 0 above.
/// Measured in `ovk bench scaling`: the exact kde and vvmr peaks were 9.6–15.1 n×n at n = 2000
/// (30.5 MiB blocks) and 8.0–10.5 n×n at n = 4000 (122 MiB).
pub fn mats_freed(count: u64, r: usize, c: usize) -> u64 {
    if crate::kernels::dense_bytes(r, c) <= GLIBC_MMAP_THRESHOLD_MAX {
        mats(count, r, c)
    } else {
        0
    }
}
