//! Figures for a paper: a learned matrix as a heatmap (output names on both axes, a colour bar,
//! the outputs in file or clustered order, raw or as correlations), the convergence trace, the
//! low-rank OKL λ path and a sweep's cross-validated scores (a curve over one varying setting,
//! a heatmap over two) — drawn by plotters as SVG or PNG, chosen by the file's extension.
//!
//! Text needs a TrueType font to be measured (SVG) and drawn (PNG): `OVK_FONT`, else the usual
//! system fonts. Without one, a figure is refused with that advice rather than drawn unlabelled.

mod curve;
mod font;
mod heatmap;
mod sweep;

use std::io::Write;
use std::path::Path;

use ovk_core::inspect::{self, clustered_order, file_order};
use ovk_core::session::Loaded;
use ovk_core::{OvkError, Result};
use plotters::coord::Shift;
use plotters::prelude::*;

pub use heatmap::Heatmap;

/// Pixel size of every figure.
pub const SIZE: (u32, u32) = (900, 760);

/// The picture formats, by the output file's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Svg,
    Png,
}

impl Format {
    pub fn of(path: &Path) -> Result<Format> {
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("svg") => Ok(Format::Svg),
            Some("png") => Ok(Format::Png),
            _ => Err(OvkError::input(format!(
                "{}: a figure is written as .svg or .png (by the file's extension)",
                path.display()
            ))),
        }
    }
}

/// How a matrix's outputs are ordered in its heatmap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    File,
    Clustered,
}

/// What a figure shows.
#[derive(Debug, Clone, PartialEq)]
pub enum Figure {
    /// A saved matrix by name (`output_kernel`, `metric_a`, …).
    Matrix {
        name: String,
        order: Order,
        correlation: bool,
    },
    /// The objective by iteration.
    Trace,
    /// Validation (and train) MSE along lowrank-okl's λ path.
    LambdaPath,
    /// The sweep's cross-validated score over its varying settings.
    Sweep,
}

impl Figure {
    /// A figure by the name `--figure` takes: `trace`, `lambda_path`, `sweep`, or a matrix.
    pub fn named(name: &str, order: Order, correlation: bool) -> Figure {
        match name {
            "trace" => Figure::Trace,
            "lambda_path" | "path" => Figure::LambdaPath,
            "sweep" | "cv" => Figure::Sweep,
            _ => Figure::Matrix {
                name: name.to_string(),
                order,
                correlation,
            },
        }
    }
}

/// Draw `figure` of session `s` and return the file's bytes.
pub fn render(s: &Loaded, figure: &Figure, format: Format) -> Result<Vec<u8>> {
    font::ensure()?;
    match figure {
        Figure::Matrix {
            name,
            order,
            correlation,
        } => draw(format, &matrix_heatmap(s, name, *order, *correlation)?),
        Figure::Trace => draw(format, &curve::trace(&s.record)?),
        Figure::LambdaPath => draw(format, &curve::lambda_path(&s.record)?),
        Figure::Sweep => match sweep::figure(&s.record)? {
            sweep::SweepFigure::Curve(c) => draw(format, &c),
            sweep::SweepFigure::Grid(h) => draw(format, &h),
        },
    }
}

/// A figure that can paint itself on any plotters backend.
pub trait Paint {
    fn paint<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult;
}

/// The heatmap of a saved matrix: output names on the axes where it is outputs × outputs.
fn matrix_heatmap(s: &Loaded, name: &str, order: Order, correlation: bool) -> Result<Heatmap> {
    let m = s.matrix(name)?;
    let names = &s.record.output_names;
    let square = m.nrows() == m.ncols();
    let labels: Vec<String> = if square && m.nrows() == names.len() {
        names.clone()
    } else {
        (0..m.nrows().max(m.ncols()))
            .map(|i| i.to_string())
            .collect()
    };
    if (correlation || order == Order::Clustered) && !square {
        return Err(OvkError::input(format!(
            "matrix '{name}' is {}×{}: the correlation view and the clustered order need a \
             square matrix (the output kernel L, the metric A)",
            m.nrows(),
            m.ncols()
        )));
    }
    let shown = if correlation {
        inspect::correlation(m.view())
    } else {
        m.clone()
    };
    let ordering = match (square, order) {
        (true, Order::Clustered) => clustered_order(m.view()),
        (true, Order::File) => file_order(m.view()),
        (false, _) => {
            return Ok(Heatmap::new(
                format!("{name} of {}", s.record.name),
                shown,
                (0..m.nrows()).map(|i| i.to_string()).collect(),
                (0..m.ncols()).map(|j| j.to_string()).collect(),
                false,
            ))
        }
    };
    let order = &ordering.order;
    let labels: Vec<String> = order.iter().map(|&i| labels[i].clone()).collect();
    let title = format!(
        "{}{name} of {} — {} order",
        if correlation { "correlation of " } else { "" },
        s.record.name,
        match ordering.kind {
            inspect::OrderKind::File => "file",
            inspect::OrderKind::OptimalLeaf => "clustered (optimal leaf)",
            inspect::OrderKind::Greedy => "clustered (greedy)",
        }
    );
    Ok(Heatmap::new(
        title,
        inspect::permuted(shown.view(), order),
        labels.clone(),
        labels,
        correlation,
    ))
}

/// Paint on an SVG or a PNG canvas of `SIZE` and return the encoded file.
fn draw<P: Paint>(format: Format, figure: &P) -> Result<Vec<u8>> {
    let failed = |e: String| OvkError::input(format!("drawing the figure failed: {e}"));
    match format {
        Format::Svg => {
            let mut text = String::new();
            {
                let root = SVGBackend::with_string(&mut text, SIZE).into_drawing_area();
                figure.paint(&root).map_err(failed)?;
                root.present().map_err(|e| failed(e.to_string()))?;
            }
            Ok(text.into_bytes())
        }
        Format::Png => {
            let (w, h) = SIZE;
            let mut rgb = vec![255u8; (w * h * 3) as usize];
            {
                let root = BitMapBackend::with_buffer(&mut rgb, SIZE).into_drawing_area();
                figure.paint(&root).map_err(failed)?;
                root.present().map_err(|e| failed(e.to_string()))?;
            }
            encode_png(&rgb, w, h).map_err(|e| failed(e.to_string()))
        }
    }
}

/// What a drawing step returns: plotters' errors differ by backend, so they travel as text.
pub type DrawResult = std::result::Result<(), String>;

fn encode_png(rgb: &[u8], w: u32, h: u32) -> std::result::Result<Vec<u8>, png::EncodingError> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc.write_header()?;
        writer.write_image_data(rgb)?;
        writer.finish()?;
    }
    out.flush().ok();
    Ok(out)
}
