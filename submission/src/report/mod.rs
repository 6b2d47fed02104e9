//! `mlperf-host report`: one self-contained HTML file (inline SVG and CSS, no script, nothing
//! fetched when viewed) showing run folders: per run the verdict and its reasons, the metric,
//! the latency histogram and percentile curve, issued and completed samples per second over
//! time, token latencies, the power trace with its window, settings and provenance; for several
//! runs a comparison table first.

mod breakdown;
mod data;
mod svg;
mod sweep;

use std::fmt::Write as _;
use std::path::PathBuf;

pub use data::{read_run, RunData};
use svg::{escape, Chart, Series};
pub use sweep::{
    is_sweep, pareto_frontier, read_sweep, SweepData, SweepPointData, P50_COLOR, P90_COLOR,
    P99_COLOR, PARETO_COLOR, SWEEP_POINTS_COLOR,
};

use crate::results::ResultsError;
use crate::run_folder::UNNAMED_MODEL;

/// The colours of the plots (the tests find each plot by its colour in a screenshot).
pub const HISTOGRAM_COLOR: &str = "#3b6fb6";
pub const PERCENTILE_COLOR: &str = "#c2410c";
pub const ISSUED_COLOR: &str = "#15803d";
pub const COMPLETED_COLOR: &str = "#7c3aed";
pub const POWER_COLOR: &str = "#b91c1c";

/// Bins of the latency histogram and of the rates over time.
const HISTOGRAM_BINS: usize = 40;
const TIME_BINS: usize = 60;

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{}: not a run folder (no mlperf_log_summary.txt and mlperf_log_detail.txt)", .0.display())]
    NotARun(PathBuf),
    #[error("{}: {message}", path.display())]
    Read { path: PathBuf, message: String },
    #[error(transparent)]
    Results(#[from] ResultsError),
    #[error(transparent)]
    Log(#[from] crate::logs::DetailLogError),
}

/// The report of these runs, as one HTML document.
pub fn render(runs: &[RunData]) -> String {
    render_with_sweeps(runs, &[])
}

/// The report of these runs and load sweeps, as one HTML document.
pub fn render_with_sweeps(runs: &[RunData], sweeps: &[SweepData]) -> String {
    let mut html = String::from(HEAD);
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let _ = write!(
        html,
        "<h1>MLPerf Inference results</h1><p class=\"note\">mlperf-host {} · {} run{}{}</p>",
        env!("CARGO_PKG_VERSION"),
        runs.len(),
        plural(runs.len()),
        if sweeps.is_empty() {
            String::new()
        } else {
            format!(" · {} sweep{}", sweeps.len(), plural(sweeps.len()))
        }
    );
    if runs.len() > 1 {
        html.push_str(&comparison(runs));
    }
    for (n, run) in runs.iter().enumerate() {
        html.push_str(&run_section(n + 1, run));
    }
    for (n, sweep) in sweeps.iter().enumerate() {
        html.push_str(&sweep::sweep_section(runs.len() + n + 1, sweep));
    }
    html.push_str("</body></html>\n");
    html
}

const HEAD: &str = "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
<title>MLPerf Inference results</title><style>\
body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1360px}\
h1{font-size:24px}h2{font-size:20px;border-top:2px solid #ddd;padding-top:16px}\
h3{font-size:16px;margin:18px 0 6px}\
table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;font-size:13px}\
.valid{color:#166534;font-weight:bold}.invalid{color:#b91c1c;font-weight:bold}\
.charts{display:flex;flex-wrap:wrap;gap:12px}.chart{border:1px solid #eee;background:#fff}\
.chart-title{font-size:14px;font-weight:bold}.tick,.legend,.note{font-size:11px;fill:#555;color:#555}\
.label{font-size:12px}pre{background:#f6f6f6;padding:8px;font-size:12px;overflow:auto}\
</style></head><body>";

fn verdict_class(valid: Option<bool>) -> (&'static str, &'static str) {
    match valid {
        Some(true) => ("valid", "VALID"),
        Some(false) => ("invalid", "INVALID"),
        None => ("", "no performance result"),
    }
}

fn fmt_value(value: Option<f64>) -> String {
    value.map_or("-".to_string(), |v| {
        if v.abs() >= 100.0 {
            format!("{v:.2}")
        } else {
            format!("{v:.4}")
        }
    })
}

fn comparison(runs: &[RunData]) -> String {
    let mut html = String::from(
        "<h2>Comparison</h2><table id=\"comparison\"><tr><th>#</th><th>system</th><th>benchmark</th>\
         <th>scenario</th><th>metric</th><th>value</th><th>units</th><th>validity</th><th>power</th><th>folder</th></tr>",
    );
    for (n, run) in runs.iter().enumerate() {
        let row = &run.row;
        let (class, verdict) = verdict_class(row.valid);
        let power = match (row.power, &row.power_units) {
            (Some(value), Some(units)) => format!("{value:.3} {units}"),
            _ => "-".to_string(),
        };
        let _ = write!(
            html,
            "<tr><td><a href=\"#run-{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"{class}\">{verdict}</td><td>{}</td><td>{}</td></tr>",
            n + 1,
            n + 1,
            escape(&row.system),
            escape(&row.benchmark),
            row.scenario,
            escape(row.metric),
            fmt_value(row.value),
            escape(row.units),
            escape(&power),
            escape(&run.dir.display().to_string())
        );
    }
    html.push_str("</table>");
    html
}

fn run_section(n: usize, run: &RunData) -> String {
    let row = &run.row;
    let (class, verdict) = verdict_class(row.valid);
    // A run that names no model (the null plugin's, by default) is headed without one.
    let heading: Vec<&str> = [&row.system, &row.benchmark, row.scenario.as_str()]
        .into_iter()
        .filter(|part| !part.is_empty() && *part != UNNAMED_MODEL)
        .collect();
    let mut html = format!(
        "<section id=\"run-{n}\"><h2>{n}. {} — <span class=\"{class}\">{verdict}</span></h2><p class=\"note\">{}</p>",
        escape(&heading.join(" · ")),
        escape(&run.dir.display().to_string())
    );
    html.push_str("<table class=\"headline\">");
    for (label, value) in &run.headline {
        let _ = write!(
            html,
            "<tr><th>{}</th><td>{}</td></tr>",
            escape(label),
            escape(value)
        );
    }
    if let (Some(power), Some(units)) = (row.power, &row.power_units) {
        let _ = write!(
            html,
            "<tr><th>Power</th><td>{power:.3} {}</td></tr>",
            escape(units)
        );
    }
    html.push_str("</table><ul class=\"verdict\">");
    for line in &run.verdict {
        // The summary's ` * reason` lines: the list draws its own bullets.
        let reason = line.trim().trim_start_matches('*').trim_start();
        let _ = write!(html, "<li>{}</li>", escape(reason));
    }
    html.push_str("</ul><div class=\"charts\">");
    for chart in charts(run) {
        html.push_str(&chart.to_svg());
    }
    html.push_str("</div>");
    if run.samples.is_none() {
        html.push_str("<p class=\"note\">No mlperf_log_trace.json: the histogram and the rates over time need a run with --trace (or --report); the percentile curve is the detail log's.</p>");
    }
    if !run.devices.is_empty() {
        html.push_str(
            "<h3>Devices</h3><table><tr><th>device</th><th>samples</th><th>share</th></tr>",
        );
        for device in &run.devices {
            let _ = write!(
                html,
                "<tr><td>{}</td><td>{}</td><td>{:.1} %</td></tr>",
                escape(&device.device),
                device.samples,
                device.share * 100.0
            );
        }
        html.push_str("</table>");
    }
    if let Some(breakdown) = &run.breakdown {
        let names: Vec<String> = run.devices.iter().map(|d| d.device.clone()).collect();
        html.push_str(&breakdown::to_html(breakdown, &names));
    }
    if !run.tokens.is_empty() {
        html.push_str("<h3>Token latencies</h3>");
        html.push_str(&table(&run.tokens));
    }
    let _ = write!(
        html,
        "<details><summary>Settings (effective)</summary>{}</details><details><summary>Provenance</summary>{}</details><details><summary>mlperf_log_summary.txt</summary><pre>{}</pre></details></section>",
        table(&run.settings),
        table(&run.provenance),
        escape(&run.summary)
    );
    html
}

fn table(rows: &[(String, String)]) -> String {
    let mut html = String::from("<table>");
    for (key, value) in rows {
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{}</td></tr>",
            escape(key),
            escape(value)
        );
    }
    html.push_str("</table>");
    html
}

/// The run's charts: those its files have data for.
fn charts(run: &RunData) -> Vec<Chart> {
    let mut charts = Vec::new();
    let mut latencies: Vec<f64> = run
        .samples
        .iter()
        .flatten()
        .map(|&(_, ns)| ns / 1e6)
        .collect();
    latencies.sort_by(f64::total_cmp);
    if !latencies.is_empty() {
        charts.push(histogram(&latencies));
    }
    let curve: Vec<(f64, f64)> = if latencies.is_empty() {
        run.percentiles
            .iter()
            .map(|&(p, ns)| (p, ns / 1e6))
            .collect()
    } else {
        (0..=1000)
            .map(|i| {
                let p = i as f64 / 10.0;
                let rank = ((p / 100.0) * (latencies.len() - 1) as f64).round() as usize;
                (p, latencies[rank])
            })
            .collect()
    };
    if !curve.is_empty() {
        charts.push(Chart {
            title: "Latency by percentile".into(),
            x_label: "percentile (%)".into(),
            y_label: "latency (ms)".into(),
            series: vec![Series {
                label: "sample latency".into(),
                color: PERCENTILE_COLOR,
                points: curve,
            }],
            bars: None,
            shade: None,
            markers: false,
        });
    }
    if let Some(samples) = run.samples.as_ref().filter(|s| !s.is_empty()) {
        charts.push(rates(samples));
    }
    if let Some(power) = &run.power {
        charts.push(Chart {
            title: "Power".into(),
            x_label: "time (s)".into(),
            y_label: "watts".into(),
            series: vec![Series {
                label: "watts".into(),
                color: POWER_COLOR,
                points: power.points.clone(),
            }],
            bars: None,
            shade: Some((
                power.window.0,
                power.window.1,
                "measured window".to_string(),
            )),
            markers: false,
        });
    }
    charts
}

fn histogram(sorted_ms: &[f64]) -> Chart {
    // Up to the 99.9th percentile, so that one straggler does not squeeze every bar into one.
    let low = sorted_ms[0];
    let high = sorted_ms[((sorted_ms.len() - 1) as f64 * 0.999) as usize].max(low * 1.001 + 1e-9);
    let width = (high - low) / HISTOGRAM_BINS as f64;
    let mut counts = vec![0u64; HISTOGRAM_BINS];
    for &latency in sorted_ms.iter().take_while(|&&l| l <= high) {
        let bin = (((latency - low) / width) as usize).min(HISTOGRAM_BINS - 1);
        counts[bin] += 1;
    }
    Chart {
        title: "Latency histogram".into(),
        x_label: "sample latency (ms), up to the 99.9th percentile".into(),
        y_label: "samples".into(),
        series: vec![Series {
            label: "samples".into(),
            color: HISTOGRAM_COLOR,
            points: counts
                .iter()
                .enumerate()
                .map(|(i, &count)| (low + i as f64 * width, count as f64))
                .collect(),
        }],
        bars: Some(width),
        shade: None,
        markers: false,
    }
}

/// Issued and completed samples per second over the run, in equal time bins.
fn rates(samples: &[(f64, f64)]) -> Chart {
    let start = samples[0].0;
    let end = samples
        .iter()
        .map(|&(t, ns)| t + ns / 1e9)
        .fold(start, f64::max);
    let width = ((end - start) / TIME_BINS as f64).max(1e-6);
    let mut issued = vec![0u64; TIME_BINS];
    let mut completed = vec![0u64; TIME_BINS];
    let bin = |t: f64| (((t - start) / width) as usize).min(TIME_BINS - 1);
    for &(t, ns) in samples {
        issued[bin(t)] += 1;
        completed[bin(t + ns / 1e9)] += 1;
    }
    let series = |label: &str, color, counts: &[u64]| Series {
        label: label.to_string(),
        color,
        points: counts
            .iter()
            .enumerate()
            .map(|(i, &count)| ((i as f64 + 0.5) * width, count as f64 / width))
            .collect(),
    };
    // Offline issues every sample at once: one bin's spike would flatten the completions to
    // the axis, so the chart shows them alone and says so.
    let issued_at_once = issued.iter().filter(|&&count| count > 0).count() <= 1;
    let series = if issued_at_once {
        vec![series(
            "completed (every sample issued at once, at 0 s)",
            COMPLETED_COLOR,
            &completed,
        )]
    } else {
        vec![
            series("issued (scheduled)", ISSUED_COLOR, &issued),
            series("completed", COMPLETED_COLOR, &completed),
        ]
    };
    Chart {
        title: "Samples per second over the run".into(),
        x_label: "time from the first issue (s)".into(),
        y_label: "samples/s".into(),
        series,
        bars: None,
        shade: None,
        markers: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_offline_run_charts_its_completions_without_the_issue_spike() {
        // (issued at s, latency ns): every sample at 0, completing over a second.
        let offline: Vec<(f64, f64)> = (1..=100).map(|i| (0.0, i as f64 * 1e7)).collect();
        let chart = rates(&offline);
        assert_eq!(chart.series.len(), 1);
        assert!(chart.series[0].label.contains("issued at once"));
        let server: Vec<(f64, f64)> = (0..100).map(|i| (i as f64 * 0.01, 1e6)).collect();
        let labels: Vec<String> = rates(&server).series.into_iter().map(|s| s.label).collect();
        assert_eq!(labels, ["issued (scheduled)", "completed"]);
    }
}
