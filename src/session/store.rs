//! The session store: a directory of session directories. Writes are atomic (a temp directory
//! renamed into place), listing never fails on a corrupt entry, and loading checks the schema.

use std::path::{Path, PathBuf};

use ndarray::Array2;

use super::SessionRecord;
use crate::{OvkError, Result};

pub struct Store {
    root: PathBuf,
}

/// One line of `ovk sessions`, or the reason an entry could not be read.
#[derive(Debug, Clone)]
pub enum Listing {
    Ok(Summary),
    Corrupt { path: PathBuf, reason: String },
}

#[derive(Debug, Clone)]
pub struct Summary {
    pub id: String,
    pub name: String,
    pub created: String,
    pub dataset: String,
    pub method: String,
    /// The task's primary test metric (name, value), when recorded.
    pub key_metric: Option<(String, f64)>,
    pub path: PathBuf,
}

/// A session read from disk.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub dir: PathBuf,
    pub record: SessionRecord,
}

impl Store {
    /// `dir`, else `$OVK_SESSIONS`, else the per-user data directory (`directories`).
    pub fn open(dir: Option<&Path>) -> Result<Store> {
        let _ = dir;
        Err(OvkError::internal("session store is not implemented yet"))
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Write a new session (record + matrices) atomically; returns its directory.
    pub fn save(
        &self,
        record: &SessionRecord,
        matrices: &[(String, Array2<f64>)],
    ) -> Result<PathBuf> {
        let _ = (record, matrices);
        Err(OvkError::internal("session saving is not implemented yet"))
    }

    /// Every session, newest first; unreadable entries are listed as `Corrupt`.
    pub fn list(&self) -> Vec<Listing> {
        Vec::new()
    }

    pub fn rename(&self, id: &str, new_name: &str) -> Result<()> {
        let _ = (id, new_name);
        Err(OvkError::internal("renaming is not implemented yet"))
    }

    pub fn delete(&self, id: &str) -> Result<()> {
        let _ = id;
        Err(OvkError::internal("deleting is not implemented yet"))
    }

    /// A session named by path, by id, or by unique name within the store.
    pub fn resolve(&self, arg: &str) -> Result<PathBuf> {
        let _ = arg;
        Err(OvkError::internal("resolving is not implemented yet"))
    }
}

/// Read and check a session directory.
pub fn load(dir: &Path) -> Result<Loaded> {
    Err(OvkError::internal(format!(
        "{}: loading is not implemented yet",
        dir.display()
    )))
}

impl Loaded {
    /// A saved matrix by name (`output_kernel`), read from its `.npy`.
    pub fn matrix(&self, name: &str) -> Result<Array2<f64>> {
        let _ = name;
        Err(OvkError::internal("matrix loading is not implemented yet"))
    }
}
