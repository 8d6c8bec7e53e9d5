//! `ovk sessions`: the store, newest first, one line each; unreadable entries say why.
//! `--json` prints one JSON array instead (readable and unreadable entries alike).

use std::path::Path;

use serde_json::json;

use ovk_core::session::{display_safe as safe, Listing, RunStatus, Store};
use ovk_core::{OvkError, Result};

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
                    "kept": s.kept,
                    "status": s.status,
                    "optimistic": s.optimistic,
                    "split": s.split_id,
                    "folds": s.folds_id,
                    "cv": s.cv.map(|(k, mean, sd)| json!({"folds": k, "mean": mean, "sd": sd})),
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
    if entries
        .iter()
        .any(|e| matches!(e, Listing::Ok(s) if !s.kept))
    {
        outln!(
            "~ marks runs not kept (recorded by themselves; `ovk sessions --prune-unkept` removes \
             them). rows: the rows fitted and scored on — equal ids, same rows."
        )?;
    }
    for e in entries {
        match e {
            Listing::Ok(s) => {
                let mut metric = match (&s.key_metric, s.status) {
                    (_, RunStatus::Cancelled) => "cancelled".to_string(),
                    (Some((k, v)), _) => format!("{k} {v:.4}"),
                    (None, _) => "-".into(),
                };
                if s.optimistic.is_some() {
                    metric.push_str(" (optimistic)");
                }
                if let Some((k, mean, sd)) = s.cv {
                    metric.push_str(&format!("  cv{k} {mean:.4} ± {sd:.4}"));
                }
                outln!(
                    "{} {:<40} {:<20} {:<22} {:<14} {:<12} rows {} {}",
                    if s.kept { ' ' } else { '~' },
                    safe(&s.id),
                    safe(&s.name),
                    safe(&s.created),
                    safe(&s.dataset),
                    safe(&s.method),
                    s.split_id.get(..6).unwrap_or(&s.split_id),
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

/// `ovk sessions --prune-unkept [--older-than AGE]`: delete the runs not kept.
pub fn prune(sessions: Option<&Path>, older_than: Option<&str>, as_json: bool) -> Result<i32> {
    let age = older_than.map(parse_age).transpose()?;
    let Some(store) = Store::existing(sessions)? else {
        outln!("no sessions in {}", Store::locate(sessions)?.display())?;
        return Ok(0);
    };
    let removed = store.prune_unkept(age)?;
    if as_json {
        outln!("{}", json!({ "removed": removed }))?;
    } else if removed.is_empty() {
        outln!(
            "no runs to prune: every run is kept{}",
            match older_than {
                Some(a) => format!(" or younger than {a}"),
                None => String::new(),
            }
        )?;
    } else {
        for id in &removed {
            outln!("removed {}", safe(id))?;
        }
        outln!("{} run(s) not kept were removed", removed.len())?;
    }
    Ok(0)
}

/// An age: a number and a unit, s m h d w (`30m`, `12h`, `7d`, `2w`).
pub fn parse_age(text: &str) -> Result<std::time::Duration> {
    let t = text.trim();
    let bad = || {
        OvkError::input(format!(
            "--older-than: '{t}' is not an age; give a number and a unit: 30m, 12h, 7d, 2w"
        ))
    };
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .ok_or_else(bad)?;
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().map_err(|_| bad())?;
    let unit_s = match unit.trim() {
        "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        "d" => 86_400.0,
        "w" => 604_800.0,
        _ => return Err(bad()),
    };
    let secs = n * unit_s;
    if !(0.0..=1e12).contains(&secs) {
        return Err(bad());
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}
