//! The few dense decompositions and matrix-equation solvers every method shares, on faer.
//!
//! Everything outside this folder speaks `ndarray`; conversion to faer happens here only, as
//! zero-copy views where the layout allows it.

mod convert;
mod decomp;
mod hessenberg;
mod interruptible;
mod lbfgs;
mod norm;
mod qr;
mod qz;
mod sylvester;

pub use convert::view;
pub use decomp::{cholesky, eigh, lu, matmul, Cholesky, Lu, SymEigen};
pub(crate) use decomp::{gram_tn, matmul_into, matmul_tn, solve_lower};
pub(crate) use hessenberg::hessenberg;
pub use hessenberg::Hessenberg;
pub(crate) use interruptible::interruptible;
pub(crate) use lbfgs::{lbfgs, LbfgsStatus, Progress};
pub(crate) use lbfgs::{Control, LbfgsOptions};
pub(crate) use norm::frobenius_sq;
pub use norm::{frobenius, inner};
pub use qr::qr_thin;
pub(crate) use qr::Reflectors;
pub use qr::ThinQr;
pub(crate) use qz::{generalized_schur, solve_shifted_quasi_triangular};
pub use sylvester::sylvester_sym;
pub(crate) use sylvester::{divide_by_spectrum, lyapunov_sym, symmetrize};

/// Choose faer's thread count. Measured on the 2-core machines this runs on (see
/// docs/performance.md): sequential kernels win for the matrix sizes ovk meets, so that is the
/// default; `OVK_THREADS=n` overrides it.
pub fn configure_parallelism() {
    let threads = std::env::var("OVK_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(1);
    let par = match std::num::NonZeroUsize::new(threads) {
        Some(n) if threads > 1 => faer::Par::Rayon(n),
        _ => faer::Par::Seq,
    };
    faer::set_global_parallelism(par);
}
