//! Whether a method fits the data as chosen in the Data pane, said before `r` in the
//! workbench's words: the task the outputs make, and the views a multi-view method needs.

use ovk_core::methods::Method;

use super::DataState;

/// Why `m` cannot run on the data as chosen, or `None` when it can (or nothing is chosen yet).
pub fn misfit(m: &dyn Method, d: &DataState) -> Option<String> {
    if let Some(task) = d.task() {
        if !m.supports(task) {
            return Some(format!(
                "{} handles {}; these outputs make a {} task — choose another method (2), or \
                 other outputs in Data (t c)",
                m.name(),
                m.supported_tasks(),
                task.name()
            ));
        }
    }
    if m.multi_view() && d.table.is_some() && d.views().is_empty() {
        return Some(format!(
            "{} needs views: put feature columns into named views in Data (Space marks, V \
             makes a view)",
            m.name()
        ));
    }
    None
}
