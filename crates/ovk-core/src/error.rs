//! One error type for the engine. Its variant decides the process exit status: what the user
//! can fix (input, numerical fault, memory) is 2, an internal fault 1, a cancel 130 — the CLI
//! maps it, the TUI shows the message.

#[derive(Debug, thiserror::Error)]
pub enum OvkError {
    /// Something the user gave (file, column, hyperparameter, session) is wrong. Exit 2.
    #[error("{0}")]
    Input(String),
    /// The numerics failed in a way the user can act on (message names cause and fix). Exit 2.
    #[error("{0}")]
    Numerical(String),
    /// The request would not fit in memory; the message carries the figure and the way out. Exit 2.
    #[error("{0}")]
    Resources(String),
    /// The fit was cancelled by its observer (Esc in the TUI, Ctrl-C headless).
    #[error("cancelled")]
    Cancelled,
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    /// A bug or an unexpected state of the machine. Exit 1.
    #[error("internal error: {0}")]
    Internal(String),
}

pub type Result<T> = std::result::Result<T, OvkError>;

impl OvkError {
    pub fn input(msg: impl Into<String>) -> Self {
        OvkError::Input(msg.into())
    }

    pub fn numerical(msg: impl Into<String>) -> Self {
        OvkError::Numerical(msg.into())
    }

    pub fn internal(msg: impl Into<String>) -> Self {
        OvkError::Internal(msg.into())
    }

    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        OvkError::Io {
            context: context.into(),
            source,
        }
    }

    /// An I/O error on a path the user named: a missing or unreadable file is their input.
    pub fn io_path(path: &std::path::Path, source: std::io::Error) -> Self {
        let what = match source.kind() {
            std::io::ErrorKind::NotFound => "no such file or directory",
            std::io::ErrorKind::PermissionDenied => "permission denied",
            _ => "",
        };
        if what.is_empty() {
            OvkError::io(path.display().to_string(), source)
        } else {
            OvkError::Input(format!("{}: {what}", path.display()))
        }
    }

    /// Process exit status: 2 for anything the user can fix, 1 for internal faults, 130 on cancel.
    pub fn exit_code(&self) -> i32 {
        match self {
            OvkError::Input(_) | OvkError::Numerical(_) | OvkError::Resources(_) => 2,
            OvkError::Io { source, .. } => match source.kind() {
                std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied => 2,
                _ => 1,
            },
            OvkError::Cancelled => 130,
            OvkError::Internal(_) => 1,
        }
    }
}

/// Shorthand for the common "path: message" input error.
pub fn input_at(path: &std::path::Path, msg: impl std::fmt::Display) -> OvkError {
    OvkError::Input(format!("{}: {msg}", path.display()))
}
