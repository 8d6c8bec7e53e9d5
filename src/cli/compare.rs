//! `ovk compare ID ID … [--json]`: saved runs side by side (`ovk_core::session::compare`).

use std::path::Path;

use ovk_core::session::compare::{compare as build, Comparison};
use ovk_core::session::{self, display_safe as safe, Store};
use ovk_core::Result;

pub fn compare(ids: &[String], json: bool, sessions: Option<&Path>) -> Result<i32> {
    let store = Store::open(sessions)?;
    let loaded = ids
        .iter()
        .map(|id| {
            let dir = match Path::new(id).is_dir() {
                true => Path::new(id).to_path_buf(),
                false => store.resolve(id)?,
            };
            session::load(&dir)
        })
        .collect::<Result<Vec<_>>>()?;
    let c = build(&loaded)?;
    if json {
        let mut v =
            serde_json::to_value(&c).map_err(|e| ovk_core::OvkError::internal(e.to_string()))?;
        if let Some(d) = &c.kernel_difference {
            v["output_kernel_difference"] = serde_json::json!({
                "of": [0, 1],
                "max_abs": d.iter().fold(0.0f64, |a, x| a.max(x.abs())),
                "frobenius": d.iter().map(|x| x * x).sum::<f64>().sqrt(),
            });
        }
        outln!("{v}")?;
    } else {
        outln!("{}", render(&c))?;
    }
    Ok(0)
}

/// The comparison as text: one column per run, `*` on the best value of each row.
pub fn render(c: &Comparison) -> String {
    let n = c.runs.len();
    let width = 16;
    let mut out = String::new();
    let head = |label: &str, cells: Vec<String>| -> String {
        let mut line = format!("{label:<24}");
        for cell in cells {
            line.push_str(&format!(" {cell:>width$}"));
        }
        line.push('\n');
        line
    };
    out.push_str(&head("", (1..=n).map(|k| format!("run {k}")).collect()));
    out.push_str(&head(
        "method",
        c.runs.iter().map(|r| safe(&r.method)).collect(),
    ));
    out.push_str(&head(
        "name",
        c.runs.iter().map(|r| cut(&safe(&r.name), width)).collect(),
    ));
    out.push_str(&head(
        "rows (split)",
        c.runs
            .iter()
            .map(|r| r.split[..8.min(r.split.len())].to_string())
            .collect(),
    ));
    out.push_str(&head(
        "cv folds",
        c.runs
            .iter()
            .map(|r| {
                r.folds
                    .as_deref()
                    .map_or("-".to_string(), |f| f[..8.min(f.len())].to_string())
            })
            .collect(),
    ));
    out.push('\n');
    for row in &c.metrics {
        let cells = (0..n)
            .map(|k| {
                let mark = if row.best == Some(k) { "*" } else { " " };
                match (row.values[k], row.sd[k]) {
                    (Some(v), Some(sd)) => format!("{v:.4}±{sd:.4}{mark}"),
                    (Some(v), None) => {
                        let opt = if row.part == "test" && c.runs[k].optimistic.is_some() {
                            "†"
                        } else {
                            ""
                        };
                        format!("{v:.4}{opt}{mark}")
                    }
                    _ => "-".to_string(),
                }
            })
            .collect();
        let arrow = if row.higher_is_better { "↑" } else { "↓" };
        out.push_str(&head(
            &format!("{} {} {arrow}", row.part, row.metric),
            cells,
        ));
    }
    if c.runs.iter().any(|r| r.optimistic.is_some()) {
        out.push_str("† optimistic: those test rows also chose hyperparameters\n");
    }
    if let Some(p) = &c.per_output {
        out.push_str(&format!("\nper output: {} on the test rows\n", p.metric));
        for (j, name) in p.outputs.iter().enumerate() {
            let cells = (0..n)
                .map(|k| match p.values[j][k] {
                    Some(v) => format!("{v:.4}{}", if p.best[j] == Some(k) { "*" } else { " " }),
                    None => "-".into(),
                })
                .collect();
            out.push_str(&head(&cut(&safe(name), 24), cells));
        }
    }
    if !c.paired.is_empty() {
        let k = c.paired[0].test.n;
        out.push_str(&format!(
            "\npaired tests over {k} shared folds (difference = run a − run b)\n{:<24} {:>5} {:>12} {:>10} {:>12}\n",
            "metric", "a−b", "mean diff", "t p", "Wilcoxon p"
        ));
        for p in &c.paired {
            out.push_str(&format!(
                "{:<24} {:>5} {:>12.4} {:>10} {:>12}\n",
                p.metric,
                format!("{}−{}", p.a + 1, p.b + 1),
                p.test.mean_difference,
                pvalue(p.test.t_p),
                pvalue(p.test.w_p)
            ));
        }
        if let Some(caveat) = &c.caveat {
            out.push_str(&format!("note: {caveat}\n"));
        }
    }
    if let Some(d) = &c.kernel_difference {
        let max = d.iter().fold(0.0f64, |a, x| a.max(x.abs()));
        out.push_str(&format!(
            "\noutput kernels: run 1 − run 2, max |difference| {max:.4} (the workbench and \
             `ovk export --figure kernel-difference` draw it)\n"
        ));
    }
    for note in &c.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    out
}

fn pvalue(p: f64) -> String {
    if p.is_nan() {
        "-".into()
    } else if p < 1e-4 {
        format!("{p:.1e}")
    } else {
        format!("{p:.4}")
    }
}

/// `s` in at most `w` characters, with a middle ellipsis that keeps its end.
fn cut(s: &str, w: usize) -> String {
    let chars: Vec<char> = s.chars().collect();
    if chars.len() <= w {
        return s.to_string();
    }
    let tail = (w - 1) / 2;
    let head = w - 1 - tail;
    let mut out: String = chars[..head].iter().collect();
    out.push('…');
    out.extend(&chars[chars.len() - tail..]);
    out
}
