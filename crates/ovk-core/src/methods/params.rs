//! Hyperparameters as data: every method declares its parameters once (`ParamSpec`, from
//! `util::param`, as the kernel and data options are), and the CLI flags, the config keys, the
//! TUI's fields, validation and `docs/config.md` all come from those declarations — so they
//! cannot drift apart. Here: parameter values by key (`Params`), and the shared declarations
//! (`common`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::ErrorKind;
use crate::util::choice::Choice;
use crate::util::param::as_f64;
pub use crate::util::param::ParamDefault;
pub use crate::util::param::{ParamKind, ParamSpec, Value};
use crate::util::text::nearest;
use crate::{OvkError, Result};

/// Hyperparameter values by key. Absent keys fall back to the spec's default when read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Params(pub BTreeMap<String, Value>);

impl Params {
    /// No values given: every parameter takes its spec's default.
    pub fn new() -> Self {
        Self::default()
    }

    /// Set parameter `key` to `v`, replacing any value.
    pub fn set(&mut self, key: &str, v: Value) {
        self.0.insert(key.to_string(), v);
    }

    /// These params with `key` set to `v`.
    pub fn with(mut self, key: &str, v: Value) -> Self {
        self.set(key, v);
        self
    }

    /// Every key must be a parameter of the method, and every value of the right kind.
    pub fn validate(&self, method: &str, specs: &[ParamSpec]) -> Result<()> {
        for (k, v) in &self.0 {
            let Some(spec) = specs.iter().find(|s| s.key == k) else {
                let keys: Vec<&str> = specs.iter().map(|s| s.key).collect();
                return Err(OvkError::input_as(
                    ErrorKind::UnknownParameter,
                    unknown_key_message(k, &keys, method),
                ));
            };
            spec.check(v)?;
        }
        Ok(())
    }

    /// A view that reads values with the specs' defaults filled in.
    pub fn resolve<'a>(&'a self, specs: &'a [ParamSpec]) -> Resolved<'a> {
        Resolved {
            params: self,
            specs,
        }
    }
}

/// "unknown parameter 'lamda' for okl (did you mean 'lambda'?)".
pub(crate) fn unknown_key_message(key: &str, valid: &[&str], context: &str) -> String {
    match nearest(key, valid) {
        Some(n) => format!("unknown parameter '{key}' for {context} (did you mean '{n}'?)"),
        None => format!(
            "unknown parameter '{key}' for {context} (valid: {})",
            valid.join(", ")
        ),
    }
}

/// Parameter values with the specs' defaults filled in, by key (for code that handles every
/// method alike; a method reads its own values through the typed getters of `Params`).
pub struct Resolved<'a> {
    params: &'a Params,
    specs: &'a [ParamSpec],
}

impl Resolved<'_> {
    /// The value of `key`, given or defaulted; `None` when absent unless given.
    pub fn get(&self, key: &str) -> Option<Value> {
        self.params.0.get(key).cloned().or_else(|| {
            self.specs
                .iter()
                .find(|s| s.key == key)
                .and_then(|s| s.default_value())
        })
    }
}

/// Typed reads, each through the declaration of the parameter: a method's configuration is
/// built from these once (`OklConfig::from_params` …). An absent value takes the spec's default;
/// a missing or mistyped one is an input error (`ErrorKind::InvalidParameter`).
impl Params {
    /// The value given, else the spec's default; `None` when there is neither.
    pub fn value(&self, spec: &ParamSpec) -> Option<Value> {
        self.0
            .get(spec.key)
            .cloned()
            .or_else(|| spec.default_value())
    }

    fn need(&self, spec: &ParamSpec) -> Result<Value> {
        self.value(spec).ok_or_else(|| {
            invalid(format!(
                "missing parameter '{}' (--{})",
                spec.key,
                spec.flag()
            ))
        })
    }

    /// `None` for an absent value without a default, else `read(spec)`.
    fn opt<T>(
        &self,
        spec: &ParamSpec,
        read: impl Fn(&Self, &ParamSpec) -> Result<T>,
    ) -> Result<Option<T>> {
        match self.value(spec) {
            None => Ok(None),
            Some(_) => read(self, spec).map(Some),
        }
    }

    /// The value of `spec` as a number; an input error when it is not one.
    pub fn f64(&self, spec: &ParamSpec) -> Result<f64> {
        as_f64(&self.need(spec)?)
            .ok_or_else(|| invalid(format!("parameter '{}' must be a number", spec.key)))
    }

    pub(crate) fn opt_f64(&self, spec: &ParamSpec) -> Result<Option<f64>> {
        self.opt(spec, Self::f64)
    }

    /// The value of `spec` as a whole number ≥ 0; an input error otherwise.
    pub fn usize(&self, spec: &ParamSpec) -> Result<usize> {
        match self.need(spec)? {
            Value::Int(i) if i >= 0 => Ok(i as usize),
            v => Err(invalid(format!(
                "parameter '{}' must be a whole number ≥ 0, got {v}",
                spec.key
            ))),
        }
    }

    /// As `usize`, but `None` when the parameter is absent and has no default.
    pub fn opt_usize(&self, spec: &ParamSpec) -> Result<Option<usize>> {
        self.opt(spec, Self::usize)
    }

    /// The value of `spec` as true/false; an input error otherwise.
    pub fn bool(&self, spec: &ParamSpec) -> Result<bool> {
        match self.need(spec)? {
            Value::Bool(b) => Ok(b),
            v => Err(invalid(format!(
                "parameter '{}' must be true or false, got {v}",
                spec.key
            ))),
        }
    }

    /// The value of `spec` as text (other kinds printed as given).
    pub fn text(&self, spec: &ParamSpec) -> Result<String> {
        match self.need(spec)? {
            Value::Text(s) => Ok(s),
            v => Ok(v.to_string()),
        }
    }

    pub(crate) fn opt_text(&self, spec: &ParamSpec) -> Result<Option<String>> {
        self.opt(spec, Self::text)
    }

    /// One of the words of a `Choice` enum (the spec's list is `C::NAMES`).
    pub fn choice<C: Choice>(&self, spec: &ParamSpec) -> Result<C> {
        debug_assert_eq!(
            C::KEY,
            spec.key,
            "the enum of a choice is keyed as its spec"
        );
        C::parse(&self.text(spec)?)
    }
}

fn invalid(msg: String) -> OvkError {
    OvkError::input_as(ErrorKind::InvalidParameter, msg)
}

/// A method's hyperparameters as one typed value, built once from the validated `Params`
/// (each value read through its `ParamSpec`) and used by `fit`, `peak_bytes` and the rest.
/// `Serialize` spells the fields as the parameter keys, so `to_params` gives the `Params` back.
pub trait MethodConfig: Sized + serde::Serialize {
    /// Read and check every parameter of the method (defaults filled in).
    fn from_params(params: &Params) -> Result<Self>;

    /// The parameters this configuration stands for (absent ones stay absent).
    fn to_params(&self) -> Params {
        serde_json::to_value(self)
            .and_then(serde_json::from_value)
            .expect("a method configuration serialises to a map of parameter values")
    }
}

/// Parameters several methods share, declared once.
pub mod common {
    use super::{ParamDefault, ParamKind, ParamSpec};
    use crate::util::choice::choice_enum;

    choice_enum! {
        /// How okl and lowrank-okl minimise their objective (each declares its own `solver`
        /// with this list).
        pub enum Solver: "solver" {
            /// L-BFGS on the reduced problem with the coefficients eliminated.
            Qn = "qn",
            /// The paper's block coordinate descent (Algorithm 1).
            Bcd = "bcd",
        }
    }

    /// The ridge weight λ of the data-fit term.
    pub const LAMBDA: ParamSpec = ParamSpec {
        key: "lambda",
        label: "regularisation",
        help: "regularisation parameter λ of the data-fit term",
        unit: "λ",
        kind: ParamKind::POSITIVE,
        default: ParamDefault::Float(0.1),
    };

    pub(crate) const TOL: ParamSpec = ParamSpec {
        key: "tol",
        label: "tolerance",
        help: "stopping tolerance δ on the method's relative residual",
        unit: "δ",
        kind: ParamKind::Float {
            min: 0.0,
            max: 1.0,
            min_open: true,
            max_open: false,
            log: true,
        },
        default: ParamDefault::Float(1e-8),
    };

    /// The iteration cap of an iterative solver.
    pub const MAX_ITER: ParamSpec = ParamSpec {
        key: "max_iter",
        label: "max iterations",
        help: "iteration cap; the fit stops unconverged (and says so) when it is reached",
        unit: "iterations",
        kind: ParamKind::Int {
            min: 1,
            max: 10_000_000,
        },
        default: ParamDefault::Int(1000),
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[ParamSpec] = &[common::LAMBDA, common::TOL, common::MAX_ITER];

    #[test]
    fn unknown_key_names_the_nearest() {
        let p = Params::new().with("lamda", Value::Float(1.0));
        let e = p.validate("okl", SPECS).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::UnknownParameter);
        let msg = e.to_string();
        assert!(
            msg.contains("'lamda'") && msg.contains("did you mean 'lambda'"),
            "{msg}"
        );
    }

    #[test]
    fn range_and_type_checked() {
        assert!(common::LAMBDA.parse("0").is_err());
        assert!(common::LAMBDA.parse("-1").is_err());
        assert!(common::LAMBDA.parse("abc").is_err());
        assert_eq!(common::LAMBDA.parse("0.5").unwrap(), Value::Float(0.5));
        assert!(common::MAX_ITER.parse("2.5").is_err());
    }

    #[test]
    fn defaults_fill_in() {
        let p = Params::new();
        assert_eq!(p.f64(&common::LAMBDA).unwrap(), 0.1);
        assert_eq!(p.usize(&common::MAX_ITER).unwrap(), 1000);
        assert_eq!(p.resolve(SPECS).get("tol"), Some(Value::Float(1e-8)));
        let p = Params::new().with("lambda", Value::Text("x".into()));
        let e = p.f64(&common::LAMBDA).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidParameter);
    }
}
