//! The frame loop: read every pending terminal event and every background answer, turn them
//! into actions, update the state, carry out the effects, and draw once if anything changed.
//! While a fit runs the loop wakes at least every 50 ms, so the screen stays live.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};

use super::action::Action;
use super::driver::{open_session, Driver};
use super::effect::Effect;
use super::keys::{map_key, map_mouse};
use super::render;
use super::state::{Pane, State};
use super::terminal;
use super::theme::{ColorMode, Theme};
use super::update::{redraws, show_replayed, update};
use ovk_core::session::Store;
use ovk_core::train::RunOutcome;
use ovk_core::{OvkError, Result};

const FRAME: Duration = Duration::from_millis(50);

/// Open the workbench on a folder of tables (default `datasets/`, else the bundled datasets,
/// else the current folder) or
/// on one file (its folder is listed and the file opened). `sessions_dir` overrides the store.
pub fn run_app(start: Option<PathBuf>, sessions_dir: Option<PathBuf>) -> Result<()> {
    let (dir, select) = match start {
        None => {
            // `datasets/` here, else the bundled one of the source tree this binary was built
            // from (an installed `ovk` run elsewhere), else the current folder.
            let here = PathBuf::from("datasets");
            let bundled = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets");
            let dir = [here, bundled]
                .into_iter()
                .find(|d| d.is_dir())
                .unwrap_or_else(|| PathBuf::from("."));
            (dir, None)
        }
        Some(p) if p.is_dir() => (p, None),
        Some(p) if p.is_file() => {
            let parent = p
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
            // Listed entries are `parent.join(name)`: match that form.
            let select = p.file_name().map(|n| parent.join(n));
            (parent, select)
        }
        Some(p) => {
            let what = match std::fs::metadata(&p) {
                Ok(m) => format!(
                    "is {}; the workbench opens a data file or a folder",
                    ovk_core::data::files::kind_of(&m)
                ),
                Err(_) => "no such file or folder".to_string(),
            };
            return Err(OvkError::input(format!("{}: {what}", p.display())));
        }
    };
    let mut state = State::new(dir.clone());
    state.theme = Theme::new(ColorMode::detect());
    let mut driver = Driver::new(sessions_dir.as_deref());
    driver.execute(vec![Effect::ListDir { dir, select }]);
    run_loop(state, driver)
}

/// Open a saved session read-only: results, matrices and charts as at the end of the fit,
/// with the trace stepped by ← → and played by Space. `session` is a directory, or an id or
/// unique name in the default store.
pub fn run_replay(session: PathBuf) -> Result<()> {
    let dir = if session.is_dir() {
        session
    } else {
        Store::open(None)?.resolve(&session.to_string_lossy())?
    };
    let outcome = open_session(&dir)?;
    let mut state = replay_state(outcome, dir);
    state.theme = Theme::new(ColorMode::detect());
    let driver = Driver::new(None);
    run_loop(state, driver)
}

/// The state of a replay: the session's configuration in the panes, its result shown, the
/// trace cursor at the end.
pub fn replay_state(outcome: RunOutcome, dir: PathBuf) -> State {
    let folder = outcome
        .record
        .config
        .data
        .path
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let mut s = State::new(folder);
    s.status = format!(
        "replaying '{}' — ← → step · Space play/pause · Tab panes",
        outcome.record.name
    );
    show_replayed(&mut s, outcome, dir);
    s.pane = Pane::Charts;
    s
}

/// Update with one action, run its effects, and follow up on any answers they gave at once
/// (listing, loading). Returns whether the screen may have changed.
fn apply(state: &mut State, driver: &mut Driver, action: Action) -> bool {
    let changed = redraws(state, &action);
    let mut pending = vec![action];
    while !pending.is_empty() {
        for a in pending.drain(..) {
            let effects = update(state, a);
            driver.execute(effects);
        }
        pending = driver.poll();
    }
    changed
}

fn run_loop(mut state: State, mut driver: Driver) -> Result<()> {
    let term_flag = terminal::termination_flag();
    let mut term = terminal::enter()?;
    let r = event_loop(&mut term, &mut state, &mut driver, &term_flag);
    terminal::leave();
    r
}

fn event_loop(
    term: &mut terminal::Term,
    state: &mut State,
    driver: &mut Driver,
    term_flag: &std::sync::atomic::AtomicBool,
) -> Result<()> {
    let io = |e: std::io::Error| OvkError::io("reading terminal events", e);
    let mut dirty = true;
    loop {
        let live = state.is_running() || state.replay.as_ref().is_some_and(|r| r.playing);
        if dirty || live {
            terminal::draw(term, |f| render::draw(f, state))?;
            dirty = false;
        }
        if terminal::terminated(term_flag) {
            dirty |= apply(state, driver, Action::ForceQuit);
        }
        if event::poll(FRAME).map_err(io)? {
            loop {
                // Each key is mapped against the state its predecessors left (Enter then
                // typing must reach the field), so apply before reading the next.
                match event::read().map_err(io)? {
                    Event::Key(k) if k.kind != KeyEventKind::Release => {
                        if k.modifiers.contains(KeyModifiers::CONTROL)
                            && k.code == KeyCode::Char('z')
                        {
                            terminal::suspend(term)?;
                            dirty = true;
                        } else if let Some(a) = map_key(state, k) {
                            dirty |= apply(state, driver, a);
                        }
                    }
                    Event::Mouse(m) => {
                        if let Some(a) = map_mouse(m) {
                            dirty |= apply(state, driver, a);
                        }
                    }
                    Event::Resize(..) => dirty = true,
                    _ => {}
                }
                if state.quit || !event::poll(Duration::ZERO).map_err(io)? {
                    break;
                }
            }
        }
        for a in driver.poll() {
            dirty |= apply(state, driver, a);
        }
        dirty |= apply(state, driver, Action::Tick(Instant::now()));
        if state.quit {
            return Ok(());
        }
    }
}
