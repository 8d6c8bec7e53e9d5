//! `ovk gen gp-mix` writes the format its extension names, with a sidecar naming the roles:
//! every format reads back to the generator's numbers bit for bit, and `ovk run` needs no
//! role flags on the result.

use crate::common::binary;
use std::path::PathBuf;
use std::process::Command;

use ovk_core::data::gpmix::gp_mix;
use ovk_core::data::read_numeric_columns;

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ovk-gen-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn ovk(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ovk"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn every_format_round_trips_with_its_sidecar() {
    let dir = scratch("formats");
    let (x, y) = gp_mix(7, 3);
    for ext in ["csv", "tsv", "parquet"] {
        let path = dir.join(format!("gp.{ext}"));
        let p = path.display().to_string();
        let out = ovk(&[
            "gen",
            "gp-mix",
            "--outputs",
            "7",
            "--seed",
            "3",
            "--out",
            &p,
        ]);
        binary::assert_ok(&out, &format!("{ext}: "));
        if ext == "parquet" {
            let head = std::fs::read(&path).unwrap();
            assert_eq!(&head[..4], b"PAR1", "a Parquet file, not text");
        }
        let names: Vec<String> = std::iter::once("x".to_string())
            .chain((0..7).map(|j| format!("y{j}")))
            .collect();
        let back = read_numeric_columns(&path, &names).unwrap();
        assert_eq!(back.dim(), (x.nrows(), 8), "{ext}");
        for i in 0..x.nrows() {
            assert_eq!(
                back[[i, 0]].to_bits(),
                x[[i, 0]].to_bits(),
                "{ext} x row {i}"
            );
            for j in 0..7 {
                assert_eq!(
                    back[[i, j + 1]].to_bits(),
                    y[[i, j]].to_bits(),
                    "{ext} y{j} row {i}"
                );
            }
        }
        let side = ovk_core::data::sidecar_for(&path)
            .unwrap()
            .expect("a sidecar");
        assert_eq!(side.features, Some(vec!["x".to_string()]));
        assert_eq!(side.targets, Some(vec!["y0..y6".to_string()]));
        // No role flags needed.
        let store = dir.join(format!("store-{ext}"));
        let out = ovk(&[
            "run",
            "--data",
            &p,
            "--method",
            "krr",
            "--sessions",
            &store.display().to_string(),
            "--json",
        ]);
        binary::assert_ok(&out, &format!("{ext}: "));
    }
}

#[test]
fn a_sidecar_gen_did_not_write_is_kept() {
    let dir = scratch("keep");
    std::fs::write(
        dir.join("mine.toml"),
        "description = \"mine\"\nsource = \"me\"\n",
    )
    .unwrap();
    let out = ovk(&[
        "gen",
        "gp-mix",
        "--outputs",
        "3",
        "--out",
        &dir.join("mine.csv").display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("mine.toml"));
    assert_eq!(
        std::fs::read_to_string(dir.join("mine.toml")).unwrap(),
        "description = \"mine\"\nsource = \"me\"\n"
    );
    assert!(!dir.join("mine.csv").exists());
}

/// More than 14 columns: the footer's lists take the long header form of Thrift's compact
/// protocol (ovk writes plain numeric Parquet itself).
#[test]
fn a_wide_parquet_file_reads_back_bit_for_bit() {
    let dir = scratch("wide");
    let (x, y) = gp_mix(40, 5);
    let path = dir.join("wide.parquet");
    let p = path.display().to_string();
    let out = ovk(&[
        "gen",
        "gp-mix",
        "--outputs",
        "40",
        "--seed",
        "5",
        "--out",
        &p,
    ]);
    binary::assert_ok(&out, "");
    let names: Vec<String> = std::iter::once("x".to_string())
        .chain((0..40).map(|j| format!("y{j}")))
        .collect();
    let back = read_numeric_columns(&path, &names).unwrap();
    assert_eq!(back.dim(), (x.nrows(), 41));
    for i in 0..x.nrows() {
        assert_eq!(back[[i, 0]].to_bits(), x[[i, 0]].to_bits());
        for j in 0..40 {
            assert_eq!(
                back[[i, j + 1]].to_bits(),
                y[[i, j]].to_bits(),
                "y{j} row {i}"
            );
        }
    }
}
