//! The few dense decompositions and matrix-equation solvers every method shares, on faer.
//!
//! Everything outside this folder speaks `ndarray`; conversion to faer happens here only, as
//! zero-copy views where the layout allows it.

mod convert;
mod decomp;
mod eigen_basis;
mod hessenberg;
mod interruptible;
mod lbfgs;
mod norm;
mod qr;
mod qz;
mod reflectors;
mod rows;
mod sylvester;
mod sytrd;
mod tridiag;

pub use convert::view;
pub use decomp::gram_tn;
pub(crate) use decomp::PARALLEL_EIGH_FROM;
pub(crate) use decomp::{add_gram_tn_lower, add_matmul_tn, matmul_acc, mirror_lower};
pub use decomp::{cholesky, eigh, lu, matmul, solve_shifted_in_place, Cholesky, Lu, SymEigen};
pub(crate) use decomp::{
    matmul_into, matmul_symmetric, matmul_tn, solve_lower_t, solve_rows_lower_in_place,
};
pub use eigen_basis::{eigh_factored, Eigenvectors};
pub(crate) use hessenberg::hessenberg;
pub use hessenberg::Hessenberg;
pub(crate) use interruptible::{interruptible, stop_if_abandoned};
pub(crate) use lbfgs::{lbfgs, LbfgsStatus, Progress};
pub(crate) use lbfgs::{Control, LbfgsOptions};
pub(crate) use norm::frobenius_sq;
pub use norm::{frobenius, inner};
pub use qr::qr_thin;
pub(crate) use qr::Reflectors;
pub use qr::ThinQr;
pub(crate) use qz::{generalized_schur, solve_shifted_quasi_triangular};
pub use rows::select_rows;
pub use sylvester::sylvester_sym;
pub(crate) use sylvester::{divide_by_spectrum, lyapunov_sym, symmetrize};
pub(crate) use tridiag::{tridiagonal, tridiagonal_in_place, Tridiagonal};

/// Choose faer's thread count: every core by default — on 2 cores a 2-thread eigh, GEMM and
/// ZᵀZ beat one from n ≈ 500 on (`cargo bench --bench threads`, docs/performance.md), and
/// faer keeps small products sequential itself. `OVK_THREADS=n` pins it (1: sequential).
pub fn configure_parallelism() {
    set_threads(threads_wanted(0));
}

/// As `configure_parallelism`, leaving one core to the terminal for the workbench's fit
/// worker (unless `OVK_THREADS` says otherwise).
pub fn configure_parallelism_leaving_a_core() {
    set_threads(threads_wanted(1));
}

/// `OVK_THREADS`, or the cores available less `spare` (at least one) — one under an
/// address-space limit (`ulimit -v`): each thread's stack and faer's per-thread workspace
/// reserve address space the memory guard cannot see, and an allocation it admitted would
/// then abort (tests/it/hostile_outputs.rs).
fn threads_wanted(spare: usize) -> usize {
    std::env::var("OVK_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| {
            if crate::util::limits::address_space_limit().is_some() {
                return 1;
            }
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            cores.saturating_sub(spare).max(1)
        })
}

fn set_threads(threads: usize) {
    let par = match std::num::NonZeroUsize::new(threads) {
        Some(n) if threads > 1 => faer::Par::Rayon(n),
        _ => faer::Par::Seq,
    };
    faer::set_global_parallelism(par);
}
