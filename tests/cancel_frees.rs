//! Cancelling a fit frees its memory: a counting global allocator watches the live heap while
//! a fit runs on the background runner, is cancelled mid-iteration, and its thread is joined.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use ovk_core::data::rng::Rng;
use ovk_core::data::DataConfig;
use ovk_core::kernels::{KernelSpec, Sigma};
use ovk_core::methods::{Params, Value};
use ovk_core::train::{spawn, RunConfig, RunMessage};

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

fn grow(by: isize) {
    let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = System.alloc(l);
        if !p.is_null() {
            grow(l.size() as isize);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(l);
        if !p.is_null() {
            grow(l.size() as isize);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l);
        LIVE.fetch_sub(l.size() as isize, Ordering::Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = System.realloc(p, l, new);
        if !q.is_null() {
            grow(new as isize - l.size() as isize);
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn write_table(n: usize) -> std::path::PathBuf {
    let mut r = Rng::new(7);
    let mut s = String::from("x0,x1,x2,y0,y1,y2,y3\n");
    for _ in 0..n {
        let x = [r.normal(), r.normal(), r.normal()];
        let y = [
            x[0].sin() + 0.1 * r.normal(),
            x[1] * x[2] + 0.1 * r.normal(),
            x[0] - x[2] + 0.1 * r.normal(),
            (x[1] * 2.0).cos() + 0.1 * r.normal(),
        ];
        let cells: Vec<String> = x.iter().chain(&y).map(|v| format!("{v:.6}")).collect();
        s.push_str(&cells.join(","));
        s.push('\n');
    }
    let path = std::env::temp_dir().join(format!("ovk-cancel-{}-{n}.csv", std::process::id()));
    std::fs::write(&path, s).unwrap();
    path
}

fn config(path: &std::path::Path) -> RunConfig {
    let mut data = DataConfig::new(path);
    data.targets = Some(vec!["y0".into(), "y1".into(), "y2".into(), "y3".into()]);
    // Block coordinate descent at a tiny tolerance: thousands of iterations, so the cancel
    // lands mid-fit with K's eigenvectors and the iterates alive.
    let params = Params::new()
        .with("solver", Value::Text("bcd".into()))
        .with("lambda", Value::Float(1e-4))
        .with("tol", Value::Float(1e-15))
        .with("max_iter", Value::Int(1_000_000));
    RunConfig {
        data,
        method: "okl".into(),
        kernel: KernelSpec {
            sigma: Sigma::Value(1.0),
            ..KernelSpec::default()
        },
        params,
        name: None,
        cv: None,
        select_on: Default::default(),
    }
}

/// Run `cfg` on the runner, cancel at the `cancel_at`-th trace record, and return the last
/// message and the number of records seen.
fn run_and_cancel(cfg: RunConfig, cancel_at: usize) -> (RunMessage, usize) {
    let handle = spawn(cfg);
    let mut records = 0;
    let last = loop {
        match handle.rx.recv().expect("the runner ends with a message") {
            RunMessage::Record(_) => {
                records += 1;
                if records == cancel_at {
                    handle.cancel();
                }
            }
            m @ (RunMessage::Finished(_) | RunMessage::Failed { .. } | RunMessage::Cancelled) => {
                break m
            }
            _ => {}
        }
    };
    handle.join();
    (last, records)
}

#[test]
fn a_cancelled_fit_returns_its_memory() {
    // Warm-up: the same fit for 3 iterations, to completion, so one-off global state is in
    // the baseline (a first fit of this size leaves ~128 MiB of process-wide caches that a
    // second fit reuses rather than grows).
    let big = write_table(1600);
    let mut warm = config(&big);
    warm.params = warm.params.with("max_iter", Value::Int(3));
    let (m, _) = run_and_cancel(warm, usize::MAX);
    assert!(matches!(m, RunMessage::Finished(_)), "{m:?}");

    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let (m, records) = run_and_cancel(config(&big), 3);
    assert!(matches!(m, RunMessage::Cancelled), "{m:?}");
    assert!(records >= 3, "cancelled after {records} records");
    let after = LIVE.load(Ordering::Relaxed);
    let peak = PEAK.load(Ordering::Relaxed);
    let mib = |b: isize| b as f64 / 1048576.0;
    eprintln!(
        "live heap: before {:.1} MiB, peak {:.1} MiB, after cancel + join {:.1} MiB",
        mib(before),
        mib(peak),
        mib(after)
    );
    // The fit held tens of MB (1200² Gram and eigenvectors: 11 MiB each) …
    assert!(
        peak - before > 30 << 20,
        "peak only {:.1} MiB",
        mib(peak - before)
    );
    // … and gave back all but crumbs once the runner's thread ended.
    assert!(
        after - before < 1 << 20,
        "{:.2} MiB still live after the cancel",
        mib(after - before)
    );
    let _ = std::fs::remove_file(big);
}
