//! The session layer driven as a library: a plan carried out with an observer, result.json
//! written once by the session (after the power result) where the plan says, and refusals
//! before anything runs.

use std::path::Path;
use std::time::Duration;

use mlperf_host::benchmark::accuracy::Score;
use mlperf_host::loadgen::{ProgressHandle, TestMode, TestScenario, TestSettings};
use mlperf_host::power::PowerResult;
use mlperf_host::session::{
    EnginePlan, LogOptions, Observer, PluginPlan, RunPlan, SamplePlan, SampleTiming, Session,
    SessionError,
};

use crate::support::{null_plugin, TempDir};

/// What a session showed, in order.
#[derive(Default)]
struct Recorder {
    events: Vec<String>,
    summary: String,
    power_valid: Option<bool>,
}

impl Observer for Recorder {
    fn ranging_started(&mut self, _out: &Path) {
        self.events.push("ranging".into());
    }
    fn test_starting(&mut self) -> Option<ProgressHandle> {
        self.events.push("test".into());
        None
    }
    fn test_finished(&mut self) {
        self.events.push("finished".into());
    }
    fn summary(&mut self, text: &str) {
        self.events.push("summary".into());
        self.summary = text.to_string();
    }
    fn accuracy(&mut self, _score: &Score) {
        self.events.push("accuracy".into());
    }
    fn power(&mut self, result: &PowerResult) {
        self.events.push("power".into());
        self.power_valid = Some(result.is_valid());
    }
    fn power_failed(&mut self, error: &SessionError) {
        self.events.push(format!("power failed: {error}"));
    }
}

fn plan(out: &Path, results: &Path) -> RunPlan {
    let settings = TestSettings {
        scenario: TestScenario::SingleStream,
        mode: TestMode::PerformanceOnly,
        min_query_count: 200,
        min_duration_ms: 300,
        ..TestSettings::default()
    };
    RunPlan {
        model: "resnet50".into(),
        model_named: true,
        benchmark: None,
        settings,
        engine: EnginePlan::Native,
        audit_config: None,
        plugin: PluginPlan::new(
            null_plugin().display().to_string(),
            // 1 ms a query, as the default expected latency: the queries fill the duration.
            "workers = 1\nlatency_us = 1000\n".into(),
        ),
        samples: SamplePlan::Indices {
            total: 64,
            performance: 64,
        },
        power: vec!["sim:200?period_ms=50".into()],
        out: out.to_path_buf(),
        results_dir: results.to_path_buf(),
        log: LogOptions {
            trace: false,
            sample_timing: SampleTiming::default(),
            drain_timeout: Duration::from_secs(10),
            issue_spin: Duration::ZERO,
            stall_timeout: Duration::from_secs(10),
        },
        on_abandoned: None,
    }
}

fn json(path: &Path) -> serde_json::Value {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap()
}

#[test]
fn result_json_is_written_once_after_power_into_the_results_dir() {
    let dir = TempDir::new();
    let (out, results) = (dir.path().join("run_1"), dir.path().to_path_buf());
    let mut recorder = Recorder::default();
    let outcome = Session::new(&mut recorder)
        .run(&plan(&out, &results))
        .unwrap();

    assert!(outcome.result.is_valid(), "{}", recorder.summary);
    assert_eq!(outcome.scenario, TestScenario::SingleStream);
    assert_eq!(outcome.power_valid, recorder.power_valid);
    assert_eq!(recorder.events, ["test", "finished", "summary", "power"]);
    assert!(recorder.summary.contains("Result is : VALID"));
    // The run folder holds LoadGen's logs and the power files, not result.json.
    assert!(out.join("mlperf_log_detail.txt").is_file());
    assert!(out.join("power_summary.json").is_file());
    assert!(!out.join("result.json").exists());
    let result = json(&results.join("result.json"));
    assert_eq!(result["power"], json(&out.join("power_summary.json")));
    assert_eq!(result["effective"]["scenario"], "SingleStream");
    assert!(!results.join(".result.json.partial").exists());
    // The engine's field order, the power result last.
    let text = std::fs::read_to_string(results.join("result.json")).unwrap();
    let keys: Vec<&str> = text
        .lines()
        .filter_map(|line| line.strip_prefix("  \"")?.split('"').next())
        .collect();
    assert_eq!(keys.first(), Some(&"sut_name"), "{keys:?}");
    assert_eq!(keys.last(), Some(&"power"), "{keys:?}");
}

#[test]
fn without_meters_result_json_has_no_power_and_lies_beside_the_logs() {
    let dir = TempDir::new();
    let mut plan = plan(dir.path(), dir.path());
    plan.power.clear();
    let mut recorder = Recorder::default();
    let outcome = Session::new(&mut recorder).run(&plan).unwrap();
    assert_eq!(outcome.power_valid, None);
    assert_eq!(recorder.events, ["test", "finished", "summary"]);
    let result = json(&dir.path().join("result.json"));
    assert!(result.get("power").is_none(), "{result}");
    assert!(result["performance"].is_object());
}

#[test]
fn a_test_abandoned_inside_a_call_is_a_failure_of_the_outcome() {
    let dir = TempDir::new();
    let mut plan = plan(dir.path(), dir.path());
    plan.power.clear();
    plan.plugin.spec = crate::support::faulty_plugin().display().to_string();
    // Stuck well past the stall timeout, then back: without a hook, the session waits for the
    // call and returns the abandoned test.
    plan.plugin.config = "fault = \"hang_issue\"\nat_sample = 50\nhang_ms = 1500\n".into();
    plan.log.stall_timeout = Duration::from_millis(300);
    let mut recorder = Recorder::default();
    let outcome = Session::new(&mut recorder).run(&plan).unwrap();
    let failure = outcome
        .result
        .failure()
        .expect("the abandoned test is a failure");
    assert!(
        failure.contains("has not returned after 300ms"),
        "{failure}"
    );
    assert!(outcome.result.incomplete());
    assert!(!outcome.result.is_valid());
    assert_eq!(outcome.result.invalid_reasons(), Some(failure));
    let result = json(&dir.path().join("result.json"));
    assert!(result["abandoned"].is_string(), "{result}");
}

#[test]
fn an_isolated_plugin_runs_the_same_plan_in_a_process_of_its_own() {
    let dir = TempDir::new();
    let mut plan = plan(dir.path(), dir.path());
    plan.power.clear();
    plan.plugin.isolation = Some(mlperf_host::plugin::isolated::Isolation {
        executable: env!("CARGO_BIN_EXE_mlperf-host").into(),
        stall_timeout: Duration::from_secs(10),
        timed_preprocess: None,
    });
    let mut recorder = Recorder::default();
    let outcome = Session::new(&mut recorder).run(&plan).unwrap();
    assert!(!outcome.destroy_stalled);
    let detail = std::fs::read_to_string(dir.path().join("mlperf_log_detail.txt")).unwrap();
    assert!(detail.contains("plugin_isolation"), "provenance logged");
    let result = json(&dir.path().join("result.json"));
    assert_eq!(result["performance"]["validity"]["valid"], true, "{result}");
}

#[test]
fn a_plugin_that_cannot_start_is_refused_before_any_log_is_written() {
    let dir = TempDir::new();
    let out = dir.path().join("logs");
    let mut plan = plan(&out, &out);
    plan.plugin = PluginPlan {
        context: Some("benchmark x: cannot start its plugin".into()),
        ..PluginPlan::new(
            dir.path().join("missing.so").display().to_string(),
            String::new(),
        )
    };
    let mut recorder = Recorder::default();
    let error = Session::new(&mut recorder).run(&plan).err().unwrap();
    assert!(
        matches!(error, SessionError::PluginStart { .. }),
        "{error:?}"
    );
    assert_eq!(error.to_string(), "benchmark x: cannot start its plugin");
    assert!(recorder.events.is_empty(), "{:?}", recorder.events);
    assert!(!out.exists());
}

#[test]
fn a_data_set_asking_for_more_performance_samples_than_it_holds_is_refused() {
    let dir = TempDir::new();
    let dataset = dir.path().join("three.npy");
    mlperf_host::samples::write_npy(&dataset, "<f4", 3, &[2], &[0u8; 24]).unwrap();
    let mut plan = plan(dir.path(), dir.path());
    plan.power.clear();
    plan.samples = SamplePlan::Dataset {
        path: dataset,
        performance: Some(4),
        preprocess: None,
        input_names: Vec::new(),
        input_files: Vec::new(),
        expected_sha256: None,
        format: mlperf_host::benchmark::DatasetFormat::Npy,
        count: None,
    };
    let error = Session::new(&mut Recorder::default())
        .run(&plan)
        .err()
        .unwrap();
    assert_eq!(
        error.to_string(),
        "performance sample count 4 must be between 1 and the data set's length (3)"
    );
}

#[test]
fn an_audit_into_the_submissions_own_run_is_refused_before_anything_runs() {
    use mlperf_host::compliance::{ComplianceTest, Dtype};
    use mlperf_host::session::{AuditPlan, References};

    let dir = TempDir::new();
    let summary = dir.write("mlperf_log_summary.txt", "Result is : VALID\n");
    let out = dir.path().to_path_buf();
    let mut run = plan(&out.join("performance/run_1"), &out);
    run.power.clear();
    let plan = AuditPlan {
        test: ComplianceTest::Test04,
        out: out.clone(),
        references: References {
            accuracy_log: None,
            performance_detail: None,
            performance_summary: Some(summary),
        },
        dtype: Dtype::Byte,
        eos_token_id: 2,
        run,
    };
    let mut recorder = Recorder::default();
    let error = Session::new(&mut recorder).audit(&plan).err().unwrap();
    assert!(
        matches!(error, SessionError::OutIsReference { .. }),
        "{error:?}"
    );
    assert!(recorder.events.is_empty(), "{:?}", recorder.events);
    assert!(!out.join("performance").exists());
}
