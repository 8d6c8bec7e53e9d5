//! Every option of `ovk run`, declared once: the clap flags, the TOML config keys and
//! `docs/config.md` are all generated from this table and the methods' `ParamSpec`s.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::data::{ClassCoding, DataConfig, Scale, Task};
use crate::kernels::{InputRank, KernelName, KernelSpec, Landmarks, Sigma};
use crate::methods::{
    self,
    params::{nearest, upper_bound},
    ParamKind, ParamSpec, Params,
};
use crate::train::RunConfig;
use crate::{OvkError, Result};

/// One non-method option of a run.
pub struct RunOption {
    pub key: &'static str,
    pub value_name: &'static str,
    pub help: &'static str,
    /// `None` for on/off flags.
    pub default: Option<&'static str>,
    pub is_flag: bool,
}

const fn opt(
    key: &'static str,
    value_name: &'static str,
    help: &'static str,
    default: Option<&'static str>,
) -> RunOption {
    RunOption {
        key,
        value_name,
        help,
        default,
        is_flag: false,
    }
}

pub const RUN_OPTIONS: &[RunOption] = &[
    opt("data", "PATH", "the table to learn from (CSV or Parquet)", None),
    opt("method", "NAME", "learning method (see the list below)", None),
    opt("features", "COLS", "feature columns: names, globs (p_0_*) or ranges (p_0_0..p_3_7), comma-separated; default: every column not used as target/class, or the dataset's sidecar", None),
    opt("targets", "COLS", "target columns (regression or multi-label), same syntax as --features", None),
    opt("class", "COL", "one class column (multi-class), one-hot coded", None),
    opt("task", "TASK", "regression | multiclass | multilabel (default: inferred)", None),
    opt("views", "PREFIXES", "feature groups by column-name prefix, comma-separated (multi-view methods)", None),
    opt("test_fraction", "F", "fraction of the rows held out for testing, in [0, 1)", Some("0.25")),
    opt("test_column", "COL", "a column marking the test rows (nonzero = test), e.g. a dataset's official split; replaces the random split and is never a feature", None),
    opt("seed", "S", "seed of the shuffled train/test split and of any sampling", Some("0")),
    opt("scale", "SCALE", "feature scaling: standard (training mean, population std) | none", Some("standard")),
    opt("class_coding", "CODING", "one-hot coding of class/label targets: pm1 (+1/-1) | 01 (1/0)", Some("pm1")),
    RunOption {
        key: "drop_missing",
        value_name: "",
        help: "drop rows with missing or NaN cells instead of refusing them",
        default: None,
        is_flag: true,
    },
    opt("missing", "HOW", "missing cells in the used columns: refuse (an error names the first) | drop (leave such rows out) | impute (features: numeric column mean, text most frequent value; rows missing an output are dropped)", Some("refuse")),
    opt("labeled", "N", "semi-supervised: keep N labels (or a fraction < 1) of the training part, hide the rest", None),
    opt("cv_folds", "K", "cross-validation: number of folds of the training part (with --cv-fold)", None),
    opt("cv_fold", "I", "cross-validation: evaluate on fold I (0-based) of --cv-folds, train on the others", None),
    opt("kernel", "KERNEL", "input kernel: linear | gaussian | polynomial | laplacian", Some("gaussian")),
    opt("sigma", "X|median", "kernel width σ (gaussian, laplacian): a number, or median = median distance between training rows after scaling", Some("median")),
    opt("degree", "D", "polynomial degree d", Some("2")),
    opt("coef0", "C", "polynomial offset c in (xᵀz + c)^d", Some("1")),
    opt("input_rank", "R|exact|auto", "input kernel: a rank-R Nyström factor K ≈ ZZᵀ (no n×n matrix; krr, okl, lowrank-okl), exact, or auto = exact up to 5000 training rows and rank 2000 beyond; a linear kernel with d ≤ n is always solved exactly in the primal", Some("auto")),
    opt("landmarks", "HOW", "landmarks of the low-rank factor: rpcholesky (randomly pivoted Cholesky) | uniform", Some("rpcholesky")),
    opt("name", "NAME", "session name (default: <dataset>-<method>)", None),
];

/// The union of every method's hyperparameters, by key (a key shared by several methods
/// appears once, with the methods that take it).
pub fn method_params() -> Vec<(ParamSpec, Vec<&'static str>)> {
    let mut out: Vec<(ParamSpec, Vec<&'static str>)> = Vec::new();
    for m in methods::registry() {
        for spec in m.params() {
            match out.iter_mut().find(|(s, _)| s.key == spec.key) {
                Some((_, names)) => names.push(m.name()),
                None => out.push((*spec, vec![m.name()])),
            }
        }
    }
    out
}

/// Every key a config may hold.
pub fn all_keys() -> Vec<&'static str> {
    RUN_OPTIONS
        .iter()
        .map(|o| o.key)
        .chain(method_params().into_iter().map(|(s, _)| s.key))
        .collect()
}

/// Option values by key, as text (from flags or a TOML file).
pub type RawOptions = BTreeMap<String, String>;

/// Read a flat TOML config (`method = "okl"`, `lambda = 0.1`, `targets = ["a", "b"]` …).
pub fn read_config(path: &Path) -> Result<RawOptions> {
    let text = read_text(path)?;
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        // Say where: the message alone ("unclosed table") does not.
        let at = e.span().map(|span| {
            let before = &text.as_bytes()[..span.start.min(text.len())];
            let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
            let column = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
            format!("line {line}, column {column}: ")
        });
        OvkError::input(format!(
            "{}: {}{}",
            path.display(),
            at.unwrap_or_default(),
            e.message().trim()
        ))
    })?;
    let keys = all_keys();
    let mut out = RawOptions::new();
    for (k, v) in table {
        if !keys.contains(&k.as_str()) {
            return Err(OvkError::input(format!(
                "{}: {}",
                path.display(),
                unknown_option(&k, &keys)
            )));
        }
        out.insert(k.clone(), toml_to_text(&k, &v, path)?);
    }
    // A relative data path in a config file is relative to the file, not to the shell.
    if let Some(d) = out.get_mut("data") {
        let p = PathBuf::from(&*d);
        if p.is_relative() && !p.exists() {
            if let Some(dir) = path.parent() {
                let joined = dir.join(&p);
                if joined.exists() {
                    *d = joined.display().to_string();
                }
            }
        }
    }
    Ok(out)
}

/// A config file's text. A directory, or bytes that are not UTF-8, are the user's mistake (exit
/// 2), named with the line of the first bad byte.
pub(crate) fn read_text(path: &Path) -> Result<String> {
    if path.is_dir() {
        return Err(OvkError::input(format!(
            "{}: is a directory, not a config file",
            path.display()
        )));
    }
    // A config or sweep file is a page of TOML; 16 MiB is far beyond any real one.
    let bytes = crate::data::files::read_text_file(path, 16 << 20, "a config file")?;
    String::from_utf8(bytes).map_err(|e| {
        let (b, at) = (e.as_bytes(), e.utf8_error().valid_up_to());
        let line = b[..at].iter().filter(|&&c| c == b'\n').count() + 1;
        OvkError::input(format!(
            "{}: is not UTF-8 text: byte 0x{:02X} on line {line} (Latin-1 or Windows-1252?); \
             save the file as UTF-8",
            path.display(),
            b[at]
        ))
    })
}

fn toml_to_text(key: &str, v: &toml::Value, path: &Path) -> Result<String> {
    Ok(match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => f.to_string(),
        toml::Value::Boolean(b) => b.to_string(),
        toml::Value::Array(items) => {
            let parts: Result<Vec<String>> =
                items.iter().map(|i| toml_to_text(key, i, path)).collect();
            parts?.join(",")
        }
        other => {
            return Err(OvkError::input(format!(
                "{}: '{key}' must be a string, number, boolean or list, got {}",
                path.display(),
                other.type_str()
            )))
        }
    })
}

pub fn unknown_option(key: &str, keys: &[&str]) -> String {
    match nearest(key, keys) {
        Some(n) => format!("unknown option '{key}' (did you mean '{n}'?)"),
        None => format!("unknown option '{key}'"),
    }
}

fn list(s: &str) -> Vec<String> {
    s.split(',')
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

fn parse_num<T: std::str::FromStr>(key: &str, s: &str, what: &str) -> Result<T> {
    s.trim()
        .parse::<T>()
        .map_err(|_| OvkError::input(format!("--{}: '{s}' is not {what}", key.replace('_', "-"))))
}

/// Build a run configuration from option values; every value is checked here.
pub fn build_run_config(raw: &RawOptions) -> Result<RunConfig> {
    let get = |k: &str| raw.get(k).map(|s| s.as_str());
    let data = get("data")
        .ok_or_else(|| OvkError::input("missing --data PATH (the table to learn from)"))?;
    let method_name = get("method").ok_or_else(|| {
        let names: Vec<&str> = methods::registry().iter().map(|m| m.name()).collect();
        OvkError::input(format!("missing --method (one of: {})", names.join(", ")))
    })?;
    let method = methods::find(method_name)?;

    let mut dc = DataConfig::new(data);
    dc.features = get("features").map(list);
    dc.targets = get("targets").map(list);
    dc.class = get("class").map(|s| s.trim().to_string());
    dc.task = get("task")
        .map(|t| match t.trim() {
            "regression" => Ok(Task::Regression),
            "multiclass" => Ok(Task::Multiclass),
            "multilabel" => Ok(Task::Multilabel),
            other => Err(OvkError::input(format!(
                "--task: '{other}' is not regression, multiclass or multilabel"
            ))),
        })
        .transpose()?;
    dc.views = get("views").map(list);
    if let Some(f) = get("test_fraction") {
        dc.test_fraction = parse_num("test_fraction", f, "a number")?;
        if !(0.0..1.0).contains(&dc.test_fraction) {
            return Err(OvkError::input(format!(
                "--test-fraction must be in [0, 1), got {f}"
            )));
        }
    }
    dc.test_column = get("test_column").map(|s| s.trim().to_string());
    if let Some(s) = get("seed") {
        dc.seed = parse_num("seed", s, "a whole number ≥ 0")?;
    }
    if let Some(s) = get("scale") {
        dc.scale = match s.trim() {
            "standard" => Scale::Standard,
            "none" => Scale::None,
            other => {
                return Err(OvkError::input(format!(
                    "--scale: '{other}' is not standard or none"
                )))
            }
        };
    }
    if let Some(s) = get("class_coding") {
        dc.class_coding = match s.trim() {
            "pm1" => ClassCoding::Pm1,
            "01" => ClassCoding::ZeroOne,
            other => {
                return Err(OvkError::input(format!(
                    "--class-coding: '{other}' is not pm1 or 01"
                )))
            }
        };
    }
    if let Some(s) = get("drop_missing") {
        dc.drop_missing = parse_bool("drop_missing", s)?;
    }
    if let Some(s) = get("missing") {
        let (drop, impute) = match s.trim() {
            "refuse" => (false, false),
            "drop" => (true, false),
            "impute" => (false, true),
            other => {
                return Err(OvkError::input(format!(
                    "--missing: '{other}' is not refuse, drop or impute"
                )))
            }
        };
        if dc.drop_missing && !drop {
            return Err(OvkError::input(format!(
                "--drop-missing and --missing {} disagree: give one of them",
                s.trim()
            )));
        }
        dc.drop_missing = drop;
        dc.impute_missing = impute;
    }
    if let Some(s) = get("labeled") {
        let v: f64 = parse_num("labeled", s, "a number")?;
        if !(v > 0.0 && v.is_finite()) {
            return Err(OvkError::input(format!(
                "--labeled must be a count ≥ 1 or a fraction in (0, 1), got {s}"
            )));
        }
        dc.labeled = Some(v);
    }

    match (get("cv_folds"), get("cv_fold")) {
        (None, None) => {}
        (Some(k), Some(i)) => {
            let folds: usize = parse_num("cv_folds", k, "a whole number ≥ 2")?;
            let fold: usize = parse_num("cv_fold", i, "a whole number ≥ 0")?;
            if folds < 2 || fold >= folds {
                return Err(OvkError::input(format!(
                    "--cv-folds must be ≥ 2 and --cv-fold in 0..{folds}, got {folds} and {fold}"
                )));
            }
            dc.cv = Some(crate::data::CvFold { folds, fold });
        }
        _ => return Err(OvkError::input("--cv-folds and --cv-fold go together")),
    }

    let mut kernel = KernelSpec::default();
    if let Some(k) = get("kernel") {
        kernel.name = KernelName::parse(k)?;
    }
    if let Some(s) = get("sigma") {
        kernel.sigma = Sigma::parse(s)?;
    }
    if let Some(d) = get("degree") {
        kernel.degree = parse_num("degree", d, "a whole number ≥ 1")?;
    }
    if let Some(c) = get("coef0") {
        kernel.coef0 = parse_num("coef0", c, "a number")?;
    }
    if let Some(r) = get("input_rank") {
        kernel.input_rank = InputRank::parse(r)?;
    }
    if let Some(l) = get("landmarks") {
        kernel.landmarks = Landmarks::parse(l)?;
    }

    let mut params = Params::new();
    let all = method_params();
    for (key, text) in raw {
        if RUN_OPTIONS.iter().any(|o| o.key == key) {
            continue;
        }
        match method.params().iter().find(|s| s.key == key) {
            Some(spec) => params.set(key, spec.parse(text)?),
            None => {
                let owners = all
                    .iter()
                    .find(|(s, _)| s.key == key)
                    .map(|(_, o)| o.join(", "))
                    .unwrap_or_default();
                if owners.is_empty() {
                    return Err(OvkError::input(unknown_option(key, &all_keys())));
                }
                return Err(OvkError::input(format!(
                    "--{} is not a parameter of {} (it belongs to {owners})",
                    key.replace('_', "-"),
                    method.name()
                )));
            }
        }
    }

    let config = RunConfig {
        data: dc,
        method: method.name().to_string(),
        kernel,
        params,
        name: get("name").map(|s| s.to_string()),
    };
    config.validate()?;
    Ok(config)
}

fn parse_bool(key: &str, s: &str) -> Result<bool> {
    match s.trim() {
        "true" | "yes" | "1" | "on" => Ok(true),
        "false" | "no" | "0" | "off" => Ok(false),
        other => Err(OvkError::input(format!(
            "--{}: '{other}' is not true or false",
            key.replace('_', "-")
        ))),
    }
}

/// The range or choice list of a method parameter, for help text and docs.
pub fn describe_kind(spec: &ParamSpec) -> String {
    match spec.kind {
        ParamKind::Float {
            min, max, min_open, ..
        } => {
            let lo = if min_open { "(" } else { "[" };
            format!("number in {lo}{min}, {}", upper_bound(max))
        }
        ParamKind::Int { min, max } => format!("whole number in [{min}, {max}]"),
        ParamKind::Choice(c) => c.join(" | "),
        ParamKind::Bool => "true | false".into(),
        ParamKind::Text => "text".into(),
    }
}

/// Text safe inside a Markdown table cell.
fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// `docs/config.md`, generated from the option table and the methods' declarations.
pub fn config_reference() -> String {
    let mut s = String::from(
        "# ovk run — options and config keys\n\n\
         Generated by `ovk docs config` from the code (a test checks this file is current).\n\
         Every option is a flag of `ovk run` (`--test-fraction 0.2`) and a key of a TOML config\n\
         (`test_fraction = 0.2`, given with `--config FILE`); flags override the file.\n\n\
         ## Data, kernel and run\n\n| key | value | default | meaning |\n|---|---|---|---|\n",
    );
    for o in RUN_OPTIONS {
        let value = if o.is_flag {
            "true | false"
        } else {
            o.value_name
        };
        s.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            o.key,
            cell(value),
            o.default.unwrap_or(if o.is_flag { "false" } else { "—" }),
            cell(o.help)
        ));
    }
    s.push_str("\n## Methods\n");
    for m in methods::registry() {
        s.push_str(&format!(
            "\n### `{}` — {}\n\n{}\n\n",
            m.name(),
            m.summary(),
            m.citation()
        ));
        if m.params().is_empty() {
            s.push_str("No hyperparameters.\n");
            continue;
        }
        s.push_str("| key | value | default | meaning |\n|---|---|---|---|\n");
        for p in m.params() {
            let default = p
                .default_value()
                .map(|v| v.to_string())
                .unwrap_or_else(|| "—".into());
            let unit = if p.unit.is_empty() {
                String::new()
            } else {
                format!(" ({})", p.unit)
            };
            s.push_str(&format!(
                "| `{}` | {} | {} | {}{} |\n",
                p.key,
                cell(&describe_kind(p)),
                cell(&default),
                cell(p.help),
                unit
            ));
        }
    }
    s
}
