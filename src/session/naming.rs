//! Session ids and timestamps: `YYYYMMDD-HHMMSS-<slug>`, sortable and safe as directory names.

use chrono::{SecondsFormat, Utc};

/// The current time as RFC 3339 in UTC, to the second (`2026-11-21T06:38:44Z`).
pub fn now_rfc3339() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// A fresh id for a session called `name`: the current UTC time and the name's slug.
pub fn new_id(name: &str) -> String {
    format!("{}-{}", Utc::now().format("%Y%m%d-%H%M%S"), slug(name))
}

/// Lower-case letters and digits; every other run of characters becomes one `-`. At most 40
/// characters; `session` when nothing is left.
pub fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    out.truncate(40);
    let out = out.trim_end_matches('-');
    if out.is_empty() {
        "session".to_string()
    } else {
        out.to_string()
    }
}

/// A single path component that names an entry of a directory: not empty, no separator, not
/// hidden (so never `.`, `..` or a `.tmp-*` work directory).
pub(crate) fn is_plain_name(s: &str) -> bool {
    !s.is_empty() && !s.starts_with('.') && !s.contains(['/', '\\']) && !s.contains('\0')
}
