//! The kernel options of a run, declared once as `ParamSpec`s: `ovk run`'s flags and config
//! keys (`cli::options`), the Kernel pane's fields (`tui`), `docs/config.md`, and the range
//! checks of `KernelSpec::check` are all made from these.

use super::lowrank::Landmarks;
use super::spec::KernelName;
use crate::util::choice::Choice;
use crate::util::param::{ParamDefault, ParamKind, ParamSpec};

/// The `kernel` setting: the scalar input kernel by name.
pub const KERNEL: ParamSpec = ParamSpec {
    key: "kernel",
    label: "input kernel",
    help: "scalar input kernel: linear | gaussian | polynomial | laplacian | cosine (xᵀz over \
           ‖x‖‖z‖) | precomputed (a Gram matrix given with --gram, or --gram-view per view)",
    unit: "",
    kind: ParamKind::Choice(KernelName::NAMES),
    default: ParamDefault::Text(KernelName::Gaussian.name()),
};

/// The `sigma` setting: the kernel width σ, or `median`.
pub const SIGMA: ParamSpec = ParamSpec {
    key: "sigma",
    label: "width",
    help: "kernel width σ (gaussian, laplacian): a positive number, or median = the median \
           distance between training rows after scaling",
    unit: "σ",
    kind: ParamKind::Text,
    default: ParamDefault::Text("median"),
};

/// `DEGREE`'s and `COEF0`'s defaults, as numbers (`KernelSpec::default`).
pub(crate) const DEGREE_DEFAULT: u32 = 2;
pub(crate) const COEF0_DEFAULT: f64 = 1.0;

/// The `degree` setting: the polynomial degree d.
pub const DEGREE: ParamSpec = ParamSpec {
    key: "degree",
    label: "degree",
    help: "polynomial degree d",
    unit: "d",
    kind: ParamKind::Int { min: 1, max: 20 },
    default: ParamDefault::Int(DEGREE_DEFAULT as i64),
};

/// The `coef0` setting: the polynomial offset c in (xᵀz + c)^d.
pub const COEF0: ParamSpec = ParamSpec {
    key: "coef0",
    label: "offset",
    help: "polynomial offset c in (xᵀz + c)^d",
    unit: "c",
    kind: ParamKind::Float {
        min: 0.0,
        max: f64::INFINITY,
        min_open: false,
        max_open: false,
        log: false,
    },
    default: ParamDefault::Float(COEF0_DEFAULT),
};

/// The `input_rank` setting: exact Gram, a rank-R Nyström factor, or automatic.
pub const INPUT_RANK: ParamSpec = ParamSpec {
    key: "input_rank",
    label: "input rank",
    help: "input kernel: a rank-R Nyström factor K ≈ ZZᵀ (no n×n matrix; for mvml block \
           Nyström on R landmark columns in all, ⌊R/v⌋ per view), exact, or auto = exact up to \
           5000 training rows and rank 2000 beyond (mvml: unless --nystrom is given); a linear \
           kernel with d ≤ n features is solved exactly in the primal, unless a rank R < d asks \
           for a rank-R factor",
    unit: "r",
    kind: ParamKind::Text,
    default: ParamDefault::Text("auto"),
};

/// The `landmarks` setting: how the low-rank factor picks its landmarks.
pub const LANDMARKS: ParamSpec = ParamSpec {
    key: "landmarks",
    label: "landmarks",
    help: "landmarks of the low-rank factor: rpcholesky (randomly pivoted Cholesky) | uniform",
    unit: "",
    kind: ParamKind::Choice(Landmarks::NAMES),
    default: ParamDefault::Text(Landmarks::Rpcholesky.name()),
};

/// Every kernel option, for the test that checks each choice list against its enum.
#[cfg(test)]
pub(crate) const KERNEL_OPTIONS: [ParamSpec; 6] =
    [KERNEL, SIGMA, DEGREE, COEF0, INPUT_RANK, LANDMARKS];
