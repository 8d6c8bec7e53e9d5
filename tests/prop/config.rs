//! Property tests of the two config parsers: `ovk run --config` (`read_config` →
//! `build_run_config`) and `ovk sweep --config` (`read_grid` → `expand`). TOML documents built
//! from the real keys with good and junk values, and byte-mutated ones, never panic: each is
//! accepted or refused with a user-input error naming the file. Good values come through
//! exactly, and a range `{ log|lin = [a, b], n = N }` gives N ordered values from a to b.

use crate::common::support;

use ovk::cli::{build_run_config, expand, read_config, read_grid};
use ovk_core::methods::params::Value;
use ovk_core::train::search::Axis;
use proptest::prelude::*;

const KEYS: &[&str] = &[
    "data",
    "method",
    "features",
    "targets",
    "class",
    "task",
    "views",
    "test_fraction",
    "seed",
    "scale",
    "class_coding",
    "drop_missing",
    "labeled",
    "cv_folds",
    "cv_fold",
    "kernel",
    "sigma",
    "degree",
    "coef0",
    "name",
    "lambda",
    "tol",
    "max_iter",
    "solver",
    "l_update",
    "rank",
    "lambda_path",
    "epsilon",
    "gamma_a",
    "gamma_i",
    "knn",
    "nystrom",
    "views",
    "mu",
    "eta",
    "cv",
    "jobs",
    "lamda",
    "",
    "a.b",
    "\"quoted key\"",
    "données",
];

fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|v| v.to_string()),
        any::<f64>().prop_map(|v| format!("{v:?}")),
        (0.0f64..2.0).prop_map(|v| format!("{v:?}")),
        (0i64..20).prop_map(|v| v.to_string()),
        prop::sample::select(vec![
            "nan",
            "inf",
            "-inf",
            "+inf",
            "-0.0",
            "1e308",
            "1e309",
            "0x7f",
            "1_000",
            "+5",
            "0.1",
            "1e-4",
            "2",
            "1e5",
            "9223372036854775807",
            "9223372036854775808",
        ])
        .prop_map(String::from),
    ]
}

fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "krr",
            "okl",
            "lowrank-okl",
            "kde",
            "vvmr",
            "mvml",
            "nope",
            "linear",
            "gaussian",
            "polynomial",
            "laplacian",
            "median",
            "regression",
            "multiclass",
            "multilabel",
            "standard",
            "none",
            "pm1",
            "01",
            "true",
            "x.csv",
            "datasets/linnerud.csv",
            "a,b",
            "p_0_*",
            "p_0_0..p_3_7",
            "",
        ])
        .prop_map(String::from),
        "[a-z0-9 ,_.*\u{e9}\u{1F600}\\\\\"\n]{0,10}",
    ]
}

fn string_literal() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => word().prop_map(|w| format!("{w:?}")),
        1 => word().prop_map(|w| format!("'{}'", w.replace(['\'', '\n'], ""))),
        1 => word().prop_map(|w| format!("\"\"\"{}\"\"\"", w.replace('"', ""))),
        1 => Just("\"\\q\"".to_string()),
        1 => Just("\"\\u0000\"".to_string()),
    ]
}

fn range_table() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["log", "lin", "geo", "log", "lin"]),
        number(),
        number(),
        number(),
        any::<bool>(),
    )
        .prop_map(|(kind, a, b, n, extra)| {
            let extra = if extra { ", step = 2" } else { "" };
            format!("{{ {kind} = [{a}, {b}], n = {n}{extra} }}")
        })
}

fn value() -> impl Strategy<Value = String> {
    let scalar = prop_oneof![
        3 => string_literal(),
        3 => number(),
        1 => any::<bool>().prop_map(|b| b.to_string()),
        1 => Just("1979-05-27T07:32:00Z".to_string()),
    ];
    prop_oneof![
        6 => scalar.clone(),
        2 => prop::collection::vec(scalar.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(", "))),
        1 => prop::collection::vec(prop::collection::vec(scalar, 0..3), 0..3).prop_map(|v| {
            let inner: Vec<String> = v.iter().map(|i| format!("[{}]", i.join(", "))).collect();
            format!("[{}]", inner.join(", "))
        }),
        2 => range_table(),
        1 => Just("{ a = 1 }".to_string()),
        1 => Just("".to_string()),
    ]
}

fn document() -> impl Strategy<Value = String> {
    (
        prop::collection::vec((prop::sample::select(KEYS), value()), 0..10),
        any::<bool>(),
    )
        .prop_map(|(lines, table)| {
            let mut s: String = lines.iter().map(|(k, v)| format!("{k} = {v}\n")).collect();
            if table {
                s.push_str("[section]\nlambda = 1\n");
            }
            s
        })
}

/// Both parsers on one file: no panic, each result accepted or refused properly.
fn parse_both(bytes: &[u8]) -> Result<(), TestCaseError> {
    let path = support::scratch("config", "config.toml");
    std::fs::write(&path, bytes).unwrap();
    match read_config(&path) {
        Ok(raw) => {
            // A bad value is worded as its flag (`--lambda: …`); `ovk run` adds the file name.
            if let Err(e) = build_run_config(&raw) {
                prop_assert_eq!(e.exit_code(), 2, "{:?}", e);
                prop_assert!(!e.to_string().trim().is_empty());
            }
        }
        Err(e) => support::refusal(&e, &["config.toml"])?,
    }
    match read_grid(&path) {
        Ok(grid) => {
            let raws = match expand(&grid) {
                Ok(raws) => raws,
                Err(e) => {
                    prop_assert_eq!(e.exit_code(), 2, "{:?}", e);
                    return Ok(());
                }
            };
            // a random search draws `trials`; a grid has every combination (whole-number
            // ranges may repeat a value, which is tried once)
            let expected: usize = match grid.search.trials {
                Some(t) => t,
                None => grid
                    .search
                    .axes
                    .iter()
                    .map(|(_, a)| match a {
                        Axis::List(v) => v.len(),
                        Axis::Range { n, .. } => n.unwrap_or(1),
                    })
                    .product(),
            };
            prop_assert!(!raws.is_empty() && raws.len() <= expected);
            for raw in &raws {
                if let Err(e) = build_run_config(raw) {
                    prop_assert_eq!(e.exit_code(), 2, "{:?}", e);
                }
            }
        }
        Err(e) => support::refusal(&e, &["config.toml"])?,
    }
    support::assert_no_absurd_allocation()
}

fn float_param(v: Option<&Value>) -> Option<f64> {
    match v {
        Some(Value::Float(x)) => Some(*x),
        Some(Value::Int(i)) => Some(*i as f64),
        _ => None,
    }
}

proptest! {
    #![proptest_config(support::config(128))]

    #[test]
    fn generated_configs_parse_or_are_refused(doc in document()) {
        parse_both(doc.as_bytes())?;
    }

    #[test]
    fn mutated_configs_parse_or_are_refused(
        doc in document(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let mut bytes = doc.into_bytes();
        for (at, b) in edits {
            if bytes.is_empty() {
                bytes.push(b);
            } else {
                let i = at.index(bytes.len());
                bytes[i] = b;
            }
        }
        parse_both(&bytes)?;
    }

    /// Values written in a config are the values the run uses.
    #[test]
    fn good_values_come_through(
        // λ's declared range is (0, 1e12].
        lambda in prop_oneof![1e-12f64..1e12, prop::num::f64::POSITIVE.prop_filter("≤ 1e12", |v| *v <= 1e12)],
        test_fraction in 0.0f64..1.0,
        seed in 0i64..i64::MAX,
        sigma in 1e-6f64..1e6,
        kernel in prop::sample::select(vec!["gaussian", "laplacian"]),
    ) {
        let doc = format!(
            "data = \"x.csv\"\nmethod = \"krr\"\nlambda = {lambda:?}\ntest_fraction = {test_fraction:?}\n\
             seed = {seed}\nkernel = \"{kernel}\"\nsigma = {sigma:?}\n"
        );
        let path = support::scratch("config", "good.toml");
        std::fs::write(&path, &doc).unwrap();
        let raw = read_config(&path).unwrap_or_else(|e| panic!("{e}\n{doc}"));
        let cfg = build_run_config(&raw).unwrap_or_else(|e| panic!("{e}\n{doc}"));
        prop_assert_eq!(float_param(cfg.params.0.get("lambda")), Some(lambda));
        prop_assert_eq!(cfg.data.test_fraction, test_fraction);
        prop_assert_eq!(cfg.data.seed, seed as u64);
        prop_assert_eq!(cfg.kernel.name.name(), kernel);
        prop_assert_eq!(cfg.kernel.sigma, ovk_core::kernels::Sigma::Value(sigma));
    }

    /// `{ log|lin = [a, b], n = N }`: N values, the first exactly a, the last exactly b, in
    /// order, every one a valid configuration.
    #[test]
    fn ranges_give_n_ordered_values_with_exact_ends(
        log in any::<bool>(),
        a in 1e-8f64..1e8,
        b in 1e-8f64..1e8,
        n in 2usize..40,
    ) {
        let kind = if log { "log" } else { "lin" };
        let doc = format!(
            "data = \"x.csv\"\nmethod = \"krr\"\nlambda = {{ {kind} = [{a:?}, {b:?}], n = {n} }}\n"
        );
        let path = support::scratch("config", "range.toml");
        std::fs::write(&path, &doc).unwrap();
        let grid = read_grid(&path).unwrap_or_else(|e| panic!("{e}\n{doc}"));
        let raws = expand(&grid).unwrap();
        prop_assert_eq!(raws.len(), n);
        let values: Vec<f64> = raws.iter().map(|r| r["lambda"].parse().unwrap()).collect();
        prop_assert_eq!(values[0], a, "first of {:?}", values);
        prop_assert_eq!(values[n - 1], b, "last of {:?}", values);
        let (lo, hi) = (a.min(b), a.max(b));
        for w in values.windows(2) {
            prop_assert!(if a <= b { w[0] <= w[1] } else { w[0] >= w[1] }, "{:?}", values);
        }
        prop_assert!(values.iter().all(|v| (lo..=hi).contains(v)), "{:?}", values);
        for raw in &raws {
            let cfg = build_run_config(raw).unwrap_or_else(|e| panic!("{e}\n{doc}"));
            prop_assert!(float_param(cfg.params.0.get("lambda")).is_some());
        }
    }

    /// A grid's size is the product of its axes; one too large to run is refused from the
    /// file alone, before any configuration is built.
    #[test]
    fn grid_size_is_the_product_of_axes_or_refused(
        lens in prop::collection::vec(1usize..60, 1..6),
    ) {
        let keys = ["lambda", "sigma", "tol", "max_iter", "coef0", "degree"];
        let mut doc = String::from("data = \"x.csv\"\nmethod = \"krr\"\n");
        for (k, &len) in keys.iter().zip(&lens) {
            let vals: Vec<String> = (1..=len).map(|i| i.to_string()).collect();
            doc.push_str(&format!("{k} = [{}]\n", vals.join(", ")));
        }
        let path = support::scratch("config", "grid.toml");
        std::fs::write(&path, &doc).unwrap();
        let product: usize = lens.iter().product();
        match read_grid(&path) {
            Ok(grid) => {
                prop_assert!(product <= ovk_core::train::sweep::MAX_CONFIGURATIONS);
                prop_assert_eq!(expand(&grid).unwrap().len(), product);
            }
            Err(e) => {
                prop_assert!(product > ovk_core::train::sweep::MAX_CONFIGURATIONS, "{}", e);
                support::refusal(&e, &["grid.toml"])?;
                prop_assert!(e.to_string().contains(&product.to_string()), "{}", e);
            }
        }
        support::assert_no_absurd_allocation()?;
    }
}

/// Hostile grids that a handful of bytes can spell: ranges multiplying to 10^25
/// configurations, and a fold count of 10^18. Refused from the file, quickly.
#[test]
fn absurd_grids_are_refused_from_the_file() {
    let path = support::scratch("config", "absurd.toml");
    let mut doc = String::from("data = \"x.csv\"\nmethod = \"krr\"\n");
    for k in ["lambda", "sigma", "tol", "max_iter", "coef0"] {
        doc.push_str(&format!("{k} = {{ lin = [1, 2], n = 100000 }}\n"));
    }
    std::fs::write(&path, &doc).unwrap();
    let e = read_grid(&path)
        .err()
        .expect("a 10^25-configuration grid is refused");
    let msg = e.to_string();
    assert!(
        msg.contains("absurd.toml") && msg.contains("configurations"),
        "{msg}"
    );

    std::fs::write(
        &path,
        "data = \"x.csv\"\nmethod = \"krr\"\ncv = 1000000000000000000\n",
    )
    .unwrap();
    let e = read_grid(&path).err().expect("10^18 folds are refused");
    assert!(
        e.to_string().contains("absurd.toml") && e.to_string().contains("cv"),
        "{e}"
    );
    support::assert_no_absurd_allocation().unwrap();
}

/// Deeply nested arrays must not overflow the parser's stack.
#[test]
fn deep_nesting_is_refused_or_parsed() {
    let path = support::scratch("config", "deep.toml");
    for depth in [100usize, 10_000, 100_000] {
        let doc = format!("lambda = {}1{}\n", "[".repeat(depth), "]".repeat(depth));
        std::fs::write(&path, &doc).unwrap();
        if let Err(e) = read_config(&path) {
            assert!(e.to_string().contains("deep.toml"), "{e}");
        }
        if let Err(e) = read_grid(&path) {
            assert!(e.to_string().contains("deep.toml"), "{e}");
        }
    }
}
