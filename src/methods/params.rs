//! Hyperparameters as data: every method declares its parameters once (`ParamSpec`), and the
//! CLI flags, the config keys, the TUI's fields, validation and `docs/config.md` all come from
//! those declarations — so they cannot drift apart.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{OvkError, Result};

/// A parameter's value as given in a config, a flag or a TUI field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) if *x != 0.0 && (x.abs() < 1e-3 || x.abs() >= 1e6) => {
                write!(f, "{x:e}")
            }
            Value::Float(x) => write!(f, "{x}"),
            Value::Text(s) => write!(f, "{s}"),
        }
    }
}

/// What values a parameter takes.
#[derive(Debug, Clone, Copy)]
pub enum ParamKind {
    /// A real number in `[min, max]` (`min_open`: strictly above `min`). `log`: best explored on
    /// a log scale (sweeps and the TUI use it).
    Float {
        min: f64,
        max: f64,
        min_open: bool,
        log: bool,
    },
    Int {
        min: i64,
        max: i64,
    },
    Choice(&'static [&'static str]),
    Bool,
    /// Free text the method parses itself (e.g. `"20,30"` or `"1..8"`).
    Text,
}

/// The default of a parameter; `None` means "absent unless given" (e.g. λ absent → a λ path).
#[derive(Debug, Clone, Copy)]
pub enum Default {
    None,
    Float(f64),
    Int(i64),
    Bool(bool),
    Text(&'static str),
}

/// One hyperparameter of one method.
#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    /// Config key (`max_iter`); the CLI flag is the same with dashes (`--max-iter`).
    pub key: &'static str,
    /// Short label for the TUI (`max iterations`).
    pub label: &'static str,
    /// One sentence: what it does, and the paper's symbol.
    pub help: &'static str,
    /// Unit or symbol shown beside the field (`λ`, `iterations`), may be empty.
    pub unit: &'static str,
    pub kind: ParamKind,
    pub default: Default,
}

impl ParamSpec {
    pub fn flag(&self) -> String {
        self.key.replace('_', "-")
    }

    /// The placeholder shown in `--help` (`λ`, `N`, `CHOICE` …).
    pub fn unit_or_value(&self) -> String {
        match self.kind {
            ParamKind::Bool => "BOOL".into(),
            ParamKind::Choice(_) => "CHOICE".into(),
            ParamKind::Int { .. } => "N".into(),
            ParamKind::Text => "TEXT".into(),
            ParamKind::Float { .. } => "X".into(),
        }
    }

    pub fn default_value(&self) -> Option<Value> {
        match self.default {
            Default::None => None,
            Default::Float(v) => Some(Value::Float(v)),
            Default::Int(v) => Some(Value::Int(v)),
            Default::Bool(v) => Some(Value::Bool(v)),
            Default::Text(v) => Some(Value::Text(v.to_string())),
        }
    }

    /// Parse a value typed by a user (flag or TUI field) and check it against the kind.
    pub fn parse(&self, text: &str) -> Result<Value> {
        let t = text.trim();
        let v = match self.kind {
            ParamKind::Float { .. } => t
                .parse::<f64>()
                .map(Value::Float)
                .map_err(|_| OvkError::input(format!("{}: '{t}' is not a number", self.key)))?,
            ParamKind::Int { .. } => t.parse::<i64>().map(Value::Int).map_err(|_| {
                OvkError::input(format!("{}: '{t}' is not a whole number", self.key))
            })?,
            ParamKind::Bool => match t.to_ascii_lowercase().as_str() {
                "true" | "yes" | "on" | "1" => Value::Bool(true),
                "false" | "no" | "off" | "0" => Value::Bool(false),
                _ => {
                    return Err(OvkError::input(format!(
                        "{}: '{t}' is not true or false",
                        self.key
                    )))
                }
            },
            ParamKind::Choice(_) | ParamKind::Text => Value::Text(t.to_string()),
        };
        self.check(&v)?;
        Ok(v)
    }

    /// Check a value (from any source) against the kind; the message says the allowed range.
    pub fn check(&self, v: &Value) -> Result<()> {
        let bad = |why: String| Err(OvkError::input(format!("{}: {why}", self.key)));
        match (self.kind, v) {
            (
                ParamKind::Float {
                    min, max, min_open, ..
                },
                Value::Float(_) | Value::Int(_),
            ) => {
                let x = as_f64(v).unwrap_or(f64::NAN);
                let low_ok = if min_open { x > min } else { x >= min };
                if !x.is_finite() || !low_ok || x > max {
                    let lo = if min_open { "(" } else { "[" };
                    let hi = upper_bound(max);
                    return bad(format!("{x} is outside {lo}{min}, {hi}"));
                }
                Ok(())
            }
            (ParamKind::Int { min, max }, Value::Int(i)) => {
                if *i < min || *i > max {
                    return bad(format!("{i} is outside [{min}, {max}]"));
                }
                Ok(())
            }
            (ParamKind::Choice(opts), Value::Text(s)) => {
                if !opts.contains(&s.as_str()) {
                    let hint = nearest(s, opts)
                        .map(|n| format!(" (did you mean '{n}'?)"))
                        .unwrap_or_default();
                    return bad(format!("'{s}' is not one of {}{hint}", opts.join(", ")));
                }
                Ok(())
            }
            (ParamKind::Bool, Value::Bool(_)) | (ParamKind::Text, Value::Text(_)) => Ok(()),
            (kind, v) => bad(format!(
                "{v} has the wrong type (expected {})",
                kind_name(kind)
            )),
        }
    }
}

fn kind_name(k: ParamKind) -> &'static str {
    match k {
        ParamKind::Float { .. } => "a number",
        ParamKind::Int { .. } => "a whole number",
        ParamKind::Choice(_) => "one of the listed choices",
        ParamKind::Bool => "true or false",
        ParamKind::Text => "text",
    }
}

fn as_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Float(x) => Some(*x),
        Value::Int(i) => Some(*i as f64),
        _ => None,
    }
}

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

/// The valid key closest to `key` by edit distance, if any is reasonably close.
pub fn nearest<'a>(key: &str, valid: &[&'a str]) -> Option<&'a str> {
    valid
        .iter()
        .map(|v| (edit_distance(key, v), *v))
        .filter(|(d, v)| *d <= (v.len().max(key.len()) / 2).max(2))
        .min_by_key(|(d, _)| *d)
        .map(|(_, v)| v)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
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

    pub fn f64(&self, key: &str) -> Result<f64> {
        as_f64(&self.need(key)?)
            .ok_or_else(|| OvkError::input(format!("parameter '{key}' must be a number")))
    }

    pub fn opt_f64(&self, key: &str) -> Result<Option<f64>> {
        match self.get(key) {
            None => Ok(None),
            Some(_) => self.f64(key).map(Some),
        }
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
        match self.get(key) {
            None => Ok(None),
            Some(_) => self.usize(key).map(Some),
        }
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
        match self.get(key) {
            None => Ok(None),
            Some(_) => self.str(key).map(Some),
        }
    }
}

/// Parameters several methods share, declared once.
pub mod common {
    use super::{Default, ParamKind, ParamSpec};

    pub const LAMBDA: ParamSpec = ParamSpec {
        key: "lambda",
        label: "regularisation",
        help: "regularisation parameter λ of the data-fit term",
        unit: "λ",
        kind: ParamKind::Float {
            min: 0.0,
            max: 1e12,
            min_open: true,
            log: true,
        },
        default: Default::Float(0.1),
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
            log: true,
        },
        default: Default::Float(1e-8),
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
        default: Default::Int(1000),
    };
}

/// The closing end of a float range as help and errors print it: `∞)`, `1e12]`, `0.5]`.
pub fn upper_bound(max: f64) -> String {
    if max.is_infinite() {
        "∞)".into()
    } else if max.abs() >= 1e6 {
        format!("{max:e}]")
    } else {
        format!("{max}]")
    }
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
