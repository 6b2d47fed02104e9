//! `mlperf-host tune` and `run --tune` against the null plugin as a server of known capacity
//! (`service_us`: each thread serves one sample at a time), whose answers are known: the
//! service time, or, for Server, the highest rate an M/D/1 queue keeps within the bound.

use std::path::Path;
use std::process::Output;

use crate::support::{self, TempDir};

/// Long enough that a late wake-up on a loaded 2-core machine is small beside it.
const SERVICE_US: u64 = 2000;

fn null_server(workers: u32, service_us: u64) -> Vec<String> {
    vec![
        "--plugin".into(),
        support::null_plugin().display().to_string(),
        "--plugin-set".into(),
        format!("workers={workers}"),
        "--plugin-set".into(),
        format!("service_us={service_us}"),
    ]
}

fn mlperf_host(dir: &Path, command: &str, args: &[String]) -> Output {
    let mut all = vec![command.to_string()];
    all.extend_from_slice(args);
    support::mlperf_host(dir, &all)
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

/// Tunes `scenario`, then runs it with the written user.conf and `--require-valid` (at most
/// 30 s, should the value be wrong); returns the value the user.conf sets (`target_latency`
/// in ms, `target_qps`).
fn tune_then_run(
    scenario: &str,
    (workers, service_us): (u32, u64),
    tune_extra: &[&str],
    run_extra: &[&str],
) -> f64 {
    let dir = TempDir::new();
    let mut args = strings(&["--scenario", scenario, "--out", "tuned"]);
    args.extend(null_server(workers, service_us));
    args.extend(strings(tune_extra));
    let tuned = mlperf_host(dir.path(), "tune", &args);
    support::assert_ok(&tuned);
    let stdout = support::text(&tuned.stdout);
    assert!(stdout.contains("The full run: about"), "{stdout}");

    let conf = std::fs::read_to_string(dir.path().join("tuned/user.conf")).unwrap();
    let value_line = conf.lines().last().unwrap();
    let (key, value) = value_line.split_once(" = ").expect(value_line);
    // No model was named: the line is for every model.
    assert!(key.starts_with(&format!("*.{scenario}.")), "{conf}");
    assert!(!stdout.contains("resnet50"), "{stdout}");
    assert!(conf.contains("# trials: trial-1"), "{conf}");
    assert!(
        dir.path()
            .join("tuned/trial-2/mlperf_log_detail.txt")
            .is_file(),
        "each trial is a logged run"
    );

    let mut args = strings(&[
        "--scenario",
        scenario,
        "--user-conf",
        "tuned/user.conf",
        "--out",
        "full",
        "--require-valid",
        "--set",
        "max_duration_ms=30000",
    ]);
    args.extend(null_server(workers, service_us));
    args.extend(strings(run_extra));
    let mut full = mlperf_host(dir.path(), "run", &args);
    if !full.status.success() {
        // Once more: a run at the edge of VALID can tip over when another test takes the CPU.
        eprintln!("first full run:\n{}", support::describe(&full));
        full = mlperf_host(dir.path(), "run", &args);
    }
    assert!(
        full.status.success(),
        "the tuned user.conf gives a VALID run\n{conf}\n{}",
        support::describe(&full)
    );
    value.parse().expect(value)
}

/// A latency the null plugin's sleeps give: at least the service time, and late by a
/// virtual machine's wake-up (0.3 ms of 2 ms seen on this VM after hours of uptime).
fn assert_latency(found: f64, known: f64) {
    assert!(
        found >= 0.95 * known && found <= 1.25 * known,
        "tuned {found}, known answer {known} (-5 % to +25 %: sleeps overrun, never run short)"
    );
}

fn assert_within(found: f64, known: f64, tolerance: f64) {
    assert!(
        (found - known).abs() <= tolerance * known,
        "tuned {found}, known answer {known} (tolerance {}%)",
        tolerance * 100.0
    );
}

#[test]
fn tune_refuses_a_margin_out_of_range() {
    let dir = TempDir::new();
    let output = mlperf_host(dir.path(), "tune", &strings(&["--margin", "100"]));
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        support::describe(&output)
    );
    assert!(support::text(&output.stderr).contains("--margin 100: must be a percentage"));
}

#[test]
fn tune_refuses_a_precision_out_of_range() {
    let dir = TempDir::new();
    let output = mlperf_host(dir.path(), "tune", &strings(&["--precision", "0"]));
    assert_eq!(output.status.code(), Some(1));
    assert!(support::text(&output.stderr).contains("--precision 0"));
}

/// The highest Poisson arrival rate whose 99th percentile latency through one server of fixed
/// service time stays within `bound_s`, by simulating the queue (seeded, 200,000 arrivals).
fn md1_highest_rate(service_s: f64, bound_s: f64) -> f64 {
    md1_highest_rate_by(service_s, bound_s, |wait, service| wait + service)
}

/// As [`md1_highest_rate`], for the latency `measure(wait, service)` gives.
fn md1_highest_rate_by(service_s: f64, bound_s: f64, measure: impl Fn(f64, f64) -> f64) -> f64 {
    let p99 = |rate: f64| {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let (mut arrival, mut free) = (0.0f64, 0.0f64);
        let mut latencies: Vec<f64> = (0..200_000)
            .map(|_| {
                // xorshift64*, then an exponential gap.
                state ^= state >> 12;
                state ^= state << 25;
                state ^= state >> 27;
                let uniform =
                    (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64;
                arrival += -(1.0 - uniform).ln() / rate;
                let start = arrival.max(free);
                free = start + service_s;
                measure(start - arrival, service_s)
            })
            .collect();
        latencies.sort_by(f64::total_cmp);
        latencies[latencies.len() * 99 / 100]
    };
    let (mut low, mut high) = (0.1 / service_s, 1.0 / service_s);
    for _ in 0..30 {
        let middle = (low + high) / 2.0;
        if p99(middle) <= bound_s {
            low = middle;
        } else {
            high = middle;
        }
    }
    low
}

/// Tests whose verdict rests on timings (a latency bound, a rate, a comparison of two runs'
/// speeds): `scripts/test.sh` runs every `timed` test alone, one after another, after the
/// rest, so that no other test takes the CPU they measure.
mod timed {
    use super::*;

    #[test]
    fn tune_finds_the_single_stream_latency() {
        let _timings = support::timings_or_llm();
        let value = tune_then_run(
            "SingleStream",
            (1, SERVICE_US),
            &["--trial-duration", "1"],
            &[
                "--set",
                "min_duration_ms=2000",
                "--set",
                "min_query_count=100",
            ],
        );
        assert_latency(value, SERVICE_US as f64 / 1e3);
    }

    #[test]
    fn tune_finds_the_multi_stream_latency() {
        let _timings = support::timings_or_llm();
        // Four samples a query, served one after another by one worker.
        let four = "multi_stream_samples_per_query=4";
        let value = tune_then_run(
            "MultiStream",
            (1, SERVICE_US),
            &["--trial-duration", "1", "--set", four],
            &[
                "--set",
                four,
                "--set",
                "min_duration_ms=2000",
                "--set",
                "min_query_count=662",
            ],
        );
        assert_latency(value, 4.0 * SERVICE_US as f64 / 1e3);
    }

    #[test]
    fn tune_finds_the_offline_rate() {
        let _timings = support::timings_or_llm();
        let value = tune_then_run(
            "Offline",
            (2, SERVICE_US),
            &["--trial-duration", "1"],
            &["--set", "min_duration_ms=2000"],
        );
        assert_within(value, 2.0 * 1e6 / SERVICE_US as f64, 0.10);
    }

    #[test]
    fn tune_finds_the_highest_valid_server_rate() {
        let _timings = support::timings_or_llm();
        // A shorter service time than the other tests': two-second trials then hold about 1,800
        // queries, and the queue's 99th percentile settles within them.
        let service_us = 1000;
        let bound_ms = 20.0;
        let bound = format!("server_target_latency_ns={}", (bound_ms * 1e6) as u64);
        // The run repeats the confirmation trial's length (twice --trial-duration and
        // --trial-queries), so it sees the same Poisson schedule.
        let value = tune_then_run(
            "Server",
            (1, service_us),
            &["--set", &bound],
            &[
                "--set",
                &bound,
                "--set",
                "min_duration_ms=4000",
                "--set",
                "min_query_count=2000",
            ],
        );
        // Written --margin (10 %) below the highest VALID rate.
        let known = md1_highest_rate(service_us as f64 / 1e6, bound_ms / 1e3);
        assert_within(value, known * 0.9, 0.10);
    }

    #[test]
    fn tune_finds_the_highest_server_rate_within_the_first_token_bound() {
        let _timings = support::timings_or_llm();
        // A token run: the null plugin sends a sample's first token when its worker takes it up,
        // so the time to first token is the queue's wait; TPOT is bound loosely.
        let bounds = [
            "--tokens",
            "--set",
            "server_ttft_latency=19000000",
            "--set",
            "server_tpot_latency=100000000",
        ];
        let mut run_extra = bounds.to_vec();
        run_extra.extend([
            "--set",
            "min_duration_ms=4000",
            "--set",
            "min_query_count=2000",
        ]);
        let value = tune_then_run("Server", (1, 1000), &bounds, &run_extra);
        let known = md1_highest_rate_by(1e-3, 19e-3, |wait, _service| wait);
        assert_within(value, known * 0.9, 0.10);
    }

    #[test]
    fn run_tune_tunes_first_then_runs_with_the_value() {
        let _timings = support::timings_or_llm();
        let dir = TempDir::new();
        let mut args = strings(&[
            "--scenario",
            "Offline",
            "--tune",
            "--trial-duration",
            "500ms",
            "--set",
            "min_duration_ms=1000",
            "--out",
            "logs",
            "--require-valid",
        ]);
        args.extend(null_server(2, SERVICE_US));
        let output = mlperf_host(dir.path(), "run", &args);
        support::assert_ok(&output);
        let conf = std::fs::read_to_string(dir.path().join("logs/tune/user.conf")).unwrap();
        let tuned: f64 = conf
            .lines()
            .last()
            .and_then(|line| line.strip_prefix("*.Offline.target_qps = "))
            .expect(&conf)
            .parse()
            .unwrap();
        let detail =
            std::fs::read_to_string(dir.path().join("logs/mlperf_log_detail.txt")).unwrap();
        let logged = detail
            .lines()
            .find(|line| line.contains("\"key\": \"requested_offline_expected_qps\""))
            .expect("requested_offline_expected_qps in the detail log");
        assert!(
            logged.contains(&format!("\"value\": {tuned}")),
            "{logged} vs {tuned}"
        );
        assert!(dir
            .path()
            .join("logs/tune/trial-2/mlperf_log_summary.txt")
            .is_file());
    }
}
