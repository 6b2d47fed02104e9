//! `mlperf-host sweep` through the null plugin serving on two workers, 2 ms a request, with
//! tokens: closed-loop points reach the rate the service allows and queue beyond it; an open
//! loop keeps its rate; the files hold every point; bad loads are refused by name.

use std::process::Command;

use crate::support::{self, null_plugin, TempDir};

const EXE: &str = env!("CARGO_BIN_EXE_mlperf-host");

/// A sweep through the null plugin answering 1,000 requests a second at most.
fn null_sweep() -> Command {
    let mut command = Command::new(EXE);
    command
        .arg("sweep")
        .arg("--plugin")
        .arg(null_plugin())
        .args(["--plugin-set", "workers=2"])
        .args(["--plugin-set", "service_us=2000"]);
    command
}

/// `null_sweep` with `args`, into `out`.
fn null_sweep_into(out: &std::path::Path, args: &[&str]) -> std::process::Output {
    null_sweep()
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .expect("run mlperf-host sweep")
}

/// The sweep.json a sweep wrote into `out`.
fn sweep_json(out: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("sweep.json")).unwrap()).unwrap()
}

fn sweep(out: &std::path::Path, load: &[&str]) -> std::process::Output {
    null_sweep()
        .args(["--plugin-set", "tokens=true"])
        .args([
            "--duration",
            "1s",
            "--warmup",
            "200ms",
            "--slo",
            "ttft=1",
            "--report",
        ])
        .arg("--out")
        .arg(out)
        .args(load)
        .output()
        .expect("run mlperf-host sweep")
}

#[test]
fn a_point_of_a_request_count_lasts_until_its_last_answer_and_exports_each_request() {
    // 6 requests of 50 ms one after another: 300 ms from the first send to the last answer,
    // but only 250 ms to the last send.
    let dir = TempDir::new();
    let out = dir.path().join("sweep");
    let output = null_sweep_into(
        &out,
        &[
            "--plugin-set",
            "service_us=50000",
            "--concurrency",
            "1",
            "--max-requests",
            "6",
            "--duration",
            "10s",
            "--warmup",
            "0s",
            "--export-requests",
        ],
    );
    support::assert_ok(&output);
    let point = &sweep_json(&out)["points"][0];
    assert_eq!(point["completed"], 6, "{point}");
    let window = point["window_s"].as_f64().unwrap();
    assert!((0.3..2.0).contains(&window), "{point}");
    assert!(point["requests_per_s"].as_f64().unwrap() <= 20.0, "{point}");
    let text = std::fs::read_to_string(out.join("point-1-requests.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 6, "{text}");
    let mut e2e = Vec::new();
    let mut sent_before = -1;
    for (k, line) in lines.iter().enumerate() {
        assert_eq!(line["request"], k, "{line}");
        assert_eq!(line["sample"], k, "{line}");
        assert_eq!(line["in_window"], true, "{line}");
        assert_eq!(line["failed"], false, "{line}");
        let sent = line["sent_ns"].as_i64().unwrap();
        assert!(sent > sent_before, "{text}");
        sent_before = sent;
        e2e.push(line["e2e_ns"].as_f64().unwrap());
    }
    assert!(e2e.iter().all(|&ns| ns >= 50e6), "{e2e:?}");
    // The point's figures are the lines' by LoadGen's rank: element floor(p * n).
    e2e.sort_by(f64::total_cmp);
    assert_eq!(point["e2e_ns"]["p50"].as_f64().unwrap(), e2e[3], "{point}");
    assert_eq!(point["e2e_ns"]["max"].as_f64().unwrap(), e2e[5], "{point}");
}

#[test]
fn endpoints_regions_make_a_point_in_each_region() {
    // C_min 1, C_max 40: I = log2(39)/3; Low ends at round(1 + 3.39) = 4, Medium at
    // round(1 + 11.5002) = 13, High at 40; one point per region at its end.
    let dir = TempDir::new();
    let out = dir.path().join("sweep");
    let output = null_sweep_into(
        &out,
        &[
            "--regions",
            "1:40:1",
            "--duration",
            "300ms",
            "--warmup",
            "0s",
        ],
    );
    support::assert_ok(&output);
    let sweep = sweep_json(&out);
    let points: Vec<(u64, &str)> = sweep["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["load"]["concurrency"].as_u64().unwrap(),
                p["region"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        points,
        [(1, "Ultra-Low"), (4, "Low"), (13, "Medium"), (40, "High")]
    );
    let stdout = support::text(&output.stdout);
    assert!(stdout.contains("concurrency 13 (Medium)"), "{stdout}");
}

#[test]
fn power_over_each_point_gives_tokens_per_joule_and_per_kw() {
    // A simulated meter drawing a constant 50 W, read every 100 ms.
    let dir = TempDir::new();
    let out = dir.path().join("sweep");
    let output = null_sweep_into(
        &out,
        &[
            "--plugin-set",
            "tokens=true",
            "--concurrency",
            "2",
            "--duration",
            "1s",
            "--warmup",
            "0s",
            "--power",
            "sim:50?period_ms=100",
        ],
    );
    support::assert_ok(&output);
    let sweep = sweep_json(&out);
    let point = &sweep["points"][0];
    let power = &point["power"];
    let tokens_per_s = point["output_tokens_per_s"].as_f64().unwrap();
    assert!(tokens_per_s > 1000.0, "{point}");
    assert_eq!(power["mean_watts"], 50.0, "{power}");
    assert!(power["readings"].as_u64().unwrap() >= 8, "{power}");
    let close = |a: f64, b: f64| (a / b - 1.0).abs() < 1e-9;
    assert!(
        close(
            power["tokens_per_joule"].as_f64().unwrap(),
            tokens_per_s / 50.0
        ),
        "{power}"
    );
    assert!(
        close(
            power["output_tokens_per_s_per_kw"].as_f64().unwrap(),
            tokens_per_s * 20.0
        ),
        "{power}"
    );
    assert!(support::text(&output.stdout).contains("tokens/J"));
}

#[test]
fn synthetic_prompts_have_exactly_the_lengths_drawn() {
    let dir = TempDir::new();
    let out = dir.path().join("sweep");
    let output = null_sweep_into(
        &out,
        &[
            "--synthetic-input",
            "uniform:16:64",
            "--synthetic-count",
            "500",
            "--concurrency",
            "2",
            "--duration",
            "500ms",
            "--warmup",
            "0s",
        ],
    );
    support::assert_ok(&output);
    let sweep = sweep_json(&out);
    let input = &sweep["points"][0]["input_tokens"];
    // Every request's prompt counted (token ids, padding dropped): uniform over 16..=64.
    assert!(input["count"].as_u64().unwrap() > 200, "{input}");
    let (min, max, mean) = (
        input["p50"].as_f64().unwrap(),
        input["max"].as_f64().unwrap(),
        input["mean"].as_f64().unwrap(),
    );
    assert!((60.0..=64.0).contains(&max), "{input}");
    assert!(
        (30.0..50.0).contains(&min) && (36.0..44.0).contains(&mean),
        "{input}"
    );
    // The data set: 500 rows as wide as the longest prompt.
    let header = std::fs::read(out.join("synthetic-prompts.npy")).unwrap();
    let header = String::from_utf8_lossy(&header[..128]);
    assert!(
        header.contains("'descr': '<i4'") && header.contains("(500, 64)"),
        "{header}"
    );
}

#[test]
fn loads_that_cannot_run_are_refused_by_name() {
    let dir = TempDir::new();
    for (load, expected) in [
        (
            vec!["--concurrency", "0"],
            "the concurrency must be at least 1",
        ),
        (
            vec!["--rate", "0"],
            "positive number of requests per second",
        ),
        (
            vec!["--rate", "10", "--arrivals", "gamma", "--burstiness", "0"],
            "burstiness factor must be a positive number",
        ),
        (
            vec!["--regions", "40:64"],
            "--regions: concurrency regions need C_min in 1..=32",
        ),
        (
            vec!["--concurrency", "1", "--power", "nonsense:1"],
            "--power nonsense:1: the meter cannot be used",
        ),
    ] {
        let output = sweep(&dir.path().join("refused"), &load);
        assert_eq!(
            output.status.code(),
            Some(1),
            "{load:?}: {}",
            support::describe(&output)
        );
        let stderr = support::text(&output.stderr);
        assert!(stderr.contains(expected), "{load:?}: {stderr}");
    }
}

/// A plugin that fails during the accuracy pass fails the pass, not the sweep: the point's
/// files are written, sweep.json says why, and the command ends with the error.
#[test]
fn an_accuracy_pass_that_fails_leaves_the_points_standing() {
    let dir = TempDir::new();
    let out = dir.path().join("sweep");
    // The point's 20 requests are samples 0-19 to the plugin; it loses the 26th on.
    let output = null_sweep_into(
        &out,
        &[
            "--plugin-set",
            "fail_after=25",
            "--concurrency",
            "1",
            "--max-requests",
            "20",
            "--duration",
            "5s",
            "--warmup",
            "0s",
            "--drain-timeout",
            "1s",
            "--accuracy",
            "--accuracy-samples",
            "8",
        ],
    );
    assert!(!output.status.success());
    let stderr = support::text(&output.stderr);
    assert!(
        stderr.contains("the accuracy pass: the plugin failed: ")
            && stderr.contains("fail_after = 25 reached"),
        "{stderr}"
    );
    let sweep = sweep_json(&out);
    assert_eq!(sweep["points"][0]["completed"], 20, "{sweep}");
    assert!(
        sweep["accuracy"]["error"]
            .as_str()
            .is_some_and(|why| why.contains("fail_after = 25 reached")),
        "{sweep}"
    );
    assert!(out
        .join("endpoints/point-1/performance/result_summary.json")
        .is_file());
}

/// Tests whose verdict rests on timings (a latency bound, a rate, a comparison of two runs'
/// speeds): `scripts/test.sh` runs every `timed` test alone, one after another, after the
/// rest, so that no other test takes the CPU they measure.
mod timed {
    use super::*;

    #[test]
    fn a_sweep_measures_each_point_and_writes_the_curve() {
        let dir = TempDir::new();
        let out = dir.path().join("sweep");
        let output = sweep(
            &out,
            &[
                "--concurrency",
                "1,4",
                "--rate",
                "250",
                "--arrivals",
                "constant",
                // 2.00 kW once rounded as the Endpoints checker rounds it.
                "--provisioned-power",
                "1996W",
                "--accuracy",
                "--accuracy-samples",
                "8",
            ],
        );
        support::assert_ok(&output);
        let stdout = support::text(&output.stdout);
        assert!(
            stdout.contains("concurrency 4") && stdout.contains("constant 250/s"),
            "{stdout}"
        );
        let sweep = sweep_json(&out);
        let points = sweep["points"].as_array().unwrap();
        assert_eq!(points.len(), 3);
        assert!(sweep["stopped"].is_null(), "{sweep}");
        let rate = |p: &serde_json::Value| p["requests_per_s"].as_f64().unwrap();
        let ttft_p50_ms = |p: &serde_json::Value| p["ttft_ns"]["p50"].as_f64().unwrap() / 1e6;
        // One in flight: a request every 2 ms. Four on two workers: twice that, and each waits
        // for a worker about one service time before its first token.
        assert!(
            (rate(&points[0]) / 500.0 - 1.0).abs() < 0.15,
            "{}",
            points[0]
        );
        assert!(
            (rate(&points[1]) / 1000.0 - 1.0).abs() < 0.15,
            "{}",
            points[1]
        );
        assert!(ttft_p50_ms(&points[0]) < 1.0, "{}", points[0]);
        assert!(ttft_p50_ms(&points[1]) > 1.5, "{}", points[1]);
        assert_eq!(points[1]["load"]["concurrency"], 4);
        assert!(points[1]["mean_concurrency"].as_f64().unwrap() > 3.5);
        // Goodput under TTFT ≤ 1 ms: the unqueued point meets it, the queued one hardly.
        let goodput = |p: &serde_json::Value| p["goodput_per_s"].as_f64().unwrap();
        assert!(
            goodput(&points[0]) > 0.9 * rate(&points[0]),
            "{}",
            points[0]
        );
        assert!(
            goodput(&points[1]) < 0.2 * rate(&points[1]),
            "{}",
            points[1]
        );
        // The open loop at 250/s, below capacity.
        assert_eq!(points[2]["load"]["arrivals"], "constant");
        assert!(
            (rate(&points[2]) / 250.0 - 1.0).abs() < 0.05,
            "{}",
            points[2]
        );
        // Tokens: 2 to 8 per request, so TPOT is measured.
        assert!(points[0]["tpot_ns"]["count"].as_u64().unwrap() > 0);
        assert!(points[0]["output_tokens_per_s"].as_f64().unwrap() > 2.0 * rate(&points[0]));
        // Over 1,000 requests a point: the early-stopping estimate of the 90th percentile lies
        // at or above it.
        let ttft = &points[1]["ttft_ns"];
        assert!(ttft["early_stopping"]["p90"].as_f64().unwrap() >= ttft["p90"].as_f64().unwrap());
        for (index, point) in points.iter().enumerate() {
            assert_eq!(point["result"], "VALID", "{point}");
            // MLPerf Endpoints' files of the point carry its figures.
            let endpoints = out.join(format!("endpoints/point-{}", index + 1));
            let summary: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(endpoints.join("performance/result_summary.json"))
                    .unwrap(),
            )
            .unwrap();
            assert_eq!(summary["n_samples_completed"], point["completed"]);
            assert_eq!(summary["qps"], point["requests_per_s"]);
            // Output tokens/s per provisioned kW: ours, and as the Endpoints submission checker
            // derives it from the file (output tokens over duration_ns, within its 1 %).
            let per_kw = point["output_tokens_per_s"].as_f64().unwrap() / 2.0;
            assert_eq!(point["provisioned_power"]["kw"], 2.0);
            assert_eq!(
                point["provisioned_power"]["output_tokens_per_s_per_kw"].as_f64(),
                Some(per_kw)
            );
            assert_eq!(summary["system_tps_per_kw"].as_f64(), Some(per_kw));
            let derived = summary["output_sequence_lengths"]["total"]
                .as_f64()
                .unwrap()
                / (summary["duration_ns"].as_f64().unwrap() / 1e9)
                / 2.0;
            assert!(
                (per_kw / derived - 1.0).abs() < 0.01,
                "{per_kw} against {derived}"
            );
            let config = std::fs::read_to_string(endpoints.join("config.yaml")).unwrap();
            assert!(config.contains("type: online\n"), "{config}");
            let log = std::fs::read_to_string(endpoints.join("mlperf_log_details.txt")).unwrap();
            assert!(log.starts_with(":::ENDPTS {"), "{log}");
            assert!(
                log.contains(r#"{"key":"result_validity","value":"VALID","#),
                "{log}"
            );
            let completed = format!(
                r#"{{"key":"result_query_count","value":{},"#,
                point["completed"]
            );
            assert!(log.contains(&completed), "{log}");
        }
        // The report: the points' table, the Pareto plot and latency against load, drawn.
        let html = std::fs::read_to_string(out.join("report.html")).unwrap();
        assert!(html.contains("Pareto: system against per-user speed"));
        // The accuracy pass: 8 samples asked, not scored (no benchmark), said in the report.
        assert_eq!(sweep["accuracy"]["answered"], 8, "{sweep}");
        assert!(
            html.contains("Accuracy pass: 8 of 8 samples answered; not scored"),
            "{html}"
        );
        assert_eq!(html.matches("<td>concurrency ").count(), 2, "{html}");
        assert!(html.contains("TTFT against load"));
        // The frontier is a point or a line (one point may beat the others on both axes): its
        // markers are there; the screenshot below checks the lines that always have 3 points.
        let frontier = format!(r#"r="4" fill="{}""#, mlperf_host::report::PARETO_COLOR);
        assert!(html.contains(&frontier), "{html}");
        support::screenshot::shows_every_plot(
            &out.join("report.html"),
            &[
                ("p50 against load", mlperf_host::report::P50_COLOR),
                ("p90 against load", mlperf_host::report::P90_COLOR),
                ("p99 against load", mlperf_host::report::P99_COLOR),
            ],
        );
        let config = std::fs::read_to_string(out.join("endpoints/point-2/config.yaml")).unwrap();
        assert!(
            config.contains("    type: concurrency\n    target_concurrency: 4\n"),
            "{config}"
        );
        let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
        assert_eq!(csv.lines().count(), 4, "{csv}");
        assert!(
            csv.lines()
                .nth(2)
                .unwrap()
                .starts_with("concurrency 4,VALID,"),
            "{csv}"
        );
        let per_kw_column = csv.lines().nth(2).unwrap().rsplit(',').next().unwrap();
        let per_kw = points[1]["provisioned_power"]["output_tokens_per_s_per_kw"]
            .as_f64()
            .unwrap();
        assert_eq!(per_kw_column, format!("{per_kw:.3}"), "{csv}");
    }

    #[test]
    fn an_over_saturated_point_ends_early_and_the_sweep_with_it() {
        // The plugin answers 1,000 a second at most; the second point asks 3,000.
        let dir = TempDir::new();
        let out = dir.path().join("sweep");
        let output = null_sweep_into(
            &out,
            &[
                "--rate",
                "400,3000,5000",
                "--duration",
                "4s",
                "--warmup",
                "0s",
            ],
        );
        support::assert_ok(&output);
        let stdout = support::text(&output.stdout);
        assert!(
            stdout.contains("sweep stopped: point 2 (poisson 3000/s)"),
            "{stdout}"
        );
        let sweep = sweep_json(&out);
        let points = sweep["points"].as_array().unwrap();
        assert_eq!(points.len(), 2, "{sweep}");
        assert_eq!(points[0]["result"], "VALID", "{}", points[0]);
        assert!(points[0]["saturated"].is_null());
        let saturated = points[1]["saturated"].as_str().expect("a reason");
        assert!(
            saturated.contains("requests in flight and rising"),
            "{saturated}"
        );
        assert_eq!(points[1]["result"], "INVALID");
        // Ended before its 4 s were up.
        assert!(
            points[1]["window_s"].as_f64().unwrap() < 3.5,
            "{}",
            points[1]
        );
        assert!(sweep["stopped"]
            .as_str()
            .unwrap()
            .contains("1 point(s) after it were not run"));
        assert!(!out.join("point-3.json").exists());
    }

    #[test]
    fn a_count_bound_point_is_judged_steady_over_its_load_and_a_duration_ends_one_short_of_it() {
        // 64 in flight on a plugin that serves 100 a second: 4 s of load, then 0.64 s of drain
        // with ever fewer in flight, which the steady-state check must not see as drift.
        let dir = TempDir::new();
        let out = dir.path().join("drained");
        let output = null_sweep_into(
            &out,
            &[
                "--plugin-set",
                "service_us=20000",
                "--concurrency",
                "64",
                "--max-requests",
                "400",
                "--duration",
                "30s",
                "--warmup",
                "0s",
            ],
        );
        support::assert_ok(&output);
        let point = &sweep_json(&out)["points"][0];
        assert_eq!(point["result"], "VALID", "{point}");
        assert_eq!(point["completed"], 400, "{point}");
        // Measured to the last answer: 400 requests at 100 a second.
        let window = point["window_s"].as_f64().unwrap();
        assert!(window >= 4.0, "{point}");

        // A cap the duration ends first: the window is the duration.
        let out = dir.path().join("timed");
        let output = null_sweep_into(
            &out,
            &[
                "--concurrency",
                "1",
                "--max-requests",
                "1000000",
                "--duration",
                "1s",
                "--warmup",
                "0s",
            ],
        );
        support::assert_ok(&output);
        let point = &sweep_json(&out)["points"][0];
        let window = point["window_s"].as_f64().unwrap();
        assert!((0.9..=1.0).contains(&window), "{point}");
    }

    #[test]
    fn a_trace_is_replayed_at_its_times_with_its_lengths() {
        let dir = TempDir::new();
        let out = dir.path().join("sweep");
        // Bursts of 10 requests 2 ms apart every 100 ms, prompts of 8 to 17 tokens, answers 3.
        let lines: Vec<String> = (0..40)
            .map(|k| {
                format!(
                    "{{\"timestamp\": {}, \"input_length\": {}, \"output_length\": 3}}",
                    (k / 10) * 100 + (k % 10) * 2,
                    8 + k % 10
                )
            })
            .collect();
        let trace = dir.path().join("trace.jsonl");
        std::fs::write(&trace, lines.join("\n")).unwrap();
        let output = null_sweep()
            .arg("--trace")
            .arg(&trace)
            .args(["--warmup", "0s", "--out"])
            .arg(&out)
            .output()
            .expect("run mlperf-host sweep");
        support::assert_ok(&output);
        let sweep = sweep_json(&out);
        let point = &sweep["points"][0];
        assert_eq!(point["load"]["arrivals"], "replay", "{point:#}");
        assert_eq!(point["result"], "VALID", "{point:#}");
        assert_eq!(point["completed"], 40, "{point:#}");
        // Each request on its own prompt: the trace's lengths, 12.5 tokens on average.
        let input = &point["input_tokens"];
        assert_eq!(input["mean"].as_f64(), Some(12.5), "{input}");
        assert_eq!(input["max"].as_f64(), Some(17.0), "{input}");
        // Sent at the trace's times (the null plugin serves 2 at a time, 2 ms each: a burst of
        // 10 queues, but arrivals are open-loop and not held back).
        let late = point["send_lateness_ns"]["p99"].as_f64().unwrap();
        assert!(late < 5e6, "{late}");
        // Each line's answer length became its request's max_tokens.
        let lengths = std::fs::read(out.join("trace-output-tokens.npy")).unwrap();
        assert!(String::from_utf8_lossy(&lengths[..128]).contains("(40, 1)"));
        // The window is the trace's 306 ms, not a default duration.
        let window = point["window_s"].as_f64().unwrap();
        assert!((0.3..0.32).contains(&window), "{window}");

        // A trace whose lines disagree is refused naming the line.
        std::fs::write(
            &trace,
            "{\"timestamp\": 0, \"input_length\": 4, \"output_length\": 2}\n{\"timestamp\": 1}",
        )
        .unwrap();
        let output = null_sweep()
            .arg("--trace")
            .arg(&trace)
            .args(["--out"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(!output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("trace.jsonl: line 2: needs input_length"),
            "{stderr}"
        );
    }
}
