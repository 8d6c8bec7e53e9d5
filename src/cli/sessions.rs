//! `ovk sessions`: the store, newest first, one line each; unreadable entries say why.

use std::path::Path;

use crate::session::{display_safe as safe, Listing, Store};
use crate::Result;

pub fn list(sessions: Option<&Path>) -> Result<i32> {
    let store = Store::open(sessions)?;
    let entries = store.list();
    if entries.is_empty() {
        println!("no sessions in {}", store.root().display());
        return Ok(0);
    }
    for e in entries {
        match e {
            Listing::Ok(s) => {
                let metric = s
                    .key_metric
                    .map(|(k, v)| format!("{k} {v:.4}"))
                    .unwrap_or_else(|| "-".into());
                println!(
                    "{:<40} {:<20} {:<22} {:<14} {:<12} {}",
                    safe(&s.id),
                    safe(&s.name),
                    safe(&s.created),
                    safe(&s.dataset),
                    safe(&s.method),
                    metric
                );
            }
            Listing::Corrupt { path, reason } => {
                println!(
                    "! {} — unreadable: {}",
                    safe(&path.display().to_string()),
                    safe(&reason)
                );
            }
        }
    }
    Ok(0)
}
