//! Hyperparameters as data: every method declares its parameters once (`ParamSpec`, from
//! `util::param`, as the kernel and data options are), and the CLI flags, the config keys, the
//! TUI's fields, validation and `docs/config.md` all come from those declarations — so they
//! cannot drift apart. Here: parameter values by key (`Params`), and the shared declarations
//! (`common`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::util::param::as_f64;
pub use crate::util::param::{upper_bound, ParamDefault, ParamKind, ParamSpec, Value};
use crate::util::text::nearest;
use crate::{OvkError, Result};

/// Hyperparameter values by key. Absent keys fall back to the spec's default when read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Params(pub BTreeMap<String, Value>);

impl Params {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn set(&mut self, key: &str, v: Value) {
        self.0.insert(key.to_string(), v);
    }

    pub fn with(mut self, key: &str, v: Value) -> Self {
        self.set(key, v);
        self
    }

    /// Every key must be a parameter of the method, and every value of the right kind.
    pub fn validate(&self, method: &str, specs: &[ParamSpec]) -> Result<()> {
        for (k, v) in &self.0 {
            let Some(spec) = specs.iter().find(|s| s.key == k) else {
                let keys: Vec<&str> = specs.iter().map(|s| s.key).collect();
                return Err(OvkError::input(unknown_key_message(k, &keys, method)));
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
pub fn unknown_key_message(key: &str, valid: &[&str], context: &str) -> String {
    match nearest(key, valid) {
        Some(n) => format!("unknown parameter '{key}' for {context} (did you mean '{n}'?)"),
        None => format!(
            "unknown parameter '{key}' for {context} (valid: {})",
            valid.join(", ")
        ),
    }
}

/// Parameter values with defaults applied; getters return an input error for a missing value.
pub struct Resolved<'a> {
    params: &'a Params,
    specs: &'a [ParamSpec],
}

impl Resolved<'_> {
    pub fn get(&self, key: &str) -> Option<Value> {
        self.params.0.get(key).cloned().or_else(|| {
            self.specs
                .iter()
                .find(|s| s.key == key)
                .and_then(|s| s.default_value())
        })
    }

    fn need(&self, key: &str) -> Result<Value> {
        self.get(key).ok_or_else(|| {
            OvkError::input(format!(
                "missing parameter '{key}' (--{})",
                key.replace('_', "-")
            ))
        })
    }

    /// `None` for an absent value without a default, else `read(key)`.
    fn opt<T>(&self, key: &str, read: impl Fn(&Self, &str) -> Result<T>) -> Result<Option<T>> {
        match self.get(key) {
            None => Ok(None),
            Some(_) => read(self, key).map(Some),
        }
    }

    pub fn f64(&self, key: &str) -> Result<f64> {
        as_f64(&self.need(key)?)
            .ok_or_else(|| OvkError::input(format!("parameter '{key}' must be a number")))
    }

    pub fn opt_f64(&self, key: &str) -> Result<Option<f64>> {
        self.opt(key, Self::f64)
    }

    pub fn usize(&self, key: &str) -> Result<usize> {
        match self.need(key)? {
            Value::Int(i) if i >= 0 => Ok(i as usize),
            v => Err(OvkError::input(format!(
                "parameter '{key}' must be a whole number ≥ 0, got {v}"
            ))),
        }
    }

    pub fn opt_usize(&self, key: &str) -> Result<Option<usize>> {
        self.opt(key, Self::usize)
    }

    pub fn bool(&self, key: &str) -> Result<bool> {
        match self.need(key)? {
            Value::Bool(b) => Ok(b),
            v => Err(OvkError::input(format!(
                "parameter '{key}' must be true or false, got {v}"
            ))),
        }
    }

    pub fn str(&self, key: &str) -> Result<String> {
        match self.need(key)? {
            Value::Text(s) => Ok(s),
            v => Ok(v.to_string()),
        }
    }

    pub fn opt_str(&self, key: &str) -> Result<Option<String>> {
        self.opt(key, Self::str)
    }
}

/// Parameters several methods share, declared once.
pub mod common {
    use super::{ParamDefault, ParamKind, ParamSpec};

    pub const LAMBDA: ParamSpec = ParamSpec {
        key: "lambda",
        label: "regularisation",
        help: "regularisation parameter λ of the data-fit term",
        unit: "λ",
        kind: ParamKind::POSITIVE,
        default: ParamDefault::Float(0.1),
    };

    pub const TOL: ParamSpec = ParamSpec {
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
        let msg = p.validate("okl", SPECS).unwrap_err().to_string();
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
        let r = p.resolve(SPECS);
        assert_eq!(r.f64("lambda").unwrap(), 0.1);
        assert_eq!(r.usize("max_iter").unwrap(), 1000);
    }
}
