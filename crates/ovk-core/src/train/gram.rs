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
    // Table row → row of K: the same row, or the row whose id the table's id column holds.
    let (n, k_row) = match &spec.gram_ids {
        None => (prepared.info.rows, (0..prepared.info.rows).collect()),
        Some(ids) => {
            let (n, k_row, read) = rows_by_id(&prepared.info.path, ids)?;
            prepared.gram_ids = Some(read);
            (n, k_row)
        }
    };
    // K, its rows as the inputs, and the PSD check's shifted copy and factor
    check_fits(
        dense_bytes(n, n).saturating_mul(4),
        &format!("the {n}×{n} precomputed Gram matrix and its checks"),
    )?;
    let in_k = |rows: &[usize]| -> Vec<usize> { rows.iter().map(|&r| k_row[r]).collect() };
    let (train_k, test_k) = (in_k(&prepared.train_rows), in_k(&prepared.test_rows));
    let order: Vec<usize> = train_k.iter().chain(&test_k).copied().collect();
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
        train.push(layout(k.view(), &train_k, &order));
        test.push(layout(k.view(), &test_k, &order));
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

/// `--gram-ids FILE`: a one-column CSV whose header names the table's id column and whose
/// lines are the ids of K's rows in K's order. Returns K's size, the row of K of every table
/// row, and the file as read (absolute path, SHA-256). Every table row must have an id that
/// the file lists once; K may hold rows the table does not.
fn rows_by_id(table: &Path, ids: &GramFile) -> Result<(usize, Vec<usize>, GramFile)> {
    let path = &ids.path;
    let refuse = |why: String| OvkError::input(format!("--gram-ids {}: {why}", path.display()));
    let text = String::from_utf8(crate::data::files::read_text_file(
        path,
        256 << 20,
        "ids file",
    )?)
    .map_err(|_| refuse("not UTF-8 text".into()))?;
    let mut lines = text.lines().map(str::trim);
    let column = lines
        .next()
        .filter(|h| !h.is_empty())
        .ok_or_else(|| refuse("empty; its first line names the table's id column".into()))?;
    let mut at = std::collections::HashMap::new();
    for (k, id) in lines.enumerate() {
        if id.is_empty() {
            return Err(refuse(format!("line {} is empty; one id per line", k + 2)));
        }
        if let Some(first) = at.insert(id.to_string(), k) {
            return Err(refuse(format!(
                "the id `{id}` is on lines {} and {}; each row of K has one id",
                first + 2,
                k + 2
            )));
        }
    }
    let cells = crate::data::column_text(table, column)?;
    let mut seen = std::collections::HashMap::new();
    let mut k_row = Vec::with_capacity(cells.len());
    for (r, cell) in cells.iter().enumerate() {
        let row = crate::data::row_label(r);
        let id = cell.as_deref().ok_or_else(|| {
            OvkError::input(format!(
                "{}: column `{column}` has no id in {row}",
                table.display()
            ))
        })?;
        if let Some(other) = seen.insert(id.to_string(), r) {
            return Err(OvkError::input(format!(
                "{}: the id `{id}` of column `{column}` is in {} and {row}; each row needs its own",
                table.display(),
                crate::data::row_label(other)
            )));
        }
        k_row.push(*at.get(id).ok_or_else(|| {
            refuse(format!(
                "lists no id `{id}` (column `{column}` of {row} of {})",
                table.display()
            ))
        })?);
    }
    let read = GramFile {
        view: None,
        path: std::path::absolute(path).unwrap_or_else(|_| path.clone()),
        sha256: Some(crate::data::sha256_file(path)?),
    };
    Ok((at.len(), k_row, read))
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
