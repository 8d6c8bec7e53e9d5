//! Dinuzzo & Fukumizu 2011, §6: low-rank OKL on gp-mix (m outputs mixed from 50 latent GP
//! paths on 200 grid points, noise at SNR 1:1, 100 train / 100 validation). The Gaussian kernel
//! has σ = 0.1, the latent paths' correlation length (their covariance exp(−10|x − x'|) falls
//! to 1/e at 0.1); the median heuristic (σ ≈ 0.6) oversmooths these rough paths.

use super::data::{config, gaussian, write_columns};
use super::{float, metric, params, Ctx, Row, Stat, Table};
use ovk_core::data::gpmix::{self, gp_mix};
use ovk_core::data::Scale;
use ovk_core::methods::lowrank_okl::lambda_grid;
use ovk_core::methods::{MethodName, Value};
use ovk_core::train::RunConfig;
use ovk_core::{OvkError, Result};

const SIGMA: f64 = 0.1;

fn gp_config(
    ctx: &Ctx,
    m: usize,
    seed: u64,
    method: MethodName,
    name: String,
) -> Result<RunConfig> {
    let path = ctx.work_file(&format!("gp-mix-m{m}-seed{seed}.csv"))?;
    if !path.is_file() {
        let (x, y) = gp_mix(m, seed);
        write_columns(&path, &gpmix::columns(&x, &y))?;
    }
    let mut c = config(path, method, gaussian(Some(SIGMA)), params(&[]), name);
    c.data.targets = Some(vec!["y*".into()]);
    c.data.features = Some(vec!["x".into()]);
    c.data.scale = Scale::None;
    c.data.test_fraction = 0.5;
    c.data.seed = seed;
    Ok(c)
}

fn detail(r: &ovk_core::session::SessionRecord, key: &str) -> Result<f64> {
    r.details
        .get(key)
        .and_then(|v| v.as_f64())
        .ok_or_else(|| OvkError::internal(format!("session {}: no detail {key}", r.id)))
}

/// Validation MSE of L = I (krr) at every λ of the path; the best.
fn ridge_on_path(ctx: &mut Ctx, m: usize, seed: u64, lambdas: &[f64]) -> Result<f64> {
    let mut best = f64::INFINITY;
    for (i, &l) in lambdas.iter().enumerate() {
        let mut c = gp_config(
            ctx,
            m,
            seed,
            MethodName::Krr,
            format!("paper-lowrank-m{m}-krr-l{i}"),
        )?;
        c.params.set("lambda", float(l));
        best = best.min(metric(&ctx.fit(c)?.record, "test", "mse")?);
    }
    Ok(best)
}

pub fn exp1(ctx: &mut Ctx) -> Result<Table> {
    let (m, ranks, n_lambda) = if ctx.quick {
        (20, "1,2,5", 5)
    } else {
        (200, "1,2,3,5,10,15,20,25,30,35,40", 25)
    };
    let seed = 1;
    let mut c = gp_config(
        ctx,
        m,
        seed,
        MethodName::LowRankOkl,
        format!("paper-lowrank-m{m}-sweep"),
    )?;
    c.params.set("rank_sweep", Value::Text(ranks.into()));
    c.params.set("lambda_path", Value::Int(n_lambda));
    let r = ctx.fit(c)?.record;
    let alpha = detail(&r, "alpha")?;
    let ridge = ridge_on_path(ctx, m, seed, &lambda_grid(alpha, n_lambda as usize))?;
    let sweep = r
        .details
        .get("rank_sweep")
        .and_then(|v| v.as_array())
        .ok_or_else(|| OvkError::internal("lowrank-okl: no rank_sweep in the details"))?;
    let mut rows = Vec::new();
    for row in sweep {
        let p = row["rank"].as_u64().unwrap_or(0);
        let mse = row["validation_mse"].as_f64().unwrap_or(f64::NAN);
        rows.push(Row {
            label: format!(
                "p = {p} (best λ {:.2e})",
                row["lambda"].as_f64().unwrap_or(f64::NAN)
            ),
            paper: None,
            ours: Stat::one(mse),
            baseline: Some(Stat::one(ridge)),
        });
    }
    // Full rank: every stationary B has rank ≤ rank K, so p = min(m, rank K) is the full problem.
    let full = m.min(detail(&r, "rank_k")? as usize);
    let mut c = gp_config(
        ctx,
        m,
        seed,
        MethodName::LowRankOkl,
        format!("paper-lowrank-m{m}-full"),
    )?;
    c.params.set("rank", Value::Int(full as i64));
    c.params.set("lambda_path", Value::Int(n_lambda));
    let r = ctx.fit(c)?.record;
    rows.push(Row {
        label: format!("full rank (p = {full})"),
        paper: None,
        ours: Stat::one(detail(&r, "validation_mse")?),
        baseline: Some(Stat::one(ridge)),
    });
    Ok(Table {
        experiment: "lowrank-exp1",
        metric: "validation MSE (100 validation points), best λ of a 25-point warm-started path".into(),
        baseline: "L = I (krr), best λ on the same path".into(),
        rows,
        notes: vec![
            format!("gp-mix with m = {m}, seed {seed}; Gaussian kernel σ = {SIGMA}; the pipeline's split (seed {seed}), 100 train / 100 validation."),
            "Paper: MSE versus p is a plot (best near p = 20, below L = I and full-rank OKL); no numbers are printed.".into(),
        ],
        sessions: Vec::new(),
        seconds: 0.0,
    })
}

pub fn exp2(ctx: &mut Ctx) -> Result<Table> {
    // 99 999, not 10⁵: the loader refuses tables wider than 100 000 columns (x is one more).
    let m = if ctx.quick { 2000 } else { 99_999 };
    let seed = 2;
    let mut c = gp_config(
        ctx,
        m,
        seed,
        MethodName::LowRankOkl,
        format!("paper-lowrank-m{m}-p50"),
    )?;
    c.params.set("rank", Value::Int(50));
    c.params.set("lambda_path", Value::Int(25));
    let r = ctx.fit(c)?.record;
    let lambda = detail(&r, "lambda")?;
    let mse = detail(&r, "validation_mse")?;
    // L = I at its own best λ of the same path (one session, and one load of the table, each).
    let n_lambda = if ctx.quick { 5 } else { 25 };
    let ridge = ridge_on_path(ctx, m, seed, &lambda_grid(detail(&r, "alpha")?, n_lambda))?;
    Ok(Table {
        experiment: "lowrank-exp2",
        metric: "as labelled (seconds, or validation MSE)".into(),
        baseline: "L = I (krr), best λ on the same path".into(),
        rows: vec![
            Row {
                label: "fit wall time, 25 λ (s)".into(),
                paper: Some(45.0),
                ours: Stat::one(r.timings.fit_s),
                baseline: None,
            },
            Row {
                label: format!("validation MSE, p = 50 (λ {lambda:.2e})"),
                paper: None,
                ours: Stat::one(mse),
                baseline: Some(Stat::one(ridge)),
            },
        ],
        notes: vec![
            format!("gp-mix with m = {m} outputs, seed {seed}; 100 train / 100 validation; Gaussian σ = {SIGMA}; the fit time excludes loading the {m}-column CSV (see the session's load_s: {:.1} s).", r.timings.load_s),
            "Paper: about 45 s in MATLAB on an i5 2.4 GHz; they print no MSE for this run.".into(),
        ],
        sessions: Vec::new(),
        seconds: 0.0,
    })
}
