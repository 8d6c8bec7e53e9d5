//! Headless commands — the second face of the engine: `ovk run` (one fit), `ovk sessions`
//! (the store), `ovk replay` (print, verify, or open a session in the workbench), `ovk sweep`
//! (grids and cross-validation), `ovk export` (CSV out of a session), `ovk gen` (synthetic
//! data), `ovk bench` (the scaling ledger), `ovk paper` (the papers' experiments) and the hidden `ovk docs` (generated references);
//! with no subcommand, `ovk [PATH]` opens the workbench. Exit status: 0 success, 2 bad input,
//! 1 internal failure, 130 cancelled.

#[macro_use]
mod console;
mod bench;
mod bench_lowrank;
pub(crate) mod compare;
mod completions;
mod export;
mod options;
mod paper;
mod predict;
mod progress;
mod replay;
mod run;
mod sessions;
mod shell;
mod signals;
mod sweep;

use std::path::PathBuf;

use clap::{
    Arg, ArgAction, ArgMatches, Command, CommandFactory, FromArgMatches, Parser, Subcommand,
};

pub use options::{build_run_config, config_reference, read_config, RawOptions};
pub use sweep::{expand, read_grid, Grid};

use ovk_core::{OvkError, Result};

#[derive(Parser, Debug)]
#[command(
    name = "ovk",
    version,
    about = "A terminal workbench for learning with operator-valued (matrix-valued) kernels",
    after_help = "Headless: `ovk run --help` lists every option of every method."
)]
struct Cli {
    /// Session store (default: $OVK_SESSIONS, else the per-user data directory)
    #[arg(long, global = true, value_name = "DIR")]
    sessions: Option<PathBuf>,
    /// Open the workbench on this file or folder (default: the bundled datasets/)
    #[arg(value_name = "PATH")]
    path: Option<PathBuf>,
    #[command(subcommand)]
    command: Option<Cmd>,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Fit one method on one dataset and save the session
    Run(RunArgs),
    /// List saved sessions, newest first
    Sessions(SessionsArgs),
    /// Show a saved session (--print), or re-run it and compare (--verify)
    Replay(ReplayArgs),
    /// Sweep hyperparameters (lists and ranges in a TOML file) with k-fold cross-validation
    Sweep(SweepCmd),
    /// Apply a session's model to new rows: `ovk predict SESSION --data FILE [--out FILE|-]`
    Predict(PredictArgs),
    /// Compare saved runs side by side: metrics (best marked), each output's metric, paired
    /// tests over shared cross-validation folds
    Compare(CompareArgs),
    /// Export a session's predictions, a learned matrix, or its trace: CSV, TSV or Parquet by the file's extension
    Export(ExportCmd),
    /// Generate synthetic data: `ovk gen gp-mix --outputs M --seed S --out FILE`
    Gen(GenCmd),
    /// Benchmarks: `ovk bench scaling` times every method against one eigendecomposition of K
    Bench(bench::BenchCmd),
    /// Reproduce a paper's experiment: `ovk paper NAME` (`--list` names them, `--quick` for tests)
    Paper(paper::PaperArgs),
    /// Print a shell completion script: `ovk completions bash > ~/.local/share/bash-completion/completions/ovk`
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff): `ovk man > ~/.local/share/man/man1/ovk.1`
    Man,
    /// Print generated documentation on standard output (`ovk docs config > docs/config.md` regenerates that file)
    #[command(hide = true)]
    Docs { topic: String },
    /// The workbench's fit process: one job (JSON) on stdin, its messages as JSON lines on
    /// stdout, the run recorded in the job's store; stdin closing cancels it
    #[command(hide = true, name = ovk_core::train::worker::WORKER_COMMAND)]
    FitWorker,
}

#[derive(clap::Args, Debug)]
struct RunArgs {
    /// Read options from a TOML file (same keys as the flags, with '_'); flags override it
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Print exactly one JSON object on stdout (session, method, iterations, converged,
    /// objective, metrics, baseline, fit_seconds)
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args, Debug)]
struct CompareArgs {
    /// Two or more sessions: directories, or ids or names in the store
    #[arg(required = true, value_name = "SESSION")]
    runs: Vec<String>,
    /// Print one JSON object with the same numbers
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args, Debug)]
struct SessionsArgs {
    /// Print one JSON array (id, name, created, dataset, method, metric, value, kept, status,
    /// optimistic, split, folds, cv, path)
    #[arg(long)]
    json: bool,
    /// Delete the runs not kept (fits the workbench recorded by itself, cancelled runs)
    #[arg(long)]
    prune_unkept: bool,
    /// With --prune-unkept: only those created at least this long ago (30m, 12h, 7d, 2w)
    #[arg(long, value_name = "AGE", requires = "prune_unkept")]
    older_than: Option<String>,
}

#[derive(clap::Args, Debug)]
struct PredictArgs {
    /// A session directory, or an id or name in the store
    session: String,
    /// The rows to predict: CSV, TSV, Parquet, ARFF or LIBSVM with the trained feature columns (by name; a sparse model reads the file's sparse block)
    #[arg(long, value_name = "FILE")]
    data: PathBuf,
    /// Where to write the predictions: .csv, .tsv or .parquet, or - for standard output
    #[arg(long, value_name = "FILE", default_value = "-")]
    out: PathBuf,
    /// Replace --out if it exists (never the session store, the session or its data)
    #[arg(long)]
    force: bool,
    /// Predict and write N rows at a time, so the whole result is never in memory (default:
    /// all at once when that fits, else the most rows that fit, and a note says so)
    #[arg(long, value_name = "N")]
    batch_rows: Option<usize>,
    /// Print one JSON object (rows, the metrics when FILE holds the model's outputs, the file
    /// written) instead of the CSV; predictions are then written only with --out FILE
    #[arg(long)]
    json: bool,
    /// A precomputed-kernel session: the kernel between the rows of --data and the session's
    /// training rows, as .npy (n_new × n_train, columns in the order of split.train)
    #[arg(long, value_name = "FILE")]
    gram: Option<String>,
    /// A precomputed multi-view session: one new-rows Gram per view (repeat the flag)
    #[arg(long, value_name = "NAME=FILE")]
    gram_view: Vec<String>,
}

#[derive(clap::Args, Debug)]
struct ReplayArgs {
    /// A session directory, or an id or name in the store
    session: String,
    /// Print the summary and trace (no terminal UI)
    #[arg(long)]
    print: bool,
    /// Re-run the fit from the saved configuration and compare metrics and matrices
    #[arg(long)]
    verify: bool,
    /// With --verify: the session's data file, moved or copied (its SHA-256 must match)
    #[arg(long, value_name = "FILE")]
    data: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
struct SweepCmd {
    /// The sweep file: `ovk run` keys; any hyperparameter, and input_rank, landmarks, scale,
    /// target_scale and class_coding, may be a list (`kernel = ["gaussian", "laplacian"]`) or a
    /// range (`lambda = { log = [1e-4, 1e1], n = 12 }`)
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// k-fold cross-validation on the training part (default 3; with select_on = "test" in the
    /// sweep file and no --cv, the test part scores the configurations, the papers' protocol)
    #[arg(long, value_name = "K")]
    cv: Option<usize>,
    /// Nested cross-validation: K outer folds around the whole search (an unbiased estimate of
    /// the tuned procedure), before the search on all training rows
    #[arg(long, value_name = "K")]
    nested_cv: Option<usize>,
    /// Fits to run at once
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Print one self-contained `ovk run` command per configuration and fold, and exit
    #[arg(long)]
    plan: bool,
    /// Gather sessions written by `--plan` commands in DIR into the sweep table
    #[arg(long, value_name = "DIR")]
    collect: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
struct GenCmd {
    /// What to generate: gp-mix (m outputs mixed from 50 latent Gaussian-process paths on 200
    /// grid points in [-1, 1], noise at SNR 1:1 — Dinuzzo & Fukumizu's experiment), written as
    /// columns x, y0 … y{m-1}
    kind: String,
    /// Number of outputs m
    #[arg(long, default_value_t = 200)]
    outputs: usize,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// The file to write, in the format its extension names (.csv, .tsv, .parquet): column x,
    /// then y0 … y{m-1}; a sidecar `<stem>.toml` beside it names those roles. `-` is standard
    /// output (CSV, no sidecar)
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Replace FILE if it exists
    #[arg(long)]
    force: bool,
}

#[derive(clap::Args, Debug)]
struct ExportCmd {
    /// A session directory, or an id or name in the store
    session: String,
    /// Test predictions: row index, true and predicted values per output (- for stdout)
    #[arg(long, value_name = "FILE")]
    predictions: Option<PathBuf>,
    /// A learned matrix by name (e.g. output_kernel), then the CSV file (- for stdout)
    #[arg(long, num_args = 2, value_names = ["NAME", "FILE"])]
    matrix: Option<Vec<String>>,
    /// The convergence trace (- for stdout)
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// A figure, SVG or PNG by the file's extension: a matrix by name (output_kernel, metric_a,
    /// …) as a heatmap, trace, lambda_path, or sweep (the CV curve or σ × λ heatmap)
    #[arg(long, num_args = 2, value_names = ["NAME", "FILE"])]
    figure: Option<Vec<String>>,
    /// A heatmap's order of the outputs: file, or clustered (related outputs side by side)
    #[arg(long, value_name = "ORDER", default_value = "file", value_parser = ["file", "clustered"])]
    order: String,
    /// A heatmap of L_ij / √(L_ii L_jj) instead of the raw matrix
    #[arg(long)]
    correlation: bool,
    /// Replace output files that exist (never the session store or the session's data)
    #[arg(long)]
    force: bool,
}

/// `ovk run`'s flags for every option and every method parameter, from the declarations.
fn run_option_args() -> Vec<Arg> {
    let mut args = Vec::new();
    for o in options::RUN_OPTIONS {
        let mut a = Arg::new(o.key)
            .long(o.key.replace('_', "-"))
            .help(o.help_text());
        if o.is_flag {
            // `--drop-missing` alone, or `--drop-missing false`.
            a = a
                .value_name("BOOL")
                .num_args(0..=1)
                .require_equals(false)
                .default_missing_value("true")
                .action(ArgAction::Set);
        } else if o.key == "gram_view" {
            a = a.value_name(o.value_name).action(ArgAction::Append);
        } else if o.key == "views" {
            // `--view q=q1..q7 --view dq=dq1..dq7`, or `--views fou,fac`.
            a = a
                .value_name(o.value_name)
                .visible_alias("view")
                .action(ArgAction::Append);
        } else {
            a = a
                .value_name(o.value_name)
                .action(ArgAction::Set)
                .allow_negative_numbers(true);
            if let Some(d) = o.default_text() {
                a = a.help(format!("{} [default: {d}]", o.help_text()));
            }
        }
        args.push(a);
    }
    for (spec, owners) in options::method_params() {
        // A key several methods share may have a different default in each.
        let defaults: Vec<(String, String)> = owners
            .iter()
            .filter_map(|name| {
                let m = ovk_core::methods::find_named(name).ok()?;
                let s = m.params().iter().find(|s| s.key == spec.key)?;
                Some((name.to_string(), s.default_value()?.to_string()))
            })
            .collect();
        let default = match defaults.first() {
            None => String::new(),
            Some((_, d)) if defaults.iter().all(|(_, e)| e == d) => format!(" [default: {d}]"),
            Some(_) => {
                let each: Vec<String> = defaults.iter().map(|(m, d)| format!("{m} {d}")).collect();
                format!(" [default: {}]", each.join(", "))
            }
        };
        let help = format!(
            "{} — {} ({}){default}",
            spec.help,
            options::describe_kind(&spec),
            owners.join(", ")
        );
        let mut a = Arg::new(spec.key)
            .long(spec.flag())
            .value_name(spec.unit_or_value())
            .help(help)
            .help_heading("Method parameters")
            .action(ArgAction::Set)
            .allow_negative_numbers(true);
        if matches!(spec.kind, ovk_core::methods::ParamKind::Bool) {
            // A bare `--fixed-metric` means `--fixed-metric true`.
            a = a.num_args(0..=1).default_missing_value("true");
        }
        args.push(a);
    }
    args
}

fn command() -> Command {
    let methods: Vec<String> = ovk_core::methods::registry()
        .iter()
        .map(|m| format!("  {:<12} {}", m.name(), m.summary()))
        .collect();
    Cli::command().mut_subcommand("run", |c| {
        c.args(run_option_args())
            .after_help(format!("Methods:\n{}", methods.join("\n")))
    })
}

/// Flag values the user typed on the command line (not defaults), keyed like config keys.
fn given_options(m: &ArgMatches) -> RawOptions {
    let mut raw = RawOptions::new();
    for o in options::RUN_OPTIONS {
        if let Some(v) = m.get_many::<String>(o.key) {
            let v: Vec<&str> = v.map(String::as_str).collect();
            raw.insert(o.key.to_string(), v.join("\n"));
        }
    }
    for (spec, _) in options::method_params() {
        if let Some(v) = m.get_one::<String>(spec.key) {
            raw.insert(spec.key.to_string(), v.clone());
        }
    }
    raw
}

/// Parse the command line, run, and return the process exit status.
/// A workbench PATH that does not exist but is close to a command's name (`ovk sessionz`).
fn mistyped_command(path: &std::path::Path) -> Option<String> {
    let word = path
        .to_str()
        .filter(|w| !path.exists() && !w.contains(['/', '.']))?;
    let cmd = command();
    let names: Vec<&str> = cmd.get_subcommands().map(|c| c.get_name()).collect();
    let near = ovk_core::util::text::nearest(word, &names)?;
    Some(format!(
        "`{word}` is neither a file or folder nor a command; did you mean `ovk {near}`?"
    ))
}

pub fn main() -> i32 {
    ovk_core::kernels::fit_allocator_to_limits();
    ovk_core::linalg::configure_parallelism();
    let matches = match command().try_get_matches() {
        Ok(m) => m,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => 0,
                _ => 2,
            };
        }
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return 2;
        }
    };
    if let (Some(path), Some(cmd)) = (&cli.path, matches.subcommand_name()) {
        errln!(
            "ovk: `{}` comes before the command `{cmd}`: a path alone opens the workbench; a \
             command takes its files as options (ovk {cmd} --help)",
            path.display(),
        );
        return 2;
    }
    if let Some(hint) = cli.path.as_deref().and_then(mistyped_command) {
        errln!("ovk: {hint}");
        return 2;
    }
    // run, sweep and paper stop their fits cleanly; the workbench restores the terminal
    // first. Every other command is ended by the shared watcher.
    let stops_itself = match &cli.command {
        Some(Cmd::Run(_) | Cmd::Sweep(_) | Cmd::Paper(_)) | None => true,
        Some(Cmd::Replay(a)) => !a.print && !a.verify,
        _ => false,
    };
    if !stops_itself {
        signals::exit_on_signal();
    }
    let result = match &cli.command {
        Some(Cmd::Run(args)) => {
            let sub = matches.subcommand_matches("run").expect("run matched");
            run::run(
                args.config.as_deref(),
                args.json,
                given_options(sub),
                cli.sessions.as_deref(),
            )
        }
        Some(Cmd::Sessions(a)) if a.prune_unkept => {
            sessions::prune(cli.sessions.as_deref(), a.older_than.as_deref(), a.json)
        }
        Some(Cmd::Sessions(a)) => sessions::list(cli.sessions.as_deref(), a.json),
        Some(Cmd::Replay(a)) => replay::replay(replay::ReplayArgs {
            session: &a.session,
            print: a.print,
            verify: a.verify,
            data: a.data.as_deref(),
            sessions: cli.sessions.as_deref(),
        }),
        Some(Cmd::Predict(a)) => options::gram_files(
            a.gram.as_deref(),
            Some(a.gram_view.join("\n"))
                .filter(|v| !v.is_empty())
                .as_deref(),
        )
        .and_then(|grams| {
            predict::predict(predict::PredictRequest {
                session: &a.session,
                data: &a.data,
                out: &a.out,
                force: a.force,
                json: a.json,
                sessions: cli.sessions.as_deref(),
                batch_rows: a.batch_rows,
                grams,
            })
        }),
        Some(Cmd::Sweep(a)) => sweep::sweep(sweep::SweepArgs {
            config: a.config.as_deref(),
            cv: a.cv,
            nested_cv: a.nested_cv,
            jobs: a.jobs,
            plan: a.plan,
            collect: a.collect.as_deref(),
            sessions: cli.sessions.as_deref(),
        }),
        Some(Cmd::Compare(a)) => compare::compare(&a.runs, a.json, cli.sessions.as_deref()),
        Some(Cmd::Export(a)) => {
            let matrix = a
                .matrix
                .as_ref()
                .map(|v| (v[0].as_str(), std::path::Path::new(&v[1])));
            export::export(export::ExportArgs {
                session: &a.session,
                predictions: a.predictions.as_deref(),
                matrix,
                trace: a.trace.as_deref(),
                figure: a.figure.as_ref().map(|v| {
                    let order = match a.order.as_str() {
                        "clustered" => crate::figure::Order::Clustered,
                        _ => crate::figure::Order::File,
                    };
                    (
                        crate::figure::Figure::named(&v[0], order, a.correlation),
                        std::path::Path::new(&v[1]),
                    )
                }),
                sessions: cli.sessions.as_deref(),
                force: a.force,
            })
        }
        Some(Cmd::Gen(g)) => generate(g, cli.sessions.as_deref()),
        Some(Cmd::Bench(b)) => bench::bench(b, cli.sessions.as_deref()),
        Some(Cmd::Paper(a)) => paper::paper(a, cli.sessions.as_deref()),
        Some(Cmd::Docs { topic }) => docs(topic),
        Some(Cmd::Completions { shell }) => completions::completions(*shell),
        Some(Cmd::Man) => completions::man_page(),
        Some(Cmd::FitWorker) => Ok(ovk_core::train::worker::serve(
            std::io::BufReader::new(std::io::stdin()),
            std::io::stdout(),
        )),
        None => crate::tui::run_app(cli.path.clone(), cli.sessions.clone()).map(|_| 0),
    };
    match result {
        // a signal that came as the command finished: its work is whole, but the caller
        // asked it to stop, so the status says so
        Ok(0) if signals::signalled() => {
            errln!("ovk: interrupted as it finished; what it wrote is complete and kept");
            130
        }
        Ok(code) => code,
        Err(e) => {
            errln!("ovk: {e}");
            e.exit_code()
        }
    }
}

fn generate(g: &GenCmd, sessions: Option<&std::path::Path>) -> Result<i32> {
    if g.kind != "gp-mix" {
        return Err(OvkError::input(format!(
            "unknown generator '{}' (try: gp-mix)",
            g.kind
        )));
    }
    if g.outputs == 0 {
        return Err(OvkError::input("--outputs must be at least 1"));
    }
    // gp_mix holds the 50 latent paths' weights and three GRID×m matrices.
    ovk_core::data::gen_size::check_table(
        "the grid",
        ovk_core::data::gpmix::GRID + ovk_core::data::gpmix::LATENT,
        "--outputs",
        g.outputs,
    )?;
    use ovk_core::data::{gpmix, output_format, sidecar_for, sidecar_path};
    use ovk_core::session::output;
    let format = output_format(&g.out)?;
    let out = output::plan(
        &g.out,
        &ovk_core::session::OutputRules::outside_store(g.force, sessions)?,
    )?;
    // A sidecar goes beside a regular file only; one `gen` wrote may be replaced, the user's not.
    let side = match (out.is_file(), sidecar_path(&g.out)) {
        (true, Some(path)) => {
            let ours = match sidecar_for(&g.out) {
                Ok(None) => false,
                Ok(Some(s)) if gpmix::is_generated_sidecar(&s.source) => true,
                Ok(Some(_)) | Err(_) => {
                    return Err(OvkError::input(format!(
                        "{}: a sidecar that ovk gen did not write is already there; choose \
                         another --out name",
                        path.display()
                    )))
                }
            };
            Some(output::plan(
                &path,
                &ovk_core::session::OutputRules::outside_store(ours, sessions)?,
            )?)
        }
        _ => None,
    };
    let (x, y) = gpmix::gp_mix(g.outputs, g.seed);
    let columns = gpmix::columns(&x, &y);
    out.write_with(|w| ovk_core::data::write_table(w, format, &columns))?;
    drop(columns);
    if let Some(side) = &side {
        side.write(gpmix::sidecar_text(g.outputs, g.seed)?.as_bytes())?;
    }
    errln!(
        "wrote {}{} ({} rows, {} outputs)",
        g.out.display(),
        if side.is_some() {
            " and its sidecar"
        } else {
            ""
        },
        x.nrows(),
        y.ncols()
    );
    Ok(0)
}

fn docs(topic: &str) -> Result<i32> {
    match topic {
        "config" => {
            out!("{}", config_reference())?;
            Ok(0)
        }
        other => Err(OvkError::input(format!(
            "no documentation topic '{other}' (try: config)"
        ))),
    }
}
