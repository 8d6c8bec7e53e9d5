//! Drawing pieces the panes share: the half-block heatmap with its legend, charts with log
//! axes, the phase gauge, and tables of a method's per-step records.

pub mod gauge;
pub mod heatmap;
pub mod log_chart;
pub mod record_table;

/// A number in at most ~9 characters: `0.1234`, `12.35`, `1.2e-5`, `3.4e+7`.
pub fn fmt_num(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    let a = x.abs();
    if a == 0.0 {
        "0".into()
    } else if !(1e-3..1e5).contains(&a) {
        format!("{x:.2e}")
    } else if a >= 100.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.4}")
    }
}

/// A duration in seconds as `1.2 s`, `3 m 05 s`.
pub fn fmt_secs(s: f64) -> String {
    if !s.is_finite() || s < 0.0 {
        "—".into()
    } else if s < 60.0 {
        format!("{s:.1} s")
    } else {
        let m = (s / 60.0).floor();
        format!("{m:.0} m {:02.0} s", s - 60.0 * m)
    }
}

/// "1 iteration", "3 iterations": `n` and a noun that takes an s in the plural.
pub fn count(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// The last part of a path (`iris.csv`), or the whole path when it has none.
pub fn file_name(p: &std::path::Path) -> String {
    p.file_name()
        .map_or_else(|| p.display().to_string(), |f| f.to_string_lossy().into())
}

/// Clip `s` to `w` characters (by char, never mid-codepoint), marking a cut with `…`.
pub fn clip(s: &str, w: usize) -> String {
    if s.chars().count() <= w {
        s.to_string()
    } else if w == 0 {
        String::new()
    } else {
        let mut out: String = s.chars().take(w - 1).collect();
        out.push('…');
        out
    }
}

/// Fit the phrase `s` into `w` characters, cut after its last whole clause (at ", " "; " or
/// ": ") that fits, with " …" after it — "scales to 10⁵ outputs …", not "certificate of g…".
/// A clause boundary too early to say much falls back to `clip`.
pub fn clip_phrase(s: &str, w: usize) -> String {
    if s.chars().count() <= w {
        return s.to_string();
    }
    let cut = [", ", "; ", ": "]
        .iter()
        .flat_map(|sep| s.match_indices(sep).map(|(i, _)| i))
        .filter(|&i| s[..i].chars().count() + 2 <= w)
        .max();
    match cut {
        Some(i) if s[..i].chars().count() * 2 >= w => format!("{} …", &s[..i]),
        _ => clip(s, w),
    }
}

/// Fit `s` into `w` characters by cutting its middle (`target_LBL_…_sad_lonely`): names that
/// share a long prefix keep the end that tells them apart.
pub fn clip_middle(s: &str, w: usize) -> String {
    let n = s.chars().count();
    if n <= w {
        return s.to_string();
    }
    if w < 5 {
        return clip(s, w);
    }
    // the end gets two thirds: it is what tells `label_…_calm` from `label_…_still`
    let head = (w - 1) / 3;
    let tail = w - 1 - head;
    let mut out: String = s.chars().take(head).collect();
    out.push('…');
    out.extend(s.chars().skip(n - tail));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phrase_is_cut_after_a_whole_clause() {
        let s =
            "low-rank output kernel learning: L = BBᵀ of rank p, scales to 10⁵ outputs, with a \
                 certificate of global optimality";
        assert_eq!(
            clip_phrase(s, 100),
            "low-rank output kernel learning: L = BBᵀ of rank p, scales to 10⁵ outputs …"
        );
        assert_eq!(clip_phrase(s, 200), s);
        // no clause ends late enough: cut with the usual mark
        assert_eq!(
            clip_phrase("one two three four five", 10),
            clip("one two three four five", 10)
        );
    }

    #[test]
    fn the_middle_goes_and_both_ends_stay() {
        assert_eq!(
            clip_middle("label_amazed_suprised", 30),
            "label_amazed_suprised"
        );
        assert_eq!(clip_middle("label_amazed_suprised", 11), "lab…uprised");
        assert_eq!(clip_middle("label_amazed_suprised", 11).chars().count(), 11);
        assert_eq!(clip_middle("abcdefgh", 3), "ab…");
        assert_eq!(clip_middle("ééééééééé", 6).chars().count(), 6);
    }
}
