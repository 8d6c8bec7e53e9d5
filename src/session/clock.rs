//! Timestamps for sessions.

/// Now, UTC, RFC 3339 with seconds (`2026-11-21T07:05:00Z`).
pub fn now_rfc3339() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()
}
