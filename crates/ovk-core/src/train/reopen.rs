//! A recorded run read back whole — its record and matrices — as the outcome a live fit hands
//! its face, the matrices in the order a live fit lists them: what the output side learned
//! first (the output kernel), then the rest, the test predictions, and the model's parts last.

use std::path::Path;

use super::RunOutcome;
use crate::session;
use crate::Result;

/// The session in `dir`, with every matrix it lists.
pub fn read_run(dir: &Path) -> Result<RunOutcome> {
    let loaded = session::load(dir)?;
    let mut names: Vec<&String> = loaded.record.matrices.keys().collect();
    names.sort_by_key(|n| (live_rank(n), n.as_str()));
    let mut matrices = Vec::with_capacity(names.len());
    for name in names {
        matrices.push((name.clone(), loaded.matrix(name)?));
    }
    Ok(RunOutcome {
        record: loaded.record,
        matrices,
    })
}

/// Where a matrix stands in a live fit's list (ties alphabetical).
fn live_rank(name: &str) -> u8 {
    match name {
        "output_kernel" => 0,
        n if n.starts_with("output_") => 1,
        "predictions_test" | "targets_test" => 3,
        n if n.starts_with("model_") => 4,
        _ => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::live_rank;

    #[test]
    fn the_output_kernel_leads_and_the_models_parts_close() {
        let mut names = vec![
            "model_alpha",
            "coefficients",
            "targets_test",
            "output_kernel",
            "predictions_test",
            "output_graph",
        ];
        names.sort_by_key(|n| (live_rank(n), *n));
        assert_eq!(
            names,
            [
                "output_kernel",
                "output_graph",
                "coefficients",
                "predictions_test",
                "targets_test",
                "model_alpha"
            ]
        );
    }
}
