//! Refuse, before allocating, what would not fit in memory — with the figure and the way out.

use super::workspace::product_workspace_bytes;
use crate::{OvkError, Result};

/// Bytes of a dense r×c matrix of f64.
pub(crate) fn dense_bytes(r: usize, c: usize) -> u64 {
    (r as u64).saturating_mul(c as u64).saturating_mul(8)
}

/// How much memory a run may use, and what set that figure.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MemoryBudget {
    pub bytes: u64,
    /// `OVK_MEMORY_LIMIT=1GB`, `MemAvailable`, `ulimit -v`, `cgroup memory.max` …
    pub source: String,
}

/// Runs use at most this share of the budget: the rest is for what the estimates leave out.
const USABLE: f64 = 0.8;

/// The memory available to this process: `OVK_MEMORY_LIMIT` when set (units accepted:
/// `17e9`, `1GB`, `512MiB`, `4G`), else the least of MemAvailable, the address-space limit
/// (`ulimit -v`) less what is mapped, and the cgroup (v2 or v1) limit less what is used.
/// `Ok(None)` where none of these can be read (then nothing is refused); an unreadable
/// `OVK_MEMORY_LIMIT` is an error (exit 2), not silently ignored.
pub(crate) fn memory_budget() -> Result<Option<MemoryBudget>> {
    if let Some(v) = std::env::var_os("OVK_MEMORY_LIMIT").filter(|v| !v.is_empty()) {
        let v = v.to_string_lossy();
        let bytes = parse_size(&v).ok_or_else(|| {
            OvkError::input(format!(
                "OVK_MEMORY_LIMIT={v}: not a size; give bytes (17000000000, 17e9) or a number \
                 with a unit (16GB, 512MiB, 4G)"
            ))
        })?;
        return Ok(Some(MemoryBudget {
            bytes,
            source: format!("OVK_MEMORY_LIMIT={}", v.trim()),
        }));
    }
    let candidates = [
        meminfo_available().map(|b| (b, "available (MemAvailable)".to_string())),
        address_space_left().map(|b| {
            (
                b,
                format!(
                    "left under the address-space limit (ulimit -v) beside the {} each thread \
                     reserves for matrix products",
                    format_bytes(product_workspace_bytes())
                ),
            )
        }),
        cgroup_left().map(|(b, file)| (b, format!("left under the cgroup limit ({file})"))),
    ];
    Ok(candidates
        .into_iter()
        .flatten()
        .min_by_key(|(b, _)| *b)
        .map(|(bytes, source)| MemoryBudget { bytes, source }))
}

/// `memory_budget`'s figure, where it can be read (for reports that do not refuse anything).
pub fn available_memory_bytes() -> Option<u64> {
    memory_budget().ok().flatten().map(|b| b.bytes)
}

/// A size: a non-negative number of bytes (`17000000000`, `17e9`, `1.5e9`), optionally followed
/// by a unit: B, kB/KB, MB, GB, TB (powers of 1000); KiB, MiB, GiB, TiB and K, M, G, T
/// (powers of 1024). Anything else (`abc`, `-1`, `NaN`, `1 parsec`) is `None`.
pub(crate) fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let split = t
        .find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
        .unwrap_or(t.len());
    let (num, unit) = (t[..split].trim(), t[split..].trim());
    if num.is_empty() || num.starts_with(['-', '+']) {
        return None;
    }
    let x: f64 = num.parse().ok()?;
    let scale: f64 = match unit {
        "" | "B" | "b" => 1.0,
        "kB" | "KB" | "kb" => 1e3,
        "MB" | "mb" => 1e6,
        "GB" | "gb" => 1e9,
        "TB" | "tb" => 1e12,
        "K" | "k" | "KiB" | "kiB" => 1024.0,
        "M" | "m" | "MiB" => 1024f64.powi(2),
        "G" | "g" | "GiB" => 1024f64.powi(3),
        "T" | "t" | "TiB" => 1024f64.powi(4),
        _ => return None,
    };
    let bytes = x * scale;
    (0.0..1.8e19).contains(&bytes).then_some(bytes as u64)
}

fn meminfo_available() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    kib_field(&s, "MemAvailable:")
}

fn kib_field(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb.saturating_mul(1024))
}

/// RLIMIT_AS (soft) less the address space already mapped (VmSize) and the product workspaces
/// not yet reserved (`kernels::product_workspace_bytes`) of the threads that may run a product:
/// rayon's workers, the fit's own thread and a decomposition's worker (`linalg::interruptible`).
/// What `ulimit -v` leaves for data.
fn address_space_left() -> Option<u64> {
    let soft = crate::util::limits::address_space_limit()?;
    let (mapped, rss) = vm_sizes()?;
    let w = product_workspace_bytes();
    let threads = rayon::current_num_threads() as u64 + 2;
    let pending = threads.saturating_sub(workspaces_reserved(w, (mapped, rss)));
    Some(
        soft.saturating_sub(mapped)
            .saturating_sub(w.saturating_mul(pending)),
    )
}

/// The product workspaces of `bytes` this process has reserved so far, given its (VmSize,
/// VmRSS) now. A workspace is address space left untouched, so they are what the mapped size
/// grew by beyond the resident size since the first look (a thread's stack and glibc's arenas
/// add far less than one).
fn workspaces_reserved(bytes: u64, (size, rss): (u64, u64)) -> u64 {
    static FIRST: std::sync::OnceLock<(u64, u64)> = std::sync::OnceLock::new();
    let (size0, rss0) = *FIRST.get_or_init(|| (size, rss));
    let untouched = size
        .saturating_sub(size0)
        .saturating_sub(rss.saturating_sub(rss0));
    untouched.checked_div(bytes).unwrap_or(0)
}

/// This process's mapped and resident bytes (VmSize, VmRSS).
fn vm_sizes() -> Option<(u64, u64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    Some((
        kib_field(&status, "VmSize:").unwrap_or(0),
        kib_field(&status, "VmRSS:").unwrap_or(0),
    ))
}

/// Whether this thread can start a matrix product: false when an address-space limit leaves
/// less than twice the workspace a first product reserves (the product itself needs room
/// too), where the product would abort the process.
pub(crate) fn product_can_reserve() -> bool {
    let Some(soft) = crate::util::limits::address_space_limit() else {
        return true;
    };
    let mapped = vm_sizes().map_or(0, |(size, _)| size);
    soft.saturating_sub(mapped) > product_workspace_bytes().saturating_mul(2)
}

/// Under an address-space limit (`ulimit -v`), keep glibc from reserving a 64 MiB malloc arena
/// per thread: with polars', rayon's and faer's threads those reservations alone exhaust the
/// limit, and an allocation the memory guard admitted aborts the process. Call once at start.
pub fn fit_allocator_to_limits() {
    if address_space_left().is_none() {
        return;
    }
    few_arenas();
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn few_arenas() {
    // SAFETY: mallopt only sets a tuning parameter of glibc's allocator.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn few_arenas() {}

/// Give the free pages of every malloc arena back to the system, where large temporaries were
/// just freed that what follows would not reuse. Loading leaves the file's bytes, its parsed
/// columns and their copies freed inside glibc's heap, where whether they stay resident
/// depended on what was allocated after them: tmc2007's prepared rows were 267 MB resident
/// before an okl fit and 146 MB before a vvmr fit on the same file. After this they are
/// 141 MB for both, the fit's peak is that much lower (okl r = 2000: 1010 → 960 MB), and the
/// memory estimate counts what is live rather than what glibc happened to keep. Buffers still
/// being freed on their own threads (`util::drop_later`) are waited for first.
pub(crate) fn return_freed_memory() {
    crate::util::drop_later::finish();
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory glibc holds; no live allocation moves.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The tightest cgroup memory limit on this process's cgroup and its ancestors, less the
/// memory charged there (page cache that can be dropped is not counted as used), with the file
/// that set it.
fn cgroup_left() -> Option<(u64, String)> {
    let groups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mut best: Option<(u64, String)> = None;
    let mut consider = |left: u64, file: std::path::PathBuf| {
        if best.as_ref().is_none_or(|(b, _)| left < *b) {
            best = Some((left, file.display().to_string()));
        }
    };
    for line in groups.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let rel = path.trim_start_matches('/');
        let (mounts, limit_file, usage_file, cache_key): (&[&str], _, _, _) =
            if controllers.is_empty() {
                (
                    &["/sys/fs/cgroup", "/sys/fs/cgroup/unified"],
                    "memory.max",
                    "memory.current",
                    "inactive_file ",
                )
            } else if controllers.split(',').any(|c| c == "memory") {
                (
                    &["/sys/fs/cgroup/memory"],
                    "memory.limit_in_bytes",
                    "memory.usage_in_bytes",
                    "total_inactive_file ",
                )
            } else {
                continue;
            };
        for mount in mounts {
            let mut dir = std::path::Path::new(mount).join(rel);
            loop {
                let limit = std::fs::read_to_string(dir.join(limit_file))
                    .ok()
                    .and_then(|t| t.trim().parse::<u64>().ok()) // "max": no limit
                    .filter(|&l| l < 1 << 60); // v1 writes "no limit" as ~2⁶³
                if let Some(limit) = limit {
                    let used = std::fs::read_to_string(dir.join(usage_file))
                        .ok()
                        .and_then(|t| t.trim().parse::<u64>().ok())
                        .unwrap_or(0);
                    let cache = std::fs::read_to_string(dir.join("memory.stat"))
                        .ok()
                        .and_then(|t| {
                            t.lines()
                                .find(|l| l.starts_with(cache_key))
                                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                        })
                        .unwrap_or(0);
                    consider(
                        limit.saturating_sub(used.saturating_sub(cache)),
                        dir.join(limit_file),
                    );
                }
                if dir.as_path() == std::path::Path::new(mount) || !dir.pop() {
                    break;
                }
            }
        }
    }
    best
}

/// The bytes a run may use (80% of `memory_budget`), where a budget can be read: what a
/// computation done in blocks sizes its blocks by.
pub(crate) fn usable_bytes() -> Result<Option<u64>> {
    Ok(memory_budget()?.map(|b| (USABLE * b.bytes as f64) as u64))
}

/// Re-reads of MemAvailable, 250 ms apart, before a run is refused on it.
const MEMAVAILABLE_REREADS: usize = 4;

/// Error if `bytes` exceed 80% of the available memory.
pub(crate) fn check_fits(bytes: u64, what: &str) -> Result<()> {
    check_fits_or(
        bytes,
        what,
        "use fewer training points (--test-fraction, or subsample the file), a Nyström \
         approximation, or a low-rank method",
    )
}

/// Error if `bytes` exceed 80% of the available memory; the message ends with `advice`.
pub(crate) fn check_fits_or(bytes: u64, what: &str, advice: &str) -> Result<()> {
    let Some(mut budget) = memory_budget()? else {
        return Ok(());
    };
    // MemAvailable moves with every other process: another one's brief peak is not this run's
    // limit, so a refusal on it is re-read a few times before it stands.
    for _ in 0..MEMAVAILABLE_REREADS {
        if bytes <= (USABLE * budget.bytes as f64) as u64 || !budget.source.contains("MemAvailable")
        {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
        match memory_budget()? {
            Some(b) => budget = b,
            None => return Ok(()),
        }
    }
    let usable = (USABLE * budget.bytes as f64) as u64;
    if bytes > usable {
        return Err(OvkError::Resources(format!(
            "{what} needs about {} but only {} of memory may be used ({:.0}% of the {} {}); \
             {advice}",
            format_bytes(bytes),
            format_bytes(usable),
            USABLE * 100.0,
            format_bytes(budget.bytes),
            budget.source
        )));
    }
    Ok(())
}

/// This process's peak resident memory so far (VmHWM in /proc/self/status), where readable.
pub fn peak_rss_bytes() -> Option<u64> {
    status_bytes("VmHWM:")
}

/// This process's resident memory now (VmRSS in /proc/self/status), where readable.
pub fn rss_bytes() -> Option<u64> {
    status_bytes("VmRSS:")
}

fn status_bytes(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    kib_field(&s, field)
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
    fn sizes_take_units_and_refuse_the_rest() {
        assert_eq!(parse_size("17e9"), Some(17_000_000_000));
        assert_eq!(parse_size("1GB"), Some(1_000_000_000));
        assert_eq!(parse_size("512MiB"), Some(512 << 20));
        assert_eq!(parse_size(" 4G "), Some(4 << 30));
        assert_eq!(parse_size("100000"), Some(100_000));
        assert_eq!(parse_size("1.5 kB"), Some(1500));
        for bad in [
            "abc", "-1", "", "NaN", "inf", "1 parsec", "1e30", "GB", "+5",
        ] {
            assert_eq!(parse_size(bad), None, "{bad}");
        }
    }

    #[test]
    fn formats_bytes() {
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(1536), "1.5 KiB");
    }
}
