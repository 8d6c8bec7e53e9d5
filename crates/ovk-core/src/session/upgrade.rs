//! A saved run's configuration as it ran: sessions saved by earlier versions of ovk re-read
//! with the defaults they were fitted under, so that `replay --verify` re-runs the same fit.

use super::SessionRecord;
use crate::config::{RunConfig, SelectOn};
use crate::methods::Value;

/// `record.config`, with every default that has changed since the session was saved made
/// explicit as it was then:
/// - lowrank-okl chose λ (and p) on the test rows unless `val_fraction` was set — its recorded
///   `val_fraction` is 0 — where the test rows are now touched once by default; such a session
///   replays with `select_on = test`, the protocol it ran.
pub fn config_as_run(record: &SessionRecord) -> RunConfig {
    let mut cfg = record.config.clone();
    let legacy_path = record.method == "lowrank-okl"
        && cfg.select_on == SelectOn::Train
        && matches!(record.params.0.get("val_fraction"), Some(Value::Float(v)) if *v == 0.0);
    if legacy_path {
        cfg.select_on = SelectOn::Test;
        cfg.params.0.remove("val_fraction");
    }
    cfg
}
