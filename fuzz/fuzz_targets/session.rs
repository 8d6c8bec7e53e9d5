//! Bytes → a session directory: everything before the first `.npy` magic (`\x93NUMPY`) is
//! `session.json`, the rest is written as each of the matrices a session usually lists. Then
//! the store's listing, `session::load` and every listed matrix, as `ovk replay/export` read
//! them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ovk_core::session::{self, Listing, Store};

#[path = "common.rs"]
mod common;

const MAGIC: &[u8] = b"\x93NUMPY";
const MATRICES: &[&str] = &[
    "output_kernel.npy",
    "predictions_test.npy",
    "predictions_train.npy",
    "coefficients.npy",
];

fuzz_target!(|data: &[u8]| {
    let at = data
        .windows(MAGIC.len())
        .position(|w| w == MAGIC)
        .unwrap_or(data.len());
    let (json, npy) = data.split_at(at);
    let store = common::scratch("session");
    let dir = store.join("s");
    std::fs::create_dir_all(&dir).expect("session directory");
    std::fs::write(dir.join("session.json"), json).expect("write session.json");
    for m in MATRICES {
        std::fs::write(dir.join(m), npy).expect("write npy");
    }
    match Store::open(Some(&store)) {
        Ok(s) => {
            for l in s.list() {
                if let Listing::Corrupt { reason, .. } = l {
                    assert!(!reason.trim().is_empty());
                }
            }
        }
        Err(e) => panic!("store: {e}"),
    }
    match session::load(&dir) {
        Ok(loaded) => {
            let _ = session::summary_text(&loaded.record);
            for name in loaded.record.matrices.keys() {
                match loaded.matrix(name) {
                    Ok(a) => assert!(a.len() * 8 <= npy.len()),
                    Err(e) => {
                        let msg = e.to_string();
                        assert_eq!(e.exit_code(), 2, "{e:?}");
                        assert!(!msg.trim().is_empty());
                    }
                }
            }
        }
        Err(e) => common::check_refusal(&e, &["session.json", "/s"]),
    }
});
