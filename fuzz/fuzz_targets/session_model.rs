//! Bytes → a session directory holding a model: everything before the first `.npy` magic
//! (`\x93NUMPY`) is `session.json`; the rest, cut at each further magic, is written as the
//! model's arrays in the order `session.json` lists them (`model.arrays`), each also under the
//! name it lists in `matrices`. Then `session::load` and `session::load_model`, which validates
//! the model as strictly as a fit checks its parameters. A refusal is exit 2 with a message; a
//! model accepted predicts no rows without failing, with as many outputs as the record names.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ovk_core::session;

#[path = "common.rs"]
mod common;

const MAGIC: &[u8] = b"\x93NUMPY";

/// `data` cut before each `.npy` magic: the JSON, then each array's bytes.
fn pieces(data: &[u8]) -> Vec<&[u8]> {
    let mut cuts: Vec<usize> = data
        .windows(MAGIC.len())
        .enumerate()
        .filter(|(_, w)| *w == MAGIC)
        .map(|(i, _)| i)
        .collect();
    cuts.insert(0, 0);
    cuts.push(data.len());
    cuts.dedup();
    cuts.windows(2).map(|w| &data[w[0]..w[1]]).collect()
}

fuzz_target!(|data: &[u8]| {
    let parts = pieces(data);
    let (json, arrays) = match parts.split_first() {
        Some((first, rest)) if !first.starts_with(MAGIC) => (*first, rest),
        _ => (&b""[..], &parts[..]),
    };
    let dir = common::scratch("session_model").join("s");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("session directory");
    std::fs::write(dir.join("session.json"), json).expect("write session.json");
    let listed: Vec<String> = serde_json::from_slice::<serde_json::Value>(json)
        .ok()
        .and_then(|v| v.get("model")?.get("arrays")?.as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|a| a.as_str().map(String::from))
        // A name the record lists is only used when it is a plain file name.
        .filter(|a| {
            !a.is_empty()
                && a.len() < 64
                && a.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
        .collect();
    for (name, bytes) in listed.iter().zip(arrays.iter()) {
        std::fs::write(dir.join(format!("model_{name}.npy")), bytes).expect("write npy");
    }
    let loaded = match session::load(&dir) {
        Ok(l) => l,
        Err(e) => return common::check_refusal(&e, &["session.json", "/s"]),
    };
    match session::load_model(&loaded) {
        Ok((_, model)) => {
            let d = loaded.record.feature_names.len();
            let y = model
                .predict(ndarray::Array2::<f64>::zeros((0, d)).view())
                .expect("an accepted model predicts no rows");
            assert_eq!(y.ncols(), loaded.record.output_names.len());
        }
        Err(e) => {
            assert_eq!(e.exit_code(), 2, "not a user-input error: {e:?}");
            assert!(!e.to_string().trim().is_empty());
        }
    }
});
