//! The one font figures are measured and drawn with, found once per process.

use std::path::PathBuf;
use std::sync::OnceLock;

use ovk_core::{OvkError, Result};
use plotters::style::FontStyle;

/// Where common systems keep a sans-serif TrueType font.
const SYSTEM_FONTS: [&str; 8] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/truetype/freefont/FreeSans.ttf",
    "/System/Library/Fonts/Supplemental/Arial.ttf",
    "/Library/Fonts/Arial.ttf",
];

/// Register the font as plotters' "sans-serif" (once); refuse with advice when none is found.
pub fn ensure() -> Result<()> {
    static FOUND: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    FOUND.get_or_init(register).clone().map_err(OvkError::input)
}

fn register() -> std::result::Result<(), String> {
    let candidates: Vec<PathBuf> = std::env::var_os("OVK_FONT")
        .map(PathBuf::from)
        .into_iter()
        .chain(SYSTEM_FONTS.iter().map(PathBuf::from))
        .collect();
    for path in &candidates {
        let Ok(bytes) = std::fs::read(path) else {
            continue;
        };
        // plotters keeps fonts for the life of the process
        let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        if plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok() {
            return Ok(());
        }
        if std::env::var_os("OVK_FONT").is_some_and(|f| *path == f) {
            return Err(format!(
                "OVK_FONT={}: not a TrueType or OpenType font",
                path.display()
            ));
        }
    }
    Err(
        "a figure's labels need a TrueType font and none was found (looked for DejaVu Sans, \
         Liberation Sans, FreeSans, Arial); set OVK_FONT=/path/to/font.ttf"
            .into(),
    )
}
