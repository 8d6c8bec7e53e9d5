//! The process's address-space limit (`ulimit -v`), which both the thread policy and the memory
//! guard must respect.

/// The soft RLIMIT_AS in bytes, or `None` when unlimited or unreadable.
pub fn address_space_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    line.trim_start_matches("Max address space")
        .split_whitespace()
        .next()?
        .parse()
        .ok() // "unlimited" does not parse: no limit
}
