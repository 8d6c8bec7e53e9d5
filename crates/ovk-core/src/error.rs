//! One error type for the engine. Its variant decides the process exit status: what the user
//! can fix (input, numerical fault, memory) is 2, an internal fault 1, a cancel 130 — the CLI
//! maps it, the TUI shows the message. Its `kind` says what went wrong finely enough for a
//! caller (or a test) to act on without reading the message.

/// What went wrong, as a caller can match it. The input kinds (`is_input`) are set by the
/// constructors at the main error sites; any other input error is `Input`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// Something else the user gave is wrong.
    Input,
    /// A key that is no option or hyperparameter (of this method).
    UnknownParameter,
    /// A hyperparameter or option value of the wrong type, outside its range, or in a
    /// combination the method refuses.
    InvalidParameter,
    /// A word that is not one of a setting's choices (`--task`, `--solver`, `--method` …).
    UnknownChoice,
    /// A column named by the user that the table does not have.
    MissingColumn,
    /// A file that is missing, unreadable, or not the format it claims.
    UnreadableFile,
    /// A saved session (or model) that cannot be loaded as it is.
    BadSession,
    /// The numerics failed in a way the user can act on.
    Numerical,
    /// The request would not fit in memory (or a file is beyond its size cap).
    TooBig,
    /// The fit was cancelled by its observer.
    Cancelled,
    /// An operating-system error on a file ovk wrote or read on its own account.
    Io,
    /// A bug or an unexpected state of the machine.
    Internal,
}

impl ErrorKind {
    /// Whether errors of this kind are the `Input` variant (exit 2).
    pub(crate) fn is_input(self) -> bool {
        matches!(
            self,
            ErrorKind::Input
                | ErrorKind::UnknownParameter
                | ErrorKind::InvalidParameter
                | ErrorKind::UnknownChoice
                | ErrorKind::MissingColumn
                | ErrorKind::UnreadableFile
                | ErrorKind::BadSession
        )
    }
}

/// Every failure ovk-core reports; the variant decides how a face shows it and its exit status.
#[derive(Debug, thiserror::Error)]
pub enum OvkError {
    /// Something the user gave (file, column, hyperparameter, session) is wrong. Exit 2.
    #[error("{message}")]
    Input {
        /// What kind of mistake, for faces and tests to match on.
        kind: ErrorKind,
        /// The sentence shown to the user.
        message: String,
    },
    /// The numerics failed in a way the user can act on (message names cause and fix). Exit 2.
    #[error("{0}")]
    Numerical(String),
    /// The request would not fit in memory; the message carries the figure and the way out. Exit 2.
    #[error("{0}")]
    Resources(String),
    /// The fit was cancelled by its observer (Esc in the TUI, Ctrl-C headless).
    #[error("cancelled")]
    Cancelled,
    /// An operating-system error on a file, with what ovk was doing.
    #[error("{context}: {source}")]
    Io {
        /// What ovk was doing, naming the file.
        context: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A bug or an unexpected state of the machine. Exit 1.
    #[error("internal error: {0}")]
    Internal(String),
}

/// The result type of every fallible ovk-core function.
pub type Result<T> = std::result::Result<T, OvkError>;

impl OvkError {
    /// An input error (exit 2) with this message.
    pub fn input(msg: impl Into<String>) -> Self {
        OvkError::input_as(ErrorKind::Input, msg)
    }

    /// An input error of a finer kind (one of `ErrorKind::is_input`).
    pub fn input_as(kind: ErrorKind, msg: impl Into<String>) -> Self {
        debug_assert!(kind.is_input(), "{kind:?} is not an input kind");
        OvkError::Input {
            kind,
            message: msg.into(),
        }
    }

    /// A saved session or model that cannot be loaded as it is.
    pub(crate) fn bad_session(msg: impl Into<String>) -> Self {
        OvkError::input_as(ErrorKind::BadSession, msg)
    }

    /// What went wrong (`Input` errors carry their own finer kind).
    pub fn kind(&self) -> ErrorKind {
        match self {
            OvkError::Input { kind, .. } => *kind,
            OvkError::Numerical(_) => ErrorKind::Numerical,
            OvkError::Resources(_) => ErrorKind::TooBig,
            OvkError::Cancelled => ErrorKind::Cancelled,
            OvkError::Io { source, .. } => match source.kind() {
                std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied => {
                    ErrorKind::UnreadableFile
                }
                _ => ErrorKind::Io,
            },
            OvkError::Internal(_) => ErrorKind::Internal,
        }
    }

    /// The same error, its message rewritten by `f` (a prefix naming the flag or the file);
    /// the variant and kind are kept. Errors without a message of their own are unchanged.
    pub fn reworded(self, f: impl FnOnce(&str) -> String) -> Self {
        match self {
            OvkError::Input { kind, message } => OvkError::Input {
                kind,
                message: f(&message),
            },
            OvkError::Numerical(m) => OvkError::Numerical(f(&m)),
            OvkError::Resources(m) => OvkError::Resources(f(&m)),
            OvkError::Internal(m) => OvkError::Internal(f(&m)),
            other => other,
        }
    }

    /// A numerical failure the user can act on (exit 2); the message names cause and fix.
    pub fn numerical(msg: impl Into<String>) -> Self {
        OvkError::Numerical(msg.into())
    }

    /// A bug or unexpected state (exit 1).
    pub fn internal(msg: impl Into<String>) -> Self {
        OvkError::Internal(msg.into())
    }

    /// An I/O error, `context` saying what ovk was doing (`writing <file>`).
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
            OvkError::input_as(
                ErrorKind::UnreadableFile,
                format!("{}: {what}", path.display()),
            )
        }
    }

    /// Process exit status: 2 for anything the user can fix, 1 for internal faults, 130 on cancel.
    pub fn exit_code(&self) -> i32 {
        match self {
            OvkError::Input { .. } | OvkError::Numerical(_) | OvkError::Resources(_) => 2,
            OvkError::Io { source, .. } => match source.kind() {
                // where the user pointed ovk, not a failure of ovk: exit 2 like a bad path
                std::io::ErrorKind::NotFound
                | std::io::ErrorKind::PermissionDenied
                | std::io::ErrorKind::ReadOnlyFilesystem
                | std::io::ErrorKind::StorageFull => 2,
                _ => 1,
            },
            OvkError::Cancelled => 130,
            OvkError::Internal(_) => 1,
        }
    }
}

/// Shorthand for the common "path: message" input error.
pub fn input_at(path: &std::path::Path, msg: impl std::fmt::Display) -> OvkError {
    OvkError::input(format!("{}: {msg}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_only_or_full_file_system_is_the_users_to_fix_exit_2() {
        for kind in [
            std::io::ErrorKind::ReadOnlyFilesystem,
            std::io::ErrorKind::StorageFull,
            std::io::ErrorKind::PermissionDenied,
        ] {
            let e = OvkError::io("creating x", std::io::Error::from(kind));
            assert_eq!(e.exit_code(), 2, "{kind:?}");
        }
        let e = OvkError::io("reading x", std::io::Error::other("device fault"));
        assert_eq!(e.exit_code(), 1);
    }
}
