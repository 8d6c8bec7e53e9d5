//! File + role choices → training/test matrices: read, pick columns, check cells, code the
//! outputs, split, hide labels, scale, group views.

use ndarray::Array2;
use sha2::{Digest, Sha256};

use super::encode::{encode, RawOutputs};
use super::features;
use super::impute::impute;
use super::load::read_raw_keeping_sparse;
use super::roles::{resolve_roles, OutputColumns, SidecarCache};
use super::rows::{usable_rows, MissingCells};
use super::sparse::{SparseChoice, SparseFeatures};
use super::split::{cv_fold, keep_labels, split, split_by_column, subsample, Split};
use super::views::resolve_views;
use super::{DataConfig, DatasetInfo, PrepareOptions, Prepared, Scaler};
use crate::linalg::select_rows;
use crate::Result;

pub(crate) fn prepare(cfg: &DataConfig, opts: PrepareOptions) -> Result<Prepared> {
    let path = cfg.path.as_path();
    let mut raw = read_raw_keeping_sparse(path)?;
    let mut block = match raw.sparse.take() {
        Some(b) if b.stays_sparse(cfg.sparse) => {
            refuse_choices_of_dense_columns(path, cfg, &raw, &b)?;
            Some(b)
        }
        Some(b) => {
            raw.sparse = Some(b);
            raw = raw.densified()?;
            None
        }
        None if cfg.sparse == SparseChoice::Yes => {
            return Err(crate::error::input_at(
                path,
                "--sparse yes: the file holds no sparse features (LIBSVM, sparse ARFF rows \
                 `{i v, …}`, or Parquet `indices`/`values` list columns); use --sparse auto",
            ))
        }
        None => None,
    };
    let mut sidecar = SidecarCache::new(path);
    let mut roles = roles_over_all(cfg, &raw, block.as_ref(), &mut sidecar)?;
    if let Some(b) = block.as_mut() {
        // An output (or the test marker) among the block's columns becomes an ordinary column.
        let d = raw.columns.len();
        let mut taken: Vec<usize> = roles.outputs.indices();
        taken.extend(roles.test_column);
        taken.retain(|&c| c >= d);
        if !taken.is_empty() {
            let local: Vec<usize> = taken.iter().map(|c| c - d).collect();
            raw.columns.extend(b.take_columns(&local));
            roles = roles_over_all(cfg, &raw, Some(b), &mut sidecar)?;
        }
    }
    let names = raw.names();
    let mut left_out = Vec::new();
    if block.is_some() {
        // The sparse block is the features; an ordinary column that is no output is unused.
        for &c in roles.features.iter().filter(|&&c| c < names.len()) {
            left_out.push((names[c].to_string(), "beside the sparse features"));
        }
        roles.features.clear();
    } else if cfg.features.is_none() {
        roles.features.retain(|&c| {
            let why = features::not_a_default_feature(&raw, c);
            if let Some(why) = why {
                left_out.push((names[c].to_string(), why));
            }
            why.is_none()
        });
        if roles.features.is_empty() {
            return Err(crate::error::input_at(
                path,
                "no feature columns: the columns left are dates, IDs or free text — name the \
                 features with --features",
            ));
        }
    }
    let feats = features::build(path, &raw, &roles.features, cfg.categories.as_deref())?;
    let mut feature_names = feats.names.clone();
    if let Some(b) = &block {
        feature_names = b.names.clone();
    }
    let outputs = RawOutputs::read(&raw, &roles.outputs)?;
    let rows = usable_rows(
        path,
        &feats.first_missing(),
        &feature_names,
        &outputs,
        MissingCells {
            drop: cfg.drop_missing || cfg.impute_missing,
            features_filled_later: cfg.impute_missing,
        },
        opts.allow_unlabeled,
    )?;
    let mut coded = encode(path, &outputs, &rows.labeled, roles.task, cfg.class_coding)?;
    drop(outputs);
    let used: Vec<usize> = rows
        .labeled
        .iter()
        .chain(&rows.unlabeled)
        .copied()
        .collect();
    match &block {
        Some(b) => check_sparse_magnitude(path, b, &used)?,
        None => {
            if let Some((i, j, v)) = feats.first_beyond(&used, MAX_MAGNITUDE) {
                return Err(too_large_error(path, &feature_names[j], v, i));
            }
        }
    }
    check_magnitude(path, &coded.y, &coded.output_names, &rows.labeled)?;

    let parts = parts_of(path, cfg, &raw, &names, roles.test_column, &rows)?;
    let mut x_train = feats.rows(&parts.train);
    let mut x_test = feats.rows(&parts.test);
    let imputed = if cfg.impute_missing {
        Some(impute(
            path,
            &mut x_train,
            &mut x_test,
            &feats.source,
            &feats.groups,
        )?)
    } else {
        None
    };
    let mut views = resolve_views(
        path,
        cfg.views.as_deref(),
        &names,
        &roles.features,
        &mut sidecar,
    )?;
    features::remap_views(&mut views, &feats.source);

    // One dtype per feature as fitted: a one-hot feature carries its text column's.
    let feature_dtypes = match &block {
        Some(b) => vec!["f64".to_string(); b.n_cols()],
        None => feats
            .source
            .iter()
            .map(|&s| raw.columns[roles.features[s]].dtype.clone())
            .collect(),
    };
    let class_column = match &roles.outputs {
        OutputColumns::Class(c) => {
            Some((raw.columns[*c].name.clone(), raw.columns[*c].dtype.clone()))
        }
        OutputColumns::Targets(_) => None,
    };
    let (size, sha256, n_rows) = (raw.size, raw.sha256.clone(), raw.n_rows);
    let categories = feats.categories;
    // The rest needs nothing more of the file's table: its columns (160 MB at 10⁶ rows × 20)
    // are freed while the outputs are split and the features scaled.
    crate::util::drop_later::drop_later(raw);
    let mut y_train = select_rows(coded.y.view(), &parts.train);
    let y_test = select_rows(coded.y.view(), &parts.test);
    // every row is in a part now: with 10⁵ outputs the whole coded matrix is 100+ MB
    coded.y = Array2::zeros((0, 0));

    let is_labeled = super::split::marks(&rows.labeled);
    let mut labeled: Vec<bool> = parts
        .train
        .iter()
        .map(|&i| is_labeled.get(i) == Some(&true))
        .collect();
    if let Some(v) = cfg.labeled {
        let candidates: Vec<usize> = (0..labeled.len()).filter(|&k| labeled[k]).collect();
        let keep = keep_labels(path, candidates.len(), v, cfg.seed)?;
        for (k, keep) in candidates.into_iter().zip(keep) {
            labeled[k] = keep;
        }
    }
    let unlabeled: Vec<usize> = (0..labeled.len()).filter(|&k| !labeled[k]).collect();
    let y_unlabeled_true = select_rows(y_train.view(), &unlabeled);
    for k in unlabeled {
        y_train.row_mut(k).fill(f64::NAN);
    }

    let scaler = match &block {
        Some(b) => {
            // Packed rows carry the standardisation without densifying (`kernels::packed`).
            let scaler = b.scaler(&parts.train, cfg.scale);
            let width = b.width(&parts.train).max(b.width(&parts.test));
            x_train = b.pack(&parts.train, &scaler, width);
            x_test = b.pack(&parts.test, &scaler, width);
            scaler
        }
        None => {
            let scaler = Scaler::fit(&x_train, cfg.scale);
            scaler.apply(&mut x_train);
            scaler.apply(&mut x_test);
            scaler
        }
    };

    let info = DatasetInfo {
        path: cfg.path.clone(),
        absolute_path: std::path::absolute(path).ok(),
        size: Some(size),
        sha256,
        rows: n_rows,
        features: feature_names.clone(),
        targets: coded.output_names.clone(),
        packed_width: block
            .as_ref()
            .map(|_| crate::kernels::packed::width_of(x_train.view())),
    };
    Ok(Prepared {
        x_train,
        y_train,
        y_unlabeled_true,
        labeled,
        x_test,
        y_test,
        train_rows: parts.train,
        test_rows: parts.test,
        feature_names,
        output_names: coded.output_names,
        class_values: coded.class_values,
        task: coded.task,
        views,
        scaler,
        info,
        feature_dtypes,
        class_column,
        categories,
        imputed_rows: imputed.as_ref().map_or(0, |i| i.rows),
        fill: imputed.map(|i| i.fill),
        dropped_rows: rows.dropped,
        left_out,
        grams: Vec::new(),
        gram_ids: None,
        notes: Vec::new(),
    })
}

/// Which rows train and which are held out: the split (seeded, or a test column), then for
/// nested cross-validation the outer fold, for successive halving a seeded subset of the
/// training rows, and the cross-validation fold.
fn parts_of(
    path: &std::path::Path,
    cfg: &DataConfig,
    raw: &super::raw::RawTable,
    names: &[&str],
    test_column: Option<usize>,
    rows: &super::rows::RowUse,
) -> Result<Split> {
    let mut parts = match test_column {
        Some(c) => split_by_column(path, &raw.numeric(c)?, names[c], rows)?,
        None => split(
            path,
            &rows.labeled,
            &rows.unlabeled,
            cfg.test_fraction,
            cfg.seed,
        )?,
    };
    if let Some(outer) = cfg.outer {
        // salted so that the outer folds are not the inner folds of the same rows
        parts = cv_fold(path, &parts, &rows.labeled, outer, cfg.seed ^ OUTER_SALT)?;
    }
    if let Some(n) = cfg.train_rows {
        parts = subsample(path, &parts, n, cfg.seed)?;
    }
    if let Some(cv) = cfg.cv {
        parts = cv_fold(path, &parts, &rows.labeled, cv, cfg.seed)?;
    }
    Ok(parts)
}

/// Seeds the outer folds of a nested cross-validation apart from its inner folds.
const OUTER_SALT: u64 = 0x0de7_0f01;

/// Column roles over the ordinary columns and, after them, the sparse block's.
fn roles_over_all(
    cfg: &DataConfig,
    raw: &super::raw::RawTable,
    block: Option<&SparseFeatures>,
    sidecar: &mut SidecarCache,
) -> Result<super::roles::Roles> {
    let names: Vec<&str> = raw
        .names()
        .into_iter()
        .chain(
            block
                .iter()
                .flat_map(|b| b.names.iter().map(String::as_str)),
        )
        .collect();
    resolve_roles(cfg, &names, sidecar)
}

/// What only ordinary feature columns can do, refused for a sparse block with the way out.
fn refuse_choices_of_dense_columns(
    path: &std::path::Path,
    cfg: &DataConfig,
    raw: &super::raw::RawTable,
    block: &SparseFeatures,
) -> Result<()> {
    // Naming every column of the block (as the workbench does) is choosing the block.
    let whole_block = |sel: &[String]| {
        let names: Vec<&str> = raw
            .names()
            .into_iter()
            .chain(block.names.iter().map(String::as_str))
            .collect();
        let mut got = super::select::resolve(path, &names, sel).unwrap_or_default();
        got.sort_unstable();
        got.len() == block.n_cols()
            && got.first() == Some(&raw.columns.len())
            && got.windows(2).all(|w| w[1] == w[0] + 1)
    };
    let chosen = [
        (
            cfg.features.as_deref().is_some_and(|f| !whole_block(f)),
            "--features",
        ),
        (cfg.views.is_some(), "--views"),
        (cfg.categories.is_some(), "one-hot categories"),
        (cfg.impute_missing, "--missing impute"),
    ];
    match chosen.iter().find(|c| c.0) {
        Some((_, what)) => Err(crate::error::input_at(
            path,
            format!(
                "{what} picks among ordinary columns, and this file's features are kept as one \
                 sparse block (all its index:value columns); read them as columns with \
                 --sparse no, or leave {what} out"
            ),
        )),
        None => Ok(()),
    }
}

/// `check_magnitude` for a sparse block: the largest stored value over `rows`.
pub(super) fn check_sparse_magnitude(
    path: &std::path::Path,
    b: &SparseFeatures,
    rows: &[usize],
) -> Result<()> {
    match b.largest(rows) {
        Some((v, i, j)) if v > MAX_MAGNITUDE => Err(too_large_error(path, &b.names[j], v, i)),
        _ => Ok(()),
    }
}

/// Values beyond this overflow double precision once squared (distances, variances, the
/// objective): 1e154² is about the largest f64.
pub(crate) const MAX_MAGNITUDE: f64 = 1e150;

/// Refuse a finite value so large that the fit would overflow to NaN and then blame λ.
pub(super) fn check_magnitude(
    path: &std::path::Path,
    m: &Array2<f64>,
    names: &[String],
    rows: &[usize],
) -> Result<()> {
    use rayon::prelude::*;
    let too_large = |v: &f64| v.is_finite() && v.abs() > MAX_MAGNITUDE;
    // Rows in parallel to find whether any value is too large; in order to name the first.
    if !rows.par_iter().any(|&i| m.row(i).iter().any(too_large)) {
        return Ok(());
    }
    for &i in rows {
        if let Some(j) = m.row(i).iter().position(too_large) {
            let name = names.get(j).map_or("?", String::as_str);
            return Err(too_large_error(path, name, m[[i, j]], i));
        }
    }
    Ok(())
}

/// The refusal of `v`, in column `name` and file row `i`, as too large to square.
fn too_large_error(path: &std::path::Path, name: &str, v: f64, i: usize) -> crate::OvkError {
    crate::error::input_at(
        path,
        format!(
            "column `{name}` holds {v:e} in {}; values beyond ±{MAX_MAGNITUDE:e} overflow double \
             precision once squared (distances, variances, the objective) — rescale the column \
             (divide it by a power of ten, or take its logarithm)",
            super::raw::row_label(i)
        ),
    )
}

/// SHA-256 of bytes in memory, lower-case hex.
pub(crate) fn sha256_bytes(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// SHA-256 of the file's bytes, lower-case hex (streamed: the file is not held twice).
pub fn sha256_hex(path: &std::path::Path) -> Result<String> {
    sha256_file(path)
}

/// SHA-256 of a file, read in blocks (a large file is never held in memory for it).
pub fn sha256_file(path: &std::path::Path) -> Result<String> {
    use std::io::Read;
    let (mut f, _) = super::files::open_regular(path, "data")?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => hasher.update(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(crate::OvkError::io_path(path, e)),
        }
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}
