//! The terminal workbench: events → actions → pure state update (effects as data) → render.
//! `run_app` opens it on a folder or file, `run_replay` on a saved session (read-only).

pub mod action;
mod app;
pub mod axes;
pub mod diag;
mod driver;
pub mod effect;
pub mod export;
pub mod keys;
pub mod panes;
pub mod render;
pub mod roles;
pub mod sgr;
pub mod state;
pub mod tally;
mod terminal;
pub mod theme;
pub mod update;
pub mod verdict;
pub mod widgets;
pub mod wording;

pub use app::{replay_state, run_app, run_replay};
