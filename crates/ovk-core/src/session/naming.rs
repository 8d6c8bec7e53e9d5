//! Session ids and timestamps: `YYYYMMDD-HHMMSS-<slug>`, sortable and safe as directory names.

use chrono::{SecondsFormat, Utc};

use crate::util::text::is_unprintable;

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

/// Session names longer than this are cut (a name is a label, not a document).
pub(crate) const MAX_NAME_CHARS: usize = 200;

/// A name as it is stored: every unprintable character (escape sequences, newlines, tabs)
/// becomes a space, runs of spaces one space, trimmed, at most `MAX_NAME_CHARS` characters.
pub(crate) fn safe_name(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        let c = if is_unprintable(c) || c.is_whitespace() {
            ' '
        } else {
            c
        };
        if c == ' ' && (out.is_empty() || out.ends_with(' ')) {
            continue;
        }
        if out.chars().count() >= MAX_NAME_CHARS {
            break;
        }
        out.push(c);
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_lose_control_characters_and_are_capped() {
        assert_eq!(safe_name("a\u{1b}[31mred\nb\tc  "), "a [31mred b c");
        assert_eq!(
            safe_name(&"x".repeat(10_000)).chars().count(),
            MAX_NAME_CHARS
        );
        assert_eq!(safe_name("\u{202e}evil"), "evil");
    }
}
