//! Property tests of the session reader: a real session (okl on linnerud, from `sessions/`)
//! with its `session.json` mutated (values replaced or removed at random places, bytes cut or
//! flipped) and its `.npy` files replaced by generated ones (honest or lying headers, other
//! dtypes, absurd shapes). Loading never panics and never allocates absurdly; it gives the
//! session or a user-input error naming the file; honest `.npy` files read back exactly.

use crate::common::support;

use std::path::{Path, PathBuf};

use ovk_core::session;
use proptest::prelude::*;
use serde_json::Value as Json;

const BASE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/sessions/20261121-080316-linnerud-okl"
);

/// A copy of the base session in a fresh directory.
fn session_copy() -> PathBuf {
    let dir = support::scratch("session", "s");
    std::fs::create_dir_all(&dir).unwrap();
    for f in std::fs::read_dir(BASE).unwrap().flatten() {
        std::fs::copy(f.path(), dir.join(f.file_name())).unwrap();
    }
    dir
}

/// Load `dir` and every matrix it lists, as `ovk export`/`replay` do; check the contract.
fn load_all(dir: &Path) -> Result<usize, TestCaseError> {
    let shown = dir.display().to_string();
    let mut matrices = 0;
    match session::load(dir) {
        Ok(loaded) => {
            let _ = session::summary_text(&loaded.record);
            for name in loaded.record.matrices.keys() {
                match loaded.matrix(name) {
                    Ok(a) => {
                        let file = dir.join(&loaded.record.matrices[name]);
                        let len = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
                        prop_assert!((a.len() as u64) * 8 <= len);
                        matrices += 1;
                    }
                    Err(e) => support::refusal(&e, &[&shown])?,
                }
            }
        }
        Err(e) => support::refusal(&e, &[&shown])?,
    }
    support::assert_no_absurd_allocation()?;
    Ok(matrices)
}

fn json_value() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::from),
        any::<i64>().prop_map(Json::from),
        any::<u64>().prop_map(Json::from),
        prop::num::f64::NORMAL.prop_map(Json::from),
        Just(Json::from(1e308)),
        prop::sample::select(vec![
            "",
            "ovk.session/1",
            "ovk.session/2",
            "../session.json",
            "/etc/hostname",
            "session.json",
            "output_kernel.npy",
            "a/b.npy",
            ".hidden",
            "regression",
            "okl",
            "gaussian",
            "median",
            "\u{0}",
            "é\u{1F600}",
        ])
        .prop_map(Json::from),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Json::from),
            prop::collection::btree_map("[a-z_]{1,8}", inner, 0..3)
                .prop_map(|m| Json::Object(m.into_iter().collect())),
        ]
    })
}

/// Every JSON pointer into `v` (the root excluded).
fn pointers(v: &Json, at: String, out: &mut Vec<String>) {
    match v {
        Json::Object(m) => {
            for (k, c) in m {
                let p = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                out.push(p.clone());
                pointers(c, p, out);
            }
        }
        Json::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                let p = format!("{at}/{i}");
                out.push(p.clone());
                pointers(c, p, out);
            }
        }
        _ => {}
    }
}

/// Replace (or, with `remove`, delete) the value at one of the document's places.
fn edit(doc: &mut Json, place: prop::sample::Index, remove: bool, new: Json) {
    let mut all = Vec::new();
    pointers(doc, String::new(), &mut all);
    if all.is_empty() {
        return;
    }
    let p = &all[place.index(all.len())];
    if remove {
        let (parent, key) = p.rsplit_once('/').unwrap();
        match doc.pointer_mut(parent) {
            Some(Json::Object(m)) => {
                m.remove(&key.replace("~1", "/").replace("~0", "~"));
            }
            Some(Json::Array(a)) => {
                if let Ok(i) = key.parse::<usize>() {
                    a.remove(i);
                }
            }
            _ => {}
        }
    } else if let Some(slot) = doc.pointer_mut(p) {
        *slot = new;
    }
}

/// A `.npy` file: format version, header fields and data length all chosen, honest or not.
#[derive(Debug, Clone)]
struct Npy {
    version: u8,
    descr: &'static str,
    fortran: &'static str,
    shape: Vec<&'static str>,
    data_len: usize,
    header_len: Option<u32>,
}

fn npy_spec() -> impl Strategy<Value = Npy> {
    (
        prop::sample::select(vec![1u8, 1, 2, 3, 0, 9]),
        prop::sample::select(vec![
            "<f8", "<f8", ">f8", "<f4", "<i8", "|u1", "<c16", "O", "<U3", "f8",
        ]),
        prop::sample::select(vec!["False", "False", "True", "0", "maybe"]),
        prop::collection::vec(
            prop::sample::select(vec![
                "0",
                "1",
                "2",
                "3",
                "3",
                "5",
                "1000000",
                "1000000000000",
                "18446744073709551615",
                "-1",
                "3L",
                "",
            ]),
            0..4,
        ),
        0usize..200,
        prop::option::weighted(0.2, any::<u32>()),
    )
        .prop_map(
            |(version, descr, fortran, shape, data_len, header_len)| Npy {
                version,
                descr,
                fortran,
                shape,
                data_len,
                header_len,
            },
        )
}

fn npy_bytes(n: &Npy, data: &[u8]) -> Vec<u8> {
    let shape = match n.shape.len() {
        1 => format!("({},)", n.shape[0]),
        _ => format!("({})", n.shape.join(", ")),
    };
    let mut h = format!(
        "{{'descr': '{}', 'fortran_order': {}, 'shape': {shape}, }}",
        n.descr, n.fortran
    );
    let prefix = if n.version == 1 { 10 } else { 12 };
    while !(prefix + h.len() + 1).is_multiple_of(64) {
        h.push(' ');
    }
    h.push('\n');
    let mut b = b"\x93NUMPY".to_vec();
    b.extend([n.version, 0]);
    let len = n.header_len.unwrap_or(h.len() as u32);
    if n.version == 1 {
        b.extend((len as u16).to_le_bytes());
    } else {
        b.extend(len.to_le_bytes());
    }
    b.extend(h.as_bytes());
    b.extend(data);
    b
}

/// An honest `.npy` of an `r × c` f64 matrix, row- or column-major.
fn honest_npy(r: usize, c: usize, values: &[f64], fortran: bool) -> Vec<u8> {
    let mut data = Vec::new();
    for k in 0..r * c {
        let (i, j) = if fortran {
            (k % r, k / r)
        } else {
            (k / c, k % c)
        };
        data.extend(values[i * c + j].to_le_bytes());
    }
    let (r_s, c_s) = (r.to_string(), c.to_string());
    let spec = Npy {
        version: 1,
        descr: "<f8",
        fortran: if fortran { "True" } else { "False" },
        shape: vec![
            Box::leak(r_s.into_boxed_str()),
            Box::leak(c_s.into_boxed_str()),
        ],
        data_len: data.len(),
        header_len: None,
    };
    npy_bytes(&spec, &data)
}

/// Overwrite the byte at each index with its value (indices scaled to the current length).
fn flip(bytes: &mut [u8], flips: &[(prop::sample::Index, u8)]) {
    for (at, b) in flips {
        if !bytes.is_empty() {
            let i = at.index(bytes.len());
            bytes[i] = *b;
        }
    }
}

proptest! {
    #![proptest_config(support::config(64))]

    #[test]
    fn edited_records_load_or_are_refused(
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<bool>(), json_value()), 1..4),
    ) {
        let dir = session_copy();
        let path = dir.join("session.json");
        let mut doc: Json = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        for (place, remove, new) in edits {
            edit(&mut doc, place, remove, new);
        }
        std::fs::write(&path, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
        load_all(&dir)?;
    }

    #[test]
    fn damaged_record_bytes_are_refused_or_load(
        cut in any::<prop::sample::Index>(),
        truncate in any::<bool>(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
    ) {
        let dir = session_copy();
        let path = dir.join("session.json");
        let mut bytes = std::fs::read(&path).unwrap();
        if truncate {
            bytes.truncate(cut.index(bytes.len()));
        }
        flip(&mut bytes, &flips);
        std::fs::write(&path, &bytes).unwrap();
        load_all(&dir)?;
    }

    #[test]
    fn generated_npy_files_are_read_or_refused(spec in npy_spec(), fill in any::<u8>()) {
        let dir = session_copy();
        let bytes = npy_bytes(&spec, &vec![fill; spec.data_len]);
        for m in ["output_kernel.npy", "predictions_test.npy", "coefficients.npy", "targets_test.npy"] {
            std::fs::write(dir.join(m), &bytes).unwrap();
        }
        load_all(&dir)?;
    }

    #[test]
    fn npy_bytes_cut_or_flipped_are_refused_or_read(
        cut in any::<prop::sample::Index>(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
    ) {
        let dir = session_copy();
        let path = dir.join("output_kernel.npy");
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.truncate(cut.index(bytes.len() + 1));
        flip(&mut bytes, &flips);
        std::fs::write(&path, &bytes).unwrap();
        load_all(&dir)?;
    }

    /// An honest 3×3 output kernel (any bits, NaN included, either memory order) reads back
    /// exactly.
    #[test]
    fn honest_matrices_read_back_exactly(
        values in prop::collection::vec(any::<f64>(), 9),
        fortran in any::<bool>(),
    ) {
        let dir = session_copy();
        std::fs::write(dir.join("output_kernel.npy"), honest_npy(3, 3, &values, fortran)).unwrap();
        let loaded = session::load(&dir).unwrap();
        let a = loaded.matrix("output_kernel").unwrap();
        prop_assert_eq!(a.dim(), (3, 3));
        for i in 0..3 {
            for j in 0..3 {
                prop_assert_eq!(a[[i, j]].to_bits(), values[i * 3 + j].to_bits());
            }
        }
        prop_assert_eq!(load_all(&dir)?, loaded.record.matrices.len());
    }
}

/// The committed regression input: a 200-byte `.npy` whose header claims a 10⁶ × 10⁶ matrix
/// (8 TB) is refused from its header, naming the file and the claim.
#[test]
fn terabyte_npy_header_is_refused_before_allocating() {
    let dir = session_copy();
    let npy = dir.join("output_kernel.npy");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/bad/huge_shape.npy"),
        &npy,
    )
    .unwrap();
    let loaded = session::load(&dir).unwrap();
    let e = loaded.matrix("output_kernel").unwrap_err();
    let msg = e.to_string();
    assert_eq!(e.exit_code(), 2);
    assert!(
        msg.contains(&npy.display().to_string()) && msg.contains("(1000000, 1000000)"),
        "{msg}"
    );
    support::assert_no_absurd_allocation().unwrap();
}
