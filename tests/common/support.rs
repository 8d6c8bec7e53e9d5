//! For the property tests (`tests/prop`): the case count (fixed for CI, `PROPTEST_CASES` raises it),
//! scratch paths, the refusal contract, and an allocator that remembers the largest request,
//! so a hostile header that makes the reader allocate gigabytes fails a test instead of
//! passing unnoticed (Linux overcommits, so such an allocation often "succeeds").

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::test_runner::{Config, TestCaseError};

pub fn config(default_cases: u32) -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default_cases);
    let defaults = Config::default();
    // Deterministic in CI (a failure reproduces); PROPTEST_RNG_SEED=N explores other cases.
    let rng_seed = if std::env::var_os("PROPTEST_RNG_SEED").is_some() {
        defaults.rng_seed
    } else {
        proptest::test_runner::RngSeed::Fixed(2026)
    };
    Config {
        cases,
        failure_persistence: None,
        rng_seed,
        ..defaults
    }
}

/// A fresh path for one case (unique across threads and cases) in a per-process directory.
pub fn scratch(tag: &str, file: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir()
        .join(format!("ovk-prop-{tag}-{}", std::process::id()))
        .join(N.fetch_add(1, Ordering::Relaxed).to_string());
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(file)
}

/// The contract for a refusal: exit status 2 and a message naming one of `names`.
pub fn refusal(e: &ovk_core::OvkError, names: &[&str]) -> Result<(), TestCaseError> {
    let msg = e.to_string();
    proptest::prop_assert_eq!(e.exit_code(), 2, "not a user-input error: {:?}", e);
    proptest::prop_assert!(!msg.trim().is_empty());
    proptest::prop_assert!(
        names.iter().any(|n| msg.contains(n)),
        "message names none of {:?}: {}",
        names,
        msg
    );
    Ok(())
}

pub fn file_name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

/// The largest single allocation this test process has asked for.
pub static LARGEST: AtomicUsize = AtomicUsize::new(0);

pub struct Tracking;

unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.fetch_max(new_size, Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

/// No reader may ask for more than this in one piece on these small inputs.
pub const ALLOCATION_LIMIT: usize = 256 << 20;

pub fn assert_no_absurd_allocation() -> Result<(), TestCaseError> {
    let largest = LARGEST.load(Ordering::Relaxed);
    proptest::prop_assert!(
        largest <= ALLOCATION_LIMIT,
        "an allocation of {} bytes on a small input",
        largest
    );
    Ok(())
}
