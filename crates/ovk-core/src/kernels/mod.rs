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
pub mod precomputed;
mod spec;

pub use gram::{cross_gram, gram, sq_dists};
pub use graph::{
    knn_graph, knn_graph_from_sq_dists, laplacian, laplacian_power, pinv_psd, GraphWeights,
    LaplacianKind, SparseLaplacian,
};
pub use heuristics::{mean_distance, median_distance};
pub use knn::{knn_sparse, nearest_neighbours, SparseGraph, KNN_BLOCK};
pub use lowrank::{input_factor, kernel_diagonal, FeatureMap, InputFactor, Landmarks};
pub use memory::{
    available_memory_bytes, check_fits, check_fits_or, dense_bytes, fit_allocator_to_limits,
    format_bytes, memory_budget, parse_size, peak_rss_bytes, usable_bytes, MemoryBudget,
};
pub use nystrom::{nystrom, NystromFactor};
pub use options::KERNEL_OPTIONS;
pub use precomputed::GramFile;
pub use spec::{InputRank, Kernel, KernelName, KernelSpec, Sigma};
