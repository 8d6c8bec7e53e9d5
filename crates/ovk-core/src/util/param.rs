//! A setting declared as data (`ParamSpec`): key, label, help, kind with its range or choices,
//! default. The methods' hyperparameters (`methods::params`), the kernel options
//! (`kernels::options`) and the data options (`data::options`) are all declared so;
//! flags, config keys, TUI fields, validation and `docs/config.md` are made from them.

use serde::{Deserialize, Serialize};

use crate::error::ErrorKind;
use crate::{OvkError, Result};

/// A parameter's value as given in a config, a flag or a TUI field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    /// A switch.
    Bool(bool),
    /// A whole number.
    Int(i64),
    /// A real number.
    Float(f64),
    /// Free text (a choice's word, a list the method parses).
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
    /// A real number in `[min, max]` (`min_open`: strictly above `min`; `max_open`: strictly
    /// below `max`). `log`: best explored on a log scale (sweeps and the TUI use it).
    Float {
        /// The lower bound.
        min: f64,
        /// The upper bound.
        max: f64,
        /// `min` itself excluded.
        min_open: bool,
        /// `max` itself excluded.
        max_open: bool,
        /// Explored on a log scale.
        log: bool,
    },
    /// A whole number in `[min, max]`.
    Int {
        /// The smallest value allowed.
        min: i64,
        /// The largest value allowed.
        max: i64,
    },
    /// One of these words.
    Choice(&'static [&'static str]),
    /// true or false.
    Bool,
    /// Free text the method parses itself (e.g. `"20,30"` or `"1..8"`).
    Text,
}

/// The default of a parameter; `None` means "absent unless given" (e.g. λ absent → a λ path).
#[derive(Debug, Clone, Copy)]
pub enum ParamDefault {
    /// Absent unless given.
    None,
    /// This number.
    Float(f64),
    /// This whole number.
    Int(i64),
    /// This switch.
    Bool(bool),
    /// This text (a choice's word).
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
    /// What values it takes (type and range).
    pub kind: ParamKind,
    /// Its value when not given.
    pub default: ParamDefault,
}

impl ParamSpec {
    /// The CLI flag: the key with dashes (`max-iter`), without the leading `--`.
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

    /// The default as a `Value`; `None` when absent unless given.
    pub fn default_value(&self) -> Option<Value> {
        match self.default {
            ParamDefault::None => None,
            ParamDefault::Float(v) => Some(Value::Float(v)),
            ParamDefault::Int(v) => Some(Value::Int(v)),
            ParamDefault::Bool(v) => Some(Value::Bool(v)),
            ParamDefault::Text(v) => Some(Value::Text(v.to_string())),
        }
    }

    /// Parse a value typed by a user (flag or TUI field) and check it against the kind.
    pub fn parse(&self, text: &str) -> Result<Value> {
        let t = text.trim();
        let bad = |what: &str| invalid(format!("{}: '{t}' is not {what}", self.key));
        let v = match self.kind {
            ParamKind::Float { .. } => t
                .parse::<f64>()
                .map(Value::Float)
                .map_err(|_| bad("a number"))?,
            ParamKind::Int { .. } => t
                .parse::<i64>()
                .map(Value::Int)
                .map_err(|_| bad("a whole number"))?,
            ParamKind::Bool => match t.to_ascii_lowercase().as_str() {
                "true" | "yes" | "on" | "1" => Value::Bool(true),
                "false" | "no" | "off" | "0" => Value::Bool(false),
                _ => return Err(bad("true or false")),
            },
            ParamKind::Choice(_) | ParamKind::Text => Value::Text(t.to_string()),
        };
        self.check(&v)?;
        Ok(v)
    }

    /// Check a value (from any source) against the kind; the message says the allowed range.
    pub fn check(&self, v: &Value) -> Result<()> {
        let bad = |why: String| Err(invalid(format!("{}: {why}", self.key)));
        match (self.kind, v) {
            (
                ParamKind::Float {
                    min,
                    max,
                    min_open,
                    max_open,
                    ..
                },
                Value::Float(_) | Value::Int(_),
            ) => {
                let x = as_f64(v).unwrap_or(f64::NAN);
                let low_ok = if min_open { x > min } else { x >= min };
                let high_ok = if max_open { x < max } else { x <= max };
                if !x.is_finite() || !low_ok || !high_ok {
                    return bad(format!("{x} is outside {}", self.kind.range()));
                }
                Ok(())
            }
            (ParamKind::Int { min, max }, Value::Int(i)) => {
                if *i < min || *i > max {
                    return bad(format!("{i} is outside {}", self.kind.range()));
                }
                Ok(())
            }
            (ParamKind::Choice(opts), Value::Text(s)) => {
                if !opts.contains(&s.as_str()) {
                    return Err(crate::util::choice::unknown(self.key, s, opts));
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

impl ParamKind {
    /// A weight or regulariser (λ, γ, ε): a number in (0, 1e12], explored on a log scale.
    pub const POSITIVE: ParamKind = ParamKind::Float {
        min: 0.0,
        max: 1e12,
        min_open: true,
        max_open: false,
        log: true,
    };

    /// The interval of a number (`[0, 1)`, `(0, ∞)`); empty for other kinds.
    pub fn range(self) -> String {
        match self {
            ParamKind::Float {
                min,
                max,
                min_open,
                max_open,
                ..
            } => {
                let lo = if min_open { "(" } else { "[" };
                let hi = upper_bound(max);
                let hi = if max_open && max.is_finite() {
                    format!("{})", &hi[..hi.len() - 1])
                } else {
                    hi
                };
                format!("{lo}{min}, {hi}")
            }
            ParamKind::Int { min, max } => format!("[{min}, {max}]"),
            _ => String::new(),
        }
    }

    /// The range or choice list, for help text and docs.
    pub fn describe(self) -> String {
        match self {
            ParamKind::Float { .. } => format!("number in {}", self.range()),
            ParamKind::Int { .. } => format!("whole number in {}", self.range()),
            ParamKind::Choice(c) => c.join(" | "),
            ParamKind::Bool => "true | false".into(),
            ParamKind::Text => "text".into(),
        }
    }
}

/// A value of the wrong type or outside its range.
fn invalid(msg: String) -> OvkError {
    OvkError::input_as(ErrorKind::InvalidParameter, msg)
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

pub(crate) fn as_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Float(x) => Some(*x),
        Value::Int(i) => Some(*i as f64),
        _ => None,
    }
}

/// The closing end of a float range as help and errors print it: `∞)`, `1e12]`, `0.5]`.
pub(crate) fn upper_bound(max: f64) -> String {
    if max.is_infinite() {
        "∞)".into()
    } else if max.abs() >= 1e6 {
        format!("{max:e}]")
    } else {
        format!("{max}]")
    }
}
