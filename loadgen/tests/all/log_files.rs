//! The log files against the official wheel's example logs (tests/data/example_logs): the same
//! detail keys in the same order with the same value types, strict JSON on every line, the
//! accuracy file's framing, and the files read the way the submission checker and the
//! compliance scripts read them.

use crate::support;

use std::path::{Path, PathBuf};

use mlperf_loadgen::config::{ConfigFile, ConfigLoader};
use mlperf_loadgen::{
    start_test, Completer, LogSettings, QuerySample, QuerySampleResponse, SystemUnderTest,
    TestMode, TestResult, TestScenario, TestSettings,
};
use serde_json::Value;
use support::RecordingQsl;

/// Answers inline with the sample index; token runs send the first token, then
/// `2 + index % 7` tokens, as the golden runs' SUT did.
struct GoldenSut {
    tokens: bool,
}

impl SystemUnderTest for GoldenSut {
    fn name(&self) -> &str {
        "PySUT"
    }
    fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
        for s in samples {
            let bytes = (s.index as u32).to_le_bytes();
            if self.tokens {
                completer.first_token_complete(&[QuerySampleResponse::new(s.id, &bytes)]);
                let n = 2 + (s.index % 7) as i64;
                completer
                    .query_samples_complete(&[QuerySampleResponse::with_tokens(s.id, &bytes, n)]);
            } else {
                completer.query_samples_complete(&[QuerySampleResponse::new(s.id, &bytes)]);
            }
        }
    }
}

struct Case {
    dir: &'static str,
    model: &'static str,
    scenario: TestScenario,
    total: usize,
    performance: usize,
    user_conf: &'static str,
}

/// The golden runs' settings, shortened where only the duration differs.
const CASES: [Case; 7] = [
    Case {
        dir: "resnet50_SingleStream",
        model: "resnet50",
        scenario: TestScenario::SingleStream,
        total: 5000,
        performance: 1024,
        user_conf: "*.SingleStream.target_latency = 1\n*.SingleStream.min_duration = 0\n*.SingleStream.min_query_count = 700\n",
    },
    Case {
        dir: "resnet50_MultiStream",
        model: "resnet50",
        scenario: TestScenario::MultiStream,
        total: 5000,
        performance: 1024,
        user_conf: "*.MultiStream.target_latency = 2\n*.MultiStream.min_duration = 0\n",
    },
    Case {
        dir: "resnet50_Server",
        model: "resnet50",
        scenario: TestScenario::Server,
        total: 5000,
        performance: 1024,
        user_conf: "*.Server.target_qps = 50000\n*.Server.min_duration = 10\n*.Server.min_query_count = 600\n",
    },
    Case {
        dir: "resnet50_Offline",
        model: "resnet50",
        scenario: TestScenario::Offline,
        total: 5000,
        performance: 1024,
        user_conf: "*.Offline.target_qps = 20000\n*.Offline.min_duration = 0\n",
    },
    Case {
        dir: "llama2-70b_SingleStream_tokens",
        model: "llama2-70b",
        scenario: TestScenario::SingleStream,
        total: 1000,
        performance: 1000,
        user_conf: "*.SingleStream.min_duration = 0\n",
    },
    Case {
        dir: "llama2-70b_Server_tokens",
        model: "llama2-70b",
        scenario: TestScenario::Server,
        total: 1000,
        performance: 1000,
        user_conf: "*.Server.target_qps = 50000\n*.Server.min_duration = 0\n",
    },
    Case {
        dir: "llama2-70b_Offline_tokens",
        model: "llama2-70b",
        scenario: TestScenario::Offline,
        total: 1000,
        performance: 1000,
        user_conf: "*.Offline.target_qps = 1000\n*.Offline.min_duration = 0\n",
    },
];

fn golden_dir(case: &Case) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/example_logs")
        .join(case.dir)
}

fn out_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mlperf-logs-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn settings_for(case: &Case, mode: TestMode) -> TestSettings {
    let mut settings = TestSettings {
        scenario: case.scenario,
        ..TestSettings::default()
    };
    let user = ConfigFile::parse(case.user_conf, "user.conf").unwrap();
    ConfigLoader::new().apply_user_conf(&mut settings, &user, case.model, case.scenario);
    settings.mode = mode;
    settings
}

fn run(case: &Case, mode: TestMode, dir: &Path) -> TestResult {
    let settings = settings_for(case, mode);
    let mut qsl = RecordingQsl::new(case.total, case.performance);
    let sut = GoldenSut {
        tokens: settings.use_token_latencies,
    };
    let mut log = LogSettings::default();
    log.log_output.outdir = Some(dir.to_path_buf());
    start_test(&sut, &mut qsl, &settings, &log).expect("test runs")
}

/// Every `:::MLLOG` line, parsed strictly.
fn detail_entries(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .map(|line| {
            let json = line
                .strip_prefix(":::MLLOG ")
                .unwrap_or_else(|| panic!("{}: not an MLLOG line: {line}", path.display()));
            serde_json::from_str(json)
                .unwrap_or_else(|e| panic!("{}: invalid JSON ({e}): {line}", path.display()))
        })
        .collect()
}

/// Keys with the JSON kind of their values; what depends on timing left out: upstream's
/// logger warnings, and the reasons a run on a loaded machine may end INVALID (a Server run
/// whose tail latency a descheduled process pushed over the bound). A double that happens
/// to be integral prints without a point, so numbers are one kind.
fn key_shapes(entries: &[Value]) -> Vec<String> {
    entries
        .iter()
        .filter(|e| {
            !e["value"]
                .as_str()
                .is_some_and(|v| v.starts_with("Logging allocation detected"))
                && e["key"] != "result_invalid_reason"
        })
        .map(|e| {
            let kind = match &e["value"] {
                Value::String(_) => "string",
                Value::Number(_) => "number",
                Value::Bool(_) => "bool",
                Value::Array(_) => "list",
                Value::Object(_) => "map",
                Value::Null => "null",
            };
            format!("{}:{kind}", e["key"].as_str().unwrap())
        })
        .collect()
}

/// The submission checker's reading: the first occurrence of a key wins.
fn checker_view(entries: &[Value]) -> serde_json::Map<String, Value> {
    let mut view = serde_json::Map::new();
    for entry in entries {
        let key = entry["key"].as_str().unwrap().to_string();
        view.entry(key).or_insert_with(|| entry["value"].clone());
    }
    view
}

#[test]
fn detail_logs_have_the_official_keys_order_and_types() {
    for case in &CASES {
        let dir = out_dir(case.dir);
        let result = run(case, TestMode::PerformanceOnly, &dir);
        let files = result.log_files.as_ref().expect("log files");
        let ours = detail_entries(&files.detail);
        let golden = detail_entries(&golden_dir(case).join("mlperf_log_detail.txt"));
        assert_eq!(key_shapes(&ours), key_shapes(&golden), "{}", case.dir);

        for entry in &ours {
            let metadata = &entry["metadata"];
            assert_eq!(entry["namespace"], "mlperf::logging");
            assert_eq!(entry["event_type"], "POINT_IN_TIME");
            assert!(metadata["pid"].is_u64() && metadata["tid"].is_u64());
            assert!(metadata["file"].as_str().unwrap().ends_with(".rs"));
            assert!(entry["time_ms"].is_f64() || entry["time_ms"].is_u64());
        }
        let view = checker_view(&ours);
        let validity = view["result_validity"].as_str().unwrap();
        let valid = result.performance.as_ref().unwrap().validity.valid;
        assert_eq!(
            validity,
            if valid { "VALID" } else { "INVALID" },
            "{}",
            case.dir
        );
        assert!(view["early_stopping_met"].is_boolean());
        assert_eq!(view["effective_scenario"], case.scenario.as_str());
        assert_eq!(view["effective_qsl_rng_seed"], 2_085_463_073_848_966_840u64);
        assert_eq!(view["num_errors"], 0, "{}", case.dir);
        assert_eq!(
            view["result_query_count"],
            result.performance.as_ref().unwrap().query_count
        );

        // The accuracy log of a performance run is the empty list, byte for byte.
        let accuracy = std::fs::read(&files.accuracy).unwrap();
        let golden_accuracy =
            std::fs::read(golden_dir(case).join("mlperf_log_accuracy.json")).unwrap();
        assert_eq!(accuracy, golden_accuracy, "{}", case.dir);

        // The summary on disk is the rendered one, and result.json parses.
        let summary = std::fs::read_to_string(&files.summary).unwrap();
        assert_eq!(
            summary,
            mlperf_loadgen::logging::summary::render_summary(&result)
        );
        let result_json: Value =
            serde_json::from_str(&std::fs::read_to_string(&files.result).unwrap()).unwrap();
        assert_eq!(result_json["effective"]["scenario"], case.scenario.as_str());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn accuracy_logs_frame_every_entry_as_the_compliance_scripts_read_it() {
    for case in [&CASES[2], &CASES[5]] {
        let dir = out_dir(&format!("{}-accuracy", case.dir));
        let result = run(case, TestMode::AccuracyOnly, &dir);
        let files = result.log_files.as_ref().unwrap();
        let text = std::fs::read_to_string(&files.accuracy).unwrap();
        assert!(text.starts_with("[\n{ \"seq_id\" : "), "{text:.80}");
        assert!(text.ends_with(" }\n]\n"));
        // Strict JSON as a whole, one entry per line, every sample of the data set once.
        let entries: Vec<Value> = serde_json::from_str(&text).unwrap();
        assert_eq!(entries.len(), case.total, "{}", case.dir);
        let lines: Vec<&str> = text.lines().filter(|l| l.starts_with('{')).collect();
        assert_eq!(lines.len(), case.total);
        let mut indices: Vec<u64> = Vec::new();
        for line in &lines {
            // TEST01's unix mode: qsl_idx is the 4th field when split on ": " / ",".
            let fields: Vec<&str> = line.split([':', ',']).map(str::trim).collect();
            let qsl_idx: u64 = fields[3].parse().unwrap();
            let entry: Value = serde_json::from_str(line.trim_end_matches(',')).unwrap();
            assert_eq!(entry["qsl_idx"], qsl_idx);
            let data = entry["data"].as_str().unwrap();
            assert_eq!(data, hex_le(qsl_idx as u32));
            if result.effective.use_token_latencies {
                assert_eq!(entry["token_data"].as_str().unwrap(), data);
                assert_eq!(entry["token_count"], 2 + qsl_idx % 7);
            }
            indices.push(qsl_idx);
        }
        indices.sort_unstable();
        assert_eq!(indices, (0..case.total as u64).collect::<Vec<_>>());
        // An accuracy run's summary is the footer alone.
        let summary = std::fs::read_to_string(&files.summary).unwrap();
        assert!(
            summary.starts_with("\nNo warnings encountered during test."),
            "{summary}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

fn hex_le(value: u32) -> String {
    value
        .to_le_bytes()
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect()
}

#[test]
fn summaries_answer_the_compliance_regexes() {
    // TEST04's verify_performance.py reads these lines from the summary.
    let dir = out_dir("test04");
    let result = run(&CASES[0], TestMode::PerformanceOnly, &dir);
    let summary = std::fs::read_to_string(&result.log_files.as_ref().unwrap().summary).unwrap();
    assert!(summary.contains("Scenario : SingleStream\n"));
    assert!(summary.contains("Result is : VALID\n"));
    let estimate = summary
        .lines()
        .find_map(|l| l.strip_prefix(" * Early stopping 90.0th percentile estimate: "))
        .expect("early-stopping estimate line");
    assert!(estimate.parse::<u64>().is_ok());
    let dir_offline = out_dir("test04-offline");
    let offline = run(&CASES[3], TestMode::PerformanceOnly, &dir_offline);
    let summary = std::fs::read_to_string(&offline.log_files.as_ref().unwrap().summary).unwrap();
    let line = summary
        .lines()
        .find_map(|l| l.strip_prefix("Samples per second: "))
        .expect("samples per second line");
    assert!(line.parse::<f64>().unwrap() > 0.0);
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&dir_offline).unwrap();
}

#[test]
fn an_unwritable_output_directory_fails_before_anything_runs() {
    let file = std::env::temp_dir().join(format!("mlperf-not-a-dir-{}", std::process::id()));
    std::fs::write(&file, b"").unwrap();
    let mut log = LogSettings::default();
    log.log_output.outdir = Some(file.join("sub"));
    let sut = support::RecordingSut::default();
    let mut qsl = RecordingQsl::new(10, 10);
    let error = start_test(&sut, &mut qsl, &TestSettings::default(), &log)
        .unwrap_err()
        .to_string();
    assert!(error.contains("mlperf_log_"), "{error}");
    assert!(qsl.loads.is_empty() && sut.queries.lock().unwrap().is_empty());
    std::fs::remove_file(&file).unwrap();
}

#[test]
fn the_trace_is_valid_json_with_a_span_per_sample() {
    let dir = out_dir("trace");
    let case = &CASES[2];
    let settings = settings_for(case, TestMode::PerformanceOnly);
    let mut qsl = RecordingQsl::new(case.total, case.performance);
    let mut log = LogSettings {
        enable_trace: true,
        ..LogSettings::default()
    };
    log.log_output.outdir = Some(dir.clone());
    let result = start_test(&GoldenSut { tokens: false }, &mut qsl, &settings, &log).unwrap();
    let files = result.log_files.as_ref().unwrap();
    let trace: Value = serde_json::from_str(&std::fs::read_to_string(&files.trace).unwrap())
        .expect("the trace is strict JSON");
    let events = trace["traceEvents"].as_array().unwrap();
    let begins = events.iter().filter(|e| e["ph"] == "b").count();
    let ends = events.iter().filter(|e| e["ph"] == "e").count();
    let samples = result.series[0].samples_issued as usize;
    assert_eq!((begins, ends), (samples, samples));
    let first = events.iter().find(|e| e["ph"] == "b").unwrap();
    assert!(first["args"]["sample_idx"].is_u64() && first["ts"].is_number());
    assert_eq!(events.last().unwrap()["name"], "LastTrace");
    assert_eq!(trace["displayTimeUnit"], "ns");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn result_json_is_left_to_the_caller_when_asked() {
    let dir = out_dir("no-result-json");
    let case = &CASES[2];
    let settings = settings_for(case, TestMode::PerformanceOnly);
    let mut qsl = RecordingQsl::new(case.total, case.performance);
    let mut log = LogSettings {
        write_result_json: false,
        ..LogSettings::default()
    };
    log.log_output.outdir = Some(dir.clone());
    let result = start_test(&GoldenSut { tokens: false }, &mut qsl, &settings, &log).unwrap();
    let files = result.log_files.as_ref().unwrap();
    assert!(files.summary.is_file() && files.detail.is_file());
    assert!(!files.result.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_detail_log_is_on_disk_while_the_run_goes() {
    /// Reads the detail log from inside the run, after giving the writer time to flush.
    struct Peeking {
        path: PathBuf,
        seen: std::sync::Mutex<Option<String>>,
        calls: std::sync::atomic::AtomicU64,
    }
    impl SystemUnderTest for Peeking {
        fn name(&self) -> &str {
            "Peeking"
        }
        fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
            if self
                .calls
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                == 10
            {
                std::thread::sleep(std::time::Duration::from_millis(600));
                *self.seen.lock().unwrap() = std::fs::read_to_string(&self.path).ok();
            }
            for s in samples {
                completer.query_samples_complete(&[QuerySampleResponse::new(s.id, &[])]);
            }
        }
    }
    for scenario in [TestScenario::SingleStream, TestScenario::Server] {
        let dir = out_dir(&format!("live-{scenario}"));
        let sut = Peeking {
            path: dir.join("mlperf_log_detail.txt"),
            seen: std::sync::Mutex::new(None),
            calls: std::sync::atomic::AtomicU64::new(0),
        };
        let settings = TestSettings {
            scenario,
            min_duration_ms: 0,
            min_query_count: 100,
            server_target_qps: 10_000.0,
            ..TestSettings::default()
        };
        let mut qsl = RecordingQsl::new(50, 50);
        let mut log = LogSettings::default();
        log.log_output.outdir = Some(dir.clone());
        start_test(&sut, &mut qsl, &settings, &log).unwrap();
        let seen = sut.seen.lock().unwrap().clone().expect("read mid-run");
        for key in [
            "\"effective_scenario\"",
            "\"loaded_qsl_set\"",
            "\"generated_query_count\"",
        ] {
            assert!(seen.contains(key), "{scenario}: {key} not on disk mid-run");
        }
        assert!(!seen.contains("\"result_validity\""));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn a_poisson_count_is_logged_once_whether_the_series_or_its_count_ends_first() {
    // A short schedule is counted beside the series long before it ends; a long one (10^7
    // draws) still counts when max_query_count ends the series after 100 queries, and the
    // series logs the count it makes itself.
    for (name, qps, duration_ms, max_queries) in
        [("short", 10_000.0, 0, 0), ("long", 1e7, 1_000, 100)]
    {
        let dir = out_dir(&format!("count-{name}"));
        let settings = TestSettings {
            scenario: TestScenario::Server,
            server_target_qps: qps,
            min_duration_ms: duration_ms,
            min_query_count: 100,
            max_query_count: max_queries,
            ..TestSettings::default()
        };
        let mut qsl = RecordingQsl::new(50, 50);
        let mut log = LogSettings::default();
        log.log_output.outdir = Some(dir.clone());
        let result = start_test(&GoldenSut { tokens: false }, &mut qsl, &settings, &log).unwrap();
        let series = &result.series[0];
        let entries = detail_entries(&dir.join("mlperf_log_detail.txt"));
        let counts: Vec<_> = entries
            .iter()
            .filter(|e| e["key"] == "generated_query_count")
            .map(|e| e["value"].as_u64().unwrap())
            .collect();
        assert_eq!(counts, [series.generated_query_count], "{name}");
        if name == "long" {
            assert_eq!(series.queries_issued, 100);
            let expected = qps * duration_ms as f64 / 1e3;
            let ratio = series.generated_query_count as f64 / expected;
            assert!(
                (ratio - 1.0).abs() < 0.01,
                "{}",
                series.generated_query_count
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn a_symlink_at_a_log_files_name_is_replaced_not_written_through() {
    let dir = out_dir("symlinked");
    std::fs::create_dir_all(&dir).unwrap();
    let victim = dir.join("victim.txt");
    std::fs::write(&victim, "keep me\n").unwrap();
    for name in ["mlperf_log_detail.txt", "mlperf_log_summary.txt"] {
        std::os::unix::fs::symlink(&victim, dir.join(name)).unwrap();
    }
    let case = &CASES[2];
    let settings = settings_for(case, TestMode::PerformanceOnly);
    let mut qsl = RecordingQsl::new(case.total, case.performance);
    let mut log = LogSettings::default();
    log.log_output.outdir = Some(dir.clone());
    let result = start_test(&GoldenSut { tokens: false }, &mut qsl, &settings, &log).unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me\n");
    let files = result.log_files.as_ref().unwrap();
    for file in [&files.detail, &files.summary] {
        let kind = std::fs::symlink_metadata(file).unwrap();
        assert!(kind.is_file(), "{} is a file of its own", file.display());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
