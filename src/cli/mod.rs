//! Headless commands: `ovk run`, `ovk sessions`, `ovk replay`.

/// Parse the command line, run, and return the process exit status.
pub fn main() -> i32 {
    0
}
