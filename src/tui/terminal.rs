//! Entering and leaving the full-screen terminal, and making sure we always leave: on a normal
//! return, on a panic (a chained hook), on SIGTERM/SIGHUP/SIGINT (a flag the loop polls), and
//! around Ctrl-Z (suspend, then resume with a full redraw).

use std::io::{stdout, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Once};

use crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, BeginSynchronizedUpdate, EndSynchronizedUpdate,
    EnterAlternateScreen, LeaveAlternateScreen,
};
use crossterm::{cursor, execute, queue};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;

use ovk_core::{OvkError, Result};

pub type Term = Terminal<CrosstermBackend<super::sgr::Classic<std::io::Stdout>>>;

static HOOK: Once = Once::new();

/// Raw mode, alternate screen, mouse capture; installs the restoring panic hook once.
pub fn enter() -> Result<Term> {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            leave();
            previous(info);
        }));
    });
    let io = |e: std::io::Error| OvkError::io("setting up the terminal", e);
    // Without a terminal (a script, a pipe, a batch job) the workbench cannot start: say what
    // works there instead.
    if !std::io::IsTerminal::is_terminal(&stdout())
        || !std::io::IsTerminal::is_terminal(&std::io::stdin())
    {
        return Err(OvkError::input(
            "the workbench needs a terminal, and standard input or output is not one; without \
             a terminal use the headless commands (ovk run, ovk replay SESSION --print, ovk \
             sessions — see ovk --help)",
        ));
    }
    enable_raw_mode().map_err(io)?;
    if let Err(e) =
        execute!(stdout(), EnterAlternateScreen, cursor::Hide).and_then(|_| capture_mouse())
    {
        leave();
        return Err(io(e));
    }
    // Under `TERM=xterm` and the like, colours go out as the classic 16-colour codes.
    let classic = super::sgr::needs_classic_codes(
        std::env::var("COLORTERM").ok().as_deref(),
        std::env::var("TERM").ok().as_deref(),
    );
    let out = super::sgr::Classic::new(stdout(), classic);
    Terminal::new(CrosstermBackend::new(out)).map_err(|e| {
        leave();
        io(e)
    })
}

/// Mouse clicks select tabs; `OVK_NO_MOUSE` leaves the mouse to the terminal (text selection
/// over SSH).
fn capture_mouse() -> std::io::Result<()> {
    if std::env::var_os("OVK_NO_MOUSE").is_some() {
        Ok(())
    } else {
        execute!(stdout(), EnableMouseCapture)
    }
}

/// Undo `enter`; safe to call more than once and when `enter` failed half-way.
pub fn leave() {
    let _ = execute!(
        stdout(),
        EndSynchronizedUpdate,
        DisableMouseCapture,
        LeaveAlternateScreen,
        cursor::Show
    );
    let _ = disable_raw_mode();
    let _ = stdout().flush();
}

/// A flag set by SIGTERM, SIGHUP or SIGINT, polled by the frame loop. Should the loop not
/// come round (crossterm can keep re-reading a terminal that was closed under it), a watchdog
/// restores the terminal and exits with 128 + signal shortly after.
pub fn termination_flag() -> Arc<AtomicBool> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let flag = Arc::new(AtomicBool::new(false));
    let seen = flag.clone();
    // Failure to register only loses the graceful path; the panic hook still restores.
    if let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGTERM, SIGHUP, SIGINT]) {
        let _ = std::thread::Builder::new()
            .name("ovk-signals".into())
            .spawn(move || {
                if let Some(sig) = signals.forever().next() {
                    seen.store(true, Ordering::Relaxed);
                    std::thread::sleep(std::time::Duration::from_millis(750));
                    leave();
                    std::process::exit(128 + sig);
                }
            });
    }
    flag
}

pub fn terminated(flag: &AtomicBool) -> bool {
    flag.load(Ordering::Relaxed)
}

/// Ctrl-Z: give the terminal back, stop, and take it again when continued.
pub fn suspend(term: &mut Term) -> Result<()> {
    leave();
    #[cfg(unix)]
    {
        let _ = signal_hook::low_level::raise(signal_hook::consts::SIGTSTP);
    }
    let io = |e: std::io::Error| OvkError::io("resuming the terminal", e);
    enable_raw_mode().map_err(io)?;
    execute!(stdout(), EnterAlternateScreen, cursor::Hide).map_err(io)?;
    capture_mouse().map_err(io)?;
    term.clear().map_err(io)
}

/// Draw one frame inside a synchronized update, so tmux and SSH never show half a frame.
pub fn draw(term: &mut Term, render: impl FnOnce(&mut ratatui::Frame)) -> Result<()> {
    let io = |e: std::io::Error| OvkError::io("drawing", e);
    queue!(stdout(), BeginSynchronizedUpdate).map_err(io)?;
    term.draw(render).map_err(io)?;
    execute!(stdout(), EndSynchronizedUpdate).map_err(io)?;
    Ok(())
}
