//! Vector-valued manifold regularisation (Minh & Sindhwani, ICML 2011), docs/methods.md §4:
//! semi-supervised multi-output learning with the matrix-valued kernel `k(x, z) Q`,
//! `Q = γ_O L_out† + (1 − γ_O) I_n`, and a graph Laplacian over all N = ℓ + u training inputs.
//!
//! Exact route: dense N×N Gram, graph and Laplacian, one Hessenberg form for every eigen-column
//! of Q. On a low-rank (or primal) factor `G ≈ ZZᵀ` (`methods::input`, n = N) nothing is N×N:
//! a sparse k-NN graph, its Laplacian applied as an operator, and by Woodbury one r×r matrix
//! `Zᵀ M Z` shared by every eigen-column (`solve_on_factor`, methods.md §6).

use ndarray::{s, Array2, ArrayView2, Zip};
use rayon::prelude::*;
use serde_json::{json, Map, Value as Json};

use super::expansion::{FeatureExpansion, KernelExpansion, PREDICT_ROWS};
use super::input::{factor_observed, factor_peak_bytes, FactorSummary, Route};
use super::params::{MethodConfig, ParamDefault, ParamKind, ParamSpec};
use super::{
    check_cancel, mats, mats_freed, record_solved, Clock, Fit, Method, Observer, Params, Phase,
    Problem, ProblemShape,
};
use crate::kernels::{
    check_fits, dense_bytes, gram, knn_graph, knn_sparse, laplacian, laplacian_power, pinv_psd,
    GraphWeights, InputFactor, LaplacianKind, SparseGraph, SparseLaplacian, KNN_BLOCK,
};
use crate::linalg::{
    add_matmul_tn, eigh, hessenberg, interruptible, matmul, matmul_tn, select_rows,
    stop_if_abandoned, symmetrize,
};
use crate::methods::details::key;
use crate::util::choice::{choice_enum, Choice};
use crate::{ErrorKind, OvkError, Result};

/// Vector-valued manifold regularisation (Minh & Sindhwani): semi-supervised, outputs coupled by Q.
pub struct Vvmr;

/// Eigenvalues of L_out below this fraction of the largest are its null space.
const PINV_REL_TOL: f64 = 1e-10;
/// How many label pairs `details.tied_labels` and `details.output_q_top` list.
const TOP_TIES: usize = 10;
/// Peak number of N×N matrices alive during a fit (for the memory guard): G, L and, while M is
/// reduced, faer's copy of it and the reduced matrix read back (4.5 with temporaries).
const N_BY_N_MATRICES: u64 = 5;

const GAMMA_A: ParamSpec = ParamSpec {
    key: "gamma_a",
    label: "ambient regularisation",
    help: "weight γ_A of the RKHS norm ‖f‖²_K in problem (12)",
    unit: "γ_A",
    kind: ParamKind::POSITIVE,
    default: ParamDefault::Float(1e-2),
};

const GAMMA_I: ParamSpec = ParamSpec {
    key: "gamma_i",
    label: "manifold regularisation",
    help: "weight γ_I of the input-graph smoothness ⟨f, (L ⊗ I) f⟩ over labeled and unlabeled \
           points; 0 gives vector-valued RLS on the labeled points (eq. 17 scales it by ℓ: on emotions 1e-3 was best, 0.1 cost 4 AUC points)",
    unit: "γ_I",
    kind: ParamKind::Float {
        min: 0.0,
        max: 1e12,
        min_open: false,
        max_open: false,
        log: false,
    },
    default: ParamDefault::Float(1e-3),
};

choice_enum! {
    /// How γ_I enters problem (12): as printed, or divided by (u + ℓ)² as in Belkin, Niyogi,
    /// Sindhwani 2006 (LapRLS), whose scale the paper's γ_I may follow.
    pub enum GammaIScale: "gamma_i_scale" {
        /// γ_I ⟨f, M f⟩ as in eq. (12), i.e. ℓγ_I L in eq. (17).
        Paper = "paper",
        /// γ_I/(u + ℓ)² ⟨f, M f⟩ (Belkin et al.).
        Belkin = "belkin",
    }
}

const GAMMA_I_SCALE: ParamSpec = ParamSpec {
    key: "gamma_i_scale",
    label: "γ_I scale",
    help: "paper: γ_I as in eq. (12) (ℓγ_I L in eq. 17); belkin: γ_I/(u + ℓ)², LapRLS's scale \
           (on scene γ_I up to 100 is harmless under it, where the paper's scale loses AUC at 0.1)",
    unit: "",
    kind: ParamKind::Choice(GammaIScale::NAMES),
    default: ParamDefault::Text(GammaIScale::Paper.name()),
};

const GAMMA_O: ParamSpec = ParamSpec {
    key: "gamma_o",
    label: "output coupling",
    help: "γ_O in Q = γ_O L_out† + (1 − γ_O) I, 0 ≤ γ_O < 1; 0 gives independent outputs",
    unit: "γ_O",
    kind: ParamKind::Float {
        min: 0.0,
        max: 1.0,
        min_open: false,
        max_open: false,
        log: false,
    },
    default: ParamDefault::Float(0.5),
};

const KNN: ParamSpec = ParamSpec {
    key: "knn",
    label: "input neighbours",
    help: "k of the k-nearest-neighbour graph over all training inputs (symmetrised by OR)",
    unit: "k",
    kind: ParamKind::Int {
        min: 1,
        max: 100_000,
    },
    default: ParamDefault::Int(10),
};

const GRAPH_WEIGHTS: ParamSpec = ParamSpec {
    key: "graph_weights",
    label: "graph weights",
    help: "edge weights of both graphs: binary (1) or heat exp(−d²/(2t²)) with t the mean edge \
           length",
    unit: "",
    kind: ParamKind::Choice(GraphWeights::NAMES),
    default: ParamDefault::Text(GraphWeights::Heat.name()),
};

const LAPLACIAN: ParamSpec = ParamSpec {
    key: "laplacian",
    label: "input Laplacian",
    help: "normalized I − D^{-1/2} W D^{-1/2} or unnormalized D − W Laplacian of the input graph",
    unit: "",
    kind: ParamKind::Choice(LaplacianKind::NAMES),
    default: ParamDefault::Text(LaplacianKind::Normalized.name()),
};

const LAPLACIAN_POWER: ParamSpec = ParamSpec {
    key: "laplacian_power",
    label: "Laplacian power",
    help: "the input graph penalty uses Lᵖ (iterated Laplacian)",
    unit: "p",
    kind: ParamKind::Int { min: 1, max: 10 },
    default: ParamDefault::Int(1),
};

const OUTPUT_KNN: ParamSpec = ParamSpec {
    key: "output_knn",
    label: "output neighbours",
    help: "k of the k-NN graph over the outputs (each output = its label column over the \
           labeled rows); capped at n − 1",
    unit: "k",
    kind: ParamKind::Int {
        min: 1,
        max: 100_000,
    },
    default: ParamDefault::Int(3),
};

const PARAMS: &[ParamSpec] = &[
    GAMMA_A,
    GAMMA_I,
    GAMMA_I_SCALE,
    GAMMA_O,
    KNN,
    GRAPH_WEIGHTS,
    LAPLACIAN,
    LAPLACIAN_POWER,
    OUTPUT_KNN,
];

impl Method for Vvmr {
    fn name(&self) -> &'static str {
        super::MethodName::Vvmr.name()
    }
    fn summary(&self) -> &'static str {
        "vector-valued manifold regularisation: semi-supervised, input graph + output graph"
    }
    fn citation(&self) -> &'static str {
        "Minh, Sindhwani — Vector-valued manifold regularization, ICML 2011"
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }
    fn input_factor(&self) -> bool {
        true
    }
    fn exact_eighs(&self) -> f64 {
        // M's Hessenberg reduction and the shifted solves: measured 1.7–1.9 eighs at m = 10 and
        // 2.0–2.2 at m = 100, n = 2000–4000 (`ovk bench scaling`, 2026-12-02)
        1.8
    }
    fn input_route(&self, s: &ProblemShape) -> Result<Route> {
        s.route(s.n_train)
    }
    fn row_copy_bytes(&self, s: &ProblemShape, _: &Params) -> Result<u64> {
        // Its targets are among the N×m blocks `peak_bytes` counts; on a factor the model
        // reads Z's rows, the exact route's model keeps a copy of the inputs.
        Ok(match self.input_route(s)?.factor_columns(s.d) {
            Some(_) => 0,
            None => mats(1, s.n_train, s.d),
        })
    }
    fn peak_bytes(&self, s: &ProblemShape, params: &Params) -> Result<u64> {
        if let Some(r) = self.input_route(s)?.factor_columns(s.d) {
            let h = VvmrConfig::from_params(params)?;
            return Ok(factor_route_bytes(
                s,
                r.min(s.n_train),
                h.knn,
                h.laplacian_power,
                h.gamma_i != 0.0,
            ));
        }
        let n = s.n_train;
        // G and L, and M's Hessenberg reduction (faer's copy, and the reduced matrix read back
        // with U's reflectors in it), with temporaries and each thread's solve buffers; and
        // three freed temporaries resident only while glibc keeps them (measured: `ovk bench
        // scaling`'s VmHWM, 2026-12-02, less the process's own memory, is 4.4–4.5 N×N at
        // N = 3000 and 4000, and 7.4–7.5 at 1000 and 2000).
        Ok(mats(9, n, n) / 2 + mats_freed(3, n, n) + mats(6, n, s.m) + mats(1, s.n_test, n))
    }
    fn memory_advice(&self) -> &'static str {
        "use a low-rank input kernel (--input-rank R, e.g. 1000), or fewer unlabeled points \
         (--labeled keeps labels, but every training row enters the graph: raise \
         --test-fraction or subsample the file)"
    }
    fn semi_supervised(&self) -> bool {
        true
    }

    fn fit(&self, p: &Problem, params: &Params, obs: &mut dyn Observer) -> Result<Fit> {
        let clock = Clock::start();
        let given = VvmrConfig::from_params(params)?;
        let h = given.on_rows(p.n_train());
        let (gamma_a, gamma_i, gamma_o) = (h.gamma_a, h.gamma_i, h.gamma_o);
        let (k, weights, kind, power, k_out) = (
            h.knn,
            h.graph_weights,
            h.laplacian,
            h.laplacian_power,
            h.output_knn,
        );

        let n_all = p.n_train();
        if p.labeled.len() != n_all || p.y.nrows() != n_all {
            return Err(OvkError::internal(format!(
                "vvmr: {} inputs, {} target rows, {} labeled flags",
                n_all,
                p.y.nrows(),
                p.labeled.len()
            )));
        }
        let rows = p.labeled_rows();
        let ell = rows.len();
        if ell == 0 {
            return Err(OvkError::input(
                "vvmr needs at least one labeled training row (every target is missing)",
            ));
        }
        let y = targets_with_zero_unlabeled(p)?;
        let route = self.input_route(&ProblemShape::of(p))?;
        if route != Route::Exact {
            return fit_on_factor(p, route, &given, y, obs, &clock);
        }
        // G, L, M's Hessenberg reduction and its copy are N×N each.
        check_fits(
            N_BY_N_MATRICES * dense_bytes(n_all, n_all),
            &format!("vvmr's {N_BY_N_MATRICES} dense {n_all}×{n_all} matrices"),
        )?;

        obs.phase(Phase::Gram, None);
        let g = gram(&p.kernel, p.x.view())?;
        check_cancel(obs)?;
        let l = input_laplacian(p.x.view(), k, weights, kind, power)?;
        check_cancel(obs)?;
        let y_labeled = select_rows(y.view(), &rows);
        let (w_out, q) = output_kernel(y_labeled.view(), k_out, weights, gamma_o)?;
        check_cancel(obs)?;

        obs.phase(Phase::Decomposition, None);
        // One-shot O(N³) work: on its own thread (the matrices go there and come back), so a
        // cancel returns at once.
        let labeled = p.labeled.clone();
        let (a, g, l, q, y) = interruptible(&|| obs.is_cancelled(), move || {
            let a = Terms {
                g: g.view(),
                l: l.view(),
                labeled: &labeled,
                q: q.view(),
                y: y.view(),
                gamma_a,
                gamma_i,
            }
            .solve()?;
            Ok((a, g, l, q, y))
        })?;
        let terms = Terms {
            g: g.view(),
            l: l.view(),
            labeled: &p.labeled,
            q: q.view(),
            y: y.view(),
            gamma_a,
            gamma_i,
        };
        let coef = matmul(a.view(), q.view()); // f(x) = Σᵢ k(x, xᵢ) Q aᵢ, eq. (16)
        let f = matmul(g.view(), coef.view());
        let lf = matmul(l.view(), f.view());
        let objective = terms.objective_from_outputs(f.view(), lf.view(), a.view());
        let residual = terms.residual_from_outputs(f.view(), lf.view(), a.view());
        record_solved(obs, objective, Some(residual), &clock)?;

        let unlabeled: Vec<usize> = (0..n_all).filter(|&i| !p.labeled[i]).collect();
        let predictions_unlabeled = select_rows(f.view(), &unlabeled);

        let details = given.details(p, ell, unlabeled.len(), residual, w_out.view(), q.view());

        let mut fit = Fit::new(Box::new(KernelExpansion {
            kernel: p.kernel,
            x_train: p.x.clone(),
            coef: coef.into(),
            fitted: None,
        }));
        fit.iterations = 1;
        fit.objective = Some(objective);
        fit.details = details;
        fit.matrices.push(("coefficients".into(), a));
        fit.matrices.push(("output_q".into(), q));
        fit.matrices.push(("output_graph".into(), w_out));
        fit.matrices
            .push(("predictions_unlabeled".into(), predictions_unlabeled));
        Ok(fit)
    }
}

/// vvmr's hyperparameters, read once for either route.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct VvmrConfig {
    /// Weight γ_A of the RKHS norm ‖f‖²_K in problem (12).
    pub gamma_a: f64,
    /// Weight γ_I of the input-graph smoothness ⟨f, (L ⊗ I) f⟩.
    pub gamma_i: f64,
    /// How γ_I maps to eq. (12)'s (`on_rows`).
    pub gamma_i_scale: GammaIScale,
    /// 0 ≤ γ_O < 1 (`check_gamma_o`).
    pub gamma_o: f64,
    /// k of the k-nearest-neighbour graph over the training inputs.
    pub knn: usize,
    /// Edge weights of both graphs (binary or heat kernel).
    pub graph_weights: GraphWeights,
    /// Which Laplacian of the input graph (normalized or unnormalized).
    pub laplacian: LaplacianKind,
    /// Power p of the iterated Laplacian Lᵖ in the penalty.
    pub laplacian_power: usize,
    /// k of the k-NN graph over the outputs that builds L_out.
    pub output_knn: usize,
}

impl MethodConfig for VvmrConfig {
    fn from_params(params: &Params) -> Result<Self> {
        Ok(VvmrConfig {
            gamma_a: params.f64(&GAMMA_A)?,
            gamma_i: params.f64(&GAMMA_I)?,
            gamma_i_scale: params.choice(&GAMMA_I_SCALE)?,
            gamma_o: check_gamma_o(params.f64(&GAMMA_O)?)?,
            knn: params.usize(&KNN)?,
            graph_weights: params.choice(&GRAPH_WEIGHTS)?,
            laplacian: params.choice(&LAPLACIAN)?,
            laplacian_power: params.usize(&LAPLACIAN_POWER)?,
            output_knn: params.usize(&OUTPUT_KNN)?,
        })
    }
}

impl VvmrConfig {
    /// The same problem in eq. (12)'s scale for N = u + ℓ training rows: the Belkin scale
    /// divides γ_I by N².
    pub(crate) fn on_rows(self, n_all: usize) -> Self {
        VvmrConfig {
            gamma_i: self.gamma_i_on_rows(n_all),
            gamma_i_scale: GammaIScale::Paper,
            ..self
        }
    }

    fn gamma_i_on_rows(&self, n_all: usize) -> f64 {
        match self.gamma_i_scale {
            GammaIScale::Paper => self.gamma_i,
            GammaIScale::Belkin => self.gamma_i / (n_all as f64).powi(2),
        }
    }

    /// The session details both routes share.
    fn details(
        &self,
        p: &Problem,
        ell: usize,
        n_unlabeled: usize,
        residual: f64,
        w_out: ArrayView2<f64>,
        q: ArrayView2<f64>,
    ) -> Map<String, Json> {
        let mut details = Map::new();
        details.insert("gamma_a".into(), json!(self.gamma_a));
        details.insert("gamma_i".into(), json!(self.gamma_i));
        if self.gamma_i_scale != GammaIScale::Paper {
            details.insert("gamma_i_scale".into(), json!(self.gamma_i_scale.name()));
            details.insert(
                "gamma_i_eq12".into(),
                json!(self.gamma_i_on_rows(p.n_train())),
            );
        }
        details.insert("gamma_o".into(), json!(self.gamma_o));
        details.insert("knn".into(), json!(self.knn));
        details.insert(
            "output_knn".into(),
            json!(self.output_knn.min(p.n_outputs().saturating_sub(1))),
        );
        details.insert("graph_weights".into(), json!(self.graph_weights.name()));
        details.insert("laplacian".into(), json!(self.laplacian.name()));
        details.insert("laplacian_power".into(), json!(self.laplacian_power));
        details.insert("n_labeled".into(), json!(ell));
        details.insert("n_unlabeled".into(), json!(n_unlabeled));
        details.insert("sylvester_residual".into(), json!(residual));
        details.insert("output_names".into(), json!(p.output_names));
        details.insert(
            "tied_labels".into(),
            Json::Array(tied_labels(w_out, q, &p.output_names)),
        );
        details.insert(
            "output_q_top".into(),
            Json::Array(top_q_entries(q, &p.output_names)),
        );
        details
    }
}

/// Rows per block of the products with Z (bounds the temporaries to block×r).
const FACTOR_ROWS: usize = 4096;

/// Peak bytes on a factor with r columns: the sparse graph (≤ 2kN edges) and its Laplacian
/// throughout; then the largest of the neighbour search (one B×N distance block per thread),
/// the factor's construction and the solve. The solve holds Z and, when p ≥ 2,
/// `V = L^{⌊p/2⌋} Z` throughout, beside the largest of its phases: summing `ZᵀMZ` (`Z_J`,
/// `Z_JᵀZ_J`, one r×r accumulator and, p odd, one row block of `L·V` per busy thread, and two
/// r×r the factor freed and the heap kept), then its eigenproblem with the N×m blocks, then
/// predicting the test rows. VmRSS traced at N = 3200, r = 1000 put the peak in the sum; all
/// phases counted at once had read 1.15–1.16 there (`bench lowrank --suite compare`) and up
/// to 1.52 with m = 100.
fn factor_route_bytes(s: &ProblemShape, r: usize, k: usize, power: usize, smooth: bool) -> u64 {
    let (n, m) = (s.n_train, s.m);
    let threads = rayon::current_num_threads().max(1) as u64;
    // Row blocks of the ZᵀLZ product run in parallel, one accumulator per busy thread; with
    // γ_I = 0 (no `smooth` term) there is no graph, no search and no ZᵀLZ.
    let (busy, edges, search) = if smooth {
        (
            threads.min(n.div_ceil(FACTOR_ROWS).max(1) as u64),
            2 * k.min(n.saturating_sub(1)) * n,
            threads * mats(1, KNN_BLOCK.min(n), n) + (n as u64) * (k as u64) * 48,
        )
    } else {
        (0, 0, 0)
    };
    let graph = SparseGraph::bytes(n, edges) + (edges as u64 + n as u64) * 8;
    let build = factor_peak_bytes(n, r, m, s.n_test);
    let block = FACTOR_ROWS.min(n);
    // ZᵀMZ's eigenproblem: its matrix, vectors and faer's workspace, one r×r more when it runs
    // on two threads (`linalg::decomp`; measured 0.3–0.6 MiB less at r = 300 once it ran on one).
    let eig = if r >= crate::linalg::PARALLEL_EIGH_FROM {
        4
    } else {
        3
    };
    // p odd multiplies a block of L·V per task; p ≥ 2 holds V = L^{⌊p/2⌋} Z whole.
    let v = if smooth && power >= 2 {
        mats(1, n, r)
    } else {
        0
    };
    let summing = mats(1, s.n_labeled, r) // Z_J, the labeled rows
        + mats(3 + busy, r, r)
        + if power % 2 == 1 { busy * mats(1, block, r) } else { 0 };
    let solve = mats(1, n, r)
        + v
        + summing
            .max(mats(eig, r, r) + mats(8, n, m))
            .max(mats(eig, r, r) + mats(1, s.n_test.min(PREDICT_ROWS), r));
    graph + search.max(build).max(solve)
}

/// vvmr on `G ≈ ZZᵀ`: sparse graph, factor, Woodbury solve; the model predicts `z(x)ᵀ β`.
fn fit_on_factor(
    p: &Problem,
    route: Route,
    given: &VvmrConfig,
    y: Array2<f64>,
    obs: &mut dyn Observer,
    clock: &Clock,
) -> Result<Fit> {
    let n_all = p.n_train();
    let h = &given.on_rows(n_all);
    // γ_I = 0 weighs the graph term of problem (12) by 0: the k-NN search, most of a large
    // fit's time, is skipped and the graph left empty.
    let graph = if h.gamma_i == 0.0 {
        SparseGraph::empty(n_all)
    } else {
        obs.phase(Phase::Graph, Some(n_all));
        let mut tick = |done: usize| -> Result<()> {
            obs.step(done, n_all);
            check_cancel(obs)
        };
        let graph = knn_sparse(p.x.view(), h.knn, h.graph_weights, &mut tick)?;
        // The search's B×N blocks, freed, can stay in the heap through the whole fit when
        // glibc's mmap threshold has risen past them: 21 MiB at N = 4800, m = 100, r = 300.
        crate::kernels::return_freed_memory();
        graph
    };
    let lap = SparseLaplacian::new(graph, h.laplacian, h.laplacian_power);
    let rows = p.labeled_rows();
    let y_labeled = select_rows(y.view(), &rows);
    let (w_out, q) = output_kernel(y_labeled.view(), h.output_knn, h.graph_weights, h.gamma_o)?;
    check_cancel(obs)?;

    let started = std::time::Instant::now();
    let (f, route_name) = match route {
        Route::Primal => (InputFactor::linear(p.x.view()), "primal"),
        Route::LowRank {
            rank, landmarks, ..
        } => {
            let f = factor_observed(&p.kernel, p.x.view(), rank, landmarks, p.seed, obs)?;
            (f, "low_rank")
        }
        Route::Exact | Route::Krylov => {
            return Err(OvkError::internal("vvmr: the exact route has no factor"))
        }
    };
    let summary = FactorSummary {
        route: route_name,
        requested: f.requested,
        rank: f.rank(),
        landmarks: f.how,
        trace_error: f.trace_error,
        seconds: started.elapsed().as_secs_f64(),
    };
    check_cancel(obs)?;

    obs.phase(Phase::Decomposition, None);
    let sol = solve_on_factor(
        f.z.view(),
        &lap,
        &p.labeled,
        q.view(),
        y.view(),
        h.gamma_a,
        h.gamma_i,
    )?;
    check_cancel(obs)?;
    let objective = objective_on_factor(&sol, &lap, &p.labeled, y.view(), h.gamma_a, h.gamma_i);
    let residual = residual_on_factor(&sol, &lap, &p.labeled, y.view(), h.gamma_a, h.gamma_i);
    record_solved(obs, objective, Some(residual), clock)?;

    let unlabeled: Vec<usize> = (0..n_all).filter(|&i| !p.labeled[i]).collect();
    let mut details = given.details(
        p,
        rows.len(),
        unlabeled.len(),
        residual,
        w_out.view(),
        q.view(),
    );
    details.insert(key::INPUT_FACTOR.into(), summary.to_json());
    details.insert("graph_edges".into(), json!(lap.graph().edges() / 2));
    let predictions_unlabeled = select_rows(sol.f.view(), &unlabeled);
    let mut fit = Fit::new(Box::new(FeatureExpansion::new(
        f.map,
        sol.beta.clone().into(),
        None,
    )));
    fit.iterations = 1;
    fit.objective = Some(objective);
    fit.details = details;
    fit.matrices.push(("feature_coefficients".into(), sol.beta));
    fit.matrices.push(("coefficients".into(), sol.a));
    fit.matrices.push(("output_q".into(), q));
    fit.matrices.push(("output_graph".into(), w_out));
    fit.matrices
        .push(("predictions_unlabeled".into(), predictions_unlabeled));
    Ok(fit)
}

/// Eq. (17) on `G = ZZᵀ`, and what the objective and the model need.
pub(crate) struct FactorSolution {
    /// A (N×m), eq. (17)'s unknown.
    pub a: Array2<f64>,
    /// `ZᵀA` (r×m).
    pub(crate) zt_a: Array2<f64>,
    /// `β = ZᵀAQ` (r×m): the model is `f(x) = z(x)ᵀ β`.
    pub beta: Array2<f64>,
    /// `f(X) = GAQ = Zβ` on the N training rows.
    pub f: Array2<f64>,
}

/// `M v = J v + ℓγ_I Lᵖ v` for the columns of v (N×c), M never formed.
fn apply_m(
    lap: &SparseLaplacian,
    labeled: &[bool],
    v: ArrayView2<f64>,
    ell_gamma_i: f64,
) -> Array2<f64> {
    let mut out = if ell_gamma_i != 0.0 {
        lap.apply(v) * ell_gamma_i
    } else {
        Array2::zeros(v.dim())
    };
    for (i, &lab) in labeled.iter().enumerate() {
        if lab {
            let mut row = out.row_mut(i);
            row += &v.row(i);
        }
    }
    out
}

/// `Zᵀ M Z = Z_Jᵀ Z_J + ℓγ_I Zᵀ Lᵖ Z` (r×r, symmetric PSD): with h = ⌊p/2⌋ and `V = Lʰ Z`,
/// `Zᵀ Lᵖ Z` is `VᵀV` (p even) or `Vᵀ L V` (p odd), summed over row blocks in parallel so
/// only `V` (for p ≥ 2) is N×r besides Z.
pub(crate) fn zt_m_z(
    z: ArrayView2<f64>,
    lap: &SparseLaplacian,
    labeled: &[bool],
    ell_gamma_i: f64,
) -> Array2<f64> {
    let (n, r) = z.dim();
    let rows: Vec<usize> = (0..n).filter(|&i| labeled[i]).collect();
    let z_j = select_rows(z.view(), &rows);
    let mut s = matmul_tn(z_j.view(), z_j.view());
    if ell_gamma_i != 0.0 {
        let half = lap.power / 2;
        let v_owned;
        let v = if half == 0 {
            z
        } else {
            let mut v = lap.apply_once(z);
            for _ in 1..half {
                v = lap.apply_once(v.view());
            }
            v_owned = v;
            v_owned.view()
        };
        let odd = lap.power % 2 == 1;
        let starts: Vec<usize> = (0..n).step_by(FACTOR_ROWS).collect();
        // One accumulator per thread, each block's product added into it in place: a fold
        // over the blocks had made one accumulator per split and a product per block, up to
        // 12 r×r at once (tmc2007, r = 2000: 370 MiB).
        let per = starts
            .len()
            .div_ceil(rayon::current_num_threads().max(1))
            .max(1);
        let s_l = starts
            .par_chunks(per)
            .map(|chunk| {
                let mut acc = Array2::<f64>::zeros((r, r));
                for &start in chunk {
                    let end = (start + FACTOR_ROWS).min(n);
                    let vb = v.slice(s![start..end, ..]);
                    if odd {
                        add_matmul_tn(&mut acc, vb, lap.apply_once_rows(v, start, end).view());
                    } else {
                        add_matmul_tn(&mut acc, vb, vb);
                    }
                }
                acc
            })
            .reduce_with(|a, b| a + b)
            .unwrap_or_else(|| Array2::<f64>::zeros((r, r)));
        // The worker threads' accumulators were freed in their own malloc arenas, where the
        // eigenproblem that follows cannot reuse them: returned, they do not stay resident
        // beside it.
        crate::kernels::return_freed_memory();
        s.scaled_add(ell_gamma_i, &s_l);
    }
    symmetrize(&s)
}

/// Eq. (17) `(J G + ℓγ_I L G) A Q + ℓγ_A A = Y` with `G = ZZᵀ`. With `Q = W diag(q) Wᵀ` each
/// column of `Ã = A W` solves `(q_k M Z Zᵀ + c I) ã_k = ỹ_k` (`M = J + ℓγ_I Lᵖ`,
/// `c = ℓγ_A`), by Woodbury
/// `ã_k = (1/c)[ỹ_k − q_k M Z (c I_r + q_k Zᵀ M Z)⁻¹ Zᵀ ỹ_k]` (methods.md §6); `Zᵀ M Z =
/// P diag(μ) Pᵀ` once makes every r×r solve diagonal. `c + q_k μ > 0` since μ ≥ 0 (M is PSD)
/// and q_k ≥ 1 − γ_O > 0.
pub(crate) fn solve_on_factor(
    z: ArrayView2<f64>,
    lap: &SparseLaplacian,
    labeled: &[bool],
    q: ArrayView2<f64>,
    y: ArrayView2<f64>,
    gamma_a: f64,
    gamma_i: f64,
) -> Result<FactorSolution> {
    let ell = labeled.iter().filter(|&&b| b).count() as f64;
    let c = ell * gamma_a;
    let lg = ell * gamma_i;
    let e = eigh(zt_m_z(z, lap, labeled, lg).view())?;
    let mu = e.values.mapv(|v| v.max(0.0));
    let qe = eigh(q)?;
    let yw = matmul(y, qe.vectors.view()); // Ỹ = Y W
    let t = matmul_tn(e.vectors.view(), matmul_tn(z, yw.view()).view()); // Pᵀ Zᵀ Ỹ
    let mut u = t;
    // column k: q_k (c + q_k μ)⁻¹ ⊙ (Pᵀ Zᵀ ỹ_k)
    Zip::from(u.columns_mut())
        .and(&qe.values)
        .for_each(|mut col, &qk| {
            Zip::from(&mut col)
                .and(&mu)
                .for_each(|v, &m| *v *= qk / (c + qk * m));
        });
    let u = matmul(e.vectors.view(), u.view());
    let mzu = apply_m(lap, labeled, matmul(z, u.view()).view(), lg);
    let at = (&yw - &mzu) / c; // Ã = A W
    let a = matmul(at.view(), qe.vectors.t());
    let zt_a = matmul_tn(z, a.view());
    let beta = matmul(zt_a.view(), q);
    let f = matmul(z, beta.view());
    Ok(FactorSolution { a, zt_a, beta, f })
}

/// `(‖J(f − Y)‖²_F, ℓ)`: the data term of problem (12) before its 1/ℓ, over labeled rows.
fn labeled_fit(f: ArrayView2<f64>, y: ArrayView2<f64>, labeled: &[bool]) -> (f64, f64) {
    let mut fit = 0.0;
    let mut ell = 0.0;
    for (i, _) in labeled.iter().enumerate().filter(|(_, &lab)| lab) {
        ell += 1.0;
        fit += f
            .row(i)
            .iter()
            .zip(y.row(i))
            .map(|(u, v)| (u - v) * (u - v))
            .sum::<f64>();
    }
    (fit, ell)
}

/// Problem (12) at the factor solution:
/// `(1/ℓ)‖J(f − Y)‖² + γ_A tr(AᵀZZᵀAQ) + γ_I tr(fᵀ Lᵖ f)`, with `tr(AᵀZZᵀAQ) = Σ (ZᵀA) ⊙ β`.
pub(crate) fn objective_on_factor(
    sol: &FactorSolution,
    lap: &SparseLaplacian,
    labeled: &[bool],
    y: ArrayView2<f64>,
    gamma_a: f64,
    gamma_i: f64,
) -> f64 {
    let (fit, ell) = labeled_fit(sol.f.view(), y, labeled);
    let norm = (&sol.zt_a * &sol.beta).sum();
    let smooth = (&lap.apply(sol.f.view()) * &sol.f).sum();
    fit / ell + gamma_a * norm + gamma_i * smooth
}

/// ‖M f + ℓγ_A A − Y‖_F / ‖Y‖_F with `f = GAQ`: eq. (17)'s relative residual on the factor.
pub(crate) fn residual_on_factor(
    sol: &FactorSolution,
    lap: &SparseLaplacian,
    labeled: &[bool],
    y: ArrayView2<f64>,
    gamma_a: f64,
    gamma_i: f64,
) -> f64 {
    let ell = labeled.iter().filter(|&&b| b).count() as f64;
    let lhs = apply_m(lap, labeled, sol.f.view(), ell * gamma_i) + &(&sol.a * (ell * gamma_a));
    let r = (&lhs - &y).mapv(|v| v * v).sum().sqrt();
    let ny = y.mapv(|v| v * v).sum().sqrt();
    if ny > 0.0 {
        r / ny
    } else {
        r
    }
}

/// γ_O = 1 leaves Q = L_out†, singular on the output graph's null space (constant functions
/// over each connected component), so the kernel would ignore those output directions.
pub fn check_gamma_o(gamma_o: f64) -> Result<f64> {
    if !(0.0..1.0).contains(&gamma_o) {
        return Err(OvkError::input_as(
            ErrorKind::InvalidParameter,
            format!(
                "gamma_o must satisfy 0 ≤ γ_O < 1, got {gamma_o}: at γ_O = 1 the output kernel \
             Q = γ_O L_out† + (1 − γ_O) I loses its identity part and is singular (the output \
             graph Laplacian has a null space); use e.g. 0.9"
            ),
        ));
    }
    Ok(gamma_o)
}

/// Y with zero rows for unlabeled points (the J-masked targets of eq. 17).
fn targets_with_zero_unlabeled(p: &Problem) -> Result<Array2<f64>> {
    let mut y = p.y.clone();
    for (i, mut row) in y.rows_mut().into_iter().enumerate() {
        if !p.labeled[i] {
            row.fill(0.0);
        } else if row.iter().any(|v| !v.is_finite()) {
            return Err(OvkError::input(format!(
                "vvmr: labeled training row {} has a missing or non-finite target; mark it \
                 unlabeled or fill it",
                i + 1
            )));
        }
    }
    Ok(y)
}

/// The input graph penalty: Laplacian (to the power p) of the k-NN graph over all N inputs.
pub fn input_laplacian(
    x: ArrayView2<f64>,
    k: usize,
    weights: GraphWeights,
    kind: LaplacianKind,
    power: usize,
) -> Result<Array2<f64>> {
    let w = knn_graph(x, k, weights)?;
    let l = laplacian(&w, kind);
    Ok(if power > 1 {
        laplacian_power(&l, power)
    } else {
        l
    })
}

/// The output graph `W_out` (k-NN over the label columns of the labeled rows) and the output
/// kernel `Q = γ_O L_out† + (1 − γ_O) I_n` (eq. 16) with the normalised `L_out`.
pub fn output_kernel(
    y_labeled: ArrayView2<f64>,
    k: usize,
    weights: GraphWeights,
    gamma_o: f64,
) -> Result<(Array2<f64>, Array2<f64>)> {
    let n = y_labeled.ncols();
    let w_out = if n > 1 {
        knn_graph(y_labeled.t(), k, weights)?
    } else {
        Array2::zeros((n, n))
    };
    let l_out = laplacian(&w_out, LaplacianKind::Normalized);
    let mut q = pinv_psd(&l_out, PINV_REL_TOL)? * gamma_o;
    q.diag_mut().mapv_inplace(|v| v + (1.0 - gamma_o));
    Ok((w_out, q))
}

/// Everything of problem (12) and eq. (17) but the coefficients A, named: the input Gram
/// matrix G (N×N), the graph Laplacian power L, which rows are labeled (J), the targets Y
/// (unlabeled rows 0), the output kernel Q, and the weights γ_A, γ_I. A struct, so that the
/// five same-typed views cannot be passed in the wrong order.
#[derive(Debug, Clone, Copy)]
pub struct Terms<'a> {
    /// Input Gram matrix G (N×N, labeled and unlabeled rows).
    pub g: ArrayView2<'a, f64>,
    /// Graph Laplacian power L (N×N).
    pub l: ArrayView2<'a, f64>,
    /// Which rows are labeled (the selection J).
    pub labeled: &'a [bool],
    /// Output kernel Q (m×m).
    pub q: ArrayView2<'a, f64>,
    /// Targets Y (N×m; unlabeled rows 0).
    pub y: ArrayView2<'a, f64>,
    /// Weight γ_A of the RKHS norm.
    pub gamma_a: f64,
    /// Weight γ_I of the graph smoothness (scaled by ℓ in eq. 17).
    pub gamma_i: f64,
}

impl Terms<'_> {
    /// ℓ, the number of labeled rows.
    fn ell(&self) -> f64 {
        self.labeled.iter().filter(|&&b| b).count() as f64
    }

    /// Solve eq. (17) `(J G + ℓ γ_I L G) A Q + ℓ γ_A A = Y` without the (Nn)×(Nn) system:
    /// with `Q = V diag(q) Vᵀ` and `M = (J + ℓγ_I L) G = U H Uᵀ` (Hessenberg), every column of
    /// `Ã = A V` solves `(q_j M + ℓγ_A I) ã_j = (Y V)_j` in O(N²). M is not symmetric and G may be
    /// singular, which the orthogonal Hessenberg form handles (the eigenvalues of M, a product of
    /// two PSD matrices, are ≥ 0 and q_j > 0, so each shifted matrix is nonsingular).
    pub fn solve(&self) -> Result<Array2<f64>> {
        let m = left_matrix(self.g, self.l, self.labeled, self.gamma_i);
        let qe = eigh(self.q)?;
        let yv = matmul(self.y, qe.vectors.view());
        let scales: Vec<f64> = qe.values.iter().copied().collect();
        let shift = self.ell() * self.gamma_a;
        let reduced = hessenberg(m)?;
        stop_if_abandoned()?;
        let av = reduced.solve_shifted(&scales, shift, yv.view())?;
        Ok(matmul(av.view(), qe.vectors.t()))
    }

    /// ‖M A Q + ℓγ_A A − Y‖_F / ‖Y‖_F, the relative residual of eq. (17).
    pub fn residual(&self, a: ArrayView2<f64>) -> f64 {
        let f = matmul(self.g, matmul(a, self.q).view());
        let lf = matmul(self.l, f.view());
        self.residual_from_outputs(f.view(), lf.view(), a)
    }

    /// `residual` with `f = G A Q` and `L f` already computed: `M A Q = (J + ℓγ_I L) f`, so no
    /// N×N×N product is needed.
    fn residual_from_outputs(
        &self,
        f: ArrayView2<f64>,
        lf: ArrayView2<f64>,
        a: ArrayView2<f64>,
    ) -> f64 {
        let ell = self.ell();
        let mut lhs = &lf * (ell * self.gamma_i) + &(&a * (ell * self.gamma_a));
        for (i, &lab) in self.labeled.iter().enumerate() {
            if lab {
                let mut row = lhs.row_mut(i);
                row += &f.row(i);
            }
        }
        let r = (&lhs - &self.y).mapv(|v| v * v).sum().sqrt();
        let ny = self.y.mapv(|v| v * v).sum().sqrt();
        if ny > 0.0 {
            r / ny
        } else {
            r
        }
    }

    /// Problem (12) at `f = Σᵢ k(·, xᵢ) Q aᵢ`:
    /// `(1/ℓ) ‖J (G A Q − Y)‖² + γ_A tr(Aᵀ G A Q) + γ_I tr((G A Q)ᵀ L (G A Q))`.
    pub fn objective(&self, a: ArrayView2<f64>) -> f64 {
        let f = matmul(self.g, matmul(a, self.q).view());
        let lf = matmul(self.l, f.view());
        self.objective_from_outputs(f.view(), lf.view(), a)
    }

    /// `objective` with `f = G A Q` and `L f` already computed.
    fn objective_from_outputs(
        &self,
        f: ArrayView2<f64>,
        lf: ArrayView2<f64>,
        a: ArrayView2<f64>,
    ) -> f64 {
        let (fit, ell) = labeled_fit(f, self.y, self.labeled);
        // tr(Aᵀ G A Q) = Σ (G A) ⊙ (A Q)
        let ga = matmul(self.g, a);
        let aq = matmul(a, self.q);
        let norm = (&ga * &aq).sum();
        let smooth = (&lf * &f).sum();
        fit / ell + self.gamma_a * norm + self.gamma_i * smooth
    }
}

/// `M = J G + ℓ γ_I L G = (J + ℓ γ_I L) G`.
pub fn left_matrix(
    g: ArrayView2<f64>,
    l: ArrayView2<f64>,
    labeled: &[bool],
    gamma_i: f64,
) -> Array2<f64> {
    let ell = labeled.iter().filter(|&&b| b).count() as f64;
    let scale = ell * gamma_i;
    let n = l.nrows();
    // B = ℓγ_I L + J row by row, its zeros left out: the k-NN graph's Laplacian (p = 1) has a
    // few dozen nonzeros per row, so B G costs O(nnz·N) instead of an N×N×N product.
    let rows: Vec<Vec<(usize, f64)>> = l
        .rows()
        .into_iter()
        .zip(labeled)
        .enumerate()
        .map(|(i, (row, &lab))| {
            row.iter()
                .enumerate()
                .map(|(j, &v)| (j, v * scale + if lab && i == j { 1.0 } else { 0.0 }))
                .filter(|&(_, v)| v != 0.0)
                .collect()
        })
        .collect();
    let nnz: usize = rows.iter().map(Vec::len).sum();
    if nnz.saturating_mul(DENSE_FROM) > n.saturating_mul(n) {
        let mut b = Array2::<f64>::zeros((n, n));
        for (i, row) in rows.iter().enumerate() {
            for &(j, v) in row {
                b[[i, j]] = v;
            }
        }
        return matmul(b.view(), g);
    }
    let cols = g.ncols();
    let mut out = Array2::<f64>::zeros((n, cols));
    if let Some(flat) = out.as_slice_mut() {
        flat.par_chunks_mut(cols.max(1))
            .zip(rows.par_iter())
            .for_each(|(o, row)| {
                let mut o = ndarray::ArrayViewMut1::from(o);
                for &(j, v) in row {
                    o.scaled_add(v, &g.row(j));
                }
            });
    }
    out
}

/// `left_matrix` multiplies densely once B has more than N²/`DENSE_FROM` nonzeros.
const DENSE_FROM: usize = 16;

/// The largest off-diagonal entries of Q by magnitude, signed. Beware: L_out† couples two
/// labels of a small component negatively (it is zero on the graph's null space), so a tie
/// in the output graph does not always show as a large positive Q entry — see `tied_labels`.
fn top_q_entries(q: ArrayView2<f64>, names: &[String]) -> Vec<Json> {
    let mut pairs = upper_pairs(q.nrows());
    pairs.sort_by(|x, y| q[[y.0, y.1]].abs().total_cmp(&q[[x.0, x.1]].abs()));
    pairs
        .into_iter()
        .take(TOP_TIES)
        .map(|(a, b)| json!({"a": label(names, a), "b": label(names, b), "value": q[[a, b]]}))
        .collect()
}

/// The edges of the output graph, heaviest first, with the Q entry each produced.
fn tied_labels(w_out: ArrayView2<f64>, q: ArrayView2<f64>, names: &[String]) -> Vec<Json> {
    let mut pairs: Vec<(usize, usize)> = upper_pairs(w_out.nrows())
        .into_iter()
        .filter(|&(a, b)| w_out[[a, b]] > 0.0)
        .collect();
    pairs.sort_by(|x, y| w_out[[y.0, y.1]].total_cmp(&w_out[[x.0, x.1]]));
    pairs
        .into_iter()
        .take(TOP_TIES)
        .map(|(a, b)| {
            json!({"a": label(names, a), "b": label(names, b), "weight": w_out[[a, b]],
                   "q": q[[a, b]]})
        })
        .collect()
}

fn upper_pairs(n: usize) -> Vec<(usize, usize)> {
    (0..n)
        .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
        .collect()
}

fn label(names: &[String], i: usize) -> String {
    names
        .get(i)
        .cloned()
        .unwrap_or_else(|| format!("y{}", i + 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::{knn_sparse, GraphWeights, LaplacianKind, SparseLaplacian};

    /// `ZᵀMZ` summed over three row blocks, split between the threads' accumulators, is
    /// `Z_JᵀZ_J + ℓγ_I Zᵀ(Lᵖ Z)` computed in one piece (Lᵖ Z by p sparse products), for odd and
    /// even p.
    #[test]
    fn zt_m_z_over_several_row_blocks_is_the_whole_product() {
        let n = 2 * FACTOR_ROWS + 333;
        let x = Array2::from_shape_fn((n, 3), |(i, j)| {
            ((i * 7 + j * 13) % 101) as f64 / 50.0 + (i as f64 * 0.37 + j as f64).sin()
        });
        let z = Array2::from_shape_fn((n, 6), |(i, j)| ((i * (j + 3)) % 17) as f64 / 17.0 - 0.4);
        let labeled: Vec<bool> = (0..n).map(|i| i % 3 == 0).collect();
        let rows: Vec<usize> = (0..n).filter(|&i| labeled[i]).collect();
        let graph = knn_sparse(x.view(), 5, GraphWeights::Heat, &mut |_| Ok(())).unwrap();
        let lg = 0.7;
        for p in [1, 2, 3] {
            let lap = SparseLaplacian::new(graph.clone(), LaplacianKind::Normalized, p);
            let got = zt_m_z(z.view(), &lap, &labeled, lg);
            let z_j = select_rows(z.view(), &rows);
            let mut want = matmul_tn(z_j.view(), z_j.view());
            want.scaled_add(lg, &matmul_tn(z.view(), lap.apply(z.view()).view()));
            let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let diff = (&got - &symmetrize(&want))
                .iter()
                .fold(0.0f64, |m, v| m.max(v.abs()));
            assert!(diff <= 1e-12 * scale, "p = {p}: {diff} of {scale}");
        }
    }
}
