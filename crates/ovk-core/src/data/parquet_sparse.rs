//! Sparse features in a Parquet file, as scipy's CSR or a Hugging Face dataset stores them:
//! two list columns `<p>indices` (integers ≥ 0, the 0-based feature indices of each row) and
//! `<p>values` (its non-zero values, in the same order). They become a sparse block
//! (`RawTable::sparse`) of features named `<p><i>` (`f<i>` when `p` is empty) for every index
//! from 0 to the largest, like a LIBSVM file's.

use std::path::Path;

use polars::prelude::*;

use super::sparse::SparseFeatures;
use crate::error::input_at;
use crate::Result;

const INDICES: &str = "indices";
const VALUES: &str = "values";

/// The sparse block of `df`'s list-column pair, taken out of the frame; `None` when it has
/// no such pair.
pub(super) fn take_sparse_lists(path: &Path, df: &mut DataFrame) -> Result<Option<SparseFeatures>> {
    let is_list = |c: &Column| matches!(c.dtype(), DataType::List(_));
    let lists: Vec<String> = df
        .columns()
        .iter()
        .filter(|c| is_list(c))
        .map(|c| c.name().to_string())
        .collect();
    let Some(prefix) = lists.iter().find_map(|n| {
        let p = n.strip_suffix(INDICES)?;
        lists
            .contains(&format!("{p}{VALUES}"))
            .then(|| p.to_string())
    }) else {
        return Ok(None);
    };
    let (idx_name, val_name) = (format!("{prefix}{INDICES}"), format!("{prefix}{VALUES}"));
    let fail = |e: PolarsError| input_at(path, format!("columns `{idx_name}`, `{val_name}`: {e}"));
    let as_list = |name: &str, inner: DataType| -> Result<ListChunked> {
        let c = df
            .column(name)
            .map_err(fail)?
            .cast(&DataType::List(Box::new(inner)))
            .map_err(fail)?;
        Ok(c.list().map_err(fail)?.clone())
    };
    let (idx_ca, val_ca) = (
        as_list(&idx_name, DataType::Int64)?,
        as_list(&val_name, DataType::Float64)?,
    );
    let indices = list_rows(&idx_ca, |s| Ok(s.i64()?.iter().collect())).map_err(fail)?;
    let values = list_rows(&val_ca, |s| Ok(s.f64()?.iter().collect())).map_err(fail)?;
    let mut rows = Vec::with_capacity(indices.len());
    let mut width = 0usize;
    for (r, (i, v)) in indices.iter().zip(&values).enumerate() {
        let at = |why: String| {
            input_at(
                path,
                format!(
                    "{} of `{idx_name}`/`{val_name}`: {why}",
                    super::raw::row_label(r)
                ),
            )
        };
        if i.len() != v.len() {
            return Err(at(format!("{} indices but {} values", i.len(), v.len())));
        }
        let mut row = Vec::with_capacity(i.len());
        for (&i, &v) in i.iter().zip(v) {
            let j = i
                .and_then(|i| u32::try_from(i).ok())
                .filter(|&j| j < u32::MAX)
                .ok_or_else(|| at(format!("the index {i:?} is not a whole number ≥ 0")))?;
            let x = v
                .filter(|x| x.is_finite())
                .ok_or_else(|| at(format!("the value at index {j} is missing or not finite")))?;
            width = width.max(j as usize + 1);
            row.push((j, x));
        }
        row.sort_unstable_by_key(|e| e.0);
        if let Some(w) = row.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(at(format!("the index {} appears twice", w[0].0)));
        }
        rows.push(row);
    }
    super::cells_fit::check_cells_fit(path, 4, width as u64)?;
    let stem = if prefix.is_empty() { "f" } else { &prefix };
    let names = (0..width).map(|j| format!("{stem}{j}")).collect();
    df.drop_in_place(&idx_name).map_err(fail)?;
    df.drop_in_place(&val_name).map_err(fail)?;
    Ok(Some(SparseFeatures::from_rows(names, rows.into_iter())))
}

/// Each row's list as a vector (a null list is empty), read out at once: the amortised
/// iterator reuses its container.
fn list_rows<T>(
    ca: &ListChunked,
    cells: impl Fn(&Series) -> PolarsResult<Vec<Option<T>>>,
) -> PolarsResult<Vec<Vec<Option<T>>>> {
    ca.amortized_iter()
        .map(|s| s.map_or_else(|| Ok(Vec::new()), |s| cells(s.as_ref())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(idx: Vec<Series>, val: Vec<Series>) -> DataFrame {
        let n = idx.len();
        DataFrame::new_infer_height(vec![
            Column::new("y".into(), (0..n).map(|i| i as f64).collect::<Vec<_>>()),
            Column::new("w_indices".into(), idx),
            Column::new("w_values".into(), val),
        ])
        .unwrap()
    }

    #[test]
    fn a_list_pair_becomes_a_sparse_block_and_leaves_the_frame() {
        let mut df = frame(
            vec![
                Series::new("".into(), [3i64, 0]),
                Series::new("".into(), Vec::<i64>::new()),
                Series::new("".into(), [1i64]),
            ],
            vec![
                Series::new("".into(), [2.5f64, -1.0]),
                Series::new("".into(), Vec::<f64>::new()),
                Series::new("".into(), [4.0f64]),
            ],
        );
        let b = take_sparse_lists(Path::new("t.parquet"), &mut df)
            .unwrap()
            .unwrap();
        assert_eq!(df.width(), 1);
        assert_eq!(b.names, ["w_0", "w_1", "w_2", "w_3"]);
        assert_eq!(b.row(0), (&[0u32, 3][..], &[-1.0, 2.5][..]));
        assert_eq!(b.row(1), (&[][..], &[][..]));
        assert_eq!(b.row(2), (&[1u32][..], &[4.0][..]));
    }

    #[test]
    fn bad_rows_are_named() {
        for (idx, val, want) in [
            (vec![1i64, 1], vec![1.0, 2.0], "appears twice"),
            (vec![-1], vec![1.0], "not a whole number"),
            (vec![1, 2], vec![1.0], "2 indices but 1 values"),
            (vec![0], vec![f64::NAN], "not finite"),
        ] {
            let mut df = frame(
                vec![Series::new("".into(), idx)],
                vec![Series::new("".into(), val)],
            );
            let e = take_sparse_lists(Path::new("t.parquet"), &mut df)
                .unwrap_err()
                .to_string();
            assert!(e.contains(want) && e.contains("data row 1"), "{e}");
        }
    }
}
