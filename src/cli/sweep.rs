//! `ovk sweep`: a search over configurations from one TOML file (any hyperparameter may be a
//! list or a range): the full grid, seeded random draws, or successive halving over training
//! rows (`search`, `trials`, `search_seed`, `factor`, `min_rows`); k-fold CV, parallel jobs,
//! JSON lines as rows finish, a ranked table, optionally nested CV around the whole search
//! (`--nested-cv K`), and the best configuration refitted on the whole training part and saved
//! with the sweep inside.

use std::path::Path;

use super::options::{
    all_keys, blame_config, build_run_config, method_params, read_text, unknown_option, RawOptions,
};
use super::progress::CliProgress;
use ovk_core::methods::Observer;
use ovk_core::session::{self, Store};
use ovk_core::train::search::{self, Axis, Search, Strategy};
use ovk_core::train::sweep::{
    check_size, collect, refit_best, run_sweep, SweepResult, MAX_CONFIGURATIONS, MAX_FITS,
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

/// A sweep file: fixed options, the search over the others, and the sweep's own settings.
pub struct Grid {
    pub fixed: RawOptions,
    pub search: Search,
    pub cv: Option<usize>,
    pub jobs: Option<usize>,
    pub nested_cv: Option<usize>,
}

/// The keys of a sweep file that set the sweep itself, not a run.
const SWEEP_KEYS: [&str; 8] = [
    "cv",
    "jobs",
    "search",
    "trials",
    "search_seed",
    "factor",
    "min_rows",
    "nested_cv",
];

pub fn read_grid(path: &Path) -> Result<Grid> {
    let text = read_text(path)?;
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        OvkError::input(format!("{}: {}", path.display(), e.message()))
    })?;
    let at = |msg: String| OvkError::input(format!("{}: {msg}", path.display()));
    let mut keys = all_keys();
    keys.extend(SWEEP_KEYS);
    let mut grid = Grid {
        fixed: RawOptions::new(),
        search: Search {
            axes: Vec::new(),
            strategy: Strategy::Grid,
            trials: None,
            seed: 0,
            factor: search::DEFAULT_FACTOR,
            min_rows: None,
        },
        cv: None,
        jobs: None,
        nested_cv: None,
    };
    for (k, v) in &table {
        if !keys.contains(&k.as_str()) {
            return Err(at(unknown_option(k, &keys)));
        }
        if k == "search" {
            let name = v.as_str().unwrap_or_default();
            grid.search.strategy = Strategy::ALL
                .into_iter()
                .find(|s| s.as_str() == name)
                .ok_or_else(|| {
                    at(format!(
                        "'search' = {v} is not \"grid\", \"random\" or \"halving\""
                    ))
                })?;
            continue;
        }
        if SWEEP_KEYS.contains(&k.as_str()) {
            let n = v
                .as_integer()
                .filter(|n| *n >= 0 && (*n >= 1 || k == "search_seed"))
                .ok_or_else(|| at(format!("'{k}' must be a whole number ≥ 1")))?
                as usize;
            match k.as_str() {
                "cv" if n > MAX_FITS => {
                    return Err(at(format!(
                        "'cv' = {n} folds is more than a sweep runs (at most {MAX_FITS} fits)"
                    )))
                }
                "cv" => grid.cv = Some(n),
                "jobs" => grid.jobs = Some(n),
                "trials" if n > MAX_CONFIGURATIONS => {
                    return Err(at(format!(
                        "'trials' = {n}: draw at most {MAX_CONFIGURATIONS} configurations"
                    )))
                }
                "trials" => grid.search.trials = Some(n),
                "search_seed" => grid.search.seed = n as u64,
                "factor" if n < 2 => return Err(at("'factor' must be 2 or more".into())),
                "factor" => grid.search.factor = n,
                "min_rows" => grid.search.min_rows = Some(n),
                _ => grid.nested_cv = Some(n),
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
                grid.search.axes.push((k.clone(), Axis::List(vals)));
            }
            toml::Value::Table(t) if sweepable(k) => {
                grid.search.axes.push((k.clone(), range(k, t).map_err(at)?))
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
    if grid.search.trials.is_some() {
        return Ok(()); // random draws: `trials` is the count
    }
    let len = |a: &Axis| match a {
        Axis::List(v) => v.len(),
        Axis::Range { n, .. } => n.unwrap_or(1),
    };
    let size = grid
        .search
        .axes
        .iter()
        .try_fold(1usize, |acc, (_, v)| acc.checked_mul(len(v)));
    match size {
        Some(n) if n <= MAX_CONFIGURATIONS => Ok(()),
        _ => {
            let factors: Vec<String> = grid
                .search
                .axes
                .iter()
                .map(|(k, v)| format!("{} {k}", len(v)))
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

/// `{ log = [1e-4, 1e1], n = 12 }` or `{ lin = [0, 1], n = 5 }`: n values, ends included, on
/// a grid; a random search draws from the range (`n` may then be left out). Whole-number ends
/// give whole numbers.
fn range(key: &str, t: &toml::Table) -> std::result::Result<Axis, String> {
    let usage = format!(
        "'{key}': a range is {{ log = [low, high], n = N }} or {{ lin = [low, high], n = N }} \
         with N ≥ 2 (N may be left out in a random search)"
    );
    for k in t.keys() {
        if !["log", "lin", "n"].contains(&k.as_str()) {
            return Err(format!("{usage} (unknown field '{k}')"));
        }
    }
    let n = match t.get("n") {
        None => None,
        Some(v) => Some(
            v.as_integer()
                .filter(|n| *n >= 2 && *n <= 100_000)
                .ok_or_else(|| usage.clone())? as usize,
        ),
    };
    let (kind, ends) = match (t.get("log"), t.get("lin")) {
        (Some(e), None) => ("log", e),
        (None, Some(e)) => ("lin", e),
        _ => return Err(usage),
    };
    let items = ends.as_array().cloned().unwrap_or_default();
    let integer = !items.is_empty() && items.iter().all(|v| v.is_integer());
    let ends: Vec<f64> = items
        .iter()
        .filter_map(|v| v.as_float().or(v.as_integer().map(|i| i as f64)))
        .collect();
    if ends.len() != 2 || !ends.iter().all(|v| v.is_finite()) {
        return Err(usage);
    }
    let (lo, hi) = (ends[0], ends[1]);
    if kind == "log" && (lo <= 0.0 || hi <= 0.0) {
        return Err(format!(
            "'{key}': a log range needs positive ends, got [{lo}, {hi}]"
        ));
    }
    Ok(Axis::Range {
        lo,
        hi,
        log: kind == "log",
        n,
        integer,
    })
}

/// The configurations the search tries, as option values: the fixed ones with each
/// candidate's settings.
pub fn expand(grid: &Grid) -> Result<Vec<RawOptions>> {
    Ok(grid
        .search
        .candidates()?
        .into_iter()
        .map(|c| {
            let mut m = grid.fixed.clone();
            m.extend(c);
            m
        })
        .collect())
}

pub struct SweepArgs<'a> {
    pub config: Option<&'a Path>,
    pub cv: Option<usize>,
    pub nested_cv: Option<usize>,
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
    let raws = expand(&grid).map_err(|e| blame_config(e, Some(path), &[]))?;
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
    let strategy = grid.search.strategy;
    let mut folds = ovk_core::train::sweep::folds_for(&configs, a.cv.or(grid.cv));
    if strategy == Strategy::Halving {
        // each rung compares configurations by cross-validation on its rows
        folds = folds.or(Some(ovk_core::train::sweep::DEFAULT_FOLDS));
    }
    check_size(configs.len(), folds)?;
    let nested_cv = a.nested_cv.or(grid.nested_cv);
    if a.plan {
        if strategy == Strategy::Halving || nested_cv.is_some() {
            return Err(OvkError::input(
                "--plan writes one command per configuration and fold; successive halving and \
                 nested CV decide each step from the last, so run them here",
            ));
        }
        print_plan(&raws, folds, &store)?;
        return Ok(0);
    }
    let jobs = a.jobs.or(grid.jobs).unwrap_or(1);
    let cancel = super::signals::flag();
    let labels = ovk_core::train::sweep::varying(
        &configs
            .iter()
            .map(ovk_core::train::sweep::settings)
            .collect::<Vec<_>>(),
    );
    let nested = match nested_cv {
        None => None,
        Some(k) => {
            let inner = folds.unwrap_or(ovk_core::train::sweep::DEFAULT_FOLDS);
            errln!("nested {k}-fold cross-validation of the whole search ({inner}-fold inner CV)");
            let n = search::run_nested(
                &configs,
                &labels,
                &grid.search,
                k,
                inner,
                jobs,
                cancel.clone(),
                |f| {
                    let cells: Vec<String> = f
                        .metrics
                        .iter()
                        .map(|(k, v)| format!("{k} {v:.4}"))
                        .collect();
                    let chosen: Vec<String> = f
                        .chosen
                        .iter()
                        .map(|(k, v)| format!("{k}={}", short_number(v)))
                        .collect();
                    errln!(
                        "  outer fold {}: chose {} → {}",
                        f.fold + 1,
                        chosen.join(" "),
                        cells.join("  ")
                    );
                },
            );
            let n = match n {
                Err(OvkError::Cancelled) => {
                    errln!("sweep interrupted during the nested cross-validation");
                    return Ok(130);
                }
                other => other?,
            };
            outln!("{}", serde_json::json!({ "nested_cv": &n }))?;
            errln!("{}", search::describe_nested(&n));
            Some(n)
        }
    };
    // a halving scores the survivors again at each rung
    let total = match strategy {
        Strategy::Halving => search::rung_sizes(configs.len(), grid.search.factor)
            .iter()
            .sum(),
        _ => configs.len(),
    };
    let noun = match strategy {
        Strategy::Halving => "evaluations (configuration × rung)",
        _ => "configurations",
    };
    for w in ovk_core::train::width::sweep_width_warnings(&configs) {
        errln!("  warning: {w}");
    }
    let mut done = 0;
    let start = std::time::Instant::now();
    let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
    // A closed standard output stops the sweep like Ctrl-C, then is reported.
    let mut lost_output = None;
    let stop = cancel.clone();
    let on_row = |row: &ovk_core::train::sweep::SweepRow| {
        done += 1;
        if let Err(e) = outln!("{}", serde_json::to_string(row).unwrap_or_default()) {
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            lost_output.get_or_insert(e);
        }
        let elapsed = start.elapsed().as_secs_f64();
        let eta = elapsed / done as f64 * total.saturating_sub(done) as f64;
        let width = 30;
        let filled = (width * done / total).min(width);
        let line = format!(
            "[{}{}] {done}/{total} {noun} · {elapsed:.1}s elapsed · ETA {eta:.0}s",
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
    };
    let result = match strategy {
        Strategy::Halving => search::run_halving(
            &configs,
            &grid.search,
            folds.unwrap_or(ovk_core::train::sweep::DEFAULT_FOLDS),
            jobs,
            cancel,
            on_row,
        )?,
        _ => run_sweep(&configs, folds, jobs, cancel, on_row)?,
    };
    if let Some(e) = lost_output {
        return Err(e);
    }
    finish(&configs, result, &store, nested)
}

fn finish(
    configs: &[RunConfig],
    result: SweepResult,
    store: &Store,
    nested: Option<search::Nested>,
) -> Result<i32> {
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
    let mut outcome = outcome?;
    if let Some(n) = nested {
        let r = &mut outcome.record;
        r.notes.push(search::describe_nested(&n));
        if let Ok(v) = serde_json::to_value(&n) {
            r.details.insert("nested_cv".into(), v);
        }
    }
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
    let halving = ranked.iter().any(|r| r.rung.is_some());
    let mut header = format!("{:>4} {:>5}", "rank", "cfg");
    if halving {
        header.push_str(&format!(" {:>4} {:>7}", "rung", "rows"));
    }
    for k in &keys {
        header.push_str(&format!(" {k:>12}"));
    }
    header.push_str(&format!(" {:>12} {:>10} {:>8}", metric, "sd", "seconds"));
    outln!("{header}")?;
    for (i, r) in ranked.iter().enumerate() {
        let mut line = format!("{:>4} {:>5}", i + 1, r.index);
        if halving {
            let rows = r.train_rows.map_or_else(|| "-".into(), |n| n.to_string());
            line.push_str(&format!(" {:>4} {rows:>7}", r.rung.unwrap_or(0)));
        }
        for k in &keys {
            line.push_str(&format!(
                " {:>12}",
                r.values
                    .get(k)
                    .map_or_else(|| "-".to_string(), |v| short_number(v))
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

/// A drawn or gridded number in 5 significant digits (`0.0023708`, `1.3310e-4`); other text
/// as it is.
fn short_number(v: &str) -> String {
    match v.parse::<f64>() {
        Ok(x) if x.fract() != 0.0 && x.is_finite() => {
            if x.abs() >= 1e-3 && x.abs() < 1e5 {
                let digits = 4usize.saturating_sub(x.abs().log10().floor().max(0.0) as usize);
                format!("{x:.digits$}")
            } else {
                format!("{x:.4e}")
            }
        }
        _ => v.to_string(),
    }
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
    finish(&configs, result, store, None)
}
