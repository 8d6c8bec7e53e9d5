//! Refuse, before allocating, what would not fit in memory — with the figure and the way out.

use crate::{OvkError, Result};

/// Bytes of a dense r×c matrix of f64.
pub fn dense_bytes(r: usize, c: usize) -> u64 {
    (r as u64).saturating_mul(c as u64).saturating_mul(8)
}

/// MemAvailable from /proc/meminfo; `None` where it cannot be read (then nothing is refused).
pub fn available_memory_bytes() -> Option<u64> {
    if let Ok(v) = std::env::var("OVK_MEMORY_LIMIT") {
        if let Ok(b) = v.trim().parse::<u64>() {
            return Some(b);
        }
    }
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Error if `bytes` exceed 80% of the available memory.
pub fn check_fits(bytes: u64, what: &str) -> Result<()> {
    check_fits_or(
        bytes,
        what,
        "use fewer training points (--test-fraction, or subsample the file), a Nyström \
         approximation, or a low-rank method",
    )
}

/// Error if `bytes` exceed 80% of the available memory; the message ends with `advice`.
pub fn check_fits_or(bytes: u64, what: &str, advice: &str) -> Result<()> {
    let Some(avail) = available_memory_bytes() else {
        return Ok(());
    };
    if bytes as f64 > 0.8 * avail as f64 {
        return Err(OvkError::Resources(format!(
            "{what} needs about {} but only {} of memory is available; {advice}",
            format_bytes(bytes),
            format_bytes(avail)
        )));
    }
    Ok(())
}

/// This process's peak resident memory so far (VmHWM in /proc/self/status), where readable.
pub fn peak_rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// 1536 → "1.5 KiB".
pub fn format_bytes(b: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", units[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_a_huge_gram_with_the_figure() {
        let err = check_fits(dense_bytes(10_000_000, 10_000_000), "the Gram matrix").unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("727.6 TiB"), "{msg}");
        assert!(msg.contains("Nyström"), "{msg}");
        assert_eq!(err.exit_code(), 2);
    }

    #[test]
    fn formats_bytes() {
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(1536), "1.5 KiB");
    }
}
