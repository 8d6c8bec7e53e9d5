//! Output kernel learning (Dinuzzo, Ong, Gehler, Pillonetto, ICML 2011).
use super::params::{common, ParamSpec};
use super::{Fit, Method, Observer, Params, Problem};
use crate::{OvkError, Result};

pub struct Okl;

const PARAMS: &[ParamSpec] = &[common::LAMBDA, common::TOL, common::MAX_ITER];

impl Method for Okl {
    fn name(&self) -> &'static str {
        "okl"
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
    fn fit(&self, _p: &Problem, _params: &Params, _obs: &mut dyn Observer) -> Result<Fit> {
        Err(OvkError::internal("okl: not yet implemented"))
    }
}
