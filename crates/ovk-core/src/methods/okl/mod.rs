//! Output kernel learning (Dinuzzo, Ong, Gehler, Pillonetto, ICML 2011): learn the m×m output
//! kernel L ⪰ 0 jointly with the coefficients C by minimising their eq. (3),
//! `Q(L, C) = ‖Y − KCL‖²_F/(2λ) + ⟨CᵀKC, L⟩_F/2 + ‖L‖²_F/2`; predict `Ŷ = K_test C L`.
//!
//! K is eigendecomposed once; both solvers then work in its eigenbasis (`objective`):
//! `qn` (default) minimises the reduced problem with C eliminated by L-BFGS, `bcd` is the
//! paper's Algorithm 1 with the symmetric L-step of docs/methods.md §1 (or, on request, the paper's
//! literal Lemma 4.1 update, which loses symmetry).

pub mod bcd;
pub mod objective;
pub mod qn;

use ndarray::{Array2, ArrayView2};

use super::input::{
    exact_spectrum_bytes, factor_peak_bytes, krylov_key, remember, spectrum_bytes, Basis,
    InputSpectrum, Route,
};
use super::krylov::{sylvester_residual, Apply, KrylovRecord, KrylovSpace, KRYLOV_TOL};
use super::params::common::{self, Solver};
use super::params::{MethodConfig, ParamDefault, ParamKind, ParamSpec};
use super::{
    ensure_finite, mats, Clock, Fit, Method, Observer, Params, Phase, Problem, ProblemShape,
    TraceRecord,
};
use crate::linalg::{eigh, frobenius, matmul, symmetrize};
use crate::methods::details::key;
use crate::util::choice::Choice;
use crate::{ErrorKind, OvkError, Result};

pub use bcd::LUpdate;
pub use objective::Spectral;

/// Output kernel learning (Dinuzzo et al. 2011): learns the output kernel L with the coefficients.
pub struct Okl;

const SOLVER: ParamSpec = ParamSpec {
    key: "solver",
    label: "solver",
    help: "qn: L-BFGS on the reduced problem with C eliminated (fast); bcd: the paper's block \
           coordinate descent (Algorithm 1), slow at small λ",
    unit: "",
    kind: ParamKind::Choice(Solver::NAMES),
    default: ParamDefault::Text(Solver::Qn.name()),
};

const L_UPDATE: ParamSpec = ParamSpec {
    key: "l_update",
    label: "L-step (bcd)",
    help: "bcd's L-step: symmetric = exact minimiser over symmetric L (monotone); literal = the \
           paper's Lemma 4.1, which can make L non-symmetric and Q increase (bcd only)",
    unit: "",
    kind: ParamKind::Choice(LUpdate::NAMES),
    default: ParamDefault::Text(LUpdate::Symmetric.name()),
};

const PARAMS: &[ParamSpec] = &[
    common::LAMBDA,
    common::TOL,
    common::MAX_ITER,
    SOLVER,
    L_UPDATE,
];

/// okl's hyperparameters.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct OklConfig {
    /// Ridge weight λ.
    pub lambda: f64,
    /// Relative stopping tolerance of the solver.
    pub tol: f64,
    /// Cap on the solver's iterations.
    pub max_iter: usize,
    /// Which solver finds L and C.
    pub solver: Solver,
    /// How the block coordinate descent updates L.
    pub l_update: LUpdate,
}

impl MethodConfig for OklConfig {
    fn from_params(params: &Params) -> Result<Self> {
        let cfg = OklConfig {
            lambda: params.f64(&common::LAMBDA)?,
            tol: params.f64(&common::TOL)?,
            max_iter: params.usize(&common::MAX_ITER)?,
            solver: params.choice(&SOLVER)?,
            l_update: params.choice(&L_UPDATE)?,
        };
        if cfg.solver == Solver::Qn && cfg.l_update == LUpdate::Literal {
            return Err(OvkError::input_as(
                ErrorKind::InvalidParameter,
                "okl: l_update = literal is the paper's Lemma 4.1 L-step of block coordinate \
                 descent; solver qn has no L-step — use --solver bcd with it",
            ));
        }
        Ok(cfg)
    }
}

/// What a solver hands back: L, C̃ = UᵀC solved for that L, and how it stopped.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The learned output kernel L (m×m, positive semidefinite).
    pub l: Array2<f64>,
    /// C̃ = UᵀC: the coefficients in the input kernel's eigenbasis U, solved for `l`.
    pub ct: Array2<f64>,
    /// Iterations the solver ran.
    pub iterations: usize,
    /// Whether the stopping test was met.
    pub converged: bool,
    /// The solver's final convergence measure (relative residual or relative gradient).
    pub residual: f64,
    /// Remarks for the user (fallbacks, caps reached).
    pub notes: Vec<String>,
    /// Solver-specific results for session.json.
    pub details: serde_json::Map<String, serde_json::Value>,
}

impl Method for Okl {
    fn name(&self) -> &'static str {
        super::MethodName::Okl.name()
    }
    fn summary(&self) -> &'static str {
        "output kernel learning: learns the m×m output kernel L jointly with the coefficients"
    }
    fn citation(&self) -> &'static str {
        "Dinuzzo, Ong, Gehler, Pillonetto — Learning output kernels with block coordinate descent, ICML 2011"
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn input_factor(&self) -> bool {
        true
    }
    fn input_route(&self, s: &ProblemShape) -> Result<Route> {
        s.route_or_krylov(s.n_labeled)
    }
    fn exact_eighs(&self) -> f64 {
        // K's eigenvectors stay factored (no back-transformation): measured 0.78–0.85 of
        // `ovk bench one --method eigh` at n = 4000 and 8000 (2026-12-02)
        0.8
    }

    fn row_copy_bytes(&self, s: &ProblemShape, _: &Params) -> Result<u64> {
        // The labeled part is copied only when some rows are unlabeled (`labeled_part`); the
        // exact and Krylov routes' models keep the inputs, a factor's model reads Z's rows
        // (the training rows known again by their fingerprint, `TrainingFeatures`).
        let model = match self.input_route(s)?.factor_columns(s.d) {
            Some(_) => 0,
            None => mats(1, s.n_labeled, s.d),
        };
        Ok(s.labeled_part_bytes() + model)
    }
    fn peak_bytes(&self, s: &ProblemShape, _: &Params) -> Result<u64> {
        let (l, m) = (s.n_labeled, s.m);
        if let Some(r) = self.input_route(s)?.factor_columns(s.d) {
            return Ok(factor_peak_bytes(l, r, m, s.n_test)
                + spectrum_bytes(r)
                + mats(6, l, m)
                + mats(12, m, m));
        }
        if self.input_route(s)? == Route::Krylov {
            // At worst the basis grows to ℓ columns: Q, U = QW, T and its eigenvectors. The
            // packed rows themselves are small beside them.
            return Ok(mats(2, l, l) + mats(2, l, l) + mats(12, l, m) + mats(12, m, m));
        }
        // K's eigendecomposition (`exact_spectrum_bytes`); then the ℓ×m iterates (Uᵀ Y, C,
        // gradients, L-BFGS pairs) and m×m matrices (L, its eigenvectors, products).
        Ok(exact_spectrum_bytes(l) + mats(12, l, m) + mats(12, m, m) + mats(1, s.n_test, l))
    }
    fn memory_advice(&self) -> &'static str {
        concat!(
            crate::large_n_advice!(),
            "; when the outputs are many (m×m matrices), lowrank-okl learns a rank-p output \
             kernel without them"
        )
    }

    fn fit(&self, p: &Problem, params: &Params, obs: &mut dyn Observer) -> Result<Fit> {
        let clock = Clock::start();
        let OklConfig {
            lambda,
            tol,
            max_iter,
            solver,
            l_update: update,
        } = OklConfig::from_params(params)?;
        // The rows are copied only when some are unlabeled; the exact and Krylov routes'
        // models copy the rows they hold at the end (`Basis::model_rows`).
        let part = p.labeled_part();
        let (x, y) = (part.x(), part.y());
        if x.nrows() == 0 {
            return Err(OvkError::input(
                "okl needs at least one labeled training row",
            ));
        }
        if y.ncols() == 0 {
            return Err(OvkError::input("okl needs at least one output column"));
        }
        if y.iter().any(|v| !v.is_finite()) {
            return Err(OvkError::input(
                "okl: a labeled row has a missing or non-finite target",
            ));
        }

        let route = self.input_route(&ProblemShape::of(p))?;
        let m = y.ncols();
        let solve = |sp: &Spectral, obs: &mut dyn Observer| -> Result<Outcome> {
            if sp.y_norm == 0.0 {
                return Ok(zero_outcome(sp, m));
            }
            match solver {
                Solver::Bcd => bcd::run(sp, update, tol, max_iter, obs, &clock),
                Solver::Qn => qn::run(sp, tol, max_iter, obs, &clock),
            }
        };
        if route == Route::Krylov {
            let products = crate::kernels::packed::LinearGram::new(x)?;
            let apply = |v: ArrayView2<f64>| products.apply(x, v);
            let (input, sp, out, record) =
                solve_on_krylov(&apply, y, lambda, max_iter, &solve, obs)?;
            // The pipeline's krr baseline (shift 1, tested too) solves on the same basis.
            remember(krylov_key(&p.kernel, x, y, lambda), &input);
            // Checked against K itself: eq. (6)'s true residual.
            let c = sp.coefficients(&out.ct);
            let residual = sylvester_residual(&apply, c.view(), out.l.view(), lambda, y)?;
            let mut fit = assemble(p, x.to_owned(), x.nrows(), &sp, out, solver, update)?;
            note_krylov(&mut fit, &record, residual);
            return Ok(fit);
        }
        let input = InputSpectrum::build(route, &p.kernel, x, y, p.seed, obs)?;
        let model_rows = input.basis.model_rows(x);
        let sp = Spectral::from_input(input, frobenius(&y), lambda)?;
        obs.phase(Phase::Iterating, Some(max_iter));
        let out = solve(&sp, obs)?;
        assemble(p, model_rows, x.nrows(), &sp, out, solver, update)
    }
}

/// okl on a factor whose sums were streamed (`train::pipeline::stream`): `p` names the problem
/// but holds no rows; `y_norm` is ‖Y‖_F over the rows summed.
pub(crate) fn fit_streamed(
    p: &Problem,
    input: InputSpectrum,
    y_norm: f64,
    params: &Params,
    obs: &mut dyn Observer,
) -> Result<Fit> {
    let clock = Clock::start();
    let cfg = OklConfig::from_params(params)?;
    let (n, m) = (input.n, input.yt.ncols());
    let sp = Spectral::from_input(input, y_norm, cfg.lambda)?;
    obs.phase(Phase::Iterating, Some(cfg.max_iter));
    let out = if y_norm == 0.0 {
        zero_outcome(&sp, m)
    } else {
        match cfg.solver {
            Solver::Bcd => bcd::run(&sp, cfg.l_update, cfg.tol, cfg.max_iter, obs, &clock)?,
            Solver::Qn => qn::run(&sp, cfg.tol, cfg.max_iter, obs, &clock)?,
        }
    };
    let no_rows = Array2::zeros((0, p.x.ncols()));
    assemble(p, no_rows, n, &sp, out, cfg.solver, cfg.l_update)
}

/// The outcome when Y = 0: Q ≥ 0 = Q(0, 0).
fn zero_outcome(sp: &Spectral, m: usize) -> Outcome {
    Outcome {
        l: Array2::zeros((m, m)),
        ct: Array2::zeros((sp.s.len(), m)),
        iterations: 0,
        converged: true,
        residual: 0.0,
        notes: vec!["all targets are 0: L = 0 and C = 0".into()],
        details: serde_json::Map::new(),
    }
}

/// okl on the Krylov route (`methods::krylov`): grow the basis for a guess t of L's largest
/// eigenvalue, solve, and while the solved L's largest eigenvalue passes t, grow for twice it
/// and solve again. The solves' records reach `obs` once the last one is accepted.
fn solve_on_krylov(
    apply: &Apply,
    y: ArrayView2<f64>,
    lambda: f64,
    max_iter: usize,
    solve: &dyn Fn(&Spectral, &mut dyn Observer) -> Result<Outcome>,
    obs: &mut dyn Observer,
) -> Result<(InputSpectrum, Spectral, Outcome, KrylovRecord)> {
    let y_norm = frobenius(&y);
    // Q(L, C) ≤ Q(0, 0) = ‖Y‖²/(2λ) and Q ≥ ‖L‖²/2: no eigenvalue of L passes this.
    let bound = y_norm / lambda.sqrt();
    let mut space = KrylovSpace::new(apply, y);
    let mut t = bound.min(1.0);
    loop {
        obs.phase(Phase::Decomposition, None);
        space.grow_for(t, lambda, obs)?;
        let input = space.spectrum()?;
        let sp = Spectral::from_input(input.clone(), y_norm, lambda)?;
        obs.phase(Phase::Iterating, Some(max_iter));
        let mut held = Held::new(obs);
        let out = solve(&sp, &mut held)?;
        let top = eigh(symmetrize(&out.l).view())?
            .values
            .last()
            .copied()
            .unwrap_or(0.0);
        if top <= t || t >= bound || space.complete() {
            let (records, notes) = (held.records, held.notes);
            records.iter().for_each(|r| obs.record(r));
            notes.iter().for_each(|n| obs.note(n));
            return Ok((input, sp, out, space.record().clone()));
        }
        t = (2.0 * top).min(bound);
    }
}

/// Holds a trial solve's records and notes; passes on everything else.
struct Held<'a> {
    inner: &'a mut dyn Observer,
    records: Vec<TraceRecord>,
    notes: Vec<String>,
}

impl<'a> Held<'a> {
    fn new(inner: &'a mut dyn Observer) -> Self {
        Held {
            inner,
            records: Vec::new(),
            notes: Vec::new(),
        }
    }
}

impl Observer for Held<'_> {
    fn phase(&mut self, phase: Phase, total: Option<usize>) {
        self.inner.phase(phase, total);
    }
    fn record(&mut self, rec: &TraceRecord) {
        self.records.push(rec.clone());
    }
    fn step(&mut self, done: usize, total: usize) {
        self.inner.step(done, total);
    }
    fn note(&mut self, msg: &str) {
        self.notes.push(msg.to_string());
    }
    fn is_cancelled(&self) -> bool {
        self.inner.is_cancelled()
    }
}

/// The Fit: model `Ŷ = K_test (C L)`, the matrices, and the diagnostics of docs/methods.md §1.
fn assemble(
    p: &Problem,
    x: Array2<f64>,
    n_labeled: usize,
    sp: &Spectral,
    out: Outcome,
    solver: Solver,
    update: LUpdate,
) -> Result<Fit> {
    let Outcome {
        l,
        ct,
        iterations,
        converged,
        residual,
        mut notes,
        mut details,
    } = out;
    let objective = sp.objective(&l, &ct);
    ensure_finite("objective", objective)?;
    let l_norm = frobenius(&l);
    // At the optimum L = CᵀKC/2 (stationarity of eq. 3 in L).
    let fp = frobenius(&(&l - &(sp.ctkc(&ct) * 0.5)));
    let fixed_point_residual = if l_norm > 0.0 { fp / l_norm } else { fp };
    let min_eig = eigh(symmetrize(&l).view())?
        .values
        .first()
        .copied()
        .unwrap_or(0.0);
    let asymmetry = frobenius(&(&l - &l.t()));
    if asymmetry > 0.0 {
        notes.push(format!(
            "the literal Lemma 4.1 update left L non-symmetric (‖L − Lᵀ‖_F/‖L‖_F = {:.3e}); \
             the paper's update is flawed here (docs/methods.md §1) — use --l-update symmetric",
            asymmetry / l_norm.max(f64::MIN_POSITIVE)
        ));
    }
    let s_max = sp.s.iter().copied().fold(0.0, f64::max);
    if sp.clamped < -1e-8 * s_max {
        notes.push(format!(
            "the Gram matrix had a negative eigenvalue {:.3e} (set to 0); the kernel may not be \
             positive semi-definite on this data",
            sp.clamped
        ));
    }
    let c = sp.coefficients(&ct);
    let coef = matmul(c.view(), l.view());
    // K C L on the training rows, from the eigenbasis (exact route only).
    let fitted = sp.basis.fitted(&sp.s, matmul(ct.view(), l.view()).view());
    if let Some(f) = sp.basis.factor_summary() {
        details.insert(key::INPUT_FACTOR.into(), f.to_json());
    }
    details.insert(key::SOLVER.into(), solver.name().into());
    details.insert("l_update".into(), update.name().into());
    details.insert(
        "fixed_point_residual".into(),
        serde_json::json!(fixed_point_residual),
    );
    details.insert("min_eigenvalue_L".into(), serde_json::json!(min_eig));
    details.insert("final_residual".into(), serde_json::json!(residual));
    details.insert("n_labeled".into(), n_labeled.into());

    let coef_name = match sp.basis {
        Basis::Eigen(_) => "coefficients",
        Basis::Factor(_) => "feature_coefficients",
    };
    let mut fit = Fit::new(sp.basis.model(p.kernel, x, coef.into(), fitted));
    fit.iterations = iterations;
    fit.converged = converged;
    fit.objective = Some(objective);
    fit.matrices.push(("output_kernel".into(), l));
    fit.matrices.push((coef_name.into(), c));
    fit.details = details;
    fit.notes = notes;
    Ok(fit)
}

/// The Krylov route's record in the session, and a note on what it did.
fn note_krylov(fit: &mut Fit, record: &KrylovRecord, residual: f64) {
    let mut json = serde_json::to_value(record).unwrap_or(serde_json::Value::Null);
    if let Some(o) = json.as_object_mut() {
        o.insert("sylvester_residual".into(), serde_json::json!(residual));
    }
    fit.details.insert("krylov".into(), json);
    fit.notes.push(format!(
        "linear kernel on sparse rows: solved on a {}-column block Krylov basis of the targets \
         ({} products K·V, {:.2} s{}); eq. (6)'s residual ‖KCL + λC − Y‖/‖Y‖ = {residual:.1e}",
        record.dim,
        record.products,
        record.seconds,
        if record.invariant {
            ", invariant: exact"
        } else {
            ""
        },
    ));
    if residual > 1e3 * KRYLOV_TOL {
        fit.notes.push(format!(
            "the Krylov solve's residual {residual:.1e} is above its target {KRYLOV_TOL:.0e}: \
             the fit is approximate — give --input-rank exact with a dense table (--sparse no) \
             for the eigendecomposition route"
        ));
    }
}
