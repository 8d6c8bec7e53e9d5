//! `ovk export --figure`: an SVG whose labels name every output, a PNG that decodes, and clear
//! refusals.

use crate::common::binary;

use binary::{ovk, stderr as err};

#[test]
fn an_output_kernel_figure_names_every_output_in_svg_and_decodes_as_png() {
    let dir = binary::temp_dir("figures", "okl", true);
    let store = dir.join("store");
    let run = ovk(
        &[
            "run",
            "--data",
            "datasets/emotions.csv",
            "--method",
            "okl",
            "--name",
            "fig",
        ],
        &store,
    );
    assert!(run.status.success(), "{}", err(&run));
    let svg = dir.join("L.svg");
    let o = ovk(
        &[
            "export",
            "fig",
            "--figure",
            "output_kernel",
            svg.to_str().unwrap(),
            "--order",
            "clustered",
            "--correlation",
        ],
        &store,
    );
    if err(&o).contains("need a TrueType font") {
        // a machine without any of the usual fonts: refused with the advice, exit 2
        assert_eq!(o.status.code(), Some(2));
        return;
    }
    assert!(o.status.success(), "{}", err(&o));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"));
    assert_eq!(
        text.matches("<text").count(),
        text.matches("</text>").count(),
        "every text element closed"
    );
    let labels: Vec<&str> = text
        .split("<text")
        .skip(1)
        .filter_map(|t| t.split_once('>').map(|(_, rest)| rest))
        .filter_map(|t| t.split("</text>").next())
        .map(str::trim)
        .collect();
    let header = std::fs::read_to_string(binary::root().join("datasets/emotions.csv")).unwrap();
    let outputs: Vec<&str> = header
        .lines()
        .next()
        .unwrap()
        .split(',')
        .filter(|c| c.starts_with("label_"))
        .collect();
    assert_eq!(outputs.len(), 6);
    for name in &outputs {
        assert!(
            labels.iter().any(|l| l.ends_with(name)),
            "{name} is not a label of the figure: {labels:?}"
        );
    }
    assert!(labels.iter().any(|l| l.contains("clustered")), "{labels:?}");
    // the same figure as PNG: a valid image of the figure's size
    let png = dir.join("L.png");
    let o = ovk(
        &[
            "export",
            "fig",
            "--figure",
            "output_kernel",
            png.to_str().unwrap(),
        ],
        &store,
    );
    assert!(o.status.success(), "{}", err(&o));
    let decoder = png::Decoder::new(std::fs::File::open(&png).unwrap());
    let reader = decoder.read_info().unwrap();
    let info = reader.info();
    assert_eq!((info.width, info.height), ovk::figure::SIZE);
    // the trace too
    let trace = dir.join("trace.svg");
    let o = ovk(
        &[
            "export",
            "fig",
            "--figure",
            "trace",
            trace.to_str().unwrap(),
        ],
        &store,
    );
    assert!(o.status.success(), "{}", err(&o));
    assert!(std::fs::read_to_string(&trace)
        .unwrap()
        .contains("objective"));
}

#[test]
fn a_figure_is_refused_for_an_unknown_format_a_missing_matrix_or_path() {
    let dir = binary::temp_dir("figures", "refusals", true);
    let store = dir.join("store");
    let run = ovk(
        &[
            "run",
            "--data",
            "datasets/linnerud.csv",
            "--method",
            "krr",
            "--name",
            "k",
        ],
        &store,
    );
    assert!(run.status.success(), "{}", err(&run));
    for (name, file, says) in [
        ("output_kernel", "L.txt", ".svg or .png"),
        ("no_such_matrix", "x.svg", "no_such_matrix"),
        ("lambda_path", "p.svg", "no λ path"),
        ("sweep", "s.svg", "holds no sweep"),
    ] {
        let out = dir.join(file);
        let o = ovk(
            &["export", "k", "--figure", name, out.to_str().unwrap()],
            &store,
        );
        assert_eq!(o.status.code(), Some(2), "{name}: {}", err(&o));
        assert!(err(&o).contains(says), "{name}: {}", err(&o));
        assert!(!out.exists(), "{name}: nothing written");
    }
}
