//! `ovk completions SHELL` and `ovk man`: the shell completion script and the man page,
//! generated from the same clap definitions as the parser (every `ovk run` option included),
//! so they never drift from the flags.

use clap_complete::Shell;
use ovk_core::{OvkError, Result};

/// Print the completion script for `shell` on standard output.
pub fn completions(shell: Shell) -> Result<i32> {
    let mut cmd = super::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "ovk", &mut out);
    write_out(&out)
}

/// Print the man page (roff) of `ovk` and of each of its commands on standard output.
pub fn man_page() -> Result<i32> {
    let cmd = super::command();
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .render(&mut out)
        .map_err(|e| OvkError::internal(format!("rendering the man page: {e}")))?;
    for sub in cmd.get_subcommands().filter(|c| !c.is_hide_set()) {
        let name = format!("ovk-{}", sub.get_name());
        let page = clap_mangen::Man::new(sub.clone().name(name));
        page.render_title(&mut out)
            .and_then(|_| page.render_name_section(&mut out))
            .and_then(|_| page.render_synopsis_section(&mut out))
            .and_then(|_| page.render_description_section(&mut out))
            .and_then(|_| page.render_options_section(&mut out))
            .map_err(|e| OvkError::internal(format!("rendering the man page: {e}")))?;
    }
    write_out(&out)
}

/// Generated text (UTF-8) on standard output, through the console's never-panicking writer.
fn write_out(bytes: &[u8]) -> Result<i32> {
    out!("{}", String::from_utf8_lossy(bytes))?;
    Ok(0)
}
