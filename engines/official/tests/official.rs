//! The crate against the compiled official library: settings through the official
//! `FromConfig` and the bridge's setters, and one real test with a Rust SUT.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use mlperf_official_loadgen::{
    is_available, loadgen_version, query_samples_complete, start_test, Error, LogOutput, Mode,
    QuerySample, QuerySampleLibrary, QuerySampleResponse, Scenario, SystemUnderTest, TestSettings,
    SETUP_COMMAND,
};

fn require_built() {
    assert!(
        is_available(),
        "built without the official sources: {SETUP_COMMAND}"
    );
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mlperf-official-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn settings_take_fields_by_name_and_refuse_bad_ones() {
    require_built();
    let mut settings = TestSettings::new().unwrap();
    assert_eq!(settings.scenario(), Scenario::SingleStream);
    assert_eq!(settings.mode(), Mode::PerformanceOnly);
    // The official defaults.
    assert_eq!(settings.get("min_query_count").unwrap(), "100");
    assert_eq!(settings.get("server_target_qps").unwrap(), "1");
    settings.set("min_query_count", "0x10").unwrap();
    settings.set("server_target_qps", "1234.5").unwrap();
    settings.set("print_timestamps", "true").unwrap();
    settings
        .set("server_find_peak_qps_decimals_of_precision", "-2")
        .unwrap();
    assert_eq!(settings.get("min_query_count").unwrap(), "16");
    assert_eq!(settings.get("server_target_qps").unwrap(), "1234.5");
    assert_eq!(settings.get("print_timestamps").unwrap(), "1");
    assert_eq!(
        settings
            .get("server_find_peak_qps_decimals_of_precision")
            .unwrap(),
        "-2"
    );
    settings.set_scenario(Scenario::Server);
    settings.set_mode(Mode::AccuracyOnly);
    assert_eq!(settings.scenario(), Scenario::Server);
    assert_eq!(settings.mode(), Mode::AccuracyOnly);
    assert!(matches!(
        settings.set("no_such_field", "1"),
        Err(Error::UnknownKey(key)) if key == "no_such_field"
    ));
    for (key, value) in [
        ("min_query_count", "-1"),
        ("min_query_count", "1.5"),
        ("server_target_qps", "fast"),
        ("print_timestamps", "2"),
        ("min_duration_ms", ""),
    ] {
        assert!(
            matches!(settings.set(key, value), Err(Error::BadValue { .. })),
            "{key}={value}"
        );
    }
}

#[test]
fn the_embedded_mlperf_conf_sets_the_rules_seeds() {
    require_built();
    let mut settings = TestSettings::new().unwrap();
    settings.set_scenario(Scenario::Server);
    settings
        .apply_mlperf_conf("resnet50", Scenario::Server)
        .unwrap();
    // The v6.0/6.1 rules' seeds and resnet50's Server bound.
    assert_eq!(settings.get("qsl_rng_seed").unwrap(), "2085463073848966840");
    assert_eq!(
        settings.get("server_target_latency_ns").unwrap(),
        "15000000"
    );
    assert_eq!(settings.get("min_duration_ms").unwrap(), "600000");
}

#[test]
fn a_user_conf_that_cannot_be_read_is_an_error() {
    require_built();
    let mut settings = TestSettings::new().unwrap();
    let missing = temp_dir("conf").join("missing.conf");
    let error = settings
        .apply_user_conf(&missing, "resnet50", Scenario::Offline)
        .unwrap_err();
    assert!(
        error.to_string().contains("cannot open the file"),
        "{error}"
    );
}

/// Completes every sample inside `issue_query`, with its index as the response.
struct InlineSut {
    issued: AtomicU64,
}

impl SystemUnderTest for InlineSut {
    fn name(&self) -> &str {
        "inline-rust-sut"
    }
    fn issue_query(&self, samples: &[QuerySample]) {
        self.issued
            .fetch_add(samples.len() as u64, Ordering::Relaxed);
        let data: Vec<u64> = samples.iter().map(|s| s.index as u64).collect();
        let mut responses: Vec<QuerySampleResponse> = samples
            .iter()
            .zip(&data)
            .map(|(s, d)| QuerySampleResponse {
                id: s.id,
                data: d as *const u64 as usize,
                size: 8,
                n_tokens: 0,
            })
            .collect();
        // SAFETY: ids from this query, data alive across the call.
        unsafe { query_samples_complete(&mut responses) };
    }
    fn flush_queries(&self) {}
}

struct Library {
    loads: Vec<Vec<usize>>,
}

impl QuerySampleLibrary for Library {
    fn name(&self) -> &str {
        "rust-qsl"
    }
    fn total_sample_count(&self) -> usize {
        50
    }
    fn performance_sample_count(&self) -> usize {
        50
    }
    fn load_samples_to_ram(&mut self, indices: &[usize]) {
        self.loads.push(indices.to_vec());
    }
    fn unload_samples_from_ram(&mut self, _: &[usize]) {}
}

#[test]
fn an_accuracy_run_answers_every_sample_and_logs_like_the_official_loadgen() {
    require_built();
    let out = temp_dir("run");
    let mut settings = TestSettings::new().unwrap();
    settings.set_scenario(Scenario::Offline);
    settings.set_mode(Mode::AccuracyOnly);
    let sut = InlineSut {
        issued: AtomicU64::new(0),
    };
    let mut qsl = Library { loads: Vec::new() };
    start_test(&sut, &mut qsl, &settings, &LogOutput::in_dir(&out), None).unwrap();
    assert_eq!(sut.issued.load(Ordering::Relaxed), 50);
    let mut loaded: Vec<usize> = qsl.loads.concat();
    loaded.sort_unstable();
    assert_eq!(loaded, (0..50).collect::<Vec<_>>());
    let accuracy: Vec<serde_json::Value> = serde_json::from_str(
        &std::fs::read_to_string(out.join("mlperf_log_accuracy.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(accuracy.len(), 50);
    for record in accuracy {
        let index = record["qsl_idx"].as_u64().unwrap();
        let data = record["data"].as_str().unwrap();
        // The response bytes: the index, little-endian, as hex.
        let expected: String = index
            .to_le_bytes()
            .iter()
            .map(|b| format!("{b:02X}"))
            .collect();
        assert_eq!(data, expected);
    }
    let detail = std::fs::read_to_string(out.join("mlperf_log_detail.txt")).unwrap();
    let version = loadgen_version().unwrap();
    assert_eq!(version, "6.0.17 @ d6147c7eb7");
    assert!(detail.contains(&format!(
        r#""key": "loadgen_version", "value": "{version}""#
    )));
    assert!(detail.contains(r#""key": "sut_name", "value": "inline-rust-sut""#));
    let _ = std::fs::remove_dir_all(&out);
}
