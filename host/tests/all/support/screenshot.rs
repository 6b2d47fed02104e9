//! Screenshots of reports: a page rendered in headless Chromium (MLPERF_HOST_CHROMIUM, set by
//! scripts/test.sh), each plot found by its colour.

use std::path::Path;
use std::process::Command;

/// Renders `page` in headless Chromium and finds each plot's colour in the screenshot.
pub(crate) fn shows_every_plot(page: &Path, plots: &[(&str, &str)]) {
    let dir = page.parent().expect("a page in a folder");
    let Some(chromium) = std::env::var_os("MLPERF_HOST_CHROMIUM") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI sets MLPERF_HOST_CHROMIUM (scripts/test.sh)"
        );
        eprintln!("MLPERF_HOST_CHROMIUM is not set: the screenshot check is skipped");
        return;
    };
    let page = format!("file://{}", page.display());
    let shot = dir.join("shot.png");
    let output = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--window-size=1400,4000",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(&page)
        .output()
        .expect("start chromium");
    assert!(
        shot.is_file(),
        "no screenshot\n{}",
        super::describe(&output)
    );

    let decoder = png::Decoder::new(std::fs::File::open(&shot).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size()];
    let frame = reader.next_frame(&mut pixels).unwrap();
    let channels = frame.color_type.samples();
    assert!(channels >= 3, "{:?}", frame.color_type);
    let pixels = &pixels[..frame.buffer_size()];
    for &(plot, color) in plots {
        let rgb = [
            u8::from_str_radix(&color[1..3], 16).unwrap(),
            u8::from_str_radix(&color[3..5], 16).unwrap(),
            u8::from_str_radix(&color[5..7], 16).unwrap(),
        ];
        let count = pixels
            .chunks_exact(channels)
            .filter(|pixel| pixel[..3] == rgb)
            .count();
        // The legend's swatch alone is 12 x 8 = 96 pixels per chart.
        assert!(
            count > 200,
            "the {plot} ({color}) has {count} pixels in the screenshot: not drawn"
        );
    }
}
