//! `mlperf-host run --power` and `mlperf-host power report`, through the binary: meters around
//! real runs of the null plugin, the accounting checked against an independent reading of
//! the files the run wrote, and a fixture session with hand-computed expectations.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const EXE: &str = env!("CARGO_BIN_EXE_mlperf-host");

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mlperf-host-power-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn run(args: &[&str]) -> Output {
    Command::new(EXE)
        .arg("run")
        .args(args)
        .output()
        .expect("mlperf-host runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn json(path: &Path) -> serde_json::Value {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap()
}

/// The value of a detail-log key (the last entry of that key).
fn detail_value(dir: &Path, key: &str) -> serde_json::Value {
    let detail = std::fs::read_to_string(dir.join("mlperf_log_detail.txt")).unwrap();
    detail
        .lines()
        .filter_map(|line| line.strip_prefix(":::MLLOG "))
        .map(|entry| serde_json::from_str::<serde_json::Value>(entry).unwrap())
        .rfind(|entry| entry["key"] == key)
        .map(|entry| entry["value"].clone())
        .unwrap_or_else(|| panic!("no {key} in the detail log"))
}

/// Milliseconds since the epoch of `MM-DD-YYYY HH:MM:SS.mmm` (UTC), computed here without
/// the crate's parser so the test checks it.
fn epoch_ms(time: &str) -> i64 {
    let (date, clock) = time.split_once(' ').unwrap();
    let date: Vec<i64> = date.split('-').map(|n| n.parse().unwrap()).collect();
    let (hms, millis) = clock.split_once('.').unwrap();
    let hms: Vec<i64> = hms.split(':').map(|n| n.parse().unwrap()).collect();
    let (month, day, year) = (date[0], date[1], date[2]);
    // Days from civil (proleptic Gregorian).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    ((days * 24 + hms[0]) * 60 + hms[1]) * 60_000 + hms[2] * 1000 + millis.parse::<i64>().unwrap()
}

/// The checker's mean: spl.txt samples with watts > 0 strictly inside the detail log's window.
fn checker_mean(dir: &Path, spl: &str) -> (f64, usize) {
    let begin = epoch_ms(detail_value(dir, "power_begin").as_str().unwrap());
    let end = epoch_ms(detail_value(dir, "power_end").as_str().unwrap());
    let lines = std::fs::read_to_string(dir.join(spl)).unwrap();
    let inside: Vec<f64> = lines
        .lines()
        .map(|line| line.split(',').collect::<Vec<_>>())
        .filter(|fields| {
            let t = epoch_ms(fields[1]);
            begin < t && t < end
        })
        .map(|fields| fields[3].parse::<f64>().unwrap())
        .filter(|watts| *watts > 0.0)
        .collect();
    (
        inside.iter().sum::<f64>() / inside.len() as f64,
        inside.len(),
    )
}

#[test]
fn a_simulated_meter_gives_the_checkers_energy_per_query_beside_an_untouched_summary() {
    let out = scratch("sim");
    let trace = out.with_extension("trace.txt");
    std::fs::write(&trace, "# a recorded draw\n180\n220\n205\n").unwrap();
    let power_file = format!("sim:{}?period_ms=20", trace.display());
    let output = run(&[
        "--scenario",
        "SingleStream",
        "--latency",
        "1ms",
        "--set",
        "min_duration_ms=1500",
        "--set",
        "min_query_count=10",
        "--set",
        "single_stream_expected_latency_ns=1000000",
        "--power",
        "sim:200?period_ms=50",
        "--power",
        &power_file,
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", text(&output.stderr));
    // The block follows the summary; both meters are labelled simulated.
    let summary_at = stdout.find("MLPerf Results Summary").unwrap();
    let power_at = stdout.find("Power Summary").unwrap();
    assert!(summary_at < power_at, "{stdout}");
    // Each meter, and the two wall meters' sum.
    assert_eq!(
        stdout.matches("Power result : VALID (simulated)").count(),
        3,
        "{stdout}"
    );
    assert!(stdout.contains("SIMULATED, not a measurement"));
    // The official summary stays as LoadGen writes it.
    let summary = std::fs::read_to_string(out.join("mlperf_log_summary.txt")).unwrap();
    assert!(!summary.to_lowercase().contains("power"), "{summary}");

    let power = json(&out.join("power_summary.json"));
    assert_eq!(power, json(&out.join("result.json"))["power"]);
    assert_eq!(power["scenario"], "SingleStream");
    assert_eq!(power["simulated"], true);
    assert_eq!(power["power_begin"], detail_value(&out, "power_begin"));
    assert_eq!(power["power_end"], detail_value(&out, "power_end"));
    let queries = detail_value(&out, "result_query_count").as_f64().unwrap();
    assert_eq!(power["performance"]["query_count"].as_f64(), Some(queries));
    let seconds = power["window_seconds"].as_f64().unwrap();
    assert!(seconds >= 1.4, "{power}");

    for (index, spl) in ["spl.txt", "spl-2.txt", "spl-3.txt"].iter().enumerate() {
        let source = &power["sources"][index];
        assert_eq!(source["trace_file"], *spl);
        assert_eq!(source["valid"], true, "{source}");
        let (mean, count) = checker_mean(&out, spl);
        let accounting = &source["accounting"];
        assert_eq!(accounting["samples"].as_u64(), Some(count as u64));
        let average = accounting["average_watts"].as_f64().unwrap();
        assert!((average - mean).abs() < 1e-9, "{average} vs {mean}");
        // mJ per query = W × s × 1000 ÷ queries.
        let millijoules = source["metric"]["power_metric"].as_f64().unwrap();
        let expected = mean * seconds * 1000.0 / queries;
        assert!(
            (millijoules - expected).abs() < 1e-6 * expected,
            "{millijoules} vs {expected}"
        );
        assert_eq!(source["metric"]["power_metric_units"], "millijoules");
    }
    // Two wall meters measure one system: its power is their sum, sample by sample (the
    // first meter's samples, each with the other's nearest), first, in spl.txt.
    let total = &power["sources"][0];
    assert_eq!(total["source"], "wall total (2 wall meters)");
    assert_eq!(power["sources"][1]["accounting"]["average_watts"], 200.0);
    // The replayed trace cycles 180, 220, 205.
    let replayed = power["sources"][2]["accounting"]["min_watts"]
        .as_f64()
        .unwrap();
    assert_eq!(replayed, 180.0);
    let summed = |key: &str| total["accounting"][key].as_f64().unwrap();
    assert!(
        (380.0..=420.0).contains(&summed("min_watts"))
            && (380.0..=420.0).contains(&summed("max_watts")),
        "{total}"
    );

    // power report recomputes the first meter's figures from the files alone.
    let report = Command::new(EXE)
        .args(["power", "report", "--json", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(report.status.success(), "{}", text(&report.stderr));
    let recomputed: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    let recomputed = &recomputed["sources"][0];
    assert_eq!(recomputed["simulated"], true);
    assert_eq!(
        recomputed["metric"]["power_metric"],
        power["sources"][0]["metric"]["power_metric"]
    );
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_file(&trace);
}

#[test]
fn offline_reports_samples_per_joule() {
    let out = scratch("offline");
    let output = run(&[
        "--scenario",
        "Offline",
        // The one Offline query completes a second after it is issued.
        "--latency",
        "1s",
        "--set",
        "offline_expected_qps=1000",
        "--power",
        "sim:250?period_ms=25",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let power = json(&out.join("power_summary.json"));
    let per_second = detail_value(&out, "result_samples_per_second")
        .as_f64()
        .unwrap();
    let metric = &power["sources"][0]["metric"];
    assert_eq!(metric["power_metric"], 250.0);
    assert_eq!(metric["power_metric_units"], "Watts");
    assert_eq!(metric["efficiency_label"], "Samples per joule");
    let efficiency = metric["efficiency"].as_f64().unwrap();
    assert!((efficiency - per_second / 250.0).abs() < 1e-9 * efficiency);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn bad_meters_and_accuracy_runs_are_refused_before_anything_runs() {
    let out = scratch("refused");
    for (args, words) in [
        (vec!["--power", "sim:abc"], "--power sim:abc"),
        (vec!["--power", "sim:-3"], "positive"),
        (vec!["--power", "teapot:1"], "unknown kind \"teapot\""),
        (
            vec!["--power", "sim:200", "--mode", "AccuracyOnly"],
            "AccuracyOnly run has no power result",
        ),
    ] {
        let mut all = args.clone();
        all.extend(["--out", out.to_str().unwrap()]);
        let output = run(&all);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(words), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(!out.exists(), "{args:?} wrote logs");
    }
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/power_session")
}

#[test]
fn power_report_on_a_session_gives_the_hand_computed_figures() {
    let output = Command::new(EXE)
        .args(["power", "report", fixture().to_str().unwrap()])
        .output()
        .unwrap();
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", text(&output.stderr));
    // Strictly inside 10:01:00.500..10:01:10.500: 110..200 W (the -1 reading left out).
    for line in [
        "Run window (s) : 10.000",
        "Samples per second : 1000.000",
        "Samples in window : 10 (1 invalid), largest gap 1.000 s",
        "Average power (W) : 155.000",
        "Min / max power (W) : 110.000 / 200.000",
        "Energy (J) : 1550.000",
        "Samples per joule : 6.452",
        "Power result : VALID",
        "Ranging run, ",
    ] {
        assert!(stdout.contains(line), "{line:?} missing:\n{stdout}");
    }
    assert!(!stdout.contains("simulated"), "{stdout}");
}

#[test]
fn power_report_fails_a_testing_run_far_below_ranging_and_names_bad_files() {
    let session = scratch("session");
    for part in ["run_1", "ranging"] {
        std::fs::create_dir_all(session.join(part)).unwrap();
        for file in ["mlperf_log_detail.txt", "spl.txt"] {
            std::fs::copy(
                fixture().join(part).join(file),
                session.join(part).join(file),
            )
            .unwrap();
        }
    }
    let ranging = session.join("ranging/spl.txt");
    let hotter = std::fs::read_to_string(&ranging)
        .unwrap()
        .replace("Watts,160,", "Watts,170,");
    std::fs::write(&ranging, hotter).unwrap();
    let output = Command::new(EXE)
        .args(["power", "report", session.to_str().unwrap()])
        .output()
        .unwrap();
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(3), "{stdout}");
    assert!(stdout.contains("Power result : INVALID"), "{stdout}");
    assert!(
        stdout.contains("5 % or more below the ranging run's 170.000 W"),
        "{stdout}"
    );

    let spl = session.join("run_1/spl.txt");
    std::fs::write(&spl, "Time,13-45-2026 10:00:00.000,Watts,1\n").unwrap();
    let output = Command::new(EXE)
        .args(["power", "report", session.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr.contains("run_1/spl.txt") && stderr.contains("13-45-2026"),
        "{stderr}"
    );
    std::fs::remove_file(session.join("run_1/mlperf_log_detail.txt")).unwrap();
    let output = Command::new(EXE)
        .args(["power", "report", session.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(text(&output.stderr).contains("mlperf_log_detail.txt"));
    let _ = std::fs::remove_dir_all(&session);
}

/// An `mlperf-ptd-simulator` child sampling every 50 ms, killed when dropped.
pub(crate) struct PtdSimulator {
    child: std::process::Child,
    port: u16,
}

impl PtdSimulator {
    pub(crate) fn start(options: &[&str]) -> PtdSimulator {
        use std::io::BufRead;
        let exe = Path::new(EXE).with_file_name("mlperf-ptd-simulator");
        assert!(
            exe.is_file(),
            "{} is not built: run the tests from the workspace root (cargo test builds it)",
            exe.display()
        );
        let mut child = Command::new(exe)
            .args(["-p", "0", "--interval-ms", "50"])
            .args(options)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        stdout.read_line(&mut first).unwrap();
        let port = first
            .trim()
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("not a listening line: {first:?}"));
        // Keep reading so the simulator never blocks on a full pipe.
        std::thread::spawn(move || for _ in stdout.lines().map_while(Result::ok) {});
        PtdSimulator { child, port }
    }

    pub(crate) fn spec(&self) -> String {
        format!("ptd://127.0.0.1:{}?settle=0&timeout=5", self.port)
    }
}

impl Drop for PtdSimulator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) const SHORT_SINGLE_STREAM: [&str; 8] = [
    "--scenario",
    "SingleStream",
    "--latency",
    "1ms",
    "--set",
    "min_duration_ms=1000",
    "--set",
    "single_stream_expected_latency_ns=1000000",
];

/// A second-long SingleStream run into `out` with a `--power` for each of `meters`.
fn run_short(out: &Path, meters: &[&str]) -> Output {
    let mut args = SHORT_SINGLE_STREAM.to_vec();
    for meter in meters {
        args.extend(["--power", meter]);
    }
    args.extend(["--out", out.to_str().unwrap()]);
    run(&args)
}

#[test]
fn a_ptdaemon_meter_gets_a_ranging_run_then_the_testing_run() {
    let simulator = PtdSimulator::start(&["--watts", "300"]);
    let out = scratch("ptd");
    let spec = simulator.spec();
    let output = run_short(&out, &[&spec]);
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", text(&output.stderr));
    assert!(
        stdout.contains("Ranging run (power analyzer ranges on automatic)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Power result : VALID (simulated)"),
        "{stdout}"
    );
    assert!(stdout.contains("Ranging run, "), "{stdout}");
    // The analyzer's own statistics, as PTDaemon's Watts reply gives them.
    assert!(
        stdout.contains("Note : PTDaemon Watts: avg 300"),
        "{stdout}"
    );

    // Both runs have their LoadGen logs and their spl.txt, marked by phase.
    let ranging = out.join("ranging");
    for (dir, phase) in [(&ranging, "_ranging"), (&out, "_testing")] {
        assert!(dir.join("mlperf_log_summary.txt").is_file());
        let spl = std::fs::read_to_string(dir.join("spl.txt")).unwrap();
        assert!(spl.lines().count() > 10, "{spl}");
        assert!(spl.lines().all(|l| l.ends_with(phase)), "{spl}");
        let (mean, _) = checker_mean(dir, "spl.txt");
        assert_eq!(mean, 300.0);
    }
    let power = json(&out.join("power_summary.json"));
    let source = &power["sources"][0];
    // The simulator identifies as SPEC's Dummy device: simulated, never a measurement.
    assert_eq!(source["provenance"], "simulated");
    assert!(
        source["identity"].as_str().unwrap().starts_with("Dummy"),
        "{source}"
    );
    assert_eq!(source["accounting"]["average_watts"], 300.0);
    assert_eq!(power["ranging"][0]["accounting"]["average_watts"], 300.0);
    assert_eq!(power["ranging"][0]["trace_file"], "ranging/spl.txt");
    // The testing run's window is the later one.
    assert!(
        epoch_ms(power["power_begin"].as_str().unwrap())
            > epoch_ms(detail_value(&ranging, "power_end").as_str().unwrap())
    );

    let report = Command::new(EXE)
        .args(["power", "report", "--json", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(report.status.success(), "{}", text(&report.stderr));
    let recomputed: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    assert_eq!(recomputed["sources"][0]["metric"], source["metric"]);
    assert_eq!(recomputed["valid"], true);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_ptdaemon_that_cannot_be_used_stops_the_run_before_it_begins() {
    // Nothing listens on a port just let go of.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let refused = format!("ptd://127.0.0.1:{port}?settle=0");
    let erring = PtdSimulator::start(&["--fault", "error-reply=SR"]);
    let erring_spec = erring.spec();
    let out = scratch("ptd-refused");
    for (spec, words) in [
        (refused.as_str(), "cannot connect"),
        (erring_spec.as_str(), "SR,V,Auto"),
    ] {
        let output = run_short(&out, &[spec]);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{spec}: {stderr}");
        assert!(
            stderr.contains(words) && stderr.contains("--power"),
            "{stderr}"
        );
        assert!(
            !out.join("mlperf_log_summary.txt").exists(),
            "{spec}: a run happened"
        );
        let _ = std::fs::remove_dir_all(&out);
    }
}

#[test]
fn a_ptdaemon_lost_mid_run_leaves_the_performance_result_and_invalidates_power() {
    let mut simulator = PtdSimulator::start(&[]);
    let out = scratch("ptd-lost");
    let spec = simulator.spec();
    let mut args: Vec<String> = SHORT_SINGLE_STREAM.iter().map(|a| a.to_string()).collect();
    // A longer testing run, for the meter to die in.
    args.extend(["--set", "min_duration_ms=3000"].map(String::from));
    args.extend([
        "--power".into(),
        spec,
        "--out".into(),
        out.display().to_string(),
    ]);
    let child = Command::new(EXE)
        .arg("run")
        .args(&args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Kill the analyzer a second into the testing run (its detail log opens as it starts).
    let testing = out.join("mlperf_log_detail.txt");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !testing.is_file() {
        assert!(std::time::Instant::now() < deadline, "no testing run");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_secs(1));
    let _ = simulator.child.kill();
    let _ = simulator.child.wait();
    let output = child.wait_with_output().unwrap();
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", text(&output.stderr));
    // The performance result stands; the power result is INVALID with the reason.
    let summary = std::fs::read_to_string(out.join("mlperf_log_summary.txt")).unwrap();
    assert!(summary.contains("Result is : VALID"), "{summary}");
    assert!(stdout.contains("Power result : INVALID"), "{stdout}");
    let power = json(&out.join("power_summary.json"));
    assert_eq!(power["valid"], false);
    let reasons = power["sources"][0]["invalid_reasons"].to_string();
    assert!(reasons.contains("PTDaemon"), "{reasons}");
    assert_eq!(json(&out.join("result.json"))["power"]["valid"], false);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_plugin_meter_reports_a_component_beside_the_wall_meter() {
    let out = scratch("plugin");
    let output = run_short(
        &out,
        &["sim:200?period_ms=50", "plugin:null?watts=120&period_ms=20"],
    );
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", text(&output.stderr));
    assert!(stdout.contains("Meter 2 : plugin:null"), "{stdout}");
    assert!(stdout.contains("component estimate"), "{stdout}");
    let power = json(&out.join("power_summary.json"));
    let plugin = &power["sources"][1];
    assert!(
        plugin["scope"].as_str().unwrap().starts_with("component"),
        "{plugin}"
    );
    assert_eq!(plugin["provenance"], "simulated");
    assert_eq!(plugin["trace_file"], "spl-2.txt");
    assert_eq!(plugin["accounting"]["average_watts"], 120.0);
    let (mean, count) = checker_mean(&out, "spl-2.txt");
    assert_eq!(mean, 120.0);
    assert_eq!(plugin["accounting"]["samples"].as_u64(), Some(count as u64));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_plugin_meter_failing_mid_run_invalidates_only_the_power_result() {
    let out = scratch("plugin-fails");
    let output = run_short(&out, &["plugin:null?period_ms=20&fail_after_reads=10"]);
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", text(&output.stderr));
    let summary = std::fs::read_to_string(out.join("mlperf_log_summary.txt")).unwrap();
    assert!(summary.contains("Result is : VALID"), "{summary}");
    let power = json(&out.join("power_summary.json"));
    assert_eq!(power["valid"], false);
    let reasons = power["sources"][0]["invalid_reasons"].to_string();
    assert!(reasons.contains("read_power failed"), "{reasons}");
    assert!(stdout.contains("Power result : INVALID"), "{stdout}");
    let _ = std::fs::remove_dir_all(&out);
}
