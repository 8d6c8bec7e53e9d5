//! Keys to actions, by context (pane, field being edited, prompt), and the table the help
//! overlay prints — one place, so the help cannot drift from the bindings.

use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};

use super::action::Action;
use super::state::{Pane, Prompt, PromptKind, Role, State};

/// (keys, where, what) for the help overlay.
pub const HELP: &[(&str, &str, &str)] = &[
    ("Tab / Shift-Tab", "everywhere", "next / previous pane"),
    ("1 … 8", "everywhere", "go to pane (or click its tab)"),
    (
        "h l ← →",
        "everywhere",
        "previous / next pane (replay: ← → step the trace)",
    ),
    ("j k ↓ ↑", "lists", "move the selection"),
    ("g G Home End", "lists", "first / last entry"),
    ("Enter", "lists", "open / choose / edit"),
    (
        "Esc",
        "everywhere",
        "cancel a running fit; else close overlay, leave field, back",
    ),
    ("?", "everywhere", "this help"),
    (
        "i",
        "everywhere",
        "in full: the status line and the name under the cursor (cut names keep their ends)",
    ),
    (
        "q  Ctrl-C",
        "everywhere",
        "quit (asks first while a fit runs; finished fits are recorded already)",
    ),
    ("e", "panes 4–8", "CSV; in Charts and Matrices a figure too"),
    (
        "s",
        "after a fit",
        "keep the run under a name (every fit is recorded at once, not kept)",
    ),
    ("r", "everywhere", "start a fit"),
    ("Enter", "Data: files", "open file or folder"),
    ("Backspace u", "Data", "parent folder"),
    ("Esc", "Data: columns", "back to the file list"),
    (
        "/",
        "Data",
        "find a file or folder by name as you type; Enter opens it",
    ),
    (
        "f t c v x T",
        "Data: columns",
        "role: feature, target, class, view, ignore, test marker (nonzero = a test row)",
    ),
    (
        "Space",
        "Data: columns",
        "mark the column (V puts the marked columns into a view)",
    ),
    (
        "V",
        "Data: columns",
        "view: NAME = columns (a..b, glob*, /regex/, a,b), or NAME for the marked ones",
    ),
    (
        "n",
        "Data: columns",
        "rename the column's view (another view's name merges the two)",
    ),
    (
        "[ ]",
        "Data",
        "test fraction − / + 0.05 (without a test marker)",
    ),
    ("{ }", "Data", "split seed − / + 1"),
    ("=", "Data", "feature scaling standard / none"),
    ("y", "Data", "target scaling none / center / standard"),
    (
        "m",
        "Data",
        "missing cells: refuse → drop rows → impute (mean / most frequent)",
    ),
    ("< >", "Data", "labeled fraction − / + 0.05 (vvmr)"),
    (
        "Enter",
        "Method",
        "choose the method (shows its hyperparameters)",
    ),
    (
        "Enter",
        "Kernel",
        "edit the field; Enter keeps, Esc restores",
    ),
    (
        "Space",
        "Kernel",
        "next choice (kernel, choices, true/false)",
    ),
    ("w", "Kernel", "mark this number for search, with its range"),
    ("Ctrl-U", "editing", "clear the field"),
    ("Enter r", "Run", "start the fit"),
    (
        "w",
        "Run",
        "search the marked fields: grid, random or halving",
    ),
    (
        "Esc c",
        "Run",
        "cancel the fit (stops it; recorded as cancelled)",
    ),
    (
        "f",
        "Run",
        "cross-validation folds: off / 3 / 5 / 10 (mean ± sd per metric)",
    ),
    (
        "u",
        "Run, Results",
        "copy the shown session's settings into the form",
    ),
    (
        "j k g G PgUp PgDn",
        "Run, Results",
        "scroll the trace / records",
    ),
    ("J K", "Run, Results", "scroll the notes / details"),
    (
        "d",
        "Results",
        "per-output diagnostics (confusion, per label, scatter) / summary",
    ),
    ("p", "Results", "diagnostics of the train / test part"),
    (
        "j k",
        "Results: diagnostics",
        "scroll the classes / labels; choose the output to plot",
    ),
    (
        "[ ]",
        "Results",
        "scroll the λ path / sweep table's columns (λ stays)",
    ),
    ("o", "Charts", "overlay the previous run on/off"),
    ("m", "Charts", "marked runs' curves / this run"),
    ("n N", "Matrices", "next / previous matrix"),
    (
        "+ - 0",
        "Matrices",
        "zoom in / out / back to fitted (each matrix starts fitted)",
    ),
    ("j k H L", "Matrices", "move the cell cursor"),
    (
        "c o",
        "Matrices",
        "output kernel as correlations / outputs in clustered order",
    ),
    ("Enter", "Sessions", "open the session"),
    ("n", "Sessions", "rename"),
    ("d", "Sessions", "delete (asks to confirm)"),
    ("Space", "Sessions", "mark runs (Charts overlays them)"),
    (
        "c",
        "Sessions",
        "compare the marked runs: metrics, per output, paired p-values",
    ),
    ("[ ] o", "Sessions", "choose a column / sort by it"),
    ("/", "Sessions", "filter: words, method:okl, dataset:iris"),
    (
        "=",
        "Sessions",
        "group runs scored on the same rows (data, split, folds)",
    ),
    (
        "P",
        "Sessions",
        "delete the runs not kept (○) and cancelled (✕); asks first",
    ),
    ("R", "Sessions", "refresh the list"),
    (
        "p",
        "Sessions",
        "predict on a file with the session's model (e saves the table)",
    ),
    (
        "[ ]",
        "Sessions: predictions",
        "scroll the predictions' columns sideways (<output>, <output>_score, true value)",
    ),
    ("Space", "replay", "play / pause the trace"),
];

/// The action for a key press in the current state, if any.
pub fn map_key(state: &State, key: KeyEvent) -> Option<Action> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    if ctrl && matches!(key.code, KeyCode::Char('c')) {
        return Some(Action::Quit);
    }
    // "Quit?" is answered by one key: y, n, or Esc.
    if let Some(Prompt {
        kind: PromptKind::ConfirmQuit { .. },
        ..
    }) = &state.prompt
    {
        return match key.code {
            KeyCode::Esc => Some(Action::Back),
            KeyCode::Enter => Some(Action::Enter),
            KeyCode::Char('q') => Some(Action::Char('n')),
            KeyCode::Char(c) => Some(Action::Char(c)),
            _ => None,
        };
    }
    // Typing: a prompt or a field being edited takes every key.
    if state.prompt.is_some() || (state.kernel.editing && state.pane == Pane::Kernel) {
        return match key.code {
            KeyCode::Enter => Some(Action::Enter),
            KeyCode::Esc => Some(Action::Back),
            KeyCode::Backspace => Some(Action::Backspace),
            KeyCode::Char('u') if ctrl => Some(Action::ClearText),
            KeyCode::Char(c) if !ctrl => Some(Action::Char(c)),
            _ => None,
        };
    }
    if state.full_text {
        return Some(Action::ShowFull);
    }
    if state.help {
        return Some(match key.code {
            KeyCode::Char('q') => Action::Quit,
            KeyCode::Char('j') | KeyCode::Down | KeyCode::PageDown => Action::Down,
            KeyCode::Char('k') | KeyCode::Up | KeyCode::PageUp => Action::Up,
            KeyCode::Char('g') | KeyCode::Home => Action::Top,
            KeyCode::Char('G') | KeyCode::End => Action::Bottom,
            _ => Action::ToggleHelp,
        });
    }
    let replay = state.replay.is_some();
    let pane = state.pane;
    let a = match key.code {
        KeyCode::Tab => Action::NextPane,
        KeyCode::BackTab => Action::PrevPane,
        KeyCode::Char(c @ '1'..='8') => Action::Goto(Pane::ALL[(c as u8 - b'1') as usize]),
        KeyCode::Char('?') => Action::ToggleHelp,
        KeyCode::Char('i') => Action::ShowFull,
        KeyCode::Char('q') => Action::Quit,
        KeyCode::Right if replay => Action::Step(1),
        KeyCode::Left if replay => Action::Step(-1),
        KeyCode::Char('l') | KeyCode::Right => Action::NextPane,
        KeyCode::Char('h') | KeyCode::Left => Action::PrevPane,
        KeyCode::Char('j') | KeyCode::Down => Action::Down,
        KeyCode::Char('k') | KeyCode::Up => Action::Up,
        KeyCode::Char('g') | KeyCode::Home => Action::Top,
        KeyCode::Char('G') | KeyCode::End => Action::Bottom,
        KeyCode::PageDown => Action::MoveCursor(0, 10),
        KeyCode::PageUp => Action::MoveCursor(0, -10),
        KeyCode::Char('e') => Action::Export,
        KeyCode::Enter => Action::Enter,
        KeyCode::Esc => Action::Back,
        KeyCode::Char(' ') => Action::Space,
        KeyCode::Char('s') => Action::Save,
        KeyCode::Char('r') => Action::StartRun,
        KeyCode::Backspace if pane == Pane::Data => Action::ParentDir,
        KeyCode::Char(c) => return pane_char(pane, c),
        _ => return None,
    };
    Some(a)
}

fn pane_char(pane: Pane, c: char) -> Option<Action> {
    Some(match (pane, c) {
        (Pane::Data, 'f') => Action::SetRole(Role::Feature),
        (Pane::Data, 't') => Action::SetRole(Role::Target),
        (Pane::Data, 'c') => Action::SetRole(Role::Class),
        (Pane::Data, 'v') => Action::SetRole(Role::View),
        (Pane::Data, 'x') => Action::SetRole(Role::Ignore),
        (Pane::Data, 'T') => Action::SetRole(Role::TestMarker),
        (Pane::Data, '[') => Action::TestFraction(-1),
        (Pane::Data, ']') => Action::TestFraction(1),
        (Pane::Data, '{') => Action::Seed(-1),
        (Pane::Data, '}') => Action::Seed(1),
        (Pane::Data, '=') => Action::ToggleScale,
        (Pane::Data, 'y') => Action::CycleTargetScale,
        (Pane::Data, 'u') => Action::ParentDir,
        (Pane::Data, 'm') => Action::ToggleDropMissing,
        (Pane::Data, 'V') => Action::ViewPrompt,
        (Pane::Data, 'n') => Action::RenameView,
        (Pane::Data, '/') => Action::Filter,
        (Pane::Data, '<') => Action::Labeled(-1),
        (Pane::Data, '>') => Action::Labeled(1),
        (Pane::Run | Pane::Results, 'J') => Action::ScrollNotes(3),
        (Pane::Run | Pane::Results, 'K') => Action::ScrollNotes(-3),
        (Pane::Run, 'c') => Action::CancelRun,
        (Pane::Run, 'f') => Action::CycleFolds,
        (Pane::Run | Pane::Results, 'u') => Action::UseSettings,
        (Pane::Results, 'd') => Action::ToggleDiagnostics,
        (Pane::Results, 'p') => Action::TogglePart,
        (Pane::Charts, 'o') => Action::ToggleOverlay,
        (Pane::Charts, 'm') => Action::ToggleMarked,
        (Pane::Kernel | Pane::Run, 'w') => Action::SweepPrompt,
        (Pane::Sessions, 'c') => Action::Compare,
        (Pane::Sessions, 'p') => Action::PredictPrompt,
        (Pane::Sessions | Pane::Results, '[') => Action::Column(-1),
        (Pane::Sessions | Pane::Results, ']') => Action::Column(1),
        (Pane::Sessions, 'o') => Action::SortBy,
        (Pane::Sessions, '/') => Action::Filter,
        (Pane::Sessions, '=') => Action::GroupByRows,
        (Pane::Sessions, 'P') => Action::PrunePrompt,
        (Pane::Matrices, 'n') => Action::NextMatrix,
        (Pane::Matrices, 'c') => Action::ToggleCorrelation,
        (Pane::Matrices, 'o') => Action::ToggleOrder,
        (Pane::Matrices, 'N') => Action::PrevMatrix,
        (Pane::Matrices, '+') | (Pane::Matrices, '=') => Action::Zoom(1),
        (Pane::Matrices, '-') => Action::Zoom(-1),
        (Pane::Matrices, '0') => Action::ZoomFit,
        (Pane::Matrices, 'H') | (Pane::Matrices, '<') => Action::MoveCursor(-1, 0),
        (Pane::Matrices, 'L') | (Pane::Matrices, '>') => Action::MoveCursor(1, 0),
        (Pane::Matrices, 'J') => Action::MoveCursor(0, 1),
        (Pane::Matrices, 'K') => Action::MoveCursor(0, -1),
        (Pane::Sessions, 'n') => Action::Rename,
        (Pane::Sessions, 'd') => Action::Delete,
        (Pane::Sessions, 'R') => Action::Refresh,
        _ => return None,
    })
}

/// Left clicks select tabs; the wheel moves lists.
pub fn map_mouse(m: MouseEvent) -> Option<Action> {
    match m.kind {
        MouseEventKind::Down(MouseButton::Left) => Some(Action::Click {
            col: m.column,
            row: m.row,
        }),
        MouseEventKind::ScrollDown => Some(Action::Down),
        MouseEventKind::ScrollUp => Some(Action::Up),
        _ => None,
    }
}

/// The tab bar's layout: (pane, first column, one past the last column). Render and click
/// handling both use it.
pub fn tab_spans() -> Vec<(Pane, u16, u16)> {
    let mut x = 0u16;
    Pane::ALL
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let w = tab_label(i, *p).chars().count() as u16;
            let span = (*p, x, x + w);
            x += w + 1; // the separator
            span
        })
        .collect()
}

/// One space before the number only: all eight tabs and their separators fit in 80 columns.
pub fn tab_label(i: usize, p: Pane) -> String {
    format!(" {} {}", i + 1, p.title())
}
