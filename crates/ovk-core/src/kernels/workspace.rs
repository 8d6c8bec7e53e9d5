//! What faer's matrix products reserve beyond their operands. On x86-64 they run through
//! `private-gemm-x86`, whose packing buffers are a thread-local reservation of twice the
//! last-level cache (as it reads it from sysfs), made on each thread's first product and kept
//! for the thread's life. It is address space, mostly never touched — but under an
//! address-space limit (`ulimit -v`) it counts in full: on a machine reporting a 480 MiB L3 a
//! thread's first 400×400 product reserved 960 MiB and, under an 800 MB limit, aborted the
//! process. The memory guard leaves room for it, and the speed calibration starts no product
//! that could not reserve it.

use super::memory::parse_size;

/// Bytes one thread's first product reserves: twice the last-level cache, at least 2 MiB and
/// four times L2 (the floors `private-gemm-x86` applies); 0 off x86-64.
pub fn product_workspace_bytes() -> u64 {
    if !cfg!(target_arch = "x86_64") {
        return 0;
    }
    static BYTES: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *BYTES.get_or_init(|| {
        let l2 = cache_bytes(2).unwrap_or(0);
        let l3 = cache_bytes(3).unwrap_or(0).max(4 * l2).max(2 << 20);
        2 * l3
    })
}

/// The size of cpu0's data or unified cache of `level`, from sysfs.
fn cache_bytes(level: u32) -> Option<u64> {
    let dir = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache").ok()?;
    dir.flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("index"))
        })
        .filter_map(|p| {
            let read = |f: &str| std::fs::read_to_string(p.join(f)).ok();
            let is_level = read("level")?.trim().parse::<u32>().ok()? == level;
            let is_data = matches!(read("type")?.trim(), "Data" | "Unified");
            // `491520K`, `32M` or bytes: powers of 1024, as `parse_size` reads K and M
            (is_level && is_data).then(|| parse_size(&read("size")?))?
        })
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_sizes_parse_as_sysfs_writes_them() {
        assert_eq!(parse_size("491520K"), Some(491_520 << 10));
        assert_eq!(parse_size("32M"), Some(32 << 20));
        assert_eq!(parse_size("4096"), Some(4096));
    }

    #[test]
    fn the_reservation_has_its_floor() {
        if cfg!(target_arch = "x86_64") {
            assert!(product_workspace_bytes() >= 4 << 20);
        }
    }
}
