//! Names for the rows and columns of a saved matrix, so a heatmap reads "fou ~ kar" rather
//! than "0 ~ 2". The session's `details.axes[name]` says it exactly (`{"rows": AXIS, "cols":
//! AXIS}`, AXIS = `{"labels": [...]}` or `{"blocks": [{"name", "size"}, ...]}`); without it the
//! output names (m), the view names (`details.views`) or the feature names are matched by size,
//! and indices are the last resort.

use ovk_core::session::details::DeclaredAxis;
use ovk_core::session::SessionRecord;

#[derive(Debug, Clone, PartialEq)]
pub struct Axes {
    pub rows: Axis,
    pub cols: Axis,
    /// Rows and columns index the same things (a square similarity such as the output kernel
    /// L): only then is "strongest off-diagonal" meaningful.
    pub same: bool,
}

/// The names along one side of a matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// One per entry.
    pub labels: Vec<String>,
    /// The named blocks the entries come in, in order, as (name, size) — a multi-view metric's
    /// views; empty when the axis declares none.
    pub blocks: Vec<(String, usize)>,
}

impl Axis {
    fn plain(labels: Vec<String>) -> Axis {
        Axis {
            labels,
            blocks: Vec::new(),
        }
    }

    /// A name for the entries `range` taken together (a cell of a heatmap's overview): the
    /// blocks they lie in (`fou`, `fou/fac` across a boundary), else their first and last
    /// labels (`28–41`); one entry is its own label.
    pub fn span(&self, range: std::ops::Range<usize>) -> String {
        let (a, b) = (range.start, range.end.min(self.labels.len()));
        if b <= a + 1 {
            return self.labels.get(a).cloned().unwrap_or_default();
        }
        if self.blocks.is_empty() {
            return format!("{}–{}", self.labels[a], self.labels[b - 1]);
        }
        self.block_starts()
            .into_iter()
            .zip(&self.blocks)
            .filter(|(start, (_, size))| *start < b && start + size > a)
            .map(|(_, (name, _))| name.as_str())
            .collect::<Vec<_>>()
            .join("/")
    }

    /// Where each block begins: the index of its first entry.
    pub fn block_starts(&self) -> Vec<usize> {
        self.blocks
            .iter()
            .scan(0, |at, (_, size)| {
                let start = *at;
                *at += size;
                Some(start)
            })
            .collect()
    }
}

pub fn of(record: &SessionRecord, name: &str, shape: (usize, usize)) -> Axes {
    let (nr, nc) = shape;
    let declared = record.read_details().axes(name).unwrap_or_default();
    let side = |d: Option<DeclaredAxis>, n: usize| -> Axis {
        d.and_then(|d| axis(d, n))
            .unwrap_or_else(|| Axis::plain(guess(record, name, n)))
    };
    let rows = side(declared.rows, nr);
    let cols = side(declared.cols, nc);
    let same = nr == nc && rows.labels == cols.labels;
    Axes { rows, cols, same }
}

/// One declared axis with `n` entries, or `None` when it does not have `n` of them.
fn axis(a: DeclaredAxis, n: usize) -> Option<Axis> {
    if let Some(labels) = a.labels {
        return (labels.len() == n).then(|| Axis::plain(labels));
    }
    let blocks: Vec<(String, usize)> = a.blocks?.into_iter().map(|b| (b.name, b.size)).collect();
    let mut labels = Vec::with_capacity(n);
    for (name, size) in &blocks {
        if *size == 1 {
            labels.push(name.clone());
        } else {
            labels.extend((0..*size).map(|k| format!("{name}·{k}")));
        }
    }
    (labels.len() == n).then_some(Axis { labels, blocks })
}

/// Labels for an undeclared axis of length `n`, by what else has that many entries.
fn guess(record: &SessionRecord, name: &str, n: usize) -> Vec<String> {
    let views = record.read_details().views();
    let outputs = &record.output_names;
    // View matrices name views even when m happens to equal the number of views.
    let viewish = name.starts_with("block_norms") || name.starts_with("view");
    if viewish && views.len() == n {
        return views;
    }
    if outputs.len() == n && n > 0 {
        return outputs.clone();
    }
    if views.len() == n && n > 0 {
        return views;
    }
    if record.feature_names.len() == n && n > 0 && !name.contains("coefficients") {
        return record.feature_names.clone();
    }
    (0..n).map(|i| i.to_string()).collect()
}

/// Each view's kernel width, for multi-view fits.
pub fn view_sigmas(record: &SessionRecord) -> Vec<(String, f64)> {
    record.read_details().view_sigmas()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn views() -> Axis {
        let blocks = serde_json::json!({"blocks": [
            {"name": "fou", "size": 3}, {"name": "fac", "size": 2}, {"name": "mor", "size": 1}
        ]});
        axis(serde_json::from_value(blocks).unwrap(), 6).expect("six entries")
    }

    #[test]
    fn a_span_of_blocks_names_the_blocks_it_covers() {
        let ax = views();
        assert_eq!(
            ax.labels,
            ["fou·0", "fou·1", "fou·2", "fac·0", "fac·1", "mor"]
        );
        assert_eq!(ax.block_starts(), [0, 3, 5]);
        assert_eq!(ax.span(0..3), "fou");
        assert_eq!(ax.span(2..4), "fou/fac");
        assert_eq!(ax.span(3..9), "fac/mor");
        assert_eq!(ax.span(4..5), "fac·1");
    }

    #[test]
    fn a_span_of_plain_labels_names_its_ends() {
        let ax = Axis::plain((0..10).map(|i| i.to_string()).collect());
        assert_eq!(ax.span(0..4), "0–3");
        assert_eq!(ax.span(8..12), "8–9");
        assert_eq!(ax.span(9..12), "9");
    }
}
