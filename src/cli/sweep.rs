//! `ovk sweep`: a grid of configurations from one TOML file (any hyperparameter may be a list
//! or a range), k-fold CV, parallel jobs, JSON lines as rows finish, a ranked table, and the
//! best configuration refitted on the whole training part and saved with the sweep inside.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use super::options::{
    all_keys, blame_config, build_run_config, method_params, read_text, unknown_option, RawOptions,
};
use super::progress::CliProgress;
use ovk_core::methods::Observer;
use ovk_core::session::{self, Store};
use ovk_core::train::sweep::{
    check_size, collect, grid_values, refit_best, run_sweep, SweepResult, MAX_CONFIGURATIONS,
    MAX_FITS,
};
use ovk_core::train::RunConfig;
use ovk_core::{OvkError, Result};

/// Keys that may hold several values in a sweep: the modelling choices. Data keys that name
/// columns (features, targets, views) keep their list meaning.
fn sweepable(key: &str) -> bool {
    matches!(
        key,
        "method"
            | "kernel"
            | "sigma"
            | "degree"
            | "coef0"
            | "input_rank"
            | "landmarks"
            | "scale"
            | "target_scale"
            | "class_coding"
    ) || method_params().iter().any(|(s, _)| s.key == key)
}

/// A sweep file: fixed options, and the swept ones with their values, in key order.
pub struct Grid {
    pub fixed: RawOptions,
    pub axes: Vec<(String, Vec<String>)>,
    pub cv: Option<usize>,
    pub jobs: Option<usize>,
}

pub fn read_grid(path: &Path) -> Result<Grid> {
    let text = read_text(path)?;
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        OvkError::input(format!("{}: {}", path.display(), e.message()))
    })?;
    let at = |msg: String| OvkError::input(format!("{}: {msg}", path.display()));
    let mut keys = all_keys();
    keys.extend(["cv", "jobs"]);
    let mut grid = Grid {
        fixed: RawOptions::new(),
        axes: Vec::new(),
        cv: None,
        jobs: None,
    };
    for (k, v) in &table {
        if !keys.contains(&k.as_str()) {
            return Err(at(unknown_option(k, &keys)));
        }
        if k == "cv" || k == "jobs" {
            let n = v
                .as_integer()
                .filter(|n| *n >= 1)
                .ok_or_else(|| at(format!("'{k}' must be a whole number ≥ 1")))?
                as usize;
            if k == "cv" {
                if n > MAX_FITS {
                    return Err(at(format!(
                        "'cv' = {n} folds is more than a sweep runs (at most {MAX_FITS} fits)"
                    )));
                }
                grid.cv = Some(n);
            } else {
                grid.jobs = Some(n);
            }
            continue;
        }
        match v {
            toml::Value::Array(items) if sweepable(k) => {
                let vals: Result<Vec<String>> =
                    items.iter().map(|i| scalar(k, i).map_err(at)).collect();
                let vals = vals?;
                if vals.is_empty() {
                    return Err(at(format!("'{k}' is an empty list")));
                }
                grid.axes.push((k.clone(), vals));
            }
            toml::Value::Table(t) if sweepable(k) => {
                grid.axes.push((k.clone(), range(k, t).map_err(at)?))
            }
            toml::Value::Array(items) => {
                let vals: Result<Vec<String>> =
                    items.iter().map(|i| scalar(k, i).map_err(at)).collect();
                grid.fixed.insert(k.clone(), vals?.join(","));
            }
            other => {
                grid.fixed.insert(k.clone(), scalar(k, other).map_err(at)?);
            }
        }
    }
    check_grid_size(&grid).map_err(at)?;
    if let Some(d) = grid.fixed.get_mut("data") {
        let p = std::path::PathBuf::from(&*d);
        if p.is_relative() && !p.exists() {
            if let Some(dir) = path.parent() {
                let beside = dir.join(&p);
                if beside.exists() {
                    *d = beside.to_str().map(String::from).ok_or_else(|| {
                        at(format!(
                            "'data' = {:?} is found beside the sweep file, in a folder whose \
                             name is not UTF-8 ({}); give the data's path from the working \
                             directory instead",
                            p,
                            beside.display()
                        ))
                    })?;
                }
            }
        }
    }
    Ok(grid)
}

/// Refuse a grid too large to run before `expand` builds it: a few ranges with a large `n`
/// multiply to more configurations than memory holds.
fn check_grid_size(grid: &Grid) -> std::result::Result<(), String> {
    let size = grid
        .axes
        .iter()
        .try_fold(1usize, |acc, (_, v)| acc.checked_mul(v.len()));
    match size {
        Some(n) if n <= MAX_CONFIGURATIONS => Ok(()),
        _ => {
            let factors: Vec<String> = grid
                .axes
                .iter()
                .map(|(k, v)| format!("{} {k}", v.len()))
                .collect();
            let total = size.map_or_else(|| format!("more than {}", usize::MAX), |n| n.to_string());
            Err(format!(
                "the grid has {total} configurations ({}); a sweep runs at most \
                 {MAX_CONFIGURATIONS} — use fewer values",
                factors.join(" × ")
            ))
        }
    }
}

fn scalar(key: &str, v: &toml::Value) -> std::result::Result<String, String> {
    match v {
        toml::Value::String(s) => Ok(s.clone()),
        toml::Value::Integer(i) => Ok(i.to_string()),
        toml::Value::Float(f) => Ok(f.to_string()),
        toml::Value::Boolean(b) => Ok(b.to_string()),
        other => Err(format!(
            "'{key}': expected a value, got a {}",
            other.type_str()
        )),
    }
}

/// `{ log = [1e-4, 1e1], n = 12 }` or `{ lin = [0, 1], n = 5 }`: n values, ends included.
fn range(key: &str, t: &toml::Table) -> std::result::Result<Vec<String>, String> {
    let usage = format!(
        "'{key}': a range is {{ log = [low, high], n = N }} or {{ lin = [low, high], n = N }} with N ≥ 2"
    );
    for k in t.keys() {
        if !["log", "lin", "n"].contains(&k.as_str()) {
            return Err(format!("{usage} (unknown field '{k}')"));
        }
    }
    let n = t
        .get("n")
        .and_then(|v| v.as_integer())
        .filter(|n| *n >= 2 && *n <= 100_000)
        .ok_or_else(|| usage.clone())? as usize;
    let (kind, ends) = match (t.get("log"), t.get("lin")) {
        (Some(e), None) => ("log", e),
        (None, Some(e)) => ("lin", e),
        _ => return Err(usage),
    };
    let ends: Vec<f64> = ends
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_float().or(v.as_integer().map(|i| i as f64)))
                .collect()
        })
        .unwrap_or_default();
    if ends.len() != 2 || !ends.iter().all(|v| v.is_finite()) {
        return Err(usage);
    }
    let (lo, hi) = (ends[0], ends[1]);
    if kind == "log" && (lo <= 0.0 || hi <= 0.0) {
        return Err(format!(
            "'{key}': a log range needs positive ends, got [{lo}, {hi}]"
        ));
    }
    Ok(grid_values(lo, hi, n, kind == "log")
        .into_iter()
        .map(|v| format!("{v}"))
        .collect())
}

/// Every combination of the axes (the first axis varies slowest).
pub fn expand(grid: &Grid) -> Vec<RawOptions> {
    let mut out = vec![grid.fixed.clone()];
    for (k, vals) in &grid.axes {
        out = out
            .into_iter()
            .flat_map(|base| {
                vals.iter().map(move |v| {
                    let mut m = base.clone();
                    m.insert(k.clone(), v.clone());
                    m
                })
            })
            .collect();
    }
    out
}

pub struct SweepArgs<'a> {
    pub config: Option<&'a Path>,
    pub cv: Option<usize>,
    pub jobs: Option<usize>,
    pub plan: bool,
    pub collect: Option<&'a Path>,
    pub sessions: Option<&'a Path>,
}

pub fn sweep(a: SweepArgs) -> Result<i32> {
    let store = Store::open(a.sessions)?;
    if let Some(dir) = a.collect {
        return collect_dir(dir, &store);
    }
    let path = a
        .config
        .ok_or_else(|| OvkError::input("ovk sweep needs --config FILE (or --collect DIR)"))?;
    let grid = read_grid(path)?;
    let raws = expand(&grid);
    // Every value comes from the sweep file: a bad one names it and its key.
    let keys: Vec<String> = raws
        .iter()
        .flat_map(|r| r.keys().cloned())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let configs: Vec<RunConfig> = raws
        .iter()
        .map(|r| build_run_config(r).map_err(|e| blame_config(e, Some(path), &keys)))
        .collect::<Result<_>>()?;
    let folds = ovk_core::train::sweep::folds_for(&configs, a.cv.or(grid.cv));
    check_size(configs.len(), folds)?;
    if a.plan {
        print_plan(&raws, folds, &store)?;
        return Ok(0);
    }
    let jobs = a.jobs.or(grid.jobs).unwrap_or(1);
    let cancel = Arc::new(AtomicBool::new(false));
    let _ = signal_hook::flag::register(signal_hook::consts::SIGINT, cancel.clone());
    let _ = signal_hook::flag::register(signal_hook::consts::SIGTERM, cancel.clone());
    let total = configs.len();
    let mut done = 0;
    let start = std::time::Instant::now();
    let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
    // A closed standard output stops the sweep like Ctrl-C, then is reported.
    let mut lost_output = None;
    let stop = cancel.clone();
    let result = run_sweep(&configs, folds, jobs, cancel, |row| {
        done += 1;
        if let Err(e) = outln!("{}", serde_json::to_string(row).unwrap_or_default()) {
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            lost_output.get_or_insert(e);
        }
        let elapsed = start.elapsed().as_secs_f64();
        let eta = elapsed / done as f64 * (total - done) as f64;
        let width = 30;
        let filled = width * done / total;
        let line = format!(
            "[{}{}] {done}/{total} configurations · {elapsed:.1}s elapsed · ETA {eta:.0}s",
            "#".repeat(filled),
            "-".repeat(width - filled)
        );
        if tty {
            err!("\r\x1b[2K{line}");
            if done == total {
                errln!();
            }
        } else {
            errln!("{line}");
        }
    })?;
    if let Some(e) = lost_output {
        return Err(e);
    }
    finish(&configs, result, &store)
}

fn finish(configs: &[RunConfig], result: SweepResult, store: &Store) -> Result<i32> {
    print_table(&result)?;
    if result.interrupted {
        errln!(
            "sweep interrupted: {} of {} configurations finished",
            result.rows.len(),
            configs.len()
        );
    }
    let Some(best) = result.best else {
        errln!("no configuration could be scored; nothing saved");
        return Ok(if result.interrupted { 130 } else { 2 });
    };
    if result.interrupted {
        // Ctrl-C means stop now: refitting the best configuration on the whole training part
        // would take as long as any fit of the sweep.
        errln!(
            "the best configuration so far is {best}; it was not refitted or saved (run it \
             with ovk run, or rerun the sweep)"
        );
        return Ok(130);
    }
    let mut progress = CliProgress::new();
    progress.note(&format!(
        "refitting the best configuration ({best}) on the whole training part"
    ));
    let outcome = refit_best(configs, &result, &mut progress);
    progress.finish();
    let outcome = outcome?;
    let dir = store.save(&outcome.record, &outcome.matrices)?;
    outln!("best configuration {best} saved as {}", dir.display())?;
    Ok(0)
}

fn print_table(result: &SweepResult) -> Result<()> {
    let ranked = result.ranked();
    let keys: Vec<String> = ranked
        .first()
        .map(|r| r.values.keys().cloned().collect())
        .unwrap_or_default();
    let metric = ranked.first().map(|r| r.metric.clone()).unwrap_or_default();
    let mut header = format!("{:>4} {:>5}", "rank", "cfg");
    for k in &keys {
        header.push_str(&format!(" {k:>12}"));
    }
    header.push_str(&format!(" {:>12} {:>10} {:>8}", metric, "sd", "seconds"));
    outln!("{header}")?;
    for (i, r) in ranked.iter().enumerate() {
        let mut line = format!("{:>4} {:>5}", i + 1, r.index);
        for k in &keys {
            line.push_str(&format!(
                " {:>12}",
                r.values.get(k).map(|s| s.as_str()).unwrap_or("-")
            ));
        }
        match &r.error {
            None => line.push_str(&format!(
                " {:>12.6} {:>10.2e} {:>8.2}",
                r.mean, r.sd, r.seconds
            )),
            Some(e) => line.push_str(&format!("  failed: {e}")),
        }
        outln!("{line}")?;
    }
    Ok(())
}

/// One self-contained `ovk run` command per configuration and fold, each one line that a POSIX
/// shell reads back as exactly these words (`shell::quote`); a value no line can carry is
/// refused before anything is printed.
fn print_plan(raws: &[RawOptions], folds: Option<usize>, store: &Store) -> Result<()> {
    let sessions = super::shell::quote_path(store.root()).ok_or_else(|| {
        unprintable_value("--sessions", store.root().as_os_str().as_encoded_bytes())
    })?;
    // Every value is checked before the first line is printed.
    let mut configs = Vec::with_capacity(raws.len());
    for raw in raws {
        let mut words = vec![b"ovk".to_vec(), b"run".to_vec()];
        for (k, v) in raw {
            if k == "name" {
                continue;
            }
            let flag = format!("--{}", k.replace('_', "-"));
            if v == "true" && k == "drop_missing" {
                words.push(flag.into_bytes());
                continue;
            }
            let value = super::shell::quote(v.as_bytes())
                .ok_or_else(|| unprintable_value(&format!("'{k}'"), v.as_bytes()))?;
            // `--targets=-x`: a value that starts with a dash is not taken for a flag.
            if v.starts_with('-') {
                words.push([flag.as_bytes(), b"=".as_slice(), value.as_slice()].concat());
            } else {
                words.extend([flag.into_bytes(), value]);
            }
        }
        configs.push(words);
    }
    for (i, words) in configs.iter().enumerate() {
        for f in 0..folds.unwrap_or(1) {
            let mut line = words.clone();
            if let Some(k) = folds {
                for w in ["--cv-folds", &k.to_string(), "--cv-fold", &f.to_string()] {
                    line.push(w.as_bytes().to_vec());
                }
            }
            line.extend([
                b"--name".to_vec(),
                format!("sweep-c{i}-f{f}").into_bytes(),
                b"--sessions".to_vec(),
                sessions.clone(),
            ]);
            let mut text = line.join(&b' ');
            text.push(b'\n');
            super::console::stdout_bytes(&text)?;
        }
    }
    Ok(())
}

/// A plan cannot print `value` (of `what`) as one word of a one-line command.
fn unprintable_value(what: &str, value: &[u8]) -> OvkError {
    let why = super::shell::unprintable(value).unwrap_or("a character no shell line carries");
    OvkError::input(format!(
        "sweep --plan: {what} holds {why} ({}); a plan prints each command as one line for a \
         shell, which cannot carry it — rename it (a column, a file), or run the sweep here \
         without --plan",
        String::from_utf8_lossy(value).escape_debug()
    ))
}

fn collect_dir(dir: &Path, store: &Store) -> Result<i32> {
    if !dir.is_dir() {
        return Err(OvkError::input(format!(
            "--collect {}: no such directory of sessions",
            dir.display()
        )));
    }
    let from = Store::open(Some(dir))?;
    let mut sessions = Vec::new();
    for l in from.list() {
        match l {
            session::Listing::Ok(s) => sessions.push(session::load(&s.path)?),
            session::Listing::Corrupt { path, reason } => {
                errln!("skipping {}: {reason}", path.display())
            }
        }
    }
    // Grid order: the plan's names say which configuration and fold each session is.
    sessions.sort_by(|a, b| a.record.name.cmp(&b.record.name));
    let (configs, result) = collect(&sessions)?;
    for r in &result.rows {
        outln!("{}", serde_json::to_string(r).unwrap_or_default())?;
    }
    finish(&configs, result, store)
}
