//! First guess of the column roles when a table is opened: from the sidecar `<stem>.toml`
//! beside the file when there is one, else from the naming convention of the bundled datasets
//! (`target_*` regression outputs, `label_*` multi-label indicators). The user then edits them.

use super::state::Role;

/// Roles for `columns`, and a note saying where they came from (`None`: nothing was guessed).
pub fn prefill(columns: &[String], sidecar: Option<&str>) -> (Vec<Role>, Option<String>) {
    if let Some(text) = sidecar {
        if let Some(roles) = from_sidecar(columns, text) {
            return (roles, Some("roles from the sidecar file".into()));
        }
    }
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
        guessed.then(|| "targets guessed from column names (target_*, label_*)".into()),
    )
}

/// Read `class`, `targets`, `features`, `views`, `ignore` from the top level or a `[data]` or
/// `[roles]` table. Unknown layouts give `None` (the convention applies instead).
fn from_sidecar(columns: &[String], text: &str) -> Option<Vec<Role>> {
    let root: toml::Value = toml::from_str(text).ok()?;
    let t = root
        .get("data")
        .or_else(|| root.get("roles"))
        .filter(|v| v.is_table())
        .unwrap_or(&root);
    let list = |key: &str| -> Vec<String> {
        match t.get(key) {
            Some(toml::Value::String(s)) => s.split(',').map(|p| p.trim().to_string()).collect(),
            Some(toml::Value::Array(a)) => a
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        }
    };
    let class = list("class");
    let targets = list("targets");
    let features = list("features");
    // `[views]` maps a view name to a column prefix (those columns get the View role) or to
    // selectors (left as features: the engine reads such views from the sidecar itself).
    let mut views = list("views");
    if let Some(toml::Value::Table(tv)) = t.get("views") {
        views = tv
            .values()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
    }
    let ignore = list("ignore");
    if class.is_empty() && targets.is_empty() && features.is_empty() && views.is_empty() {
        return None;
    }
    if columns.is_empty() {
        return None;
    }
    let hit = |pats: &[String], i: usize| pats.iter().any(|p| matches(p, columns, i));
    Some(
        (0..columns.len())
            .map(|i| {
                let prefix = columns[i].split('_').next().unwrap_or("");
                if hit(&class, i) {
                    Role::Class
                } else if hit(&targets, i) {
                    Role::Target
                } else if hit(&ignore, i) {
                    Role::Ignore
                } else if views.iter().any(|v| v == prefix) {
                    Role::View
                } else if features.is_empty() || hit(&features, i) {
                    Role::Feature
                } else {
                    Role::Ignore
                }
            })
            .collect(),
    )
}

/// A name, a glob with `*`, or a range `first..last` of column names.
fn matches(pattern: &str, columns: &[String], i: usize) -> bool {
    let name = columns[i].as_str();
    if let Some((a, b)) = pattern.split_once("..") {
        let pos = |n: &str| columns.iter().position(|c| c == n.trim());
        return match (pos(a), pos(b)) {
            (Some(a), Some(b)) => (a.min(b)..=a.max(b)).contains(&i),
            _ => false,
        };
    }
    match pattern.split_once('*') {
        Some((pre, post)) => {
            name.len() >= pre.len() + post.len() && name.starts_with(pre) && name.ends_with(post)
        }
        None => name == pattern,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cols(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn convention_marks_targets() {
        let (r, note) = prefill(&cols(&["a", "target_y", "label_z"]), None);
        assert_eq!(r, vec![Role::Feature, Role::Target, Role::Target]);
        assert!(note.is_some());
        let (_, note) = prefill(&cols(&["a", "digit"]), None);
        assert!(note.is_none());
    }

    #[test]
    fn sidecar_class_globs_ranges_and_views() {
        let c = cols(&["fou_1", "fou_2", "kar_1", "digit"]);
        let (r, _) = prefill(
            &c,
            Some("[data]\nclass = \"digit\"\nviews = [\"fou\", \"kar\"]\n"),
        );
        assert_eq!(r, vec![Role::View, Role::View, Role::View, Role::Class]);
        let (r, _) = prefill(&c, Some("class = 'digit'\nfeatures = ['fou_1..kar_1']\n"));
        assert_eq!(
            r,
            vec![Role::Feature, Role::Feature, Role::Feature, Role::Class]
        );
        let (r, _) = prefill(&c, Some("targets = ['fou_*']\n"));
        assert_eq!(
            r,
            vec![Role::Target, Role::Target, Role::Feature, Role::Feature]
        );
        // The data helper's layout: `[views]` name = prefix, or name = [selectors].
        let text = "class = \"digit\"\n[views]\nfou = \"fou\"\nrest = [\"kar_1..kar_1\"]\n";
        let (r, _) = prefill(&c, Some(text));
        assert_eq!(r, vec![Role::View, Role::View, Role::Feature, Role::Class]);
        // An unreadable sidecar falls back to the convention.
        let (r, _) = prefill(&c, Some("not toml ["));
        assert_eq!(r, vec![Role::Feature; 4]);
    }
}
