//! `e` on a chart or a heatmap: the figure `ovk export --figure` draws (src/figure) of the run
//! shown — the sweep's scores or the convergence trace in Charts, the selected matrix in
//! Matrices as it is read there (correlations, clustered order) — to a file the user confirms,
//! never over an existing one without asking.

use std::path::PathBuf;

use super::super::effect::Effect;
use super::super::state::{Pane, Prompt, PromptKind, State};
use crate::figure::{Figure, Order};

/// The figure of what Charts or Matrices shows and the recorded session it is drawn from;
/// `None` where a figure does not apply (the CSV export stands).
fn shown(s: &State) -> Option<(PathBuf, Figure, String)> {
    if s.is_running() {
        return None;
    }
    let f = s.result.as_ref()?;
    let dir = f.saved.clone()?;
    let (figure, what) = match s.pane {
        Pane::Charts => {
            let runs = &s.sessions.runs;
            if runs.chart_marked && !runs.marked.is_empty() {
                return None;
            }
            if f.outcome.record.details.contains_key("sweep") {
                (Figure::Sweep, "sweep".to_string())
            } else {
                (Figure::Trace, "trace".to_string())
            }
        }
        Pane::Matrices => {
            let (name, _) = f.outcome.matrices.get(s.matrices.selected)?;
            let order = if s.matrices.clustered {
                Order::Clustered
            } else {
                Order::File
            };
            let figure = Figure::Matrix {
                name: name.clone(),
                order,
                correlation: s.matrices.correlation,
            };
            (figure, name.clone())
        }
        _ => return None,
    };
    Some((dir, figure, what))
}

/// `e` in Charts or Matrices: ask where to draw the figure. `None`: no figure here.
pub(super) fn prompt(s: &mut State) -> Option<Vec<Effect>> {
    let (session, figure, what) = shown(s)?;
    let name = s.result.as_ref()?.outcome.record.name.clone();
    let stem = super::super::export::file_stem(&format!("ovk-{name}-{what}"));
    s.prompt = Some(Prompt::new(
        PromptKind::Figure { session, figure },
        format!("{stem}.svg"),
    ));
    Some(vec![])
}

/// Enter at the figure prompt: draw it (a .csv path writes the data, as `e` elsewhere).
pub(super) fn submit(s: &mut State, session: PathBuf, figure: Figure, text: &str) -> Vec<Effect> {
    let path = PathBuf::from(text.trim());
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("svg" | "png") => {
            s.status = format!("drawing {}…", path.display());
            vec![Effect::ExportFigure {
                session,
                figure,
                path,
                overwrite: false,
            }]
        }
        Some("csv") => super::results::export(s),
        _ => {
            s.status = format!(
                "{}: a figure is .svg or .png (the data: .csv)",
                path.display()
            );
            s.prompt = Some(Prompt::new(
                PromptKind::Figure { session, figure },
                text.to_string(),
            ));
            vec![]
        }
    }
}

/// The file is there: ask.
pub(super) fn exists(s: &mut State, session: PathBuf, figure: Figure, path: PathBuf) {
    s.status = format!("{} exists", path.display());
    s.prompt = Some(Prompt::new(
        PromptKind::ConfirmOverwrite {
            session,
            figure,
            path,
        },
        "",
    ));
}

/// y at the overwrite question: draw over it; anything else keeps the file.
pub(super) fn overwrite(
    s: &mut State,
    session: PathBuf,
    figure: Figure,
    path: PathBuf,
    answer: &str,
) -> Vec<Effect> {
    if matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
        s.status = format!("drawing over {}…", path.display());
        vec![Effect::ExportFigure {
            session,
            figure,
            path,
            overwrite: true,
        }]
    } else {
        s.status = format!("nothing written: {} kept as it was", path.display());
        vec![]
    }
}
