//! `ovk sessions`: the store, newest first, one line each; unreadable entries say why.
//! `--json` prints one JSON array instead (readable and unreadable entries alike).

use std::path::Path;

use serde_json::json;

use ovk_core::session::{display_safe as safe, Listing, Store};
use ovk_core::Result;

pub fn list(sessions: Option<&Path>, as_json: bool) -> Result<i32> {
    // Listing never creates the store: an absent one has no sessions.
    let root = Store::locate(sessions)?;
    let entries = match Store::existing(sessions)? {
        Some(store) => store.list(),
        None if root.exists() => Store::open(sessions)?.list(), // not a directory: open says so
        None => Vec::new(),
    };
    if as_json {
        let items: Vec<serde_json::Value> = entries
            .iter()
            .map(|e| match e {
                Listing::Ok(s) => json!({
                    "id": s.id,
                    "name": s.name,
                    "created": s.created,
                    "dataset": s.dataset,
                    "method": s.method,
                    "metric": s.key_metric.as_ref().map(|(k, _)| k),
                    "value": s.key_metric.as_ref().map(|(_, v)| v),
                    "path": s.path.display().to_string(),
                }),
                Listing::Corrupt { path, reason } => json!({
                    "path": path.display().to_string(),
                    "unreadable": reason,
                }),
            })
            .collect();
        outln!("{}", serde_json::Value::Array(items))?;
        return Ok(0);
    }
    if entries.is_empty() {
        outln!("no sessions in {}", root.display())?;
        return Ok(0);
    }
    for e in entries {
        match e {
            Listing::Ok(s) => {
                let metric = s
                    .key_metric
                    .map(|(k, v)| format!("{k} {v:.4}"))
                    .unwrap_or_else(|| "-".into());
                outln!(
                    "{:<40} {:<20} {:<22} {:<14} {:<12} {}",
                    safe(&s.id),
                    safe(&s.name),
                    safe(&s.created),
                    safe(&s.dataset),
                    safe(&s.method),
                    metric
                )?;
            }
            Listing::Corrupt { path, reason } => {
                outln!(
                    "! {} — unreadable: {}",
                    safe(&path.display().to_string()),
                    safe(&reason)
                )?;
            }
        }
    }
    Ok(0)
}
