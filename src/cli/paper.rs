//! `ovk paper NAME`: one of the papers' experiments end to end (engine: `train::papers`),
//! printed as a table beside the paper's figures; `ovk paper --list` names them.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use ovk_core::methods::Observer;
use ovk_core::session::Store;
use ovk_core::{OvkError, Result};
use ovk_lab::papers::{self, Stat, Table, EXPERIMENTS};

#[derive(clap::Args, Debug)]
pub struct PaperArgs {
    /// The experiment (see --list)
    name: Option<String>,
    /// List the experiments and exit
    #[arg(long)]
    list: bool,
    /// A reduced protocol that runs in seconds (for tests), not the paper's
    #[arg(long)]
    quick: bool,
    /// A large data set: the file, or a folder holding it (default: $OVK_SHARED_DATA, else
    /// ../shared/datasets)
    #[arg(long, value_name = "PATH")]
    data: Option<std::path::PathBuf>,
}

/// One line per fit on stderr; Ctrl-C cancels between and inside fits.
struct Progress {
    cancel: Arc<AtomicBool>,
}

impl Observer for Progress {
    fn note(&mut self, msg: &str) {
        if msg.starts_with("fit ") {
            errln!("  {msg}");
        }
    }
    fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}

pub fn paper(a: &PaperArgs, sessions: Option<&Path>) -> Result<i32> {
    if a.list {
        for e in EXPERIMENTS {
            outln!("{:<16} {}\n{:<16} {}", e.name, e.summary, "", e.source)?;
        }
        return Ok(0);
    }
    let Some(name) = &a.name else {
        return Err(OvkError::input(
            "ovk paper: name an experiment (`ovk paper --list` shows them)",
        ));
    };
    let exp = papers::find(name)?;
    if let Some(d) = &a.data {
        if !d.exists() {
            return Err(OvkError::input(format!(
                "--data {}: no such file or folder",
                d.display()
            )));
        }
    }
    let store = Store::open(sessions)?;
    let cancel = super::signals::flag();
    watchdog(cancel.clone());
    let mut obs = Progress { cancel };
    errln!("{} — {}", exp.name, exp.source);
    let table = papers::run(exp, a.quick, a.data.clone(), &store, &mut obs)?;
    out!("{}", render(&table))?;
    Ok(0)
}

/// A fit that does not notice Ctrl-C within a second (inside one long decomposition) is ended
/// with status 130, as `ovk run` does: a cancelled fit saves nothing and a save in progress is
/// atomic, so nothing is left half-written.
fn watchdog(flag: Arc<AtomicBool>) {
    let _ = std::thread::Builder::new()
        .name("ovk-paper-watchdog".into())
        .spawn(move || {
            super::signals::wait_for_signal(&flag);
            std::thread::sleep(std::time::Duration::from_millis(800));
            super::signals::abandon_and_exit("cancelled");
        });
}

fn cell(s: Option<Stat>) -> String {
    match s {
        None => "—".into(),
        Some(Stat { mean, sd: None }) => format!("{mean:.4}"),
        Some(Stat { mean, sd: Some(sd) }) => format!("{mean:.4} ± {sd:.4}"),
    }
}

/// The table as Markdown (docs/papers.md takes it as printed).
pub fn render(t: &Table) -> String {
    let mut out = format!(
        "\n### {}\n\nFigures: {}. Baseline: {}.\n\n",
        t.experiment, t.metric, t.baseline
    );
    out.push_str("| configuration | paper | ours | baseline |\n|---|---|---|---|\n");
    for r in &t.rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            r.label,
            r.paper.map_or("—".into(), |p| format!("{p}")),
            cell(Some(r.ours)),
            cell(r.baseline)
        ));
    }
    out.push('\n');
    for n in &t.notes {
        out.push_str(&format!("- {n}\n"));
    }
    let first = t.sessions.first().map_or("", |s| s.as_str());
    let last = t.sessions.last().map_or("", |s| s.as_str());
    out.push_str(&format!(
        "- Wall time {:.1} s; {} sessions saved ({first} … {last}).\n",
        t.seconds,
        t.sessions.len()
    ));
    out
}
