//! Settings a run was given but does not use: a note each, so that a σ typed for a linear
//! kernel, or views given to a single-kernel method, do not look as if they had mattered.
//! Notes, not refusals: a sweep may cross `kernel = ["linear", "gaussian"]` with one σ, or
//! `method = ["krr", "mvml"]` with one set of views.

use crate::config::RunConfig;
use crate::kernels::{KernelName, KernelSpec, Sigma};
use crate::methods::Method;

/// One note per setting of `config` that `method` with its kernel ignores.
pub(super) fn unused_settings(config: &RunConfig, method: &dyn Method) -> Vec<String> {
    let k = &config.kernel;
    let kernel = k.name.name();
    let defaults = KernelSpec::default();
    let mut notes = Vec::new();
    if k.name == KernelName::Precomputed && config.data.features.is_some() {
        notes.push(
            "the feature columns are not used: a precomputed kernel reads K from its Gram file \
             (the table gives the targets and the rows)"
                .to_string(),
        );
    }
    if let (
        Sigma::Value(s),
        KernelName::Linear | KernelName::Polynomial | KernelName::Cosine | KernelName::Precomputed,
    ) = (k.sigma, k.name)
    {
        notes.push(format!(
            "σ = {s} is not used: the {kernel} kernel has no width"
        ));
    }
    if k.name != KernelName::Polynomial {
        if k.degree != defaults.degree {
            notes.push(format!(
                "degree {} is not used: only the polynomial kernel has a degree",
                k.degree
            ));
        }
        if k.coef0 != defaults.coef0 {
            notes.push(format!(
                "coef0 = {} is not used: only the polynomial kernel has an offset",
                k.coef0
            ));
        }
    }
    if let Some(views) = config.data.views.as_ref().filter(|v| !v.is_empty()) {
        if !method.multi_view() {
            notes.push(format!(
                "the views ({}) are not used: {} fits one kernel on all the feature columns (mvml \
                 learns a metric between views)",
                views.join(", "),
                method.name()
            ));
        }
    }
    notes
}
