//! Each method's typed configuration: built from `Params` once, it reads every parameter (a
//! non-default value changes it), and it gives the same `Params` back (`to_params`), so the
//! configuration and the declarations cannot disagree on a key or a word.

use std::fmt::Debug;

use ovk_core::methods::kde::KdeConfig;
use ovk_core::methods::krr::KrrConfig;
use ovk_core::methods::lowrank_okl::LowRankConfig;
use ovk_core::methods::mvml::MvmlConfig;
use ovk_core::methods::okl::OklConfig;
use ovk_core::methods::vvmr::VvmrConfig;
use ovk_core::methods::{self, MethodConfig, MethodName, Params, Value};
use ovk_core::ErrorKind;

fn params(pairs: &[(&str, Value)]) -> Params {
    let mut p = Params::new();
    for (k, v) in pairs {
        p.set(k, v.clone());
    }
    p
}

fn text(s: &str) -> Value {
    Value::Text(s.into())
}

/// The configuration of `given` (valid for `method`), checked to come back whole from its
/// `to_params`, which names only the method's parameters and holds every value given.
fn round_trip<C: MethodConfig + PartialEq + Debug>(method: MethodName, given: &Params) -> C {
    let m = methods::find(method);
    given.validate(m.name(), m.params()).unwrap();
    let cfg = C::from_params(given).unwrap_or_else(|e| panic!("{method}: {e}"));
    let back = cfg.to_params();
    back.validate(m.name(), m.params())
        .unwrap_or_else(|e| panic!("{method}: {e}"));
    assert_eq!(C::from_params(&back).unwrap(), cfg, "{method}");
    for (k, v) in &given.0 {
        assert_eq!(back.0.get(k), Some(v), "{method}: {k}");
    }
    cfg
}

/// `every` sets each parameter of `method`, to a value other than its default where it can:
/// each such value alone must change the configuration.
fn reads_every_parameter<C: MethodConfig + PartialEq + Debug>(method: MethodName, every: &Params) {
    let default: C = round_trip(method, &Params::new());
    let all: C = round_trip(method, every);
    let mut keys: Vec<&str> = methods::find(method)
        .params()
        .iter()
        .map(|s| s.key)
        .collect();
    keys.sort_unstable();
    let given: Vec<&str> = every.0.keys().map(String::as_str).collect();
    assert_eq!(given, keys, "{method}: the test sets every parameter");
    for spec in methods::find(method).params() {
        let v = &every.0[spec.key];
        if spec.default_value().as_ref() == Some(v) {
            continue; // given at its default for another value's sake
        }
        let alone = Params::new().with(spec.key, v.clone());
        if C::from_params(&alone).is_ok() {
            let one: C = round_trip(method, &alone);
            assert_ne!(one, default, "{method}: {} = {v} is not read", spec.key);
        } else {
            // refused alone (it needs another value, as okl's literal L-step needs bcd): the
            // others without it must differ from all of them
            let mut rest = every.clone();
            rest.0.remove(spec.key);
            let without: C = round_trip(method, &rest);
            assert_ne!(without, all, "{method}: {} = {v} is not read", spec.key);
        }
    }
    assert_ne!(all, default);
}

#[test]
fn krr() {
    reads_every_parameter::<KrrConfig>(MethodName::Krr, &params(&[("lambda", Value::Float(2.5))]));
}

#[test]
fn okl() {
    reads_every_parameter::<OklConfig>(
        MethodName::Okl,
        &params(&[
            ("lambda", Value::Float(0.5)),
            ("tol", Value::Float(1e-5)),
            ("max_iter", Value::Int(17)),
            ("solver", text("bcd")),
            ("l_update", text("literal")),
        ]),
    );
    // qn has no L-step to take literally: refused by the one constructor, as a parameter error
    let e = OklConfig::from_params(&params(&[("l_update", text("literal"))])).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParameter);
}

#[test]
fn lowrank_okl() {
    reads_every_parameter::<LowRankConfig>(
        MethodName::LowRankOkl,
        &params(&[
            ("solver", text("bcd")),
            ("lambda", Value::Float(0.01)),
            ("lambda_path", Value::Int(7)),
            ("val_fraction", Value::Float(0.3)),
            ("rank", Value::Int(3)),
            ("tol", Value::Float(1e-6)),
            ("max_iter", Value::Int(40)),
            ("warm_start", Value::Bool(false)),
            ("rank_sweep", text("2,5,10")),
        ]),
    );
    // a range reads as its list of ranks
    let c = LowRankConfig::from_params(&params(&[("rank_sweep", text("1..7:3"))])).unwrap();
    assert_eq!(c.rank_sweep, Some(vec![1, 4, 7]));
    assert_eq!(c.to_params().0.get("rank_sweep"), Some(&text("1,4,7")));
}

#[test]
fn kde() {
    reads_every_parameter::<KdeConfig>(
        MethodName::Kde,
        &params(&[
            ("lambda", Value::Float(0.02)),
            ("ovk", text("identity")),
            ("epsilon", Value::Float(0.3)),
            ("output_kernel", text("linear")),
            ("output_sigma", text("0.75")),
            // the default word, given: a candidates file needs it
            ("preimage", text("candidates")),
            ("candidates", text("outputs.csv")),
            ("low_rank", text("20,30")),
        ]),
    );
    let c: KdeConfig = round_trip(
        MethodName::Kde,
        &params(&[
            ("output_kernel", text("linear")),
            ("preimage", text("closed-form")),
        ]),
    );
    assert_eq!(c.preimage.name(), "closed-form");
    assert_eq!(c.low_rank, None);
    let e = KdeConfig::from_params(&params(&[("preimage", text("closed-form"))])).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParameter);
    assert!(e.to_string().contains("linear output kernel"), "{e}");
}

#[test]
fn vvmr() {
    reads_every_parameter::<VvmrConfig>(
        MethodName::Vvmr,
        &params(&[
            ("gamma_a", Value::Float(0.5)),
            ("gamma_i", Value::Float(0.25)),
            ("gamma_i_scale", text("belkin")),
            ("gamma_o", Value::Float(0.75)),
            ("knn", Value::Int(4)),
            ("graph_weights", text("binary")),
            ("laplacian", text("unnormalized")),
            ("laplacian_power", Value::Int(2)),
            ("output_knn", Value::Int(5)),
        ]),
    );
    let e = VvmrConfig::from_params(&params(&[("gamma_o", Value::Float(1.0))])).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParameter);
}

#[test]
fn mvml() {
    reads_every_parameter::<MvmlConfig>(
        MethodName::Mvml,
        &params(&[
            ("lambda", Value::Float(0.3)),
            ("eta", Value::Float(0.5)),
            ("mu", Value::Float(0.125)),
            ("sparse", Value::Bool(true)),
            ("learn_weights", Value::Bool(true)),
            ("init", text("covariance")),
            ("fixed_metric", Value::Bool(true)),
            ("nystrom", Value::Float(0.5)),
            ("max_iter", Value::Int(9)),
            ("tol", Value::Float(1e-3)),
            ("a_step", text("gradient")),
            ("view_sigma", text("mean")),
            ("metric_space", text("root")),
        ]),
    );
}

/// A value of the wrong type reaching a constructor (the pipeline validates first; a library
/// user need not) is a parameter error naming the key, not a panic.
#[test]
fn a_mistyped_value_is_a_parameter_error() {
    let e = OklConfig::from_params(&params(&[("max_iter", text("many"))])).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParameter);
    assert!(e.to_string().contains("max_iter"), "{e}");
    let e = VvmrConfig::from_params(&params(&[("laplacian", text("normalised"))])).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnknownChoice);
    assert!(e.to_string().contains("did you mean 'normalized'"), "{e}");
}
