//! Method and Kernel panes: choosing a method (each keeps its own form) and editing fields.

use ovk_core::methods;

use super::super::action::Action;
use super::super::effect::Effect;
use super::super::state::{KernelState, Pane, State};
use super::{delta, moved};

pub(super) fn on_key(s: &mut State, a: Action) -> Vec<Effect> {
    if let Some(d) = delta(&a) {
        match s.pane {
            Pane::Method => s.method.cursor = moved(s.method.cursor, d, methods::registry().len()),
            _ => s.kernel.cursor = moved(s.kernel.cursor, d, s.kernel.visible().len()),
        }
        return vec![];
    }
    match (s.pane, a) {
        (Pane::Method, Action::Enter) => choose_method(s),
        (Pane::Kernel, Action::Back) => {
            if let Some(i) = s.kernel.current() {
                s.kernel.fields[i].text = std::mem::take(&mut s.kernel.backup);
                s.kernel.fields[i].validate();
            }
            s.kernel.editing = false;
            vec![]
        }
        (Pane::Kernel, Action::Enter) if s.kernel.editing => {
            s.kernel.editing = false;
            let running = s.is_running();
            if let Some(i) = s.kernel.current() {
                let f = &mut s.kernel.fields[i];
                // "Empty = the method's default" for every field: the default is written back,
                // so the field shows the value the fit will use.
                let emptied = f.text.trim().is_empty();
                if emptied {
                    f.text = f.default_text();
                    f.validate();
                }
                let default = if emptied && !f.text.is_empty() {
                    " (the default)"
                } else {
                    ""
                };
                let later = if running {
                    " (applies to the next fit; the running one keeps its values)"
                } else {
                    ""
                };
                s.status = match &f.error {
                    Some(e) => format!("{} refused: {e}", f.key()),
                    None => format!("{} = {}{default}{later}", f.key(), f.text),
                };
            }
            vec![]
        }
        (Pane::Kernel, Action::Enter) => {
            if s.replay.is_some() {
                s.status = "replay is read-only".into();
            } else if let Some(i) = s.kernel.current() {
                s.kernel.backup = s.kernel.fields[i].text.clone();
                s.kernel.editing = true;
            }
            vec![]
        }
        (Pane::Kernel, Action::Space) if s.replay.is_none() => {
            if let Some(i) = s.kernel.current() {
                if s.kernel.fields[i].cycles() {
                    s.kernel.fields[i].cycle();
                    let visible = s.kernel.visible().len();
                    s.kernel.cursor = s.kernel.cursor.min(visible.saturating_sub(1));
                }
            }
            vec![]
        }
        _ => vec![],
    }
}

/// Make the highlighted method the chosen one. The form of the method left is kept; the new
/// one gets its own last form, or its defaults with the shared input kernel.
fn choose_method(s: &mut State) -> Vec<Effect> {
    if s.replay.is_some() {
        s.status = "replay is read-only".into();
        return vec![];
    }
    let list = methods::registry();
    let Some(m) = list.get(s.method.cursor) else {
        return vec![];
    };
    if let Some(old) = s.method() {
        s.kernel_by_method
            .insert(old.name().to_string(), s.kernel.clone());
    }
    s.method.chosen = s.method.cursor;
    let mut k = match s.kernel_by_method.get(m.name()) {
        Some(saved) => saved.clone(),
        None => KernelState::for_method(*m, None),
    };
    // The input kernel is one choice for all methods: take the current one.
    for f in k.fields.iter_mut().filter(|f| f.is_kernel()) {
        if let Some(cur) = s.kernel.fields.iter().find(|c| c.key() == f.key()) {
            f.text = cur.text.clone();
            f.validate();
        }
    }
    k.cursor = 0;
    k.editing = false;
    s.kernel = k;
    s.status = format!(
        "method {} — its own hyperparameters are in Kernel (3); the input kernel is shared",
        m.name()
    );
    s.pane = Pane::Kernel;
    vec![]
}
