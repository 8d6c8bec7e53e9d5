//! First guess of the column roles when a table is opened: from the sidecar `<stem>.toml`
//! beside the file when there is one (read as a run reads it), else from the naming convention of the bundled datasets
//! (`target_*` regression outputs, `label_*` multi-label indicators). The user then edits them.

use std::path::Path;

use ovk_core::data::{self, ColumnSummary, Table};

use super::state::Role;

/// The first guess for every column.
#[derive(Debug, Clone, PartialEq)]
pub struct Prefill {
    pub roles: Vec<Role>,
    /// The view a column belongs to (sidecar `[views]` name, or its prefix for `v`).
    pub views: Vec<Option<String>>,
    /// Where the guess came from, for the Data pane.
    pub source: Option<String>,
}

/// Roles for the table's columns: the sidecar's when it has them, else the naming convention;
/// either way text, date and ID columns start ignored (no kernel reads them).
pub fn prefill(table: &Table, sidecar: Option<&str>) -> Prefill {
    let columns: Vec<String> = table.columns.iter().map(|c| c.name.clone()).collect();
    let read = sidecar.map(|t| from_sidecar(&table.path, &columns, t));
    let refused = match &read {
        Some(Err(why)) => Some(format!("sidecar not used: {why}")),
        _ => None,
    };
    let (mut roles, views, source) = match read {
        Some(Ok(Some((roles, views)))) => (
            roles,
            views,
            Some("roles from the sidecar file".to_string()),
        ),
        _ => {
            let roles: Vec<Role> = columns
                .iter()
                .map(|c| {
                    if c.starts_with("target_") || c.starts_with("label_") {
                        Role::Target
                    } else {
                        Role::Feature
                    }
                })
                .collect();
            let guessed = roles.contains(&Role::Target);
            (
                roles,
                vec![None; columns.len()],
                guessed.then(|| "targets guessed from column names (target_*, label_*)".into()),
            )
        }
    };
    let (mut ignored, mut dates, mut encoded) = (Vec::new(), Vec::new(), Vec::new());
    let mut marker = None;
    for (i, c) in table.columns.iter().enumerate() {
        if !matches!(roles[i], Role::Feature | Role::View) {
            continue;
        }
        if marker.is_none() && marks_test_rows(c) {
            roles[i] = Role::TestMarker;
            marker = Some(c.name.clone());
        } else if c.date_like {
            roles[i] = Role::Ignore;
            dates.push(c.name.clone());
        } else if !usable_feature(c, table.n_rows) {
            roles[i] = Role::Ignore;
            ignored.push(c.name.clone());
        } else if one_hot(c).is_some() {
            encoded.push(c.name.clone());
        }
    }
    let mut notes: Vec<String> = refused.into_iter().chain(source).collect();
    if let Some(m) = marker {
        notes.push(format!(
            "`{m}` marks the test rows (the official split; x on it splits at random)"
        ));
    }
    // "3 text columns one-hot encoded (a, b, c)", the names clipped to `width`.
    for (names, kind, what, width) in [
        (&encoded, "text", "one-hot encoded", 30),
        (&ignored, "text/ID", "ignored", 40),
        (&dates, "date", "ignored, dates are not encoded", 30),
    ] {
        if !names.is_empty() {
            notes.push(format!(
                "{} {kind} column{} {what} ({})",
                names.len(),
                if names.len() == 1 { "" } else { "s" },
                super::widgets::clip(&names.join(", "), width)
            ));
        }
    }
    let source = (!notes.is_empty()).then(|| notes.join("; "));
    Prefill {
        roles,
        views,
        source,
    }
}

/// A 0/1 column named `is_test` (the shared datasets' official split): the test marker.
fn marks_test_rows(c: &ColumnSummary) -> bool {
    c.name.eq_ignore_ascii_case("is_test")
        && c.missing == 0
        && c.min == Some(0.0)
        && c.max == Some(1.0)
}

/// For a text column the engine one-hot encodes as a feature: its number of levels.
pub fn one_hot(c: &ColumnSummary) -> Option<usize> {
    c.levels
        .filter(|&k| k <= ovk_core::data::MAX_LEVELS && !c.date_like)
}

/// Whether a column can be a kernel input: numeric, or text with few values (one-hot); not a
/// date, not a row identifier.
fn usable_feature(c: &ColumnSummary, n_rows: usize) -> bool {
    let dtype = c.dtype.to_ascii_lowercase();
    if c.min.is_none() && c.missing < n_rows {
        // Text: few distinct values are categories; one per row (or many) is an ID or prose.
        return one_hot(c).is_some_and(|k| k < n_rows || n_rows <= 2);
    }
    if dtype.contains("date") || dtype.contains("time") {
        return false;
    }
    let name = c.name.to_ascii_lowercase();
    let id_name = name == "id"
        || name == "index"
        || name.ends_with("_id")
        || name.starts_with("unnamed")
        || name == "row";
    // An integer column counting rows (0..n or 1..n) is an identifier, whatever its name.
    let counts_rows = dtype.starts_with('i') || dtype.starts_with('u');
    let counts_rows = counts_rows
        && n_rows > 20
        && c.missing == 0
        && matches!((c.min, c.max), (Some(lo), Some(hi))
            if (lo == 0.0 && hi == (n_rows - 1) as f64) || (lo == 1.0 && hi == n_rows as f64))
        && c.mean.is_some_and(|m| {
            (m - 0.5 * (c.min.unwrap_or(0.0) + c.max.unwrap_or(0.0))).abs() < 1e-6
        });
    // An ID-named integer column is an identifier too, unless it is 0/1 (delicious' bag of
    // words has `w_form_id`, `w_video_id`); an ID-named float is a measurement.
    let binary = c.min.is_some_and(|lo| lo >= 0.0) && c.max.is_some_and(|hi| hi <= 1.0);
    let identifier = id_name && !dtype.starts_with('f') && !binary;
    !counts_rows && !identifier
}

/// Roles as a run would read the sidecar: parsed by `data::parse_sidecar`, its selectors
/// resolved by `data::select_columns` and its views by `data::view_columns`. `Ok(None)` for a
/// sidecar that names no roles; `Err(why)` for one the run would refuse.
type SidecarRoles = (Vec<Role>, Vec<Option<String>>);

fn from_sidecar(
    table: &Path,
    columns: &[String],
    text: &str,
) -> Result<Option<SidecarRoles>, String> {
    let path = data::sidecar_path(table).unwrap_or_else(|| table.to_path_buf());
    let side = data::parse_sidecar(&path, text).map_err(|e| e.to_string())?;
    if side.class.is_none()
        && side.targets.is_none()
        && side.features.is_none()
        && side.views.is_empty()
    {
        return Ok(None);
    }
    let names: Vec<&str> = columns.iter().map(String::as_str).collect();
    let n = names.len();
    let pick = |selectors: &[String]| -> Result<Vec<bool>, String> {
        let mut hit = vec![false; n];
        for i in data::select_columns(&path, &names, selectors).map_err(|e| e.to_string())? {
            hit[i] = true;
        }
        Ok(hit)
    };
    let class = match &side.class {
        Some(c) => pick(std::slice::from_ref(c))?,
        None => vec![false; n],
    };
    let targets = match &side.targets {
        Some(t) => pick(t)?,
        None => vec![false; n],
    };
    let features = side.features.as_deref().map(pick).transpose()?;
    let mut view_of: Vec<Option<String>> = vec![None; n];
    for (name, spec) in &side.views {
        for i in data::view_columns(&path, spec, &names).map_err(|e| e.to_string())? {
            view_of[i].get_or_insert_with(|| name.clone());
        }
    }
    let roles: Vec<Role> = (0..n)
        .map(|i| {
            if class[i] {
                Role::Class
            } else if targets[i] {
                Role::Target
            } else if view_of[i].is_some() {
                Role::View
            } else if features.as_ref().is_none_or(|f| f[i]) {
                Role::Feature
            } else {
                Role::Ignore
            }
        })
        .collect();
    let views = (0..n)
        .map(|i| {
            (roles[i] == Role::View)
                .then(|| view_of[i].clone())
                .flatten()
        })
        .collect();
    Ok(Some((roles, views)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn num(name: &str) -> ColumnSummary {
        ColumnSummary {
            name: name.into(),
            dtype: "f64".into(),
            missing: 0,
            min: Some(0.0),
            max: Some(1.0),
            mean: Some(0.5),
            ..Default::default()
        }
    }

    fn table(cols: Vec<ColumnSummary>) -> Table {
        Table {
            path: PathBuf::from("t.csv"),
            n_rows: 100,
            columns: cols,
            head: Vec::new(),
            sparse: 0,
        }
    }

    fn names(v: &[&str]) -> Table {
        table(v.iter().map(|n| num(n)).collect())
    }

    #[test]
    fn convention_marks_targets() {
        let p = prefill(&names(&["a", "target_y", "label_z"]), None);
        assert_eq!(p.roles, vec![Role::Feature, Role::Target, Role::Target]);
        assert!(p.source.is_some());
        let p = prefill(&names(&["a", "digit"]), None);
        assert!(p.source.is_none());
    }

    #[test]
    fn an_is_test_column_of_zeros_and_ones_marks_the_test_rows() {
        let mut marker = num("is_test");
        marker.dtype = "i64".into();
        let p = prefill(&table(vec![num("x"), marker.clone(), num("label_a")]), None);
        assert_eq!(p.roles, vec![Role::Feature, Role::TestMarker, Role::Target]);
        assert!(p.source.unwrap().contains("`is_test` marks the test rows"));
        // with a third value it is a feature like any other
        marker.max = Some(2.0);
        let p = prefill(&table(vec![num("x"), marker, num("label_a")]), None);
        assert_eq!(p.roles, vec![Role::Feature, Role::Feature, Role::Target]);
    }

    #[test]
    fn text_date_and_id_columns_start_ignored() {
        let mut text = num("city");
        text.dtype = "str".into();
        text.min = None;
        text.max = None;
        text.mean = None;
        let mut date = num("when");
        date.dtype = "date".into();
        date.date_like = true;
        let mut id = num("row_id");
        id.dtype = "i64".into();
        id.max = Some(5000.0);
        let mut counter = num("n");
        counter.dtype = "i64".into();
        counter.min = Some(0.0);
        counter.max = Some(99.0);
        counter.mean = Some(49.5);
        let p = prefill(
            &table(vec![num("x"), text, date, id, counter, num("target_y")]),
            None,
        );
        assert_eq!(
            p.roles,
            vec![
                Role::Feature,
                Role::Ignore,
                Role::Ignore,
                Role::Ignore,
                Role::Ignore,
                Role::Target
            ]
        );
        let why = p.source.unwrap();
        assert!(why.contains("3 text/ID columns ignored"), "{why}");
        assert!(why.contains("1 date column ignored"), "{why}");
    }

    #[test]
    fn a_binary_column_named_like_an_id_is_a_feature() {
        // delicious' words `form_id`, `video_id` are 0/1 indicators, not row identifiers
        let mut word = num("w_video_id");
        word.dtype = "i64".into();
        let mut id = num("user_id");
        id.dtype = "i64".into();
        id.min = Some(17.0);
        id.max = Some(90_210.0);
        let p = prefill(&table(vec![word, id, num("target_y")]), None);
        assert_eq!(p.roles, vec![Role::Feature, Role::Ignore, Role::Target]);
    }

    #[test]
    fn few_valued_text_is_one_hot_and_unique_text_is_an_id() {
        let text = |name: &str, levels: usize| ColumnSummary {
            name: name.into(),
            dtype: "str".into(),
            levels: Some(levels),
            ..Default::default()
        };
        let mut when = text("when", 90);
        when.date_like = true;
        let p = prefill(
            &table(vec![
                num("x"),
                text("city", 3),
                text("user", 100),
                when,
                num("target_y"),
            ]),
            None,
        );
        assert_eq!(
            p.roles,
            vec![
                Role::Feature,
                Role::Feature,
                Role::Ignore,
                Role::Ignore,
                Role::Target
            ]
        );
        let why = p.source.unwrap();
        assert!(
            why.contains("1 text column one-hot encoded (city)"),
            "{why}"
        );
        assert!(why.contains("date column ignored"), "{why}");
    }

    #[test]
    fn sidecar_class_globs_ranges_and_views() {
        let c = names(&["fou_1", "fou_2", "kar_1", "digit"]);
        let side = |body: &str| format!("source = \"s\"\n{body}");
        let p = prefill(
            &c,
            Some(&side(
                "class = \"digit\"\n[views]\nfou = \"fou\"\nkar = \"kar\"\n",
            )),
        );
        assert_eq!(
            p.roles,
            vec![Role::View, Role::View, Role::View, Role::Class]
        );
        assert_eq!(p.views[2].as_deref(), Some("kar"));
        let p = prefill(
            &c,
            Some(&side("class = 'digit'\nfeatures = ['fou_1..kar_1']\n")),
        );
        assert_eq!(
            p.roles,
            vec![Role::Feature, Role::Feature, Role::Feature, Role::Class]
        );
        let p = prefill(&c, Some(&side("targets = ['fou_*']\n")));
        assert_eq!(
            p.roles,
            vec![Role::Target, Role::Target, Role::Feature, Role::Feature]
        );
        // `[views]` name = prefix, or name = [selectors]: both are views, named.
        let text = side("class = \"digit\"\n[views]\nfou = \"fou\"\nrest = [\"kar_1..kar_1\"]\n");
        let p = prefill(&c, Some(&text));
        assert_eq!(
            p.roles,
            vec![Role::View, Role::View, Role::View, Role::Class]
        );
        assert_eq!(p.views[0].as_deref(), Some("fou"));
        assert_eq!(p.views[2].as_deref(), Some("rest"));
        // A sidecar a run would refuse — unreadable, a reversed range (which the old matcher
        // took), an unknown key — falls back to the convention, saying why.
        for bad in [
            "not toml [".to_string(),
            side("features = ['kar_1..fou_1']\n"),
            side("clas = 'digit'\n"),
        ] {
            let p = prefill(&c, Some(&bad));
            assert_eq!(p.roles, vec![Role::Feature; 4], "{bad}");
            let why = p.source.unwrap_or_default();
            assert!(why.contains("sidecar not used"), "{bad}: {why}");
        }
    }
}
