//! `--kernel precomputed`: the Gram files read, checked and put in place of the features.
//!
//! K is the kernel between all rows of the table, in the table's row order; the split ovk
//! already makes chooses its training and test blocks. The inputs become `[j | K[row, order]]`
//! (`kernels::precomputed`), with the training rows first in `order`, one such block per view
//! for a multi-view method.

use std::path::Path;

use ndarray::{concatenate, Array2, Axis};
use ndarray_npy::ReadNpyExt;

use crate::data::{Prepared, View};
use crate::kernels::precomputed::{gram_problem, layout, new_rows, psd_warning};
use crate::kernels::{check_fits, dense_bytes, GramFile, KernelName, KernelSpec};
use crate::{OvkError, Result};

/// A `.npy` Gram file as an f64 matrix (f32 files are widened), through the guards every
/// saved matrix passes: a regular file, its size within memory, its header's claims within
/// the file.
pub(crate) fn read_gram(path: &Path, what: &str) -> Result<Array2<f64>> {
    let refuse = |why: String| OvkError::input(format!("{}: {why}", path.display()));
    let (_, meta) = crate::data::files::open_regular(path, what)?;
    check_fits(
        meta.len(),
        &format!("reading the {what} {}", path.display()),
    )?;
    crate::session::npy_claims::check(path)
        .map_err(|why| refuse(format!("cannot read it as a .npy matrix: {why}")))?;
    let open = || crate::data::files::open_regular(path, what).map(|(f, _)| f);
    match Array2::<f64>::read_npy(std::io::BufReader::new(open()?)) {
        Ok(k) => Ok(k),
        Err(e64) => match Array2::<f32>::read_npy(std::io::BufReader::new(open()?)) {
            Ok(k) => {
                check_fits(
                    dense_bytes(k.nrows(), k.ncols()),
                    &format!("the {what} {} as f64", path.display()),
                )?;
                Ok(k.mapv(f64::from))
            }
            Err(_) => Err(refuse(format!(
                "cannot read it as a 2-D f64 (or f32) .npy matrix: {e64}"
            ))),
        },
    }
}

/// The Gram files of `spec` read and checked against the table's rows, the inputs of
/// `prepared` replaced by their rows of K (one block per view); the files with their SHA-256
/// and the warnings (a Gram that is not PSD) go to `prepared.grams` and `prepared.notes`.
pub(crate) fn attach(prepared: &mut Prepared, spec: &KernelSpec) -> Result<()> {
    if spec.name != KernelName::Precomputed {
        return Ok(());
    }
    let mut files = spec.gram.clone();
    match_views(&prepared.views, &files)?;
    let n = prepared.info.rows;
    // K, its rows as the inputs, and the PSD check's shifted copy and factor
    check_fits(
        dense_bytes(n, n).saturating_mul(4),
        &format!("the {n}×{n} precomputed Gram matrix and its checks"),
    )?;
    let order: Vec<usize> = prepared
        .train_rows
        .iter()
        .chain(&prepared.test_rows)
        .copied()
        .collect();
    let mut notes = Vec::new();
    let (mut train, mut test, mut views) = (Vec::new(), Vec::new(), Vec::new());
    let width = 1 + order.len();
    for (l, file) in files.iter_mut().enumerate() {
        let k = read_gram(&file.path, "Gram matrix")?;
        let name = file.path.display();
        if let Some(why) = gram_problem(k.view(), n) {
            return Err(OvkError::input(format!("Gram matrix {name} {why}")));
        }
        if let Some(w) = psd_warning(k.view())? {
            notes.push(format!("Gram matrix {name} {w}"));
        }
        file.sha256 = Some(crate::data::sha256_file(&file.path)?);
        if let Ok(abs) = std::path::absolute(&file.path) {
            file.path = abs;
        }
        train.push(layout(k.view(), &prepared.train_rows, &order));
        test.push(layout(k.view(), &prepared.test_rows, &order));
        if let Some(v) = &file.view {
            views.push(View {
                name: v.clone(),
                columns: (l * width..(l + 1) * width).collect(),
            });
        }
    }
    prepared.x_train = stack(&train)?;
    prepared.x_test = stack(&test)?;
    prepared.views = views;
    prepared.notes.extend(notes);
    prepared.grams = files;
    Ok(())
}

/// Per-view Grams name the table's views, when it has views: every view one Gram.
fn match_views(table: &[View], files: &[GramFile]) -> Result<()> {
    let named: Vec<&str> = files.iter().filter_map(|f| f.view.as_deref()).collect();
    if table.is_empty() || named.is_empty() {
        return Ok(());
    }
    let views: Vec<&str> = table.iter().map(|v| v.name.as_str()).collect();
    if let Some(odd) = named.iter().find(|n| !views.contains(n)) {
        return Err(OvkError::input(format!(
            "--gram-view {odd}=…: the table has no view '{odd}' (its views: {})",
            views.join(", ")
        )));
    }
    if let Some(missing) = views.iter().find(|v| !named.contains(v)) {
        return Err(OvkError::input(format!(
            "view '{missing}' has no Gram: give --gram-view {missing}=FILE for every view ({})",
            views.join(", ")
        )));
    }
    Ok(())
}

/// The inputs a saved precomputed model predicts from: a new-rows Gram (n_new × n_train, one
/// per view in the model's view order) laid out as the training inputs were, `width` columns
/// per block.
pub(crate) fn new_inputs(grams: &[(GramFile, Array2<f64>)], width: usize) -> Result<Array2<f64>> {
    let blocks: Vec<Array2<f64>> = grams
        .iter()
        .map(|(_, k)| new_rows(k.view(), width))
        .collect();
    stack(&blocks)
}

fn stack(blocks: &[Array2<f64>]) -> Result<Array2<f64>> {
    let views: Vec<_> = blocks.iter().map(|b| b.view()).collect();
    concatenate(Axis(1), &views).map_err(|e| OvkError::internal(format!("precomputed inputs: {e}")))
}
