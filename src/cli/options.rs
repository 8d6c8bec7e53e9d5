//! Every option of `ovk run`, declared once: the clap flags, the TOML config keys and
//! `docs/config.md` are all generated from this table and the methods' `ParamSpec`s.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ovk_core::config::SelectOn;
use ovk_core::data::{DataConfig, Missing};
use ovk_core::kernels::{GramFile, InputRank, KernelSpec, Sigma};
use ovk_core::methods::{self, MethodName, ParamKind, ParamSpec, Params, Value};
use ovk_core::train::RunConfig;
use ovk_core::util::choice::Choice;
use ovk_core::util::text::nearest;
use ovk_core::{data, kernels};
use ovk_core::{ErrorKind, OvkError, Result};

/// One non-method option of a run.
pub struct RunOption {
    pub key: &'static str,
    pub value_name: &'static str,
    pub help: &'static str,
    /// `None` for on/off flags.
    pub default: Option<&'static str>,
    pub is_flag: bool,
    /// The declaration of a kernel or data option with a rule (`kernels::options`,
    /// `data::options`): its help, default and range come from there.
    pub spec: Option<&'static ParamSpec>,
}

impl RunOption {
    /// The help line, with the range a declared number must fall in.
    pub fn help_text(&self) -> String {
        match self.spec.map(|s| s.kind.range()) {
            Some(range) if !range.is_empty() => format!("{}, in {range}", self.help),
            _ => self.help.to_string(),
        }
    }

    pub fn default_text(&self) -> Option<String> {
        match self.spec {
            Some(s) => s.default_value().map(|v| v.to_string()),
            None => self.default.map(str::to_string),
        }
    }
}

/// An option declared as a `ParamSpec` (the value placeholder is the flag's own).
const fn declared(spec: &'static ParamSpec, value_name: &'static str) -> RunOption {
    RunOption {
        key: spec.key,
        value_name,
        help: spec.help,
        default: None,
        is_flag: false,
        spec: Some(spec),
    }
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
        spec: None,
    }
}

pub const RUN_OPTIONS: &[RunOption] = &[
    opt("data", "PATH", "the table to learn from (CSV, TSV, Parquet, ARFF or LIBSVM)", None),
    opt("method", "NAME", "learning method (see the list below)", None),
    opt("features", "COLS", "feature columns: names, globs (p_0_*), ranges (p_0_0..p_3_7) or regular expressions between slashes (/^p_0_/), comma-separated; default: every column not used as target/class, or the dataset's sidecar", None),
    opt("targets", "COLS", "target columns (regression or multi-label), same syntax as --features", None),
    opt("class", "COL", "one class column (multi-class), one-hot coded", None),
    opt("task", "TASK", "regression | multiclass | multilabel (default: inferred)", None),
    opt("views", "VIEWS", "feature groups (multi-view methods): column-name prefixes, comma-separated (fou,fac), or NAME=COLS with column selectors (q=q1..q7); --view may be repeated", None),
    declared(&data::options::TEST_FRACTION, "F"),
    opt("test_column", "COL", "a column marking the test rows (nonzero = test), e.g. a dataset's official split; replaces the random split and is never a feature", None),
    opt("seed", "S", "seed of the shuffled train/test split and of any sampling", Some("0")),
    opt("scale", "SCALE", "feature scaling: standard (training mean, population std) | none", Some("standard")),
    opt("sparse", "HOW", "a LIBSVM file's features: auto (kept sparse when the dense table would pass 64 MiB at most 10 % non-zero) | yes (kept sparse: kernels read them without densifying) | no (read as ordinary columns)", Some("auto")),
    opt("stream", "HOW", "read the table in row batches and never store the factor Z (krr, okl and lowrank-okl on a factor of the input kernel, CSV or Parquet): auto (when the in-memory route would not fit) | yes | no", Some("auto")),
    opt("class_coding", "CODING", "one-hot coding of class/label targets: pm1 (+1/-1) | 01 (1/0)", Some("pm1")),
    opt("target_scale", "HOW", "target scaling over the labeled training rows, undone on every prediction: none | center (mean 0: an intercept, so a shifted target shifts its predictions) | standard (mean 0, std 1: each output weighs the same in the squared loss, a rare label as much as a frequent one)", Some("none")),
    RunOption {
        key: "drop_missing",
        value_name: "",
        help: "drop rows with missing or NaN cells instead of refusing them",
        default: None,
        is_flag: true,
        spec: None,
    },
    opt("missing", "HOW", "missing cells in the used columns: refuse (an error names the first) | drop (leave such rows out) | impute (features: numeric column mean, text most frequent value, over the training rows; rows missing an output are dropped)", Some("refuse")),
    declared(&data::options::LABELED, "N"),
    opt("cv_folds", "K", "cross-validation: number of folds of the training part (with --cv-fold)", None),
    opt("cv_fold", "I", "cross-validation: evaluate on fold I (0-based) of --cv-folds, train on the others", None),
    opt("cv", "K", "estimate the configuration by K-fold cross-validation on the training part (each metric's mean, sd and per-fold values), then fit all training rows and score the test rows once", None),
    opt("select_on", "ROWS", "where hyperparameters are chosen (lowrank-okl's λ path, a sweep's best): train (a validation part or the folds of the training rows) | test (the papers' protocol: the test metrics are then marked optimistic)", Some("train")),
    declared(&kernels::options::KERNEL, "KERNEL"),
    declared(&kernels::options::SIGMA, "X|median"),
    declared(&kernels::options::DEGREE, "D"),
    declared(&kernels::options::COEF0, "C"),
    declared(&kernels::options::INPUT_RANK, "R|exact|auto"),
    declared(&kernels::options::LANDMARKS, "HOW"),
    opt("gram", "FILE", "with --kernel precomputed: the Gram matrix K as .npy (f64 or f32), n × n over all rows of the table in its row order; ovk takes the training and test blocks by its split (docs/kernels.md)", None),
    opt("gram_ids", "FILE", "with --kernel precomputed: match the table's rows to K's by an id column instead of by position — a one-column CSV whose header names the table's id column, then the ids of K's rows in K's order (K may hold rows the table does not)", None),
    opt("gram_view", "NAME=FILE", "with --kernel precomputed and a multi-view method: one Gram .npy per view, named as the views are; --gram-view may be repeated", None),
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
            return Err(OvkError::input_as(
                ErrorKind::UnknownParameter,
                format!("{}: {}", path.display(), unknown_option(&k, &keys)),
            ));
        }
        out.insert(k.clone(), toml_to_text(&k, &v, path)?);
    }
    // A relative data (or Gram) path in a config file is relative to the file, not to the shell.
    let beside = |p: &str| -> String {
        let given = PathBuf::from(p.trim());
        match path.parent().map(|dir| dir.join(&given)) {
            Some(joined) if given.is_relative() && !given.exists() && joined.exists() => {
                joined.display().to_string()
            }
            _ => p.to_string(),
        }
    };
    if let Some(d) = out.get_mut("data") {
        *d = beside(d);
    }
    if let Some(g) = out.get_mut("gram") {
        *g = beside(g);
    }
    if let Some(g) = out.get_mut("gram_ids") {
        *g = beside(g);
    }
    if let Some(g) = out.get_mut("gram_view") {
        let entries: Vec<String> = list(g)
            .iter()
            .map(|e| match e.split_once('=') {
                Some((name, file)) => format!("{name}={}", beside(file)),
                None => e.clone(),
            })
            .collect();
        *g = entries.join(",");
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
    let bytes = ovk_core::data::files::read_text_file(path, 16 << 20, "a config file")?;
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

/// View entries from `--views`/`--view` text: one per line (repeated flags), and within a
/// line comma-separated prefixes (`fou,fac`) or `NAME=COLS` entries whose selectors run on
/// until the next `NAME=` (`q=q1,q2,dq=dq1..dq7`).
fn view_entries(s: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in s.lines() {
        let mut open = false;
        for piece in list(line) {
            if piece.contains('=') {
                out.push(piece);
                open = true;
            } else if open {
                let last = out.last_mut().expect("an open NAME= entry");
                last.push(',');
                last.push_str(&piece);
            } else {
                out.push(piece);
            }
        }
    }
    out
}

fn parse_num<T: std::str::FromStr>(key: &str, s: &str, what: &str) -> Result<T> {
    s.trim()
        .parse::<T>()
        .map_err(|_| OvkError::input(format!("--{}: '{s}' is not {what}", key.replace('_', "-"))))
}

fn parse_seed(s: &str) -> Result<u64> {
    let t = s.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) && t.parse::<u64>().is_err() {
        return Err(OvkError::input(format!(
            "--seed: '{t}' is above the largest seed, {}",
            u64::MAX
        )));
    }
    parse_num("seed", s, "a whole number ≥ 0")
}

/// An error whose message starts with the key the workbench shows (`ovk: 'foo' …`) names
/// the flag instead (`--ovk: 'foo' …`); its kind is kept.
fn naming_the_flag(e: OvkError, key: &str) -> OvkError {
    e.reworded(|msg| match msg.strip_prefix(key) {
        Some(rest) => format!("--{}{rest}", key.replace('_', "-")),
        None => msg.to_string(),
    })
}

/// A value parsed and checked by its declaration; the message names the flag.
fn declared_value(spec: &ParamSpec, text: &str) -> Result<Value> {
    spec.parse(text).map_err(|e| naming_the_flag(e, spec.key))
}

/// One of a choice's words (`--task multiclass`); a typo names the closest word and the flag.
fn choice<C: Choice>(text: &str) -> Result<C> {
    C::parse(text).map_err(|e| naming_the_flag(e, C::KEY))
}

/// A number parsed and range-checked by its declaration; the message names the flag.
fn declared_number(spec: &ParamSpec, text: &str) -> Result<f64> {
    match declared_value(spec, text)? {
        Value::Float(x) => Ok(x),
        Value::Int(i) => Ok(i as f64),
        other => Err(OvkError::internal(format!(
            "{}: {other} is not a number",
            spec.key
        ))),
    }
}

/// A bad value that came from the config file names the file, as flags name themselves.
pub(crate) fn blame_config(e: OvkError, config: Option<&Path>, from_file: &[String]) -> OvkError {
    let (OvkError::Input { message: msg, .. }, Some(path)) = (&e, config) else {
        return e;
    };
    // The file's key as written there (`lambda:`), where the message names the flag.
    let in_file_terms = |k: &String| {
        let flag = format!("--{}", k.replace('_', "-"));
        if msg.starts_with(&format!("{k}:")) {
            Some(msg.clone())
        } else if msg.starts_with(&format!("{flag}:")) || msg.starts_with(&format!("{flag} ")) {
            Some(format!("{k}{}", &msg[flag.len()..]))
        } else {
            None
        }
    };
    match from_file.iter().find_map(in_file_terms) {
        Some(msg) => e.reworded(|_| format!("{}: {msg}", path.display())),
        None => e,
    }
}

/// Build a run configuration from option values; every value is checked here.
pub fn build_run_config(raw: &RawOptions) -> Result<RunConfig> {
    let get = |k: &str| raw.get(k).map(|s| s.as_str());
    let data = get("data")
        .ok_or_else(|| OvkError::input("missing --data PATH (the table to learn from)"))?;
    let method_text = get("method").ok_or_else(|| {
        OvkError::input(format!(
            "missing --method (one of: {})",
            MethodName::NAMES.join(", ")
        ))
    })?;
    let method_name: MethodName = choice(method_text)?;
    let method = methods::find(method_name);

    let mut dc = DataConfig::new(data);
    dc.features = get("features").map(list);
    dc.targets = get("targets").map(list);
    dc.class = get("class").map(|s| s.trim().to_string());
    dc.task = get("task").map(choice).transpose()?;
    dc.views = get("views").map(view_entries);
    if let Some(f) = get("test_fraction") {
        dc.test_fraction = declared_number(&data::options::TEST_FRACTION, f)?;
    }
    dc.test_column = get("test_column").map(|s| s.trim().to_string());
    if let Some(s) = get("seed") {
        dc.seed = parse_seed(s)?;
    }
    if let Some(s) = get("scale") {
        dc.scale = choice(s)?;
    }
    if let Some(s) = get("target_scale") {
        dc.target_scale = choice(s)?;
    }
    if let Some(s) = get("sparse") {
        dc.sparse = choice(s)?;
    }
    if let Some(s) = get("stream") {
        dc.stream = choice(s)?;
    }
    if let Some(s) = get("class_coding") {
        dc.class_coding = choice(s)?;
    }
    if let Some(s) = get("drop_missing") {
        dc.drop_missing = parse_bool("drop_missing", s)?;
    }
    if let Some(s) = get("missing") {
        let missing: Missing = choice(s)?;
        if dc.drop_missing && missing != Missing::Drop {
            return Err(OvkError::input_as(
                ErrorKind::InvalidParameter,
                format!("--drop-missing and --missing {missing} disagree: give one of them"),
            ));
        }
        dc.set_missing(missing);
    }
    if let Some(s) = get("labeled") {
        dc.labeled = Some(declared_number(&data::options::LABELED, s)?);
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
            dc.cv = Some(ovk_core::data::CvFold { folds, fold });
        }
        _ => return Err(OvkError::input("--cv-folds and --cv-fold go together")),
    }

    let mut kernel = KernelSpec::default();
    if let Some(k) = get("kernel") {
        kernel.name = choice(k)?;
    }
    if let Some(s) = get("sigma") {
        kernel.sigma = Sigma::parse(s)?;
    }
    if let Some(d) = get("degree") {
        kernel.degree = declared_number(&kernels::options::DEGREE, d)? as u32;
    }
    if let Some(c) = get("coef0") {
        kernel.coef0 = declared_number(&kernels::options::COEF0, c)?;
    }
    if let Some(r) = get("input_rank") {
        kernel.input_rank = InputRank::parse(r)?;
    }
    if let Some(l) = get("landmarks") {
        kernel.landmarks = choice(l)?;
    }
    kernel.gram = gram_files(get("gram"), get("gram_view"))?;
    kernel.gram_ids = get("gram_ids").map(|p| GramFile {
        view: None,
        path: PathBuf::from(p.trim()),
        sha256: None,
    });

    let mut params = Params::new();
    let all = method_params();
    for (key, text) in raw {
        if RUN_OPTIONS.iter().any(|o| o.key == key) {
            continue;
        }
        match method.params().iter().find(|s| s.key == key) {
            Some(spec) => params.set(key, declared_value(spec, text)?),
            None => {
                let owners = all
                    .iter()
                    .find(|(s, _)| s.key == key)
                    .map(|(_, o)| o.join(", "))
                    .unwrap_or_default();
                if owners.is_empty() {
                    return Err(OvkError::input_as(
                        ErrorKind::UnknownParameter,
                        unknown_option(key, &all_keys()),
                    ));
                }
                return Err(OvkError::input_as(
                    ErrorKind::UnknownParameter,
                    format!(
                        "--{} is not a parameter of {} (it belongs to {owners})",
                        key.replace('_', "-"),
                        method.name()
                    ),
                ));
            }
        }
    }

    let cv = get("cv")
        .map(|k| parse_num::<usize>("cv", k, "a whole number of folds ≥ 2"))
        .transpose()?;
    let select_on: SelectOn = match get("select_on") {
        None => SelectOn::default(),
        Some(s) => choice(s)?,
    };
    let config = RunConfig {
        data: dc,
        method: method_name,
        kernel,
        params,
        name: get("name").map(|s| s.to_string()),
        cv,
        select_on,
    };
    config.validate()?;
    Ok(config)
}

/// `--gram FILE` and `--gram-view NAME=FILE` (one per line or comma-separated) as Gram files.
pub fn gram_files(single: Option<&str>, views: Option<&str>) -> Result<Vec<GramFile>> {
    let mut out: Vec<GramFile> = single
        .map(|p| GramFile {
            view: None,
            path: PathBuf::from(p.trim()),
            sha256: None,
        })
        .into_iter()
        .collect();
    for entry in views.into_iter().flat_map(|v| v.lines().flat_map(list)) {
        let Some((name, path)) = entry
            .split_once('=')
            .filter(|(n, p)| !n.trim().is_empty() && !p.trim().is_empty())
        else {
            return Err(OvkError::input(format!(
                "--gram-view: '{entry}' is not NAME=FILE (a view's name, then its Gram .npy)"
            )));
        };
        if out.iter().any(|g| g.view.as_deref() == Some(name.trim())) {
            return Err(OvkError::input(format!(
                "--gram-view: view '{}' is given twice",
                name.trim()
            )));
        }
        out.push(GramFile {
            view: Some(name.trim().to_string()),
            path: PathBuf::from(path.trim()),
            sha256: None,
        });
    }
    Ok(out)
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
    spec.kind.describe()
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
        let value = match o.spec {
            _ if o.is_flag => "true | false".to_string(),
            Some(spec) if !matches!(spec.kind, ParamKind::Text) => spec.kind.describe(),
            _ => o.value_name.to_string(),
        };
        let default = o
            .default_text()
            .unwrap_or_else(|| if o.is_flag { "false" } else { "—" }.into());
        s.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            o.key,
            cell(&value),
            cell(&default),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(pairs: &[(&str, &str)]) -> RawOptions {
        let mut r: RawOptions = [("data", "t.csv"), ("method", "okl")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        r.extend(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        r
    }

    fn kind(pairs: &[(&str, &str)]) -> ErrorKind {
        build_run_config(&raw(pairs)).unwrap_err().kind()
    }

    #[test]
    fn every_refusal_has_its_kind() {
        assert_eq!(kind(&[("method", "okll")]), ErrorKind::UnknownChoice);
        assert_eq!(kind(&[("task", "multi")]), ErrorKind::UnknownChoice);
        assert_eq!(kind(&[("solver", "lbfgs")]), ErrorKind::UnknownChoice);
        assert_eq!(kind(&[("lamda", "1")]), ErrorKind::UnknownParameter);
        assert_eq!(kind(&[("gamma_a", "1")]), ErrorKind::UnknownParameter);
        assert_eq!(kind(&[("lambda", "-1")]), ErrorKind::InvalidParameter);
        assert_eq!(kind(&[("max_iter", "many")]), ErrorKind::InvalidParameter);
        assert_eq!(
            kind(&[("drop_missing", "true"), ("missing", "impute")]),
            ErrorKind::InvalidParameter
        );
    }

    #[test]
    fn a_value_from_the_config_file_keeps_its_kind_and_names_the_file() {
        let e = build_run_config(&raw(&[("scale", "standrd")])).unwrap_err();
        let e = blame_config(e, Some(Path::new("run.toml")), &["scale".into()]);
        assert_eq!(e.kind(), ErrorKind::UnknownChoice);
        assert_eq!(
            e.to_string(),
            "run.toml: scale: 'standrd' is not one of standard, none (did you mean 'standard'?)"
        );
    }

    #[test]
    fn the_missing_policy_sets_both_flags() {
        for (word, drop, impute) in [
            ("refuse", false, false),
            ("drop", true, false),
            ("impute", false, true),
        ] {
            let c = build_run_config(&raw(&[("missing", word)])).unwrap();
            assert_eq!((c.data.drop_missing, c.data.impute_missing), (drop, impute));
            assert_eq!(c.data.missing().name(), word);
        }
    }
}
