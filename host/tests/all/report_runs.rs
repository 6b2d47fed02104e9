//! `mlperf-host report` and `run --report`: the HTML holds every chart with its title and the
//! summary's figures, and renders in headless Chromium (`MLPERF_HOST_CHROMIUM`, set by
//! scripts/test.sh) with every plot drawn, found by its colour in a screenshot.

use crate::support::{self, TempDir};

use crate::support::mlperf_host;

/// The value of `label` in the summary's `label : value` line.
fn summary_value(summary: &str, label: &str) -> String {
    summary
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            (name.trim() == label).then(|| value.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no {label:?} in\n{summary}"))
}

#[test]
fn report_draws_every_run_and_agrees_with_the_summaries() {
    let dir = TempDir::new();
    let server = [
        "run",
        "--scenario",
        "Server",
        "--latency",
        "1ms",
        "--set",
        "server_target_qps=400",
        "--set",
        "min_duration_ms=1000",
        "--set",
        "min_query_count=100",
        "--report",
        "--out",
        "server",
        "-q",
    ];
    support::assert_ok(&mlperf_host(dir.path(), &server));
    assert!(
        dir.path().join("server/report.html").is_file(),
        "run --report writes report.html beside the logs"
    );
    let offline = [
        "run",
        "--scenario",
        "Offline",
        "--plugin-set",
        "workers=2",
        "--plugin-set",
        "service_us=1000",
        "--set",
        "offline_expected_qps=2000",
        "--set",
        "min_duration_ms=2500",
        "--set",
        "min_query_count=1",
        "--power",
        "sim:50",
        "--report",
        "--out",
        "offline",
        "-q",
    ];
    support::assert_ok(&mlperf_host(dir.path(), &offline));
    let output = mlperf_host(
        dir.path(),
        &["report", "server", "offline", "--out", "both.html"],
    );
    support::assert_ok(&output);
    let html = std::fs::read_to_string(dir.path().join("both.html")).unwrap();

    for title in [
        "Comparison",
        "Latency histogram",
        "Latency by percentile",
        "Samples per second over the run",
        "Power",
        "Settings (effective)",
        "Provenance",
    ] {
        assert!(html.contains(title), "no {title:?} in the report");
    }
    let breakdowns = html.matches("<svg class=\"breakdown\"").count();
    assert_eq!(
        html.matches("<svg").count() - breakdowns,
        3 + 4,
        "3 Server charts, 4 Offline ones"
    );
    // Traced runs divide their latencies (--sample-timing auto): a breakdown chart each.
    assert_eq!(breakdowns, 2);
    let server_summary =
        std::fs::read_to_string(dir.path().join("server/mlperf_log_summary.txt")).unwrap();
    let offline_summary =
        std::fs::read_to_string(dir.path().join("offline/mlperf_log_summary.txt")).unwrap();
    for (summary, label) in [
        (&server_summary, "Completed samples per second"),
        (&offline_summary, "Samples per second"),
    ] {
        let value = summary_value(summary, label);
        assert!(
            html.contains(&format!("<tr><th>{label}</th><td>{value}</td></tr>")),
            "the report's {label} is the summary's {value}"
        );
    }
    for summary in [&server_summary, &offline_summary] {
        let verdict = summary_value(summary, "Result is");
        assert!(html.contains(&format!("<li>Result is : {verdict}</li>")));
    }
    assert!(
        html.contains("measured window"),
        "the power window is drawn"
    );
    assert!(!html.contains("<script"), "no script");

    support::screenshot::shows_every_plot(
        &dir.path().join("both.html"),
        &[
            ("histogram", mlperf_host::report::HISTOGRAM_COLOR),
            ("percentile curve", mlperf_host::report::PERCENTILE_COLOR),
            ("issued rate", mlperf_host::report::ISSUED_COLOR),
            ("completed rate", mlperf_host::report::COMPLETED_COLOR),
            ("power trace", mlperf_host::report::POWER_COLOR),
        ],
    );
}

#[test]
fn report_reads_the_official_engines_trace() {
    let dir = TempDir::new();
    let args = [
        "run",
        "--engine",
        "official",
        "--scenario",
        "Server",
        "--latency",
        "1ms",
        "--set",
        "server_target_qps=300",
        "--set",
        "min_duration_ms=500",
        "--set",
        "min_query_count=100",
        "--report",
        "--out",
        "official",
        "-q",
    ];
    support::assert_ok(&mlperf_host(dir.path(), &args));
    let html = std::fs::read_to_string(dir.path().join("official/report.html")).unwrap();
    for title in ["Latency histogram", "Samples per second over the run"] {
        assert!(
            html.contains(title),
            "no {title:?}: the sample events were not read"
        );
    }
    let summary =
        std::fs::read_to_string(dir.path().join("official/mlperf_log_summary.txt")).unwrap();
    let value = summary_value(&summary, "Completed samples per second");
    assert!(html.contains(&format!(
        "<tr><th>Completed samples per second</th><td>{value}</td></tr>"
    )));
}

#[test]
fn a_run_without_a_trace_has_the_detail_logs_percentile_curve_and_plain_reasons() {
    let dir = TempDir::new();
    // INVALID (too short), so the summary lists reasons as ` * …` lines.
    let run = [
        "run",
        "--scenario",
        "SingleStream",
        "--set",
        "min_duration_ms=100000",
        "--set",
        "max_duration_ms=200",
        "--set",
        "min_query_count=10",
        "--out",
        "run",
        "-q",
    ];
    support::assert_ok(&mlperf_host(dir.path(), &run));
    let data = mlperf_host::report::read_run(&dir.path().join("run")).unwrap();
    assert!(data.samples.is_none(), "no trace was asked for");
    let percents: Vec<f64> = data.percentiles.iter().map(|(p, _)| *p).collect();
    assert_eq!(percents, [50.0, 90.0, 95.0, 97.0, 99.0, 99.9]);
    assert!(
        data.percentiles.iter().all(|(_, ns)| *ns > 0.0),
        "{:?}",
        data.percentiles
    );
    let html = mlperf_host::report::render(std::slice::from_ref(&data));
    assert!(
        html.contains("Latency by percentile"),
        "no percentile chart"
    );
    assert!(
        !html.contains("<li>* "),
        "a bullet inside the list's own bullets"
    );
    // A run folder has no system description: the run is headed by its SUT's name.
    assert_eq!(data.row.system, "null");
    // No model was named: none is logged, and the heading names none.
    let detail = std::fs::read_to_string(dir.path().join("run/mlperf_log_detail.txt")).unwrap();
    assert!(
        !detail.contains("\"sut_model\""),
        "a model nobody named is logged"
    );
    assert!(
        html.contains("<h2>1. null · SingleStream — "),
        "the heading names the SUT and the scenario only"
    );
}

#[test]
fn report_refuses_a_folder_without_logs() {
    let dir = TempDir::new();
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    let output = mlperf_host(dir.path(), &["report", "empty"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = support::text(&output.stderr);
    assert!(stderr.contains("empty: not a run folder"), "{stderr}");
    assert!(!dir.path().join("report.html").exists());
}
