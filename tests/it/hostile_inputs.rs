//! Nasty inputs to the real `ovk` binary: each must exit with status 2 and a message naming the
//! file (and its row and column where that applies), never panic, and write no session.
//! The fixtures are in tests/data/bad/ (see its README.md); large or derived ones are made here.

use crate::common::binary;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BAD: &str = "tests/data/bad";

fn ovk(args: &[&str], store: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ovk"))
        .args(args)
        .arg("--sessions")
        .arg(store)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("running ovk")
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ovk-hostile-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .flat_map(|e| {
            let p = e.path();
            if p.is_dir() {
                files_under(&p)
            } else {
                vec![p]
            }
        })
        .collect()
}

/// Run `args`; assert exit 2, every `needles` on stderr, no panic, an untouched store.
/// Returns the message for a closer look.
fn rejects(name: &str, args: &[&str], needles: &[&str]) -> String {
    let store = scratch(&format!("{name}-store"));
    let out = ovk(args, &store);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{name}: exit status; stderr:\n{err}"
    );
    for needle in needles {
        assert!(
            err.contains(needle),
            "{name}: stderr lacks `{needle}`:\n{err}"
        );
    }
    for bad in ["panicked", "RUST_BACKTRACE"] {
        assert!(!err.contains(bad), "{name}: panic text on stderr:\n{err}");
    }
    assert!(
        files_under(&store).is_empty(),
        "{name}: wrote {:?}",
        files_under(&store)
    );
    let _ = std::fs::remove_dir_all(&store);
    err.lines()
        .find(|l| l.starts_with("ovk: "))
        .unwrap_or_else(|| panic!("{name}: no `ovk: ` error line:\n{err}"))
        .to_string()
}

fn run_on(data: &str, targets: &str) -> Vec<String> {
    [
        "run",
        "--data",
        data,
        "--targets",
        targets,
        "--method",
        "krr",
    ]
    .map(String::from)
    .to_vec()
}

fn rejects_data(name: &str, file: &str, needles: &[&str]) -> String {
    let path = format!("{BAD}/{file}");
    let args = run_on(&path, "y");
    let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    let mut all = vec![path.as_str()];
    all.extend_from_slice(needles);
    rejects(name, &args, &all)
}

#[test]
fn empty_file() {
    rejects_data("empty", "empty.csv", &["the file is empty"]);
}

#[test]
fn another_separator_is_named_with_the_fix() {
    rejects_data(
        "semicolons",
        "semicolons.csv",
        &[
            "single column named `x;y;z`",
            "separated by ';'",
            "decimal comma",
        ],
    );
    rejects_data("tabs", "tabs.csv", &["separated by tabs: name it .tsv"]);
}

#[test]
fn header_only() {
    rejects_data(
        "header",
        "header_only.csv",
        &["has a header (3 columns) but no data rows"],
    );
}

#[test]
fn ragged_rows_name_their_row() {
    rejects_data(
        "short",
        "ragged_short.csv",
        &["data row 2 (line 3) has 2 cells but the header names 3 columns"],
    );
    rejects_data(
        "long",
        "ragged_long.csv",
        &["data row 3 (line 4) has 4 cells but the header names 3 columns"],
    );
}

#[test]
fn unclosed_quote() {
    rejects_data(
        "quote",
        "unclosed_quote.csv",
        &["a quote opened on line 6 is never closed"],
    );
}

#[test]
fn latin1_bytes_name_row_and_column() {
    rejects_data(
        "latin1",
        "latin1.csv",
        &[
            "is not UTF-8 text",
            "byte 0xE9",
            "data row 2 (line 3), column 3 `y`",
        ],
    );
}

#[test]
fn nan_and_inf_cells_name_row_and_column() {
    rejects_data(
        "nan",
        "nan.csv",
        &["column `b` has a missing value (empty or NaN) in data row 2"],
    );
    rejects_data(
        "inf",
        "inf.csv",
        &["column `b` holds an infinite value `inf` in data row 2"],
    );
}

#[test]
fn duplicate_column_names() {
    rejects_data(
        "dup",
        "duplicate_columns.csv",
        &["the header names column `a` twice (columns 1 and 3)"],
    );
    // Names are trimmed, so a padded repeat is a repeat too.
    rejects_data(
        "dup-padded",
        "duplicate_padded.csv",
        &["column `a` twice (columns 1 and 3)"],
    );
}

/// Decision: a quoted field may hold a newline (RFC 4180); the file loads, and the row count
/// and line numbers in later messages follow records, not lines.
#[test]
fn quoted_newline_loads() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(BAD)
        .join("quoted_newline.csv");
    let table = ovk_core::data::load_table(&path, 5).expect("quoted newlines load");
    assert_eq!(table.n_rows, 5);
    assert_eq!(table.head[0][1], "two\nlines");

    let store = scratch("quoted-store");
    let data = format!("{BAD}/quoted_newline.csv");
    let mut args = run_on(&data, "y");
    args.extend(["--features", "a"].map(String::from));
    let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    let out = ovk(&args, &store);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!files_under(&store).is_empty(), "a session was saved");

    // The text column itself is a category now: one-hot encoded, its multi-line value whole.
    let mut args = run_on(&data, "y");
    args.extend(["--features", "a,note"].map(String::from));
    let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    let store = scratch("quoted-text-store");
    let out = ovk(&args, &store);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let session = files_under(&store)
        .into_iter()
        .find(|p| p.ends_with("session.json"))
        .expect("a session was saved");
    let text = std::fs::read_to_string(session).unwrap();
    assert!(text.contains("note=two\\nlines"), "{text}");
}

/// 10⁶ columns where memory is short: refused from the header and a line count, before any
/// parser spends gigabytes on it (the memory guard replaces a fixed column cap).
#[test]
fn a_million_columns_is_refused_quickly_when_memory_is_short() {
    let dir = scratch("wide");
    let path = dir.join("wide.csv");
    let n = 1_000_000;
    let header: Vec<String> = (0..n).map(|i| format!("c{i}")).collect();
    let row = vec!["1"; n].join(",");
    std::fs::write(&path, format!("{}\n{row}\n{row}\n", header.join(","))).unwrap();
    let data = path.display().to_string();
    let store = scratch("wide-store");
    let out = Command::new(env!("CARGO_BIN_EXE_ovk"))
        .args(["run", "--data", &data, "--targets", "c0", "--method", "krr"])
        .arg("--sessions")
        .arg(&store)
        .env("OVK_MEMORY_LIMIT", "100000000")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&data) && err.contains("1000000 columns") && err.contains("memory"),
        "{err}"
    );
    assert!(files_under(&store).is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn truncated_parquet() {
    let dir = scratch("parquet");
    let whole = dir.join("whole.parquet");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/linnerud.csv");
    ovk_core::data::write_parquet(&src, &whole).unwrap();
    let bytes = std::fs::read(&whole).unwrap();
    let cut = dir.join("cut.parquet");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let data = cut.display().to_string();
    let args = run_on(&data, "target_*");
    let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    rejects("parquet", &args, &[&data, "cannot be read as Parquet"]);
}

/// A real session of okl on linnerud (3 outputs → a 3×3 output kernel), copied to `name`.
fn session_copy(name: &str) -> PathBuf {
    let setup = scratch(&format!("{name}-setup"));
    let out = ovk(
        &[
            "run",
            "--data",
            "datasets/linnerud.csv",
            "--method",
            "okl",
            "--json",
        ],
        &setup,
    );
    binary::assert_ok(&out, "");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let made = PathBuf::from(v["session"].as_str().unwrap());
    let dir = scratch(name).join("session");
    std::fs::create_dir_all(&dir).unwrap();
    for f in std::fs::read_dir(&made).unwrap().flatten() {
        std::fs::copy(f.path(), dir.join(f.file_name())).unwrap();
    }
    dir
}

fn rejects_export(name: &str, session: &Path, needles: &[&str]) -> String {
    let csv = session.parent().unwrap().join("out.csv");
    let (s, c) = (session.display().to_string(), csv.display().to_string());
    let msg = rejects(
        name,
        &["export", &s, "--matrix", "output_kernel", &c],
        needles,
    );
    assert!(!csv.exists(), "{name}: wrote {c}");
    msg
}

#[test]
fn session_missing_npy() {
    let dir = session_copy("missing-npy");
    let npy = dir.join("output_kernel.npy");
    std::fs::remove_file(&npy).unwrap();
    rejects_export(
        "missing-npy",
        &dir,
        &[&npy.display().to_string(), "missing"],
    );
}

#[test]
fn session_npy_of_wrong_shape() {
    let dir = session_copy("wrong-shape");
    let npy = dir.join("output_kernel.npy");
    std::fs::copy(dir.join("predictions_test.npy"), &npy).unwrap();
    rejects_export(
        "wrong-shape",
        &dir,
        &[&npy.display().to_string(), "expected 3×3"],
    );
}

#[test]
fn session_json_corrupt() {
    let dir = session_copy("corrupt-json");
    let json = dir.join("session.json");
    let text = std::fs::read(&json).unwrap();
    std::fs::write(&json, &text[..text.len() / 2]).unwrap();
    let shown = json.display().to_string();
    rejects_export("corrupt-json", &dir, &[&shown, "invalid JSON", "line "]);
    let s = dir.display().to_string();
    rejects(
        "corrupt-replay",
        &["replay", &s, "--print"],
        &[&shown, "invalid JSON"],
    );
}

fn run_with_config(file: &str) -> Vec<String> {
    [
        "run",
        "--config",
        &format!("{BAD}/{file}"),
        "--data",
        "datasets/linnerud.csv",
        "--method",
        "krr",
    ]
    .map(String::from)
    .to_vec()
}

#[test]
fn toml_syntax_error_names_line_and_column() {
    let args = run_with_config("syntax_error.toml");
    let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    rejects(
        "toml-syntax",
        &args,
        &["syntax_error.toml: line 3, column 8: unclosed table"],
    );
}

#[test]
fn toml_wrong_type_names_the_file() {
    let args = run_with_config("wrong_type.toml");
    let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    rejects(
        "toml-type",
        &args,
        &["wrong_type.toml: lambda: 'abc' is not a number"],
    );
}

// Found by the property tests and fuzzers (fuzz/README.md).

#[test]
fn npy_header_claiming_terabytes_is_refused_before_allocating() {
    let dir = session_copy("huge-shape");
    let npy = dir.join("output_kernel.npy");
    std::fs::copy(format!("{BAD}/huge_shape.npy"), &npy).unwrap();
    rejects_export(
        "huge-shape",
        &dir,
        &[
            &npy.display().to_string(),
            "claims shape (1000000, 1000000)",
            "truncated or corrupt",
        ],
    );
}

#[test]
fn config_not_utf8_is_input_error() {
    let args = run_with_config("latin1.toml");
    let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    rejects(
        "toml-latin1",
        &args,
        &["latin1.toml: is not UTF-8 text: byte 0xE9 on line 2"],
    );
    let path = format!("{BAD}/latin1.toml");
    rejects(
        "sweep-latin1",
        &["sweep", "--config", &path, "--plan"],
        &["latin1.toml: is not UTF-8 text"],
    );
}

#[test]
fn sweep_grids_too_large_are_refused_from_the_file() {
    let path = format!("{BAD}/huge_grid.toml");
    rejects(
        "huge-grid",
        &["sweep", "--config", &path, "--plan"],
        &[
            "huge_grid.toml: the grid has more than",
            "100000 coef0 × 100000 lambda",
            "at most 100000",
        ],
    );
    let path = format!("{BAD}/huge_cv.toml");
    rejects(
        "huge-cv",
        &["sweep", "--config", &path, "--plan"],
        &["huge_cv.toml: 'cv' = 1000000000000000000 folds"],
    );
    let small = scratch("small-grid").join("grid.toml");
    std::fs::write(
        &small,
        "data = \"datasets/linnerud.csv\"\nmethod = \"krr\"\nlambda = [0.1, 1]\n",
    )
    .unwrap();
    let small = small.display().to_string();
    rejects(
        "huge-cv-flag",
        &[
            "sweep",
            "--config",
            &small,
            "--cv",
            "1000000000000000000",
            "--plan",
        ],
        &["the sweep would run 2 configurations × 1000000000000000000 folds"],
    );
}

/// Found by the `load_csv` fuzzer: a Parquet footer whose thrift statistics field has the
/// wrong type made polars panic (`expect("thrift bool field")`), and `ovk run` exit 101.
#[test]
fn corrupt_parquet_footer_is_refused_not_a_panic() {
    let path = format!("{BAD}/bad_thrift.parquet");
    let args = run_on(&path, "y");
    let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    rejects(
        "bad-thrift",
        &args,
        &[&path, "cannot be read as Parquet", "corrupt"],
    );
}

/// A Parquet DECIMAL column (issue 19, 8): polars without its decimal type cannot read it and
/// names no column; ovk names the column and the fix. Its unannotated twin loads and fits.
#[test]
fn parquet_decimal_column_is_named_with_the_fix() {
    let path = format!("{BAD}/decimal.parquet");
    let args = run_on(&path, "y");
    let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    rejects(
        "decimal",
        &args,
        &[&path, "'price' (DECIMAL(9, 2))", "cast it to double"],
    );
    let twin = format!("{BAD}/decimal_unannotated.parquet");
    let store = scratch("decimal-twin");
    let args = run_on(&twin, "y");
    let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    let out = ovk(&args, &store);
    let _ = std::fs::remove_dir_all(&store);
    binary::assert_ok(&out, "");
}

/// Found by the `load_csv` fuzzer: column chunks the footer places before the file's first byte.
/// polars sliced the file there without a bounds check and panicked on its own executor threads
/// (stderr full of `panicked at`, once exit 101); the footer walk refuses them before it reads.
#[test]
fn parquet_chunks_outside_the_file_are_refused_before_polars_reads() {
    for (name, chunk) in [
        (
            "executor_panic",
            "row group 0, column 2 at bytes -832..-472",
        ),
        ("bad_pages", "row group 0, column 3 at bytes -758..-448"),
        // Found by the `candidates` fuzzer (issue 33): a chunk running past the data pages,
        // on which polars' column-chunk metadata panics (unwrap on None) when read unguarded.
        ("chunk_past_pages", "row group 0, column 0 at bytes 4..354"),
    ] {
        let path = format!("{BAD}/{name}.parquet");
        let args = run_on(&path, "y");
        let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        rejects(
            name,
            &args,
            &[
                &path,
                "the file is corrupt (its footer places the column chunk of",
                chunk,
            ],
        );
    }
}
