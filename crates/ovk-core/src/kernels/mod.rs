//! Scalar kernels k(x, z), their Gram matrices, the median heuristic, memory estimates, and
//! (for the methods that need them) Nyström factors, the shared low-rank input factor
//! `K ≈ ZZᵀ`, and graph Laplacians.

mod gram;
mod graph;
mod heuristics;
mod knn;
mod lowrank;
mod memory;
mod nystrom;
pub mod options;
pub(crate) mod packed;
pub mod precomputed;
mod spec;
mod workspace;

pub use gram::{cross_gram, gram};
pub(crate) use gram::{gram_block_rows, sq_dists};
pub use graph::{
    knn_graph, laplacian, laplacian_power, pinv_psd, GraphWeights, LaplacianKind, SparseLaplacian,
};
#[cfg(test)]
pub(crate) use heuristics::mean_distance;
pub use heuristics::median_distance;
pub(crate) use knn::KNN_BLOCK;
pub use knn::{knn_sparse, SparseGraph};
pub(crate) use lowrank::kernel_diagonal;
pub use lowrank::FeatureMap;
pub use lowrank::{input_factor, InputFactor, Landmarks};
pub use memory::{
    available_memory_bytes, fit_allocator_to_limits, format_bytes, peak_rss_bytes, rss_bytes,
};
pub(crate) use memory::{
    check_fits, check_fits_or, dense_bytes, product_can_reserve, return_freed_memory, usable_bytes,
};
pub use nystrom::nystrom;
pub use nystrom::NystromFactor;
pub use precomputed::GramFile;
pub use spec::{InputRank, Kernel, KernelName, KernelSpec, Sigma};
pub use workspace::product_workspace_bytes;
