//! Printing from the headless commands without panicking: `println!` panics (exit 101) when
//! standard output is a closed pipe (`ovk sessions | head -1`) or a full disk. Results go
//! through `outln!` / `out!`, which return an error the command reports (exit 2); progress and
//! notes go through `errln!` / `err!`, which drop a write to a standard error that is gone —
//! there is nowhere left to report it.

use std::fmt;
use std::io::{self, Write};

use ovk_core::{OvkError, Result};

/// Write `args` to standard output, then flush: a closed pipe or a full disk is an error.
pub fn stdout(args: fmt::Arguments) -> Result<()> {
    let mut out = io::stdout().lock();
    out.write_fmt(args)
        .and_then(|_| out.flush())
        .map_err(|e| OvkError::input(format!("writing to standard output: {e}")))
}

/// Write raw bytes (a line that need not be UTF-8) to standard output, then flush.
pub fn stdout_bytes(bytes: &[u8]) -> Result<()> {
    stdout_bytes_io(bytes).map_err(|e| OvkError::input(format!("writing to standard output: {e}")))
}

/// `stdout_bytes` with the I/O error itself, for a caller that treats a closed pipe apart.
pub fn stdout_bytes_io(bytes: &[u8]) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(bytes).and_then(|_| out.flush())
}

/// Write `args` to standard error, ignoring failure.
pub fn stderr(args: fmt::Arguments) {
    let _ = io::stderr().lock().write_fmt(args);
}

/// `println!` that returns `Result<()>`.
macro_rules! outln {
    () => { $crate::cli::console::stdout(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::cli::console::stdout(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `print!` that returns `Result<()>`.
macro_rules! out {
    ($($arg:tt)*) => { $crate::cli::console::stdout(format_args!($($arg)*)) };
}

/// `eprintln!` that never panics.
macro_rules! errln {
    () => { $crate::cli::console::stderr(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::cli::console::stderr(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `eprint!` that never panics.
macro_rules! err {
    ($($arg:tt)*) => { $crate::cli::console::stderr(format_args!($($arg)*)) };
}
