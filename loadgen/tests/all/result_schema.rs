//! `result.json` against `schema/result.schema.json`: the engine runs every scenario in every
//! mode (accuracy, performance, submission, token runs, INVALID runs, FindPeakPerformance), and
//! each `result.json` it writes is validated with the Python `jsonschema` package (draft
//! 2020-12). Mutated documents (a key removed, a wrong type, an unknown key, …) must fail, so
//! the check itself is checked.
//!
//! Python discovery: env `MLPERF_OFFICIAL_PYTHON`, else `<repo>/.venv/bin/python` (made by
//! `scripts/setup-official-loadgen.sh`). Without an interpreter that can `import jsonschema`
//! the test is skipped loudly, or fails when `CI` is set. `RESULT_SCHEMA_KEEP=1` keeps the
//! documents (printed path) for inspection.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mlperf_loadgen::{
    abort_test, start_test, Completer, LogSettings, QslError, QuerySample, QuerySampleIndex,
    QuerySampleLibrary, QuerySampleResponse, SystemUnderTest, TestMode, TestScenario, TestSettings,
};
use serde_json::{json, Value};

/// What the tiny SUT does with the samples it is given.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Behaviour {
    /// Completes every sample inline.
    Answer,
    /// Token run: the first token, then `2 + index % 5` tokens.
    Tokens,
    /// Completes only the first `n` samples; the rest never complete.
    CompleteFirst(u64),
    /// Panics on the `n`-th call of `issue_query` (0-based).
    PanicAt(u64),
    /// Completes every sample twice.
    Duplicate,
    /// Calls `abort_test` on the `n`-th call of `issue_query` (0-based), answering as usual.
    AbortAt(u64),
}

struct TinySut {
    behaviour: Behaviour,
    calls: AtomicU64,
    samples: AtomicU64,
}

impl TinySut {
    fn new(behaviour: Behaviour) -> Self {
        TinySut {
            behaviour,
            calls: AtomicU64::new(0),
            samples: AtomicU64::new(0),
        }
    }
}

impl SystemUnderTest for TinySut {
    fn name(&self) -> &str {
        "TinySut"
    }

    fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
        let call = self.calls.fetch_add(1, Ordering::Relaxed);
        match self.behaviour {
            Behaviour::PanicAt(n) if call == n => panic!("TinySut panics on purpose"),
            Behaviour::AbortAt(n) if call == n => abort_test(),
            _ => {}
        }
        for s in samples {
            let seen = self.samples.fetch_add(1, Ordering::Relaxed);
            let bytes = (s.index as u32).to_le_bytes();
            match self.behaviour {
                Behaviour::Tokens => {
                    completer.first_token_complete(&[QuerySampleResponse::new(s.id, &bytes)]);
                    let n = 2 + (s.index % 5) as i64;
                    completer.query_samples_complete(&[QuerySampleResponse::with_tokens(
                        s.id, &bytes, n,
                    )]);
                }
                Behaviour::CompleteFirst(n) if seen >= n => {}
                Behaviour::Duplicate => {
                    completer.query_samples_complete(&[QuerySampleResponse::new(s.id, &bytes)]);
                    completer.query_samples_complete(&[QuerySampleResponse::new(s.id, &bytes)]);
                }
                _ => completer.query_samples_complete(&[QuerySampleResponse::new(s.id, &bytes)]),
            }
        }
    }
}

struct TinyQsl;

impl QuerySampleLibrary for TinyQsl {
    fn name(&self) -> &str {
        "TinyQsl"
    }
    fn total_sample_count(&self) -> usize {
        48
    }
    fn performance_sample_count(&self) -> usize {
        24
    }
    fn load_samples_to_ram(&mut self, _: &[QuerySampleIndex]) -> Result<(), QslError> {
        Ok(())
    }
    fn unload_samples_from_ram(&mut self, _: &[QuerySampleIndex]) -> Result<(), QslError> {
        Ok(())
    }
}

struct Case {
    name: String,
    settings: TestSettings,
    behaviour: Behaviour,
    log: LogSettings,
    /// The performance run must be INVALID.
    invalid: bool,
    /// A stop reason (the variant's name) that some series must report.
    stop: Option<&'static str>,
}

/// Short runs: ~100 queries per performance series, 48 samples per accuracy pass.
fn quick(scenario: TestScenario, mode: TestMode) -> TestSettings {
    TestSettings {
        scenario,
        mode,
        min_duration_ms: if scenario == TestScenario::Server {
            20
        } else {
            0
        },
        min_query_count: 100,
        server_target_qps: 5000.0,
        offline_expected_qps: 1000.0,
        multi_stream_samples_per_query: 4,
        ..TestSettings::default()
    }
}

fn case(name: impl Into<String>, settings: TestSettings, behaviour: Behaviour) -> Case {
    Case {
        name: name.into(),
        settings,
        behaviour,
        log: LogSettings {
            drain_timeout: Duration::from_millis(300),
            ..LogSettings::default()
        },
        invalid: false,
        stop: None,
    }
}

fn cases() -> Vec<Case> {
    use TestMode::*;
    use TestScenario::*;
    let mut cases = Vec::new();
    for scenario in TestScenario::ALL {
        for mode in [PerformanceOnly, AccuracyOnly, SubmissionRun] {
            cases.push(case(
                format!("{scenario}_{mode}"),
                quick(scenario, mode),
                Behaviour::Answer,
            ));
        }
        let mut tokens = quick(scenario, PerformanceOnly);
        tokens.use_token_latencies = true;
        tokens.server_ttft_latency = 1_000_000_000;
        tokens.server_tpot_latency = 1_000_000_000;
        if matches!(scenario, Server | Offline) {
            tokens.infer_token_latencies = true;
            tokens.token_latency_scaling_factor = 3;
        }
        cases.push(case(
            format!("{scenario}_tokens"),
            tokens,
            Behaviour::Tokens,
        ));
    }

    // INVALID: too few queries for early stopping.
    let mut c = case(
        "SingleStream_invalid_early_stopping",
        TestSettings {
            min_query_count: 10,
            ..quick(SingleStream, PerformanceOnly)
        },
        Behaviour::Answer,
    );
    c.invalid = true;
    cases.push(c);

    // INVALID: a token run whose TTFT misses its bound.
    let mut s = quick(Server, PerformanceOnly);
    s.use_token_latencies = true;
    s.server_ttft_latency = 1;
    let mut c = case("Server_tokens_invalid_ttft", s, Behaviour::Tokens);
    c.invalid = true;
    cases.push(c);

    // INVALID: the SUT stops answering; the next query can never be issued.
    let mut c = case(
        "SingleStream_stalled",
        quick(SingleStream, PerformanceOnly),
        Behaviour::CompleteFirst(20),
    );
    c.invalid = true;
    c.stop = Some("Stalled");
    cases.push(c);

    // INVALID: more outstanding queries than allowed.
    let mut c = case(
        "Server_too_many_outstanding",
        TestSettings {
            server_max_async_queries: 2,
            ..quick(Server, PerformanceOnly)
        },
        Behaviour::CompleteFirst(10),
    );
    c.invalid = true;
    c.stop = Some("TooManyOutstanding");
    cases.push(c);

    let mut c = case(
        "Server_max_query_count",
        TestSettings {
            max_query_count: 30,
            ..quick(Server, PerformanceOnly)
        },
        Behaviour::Answer,
    );
    c.invalid = true;
    c.stop = Some("MaxQueryCount");
    cases.push(c);

    let mut c = case(
        "Server_max_duration",
        TestSettings {
            min_duration_ms: 2_000,
            max_duration_ms: 5,
            server_target_qps: 2_000.0,
            ..quick(Server, PerformanceOnly)
        },
        Behaviour::Answer,
    );
    c.invalid = true;
    c.stop = Some("MaxDuration");
    cases.push(c);

    let mut c = case(
        "MultiStream_sut_panics",
        quick(MultiStream, PerformanceOnly),
        Behaviour::PanicAt(5),
    );
    c.invalid = true;
    c.stop = Some("SutPanicked");
    cases.push(c);

    // INVALID: no sample ever completes (no latency statistics; non-finite rates are null).
    let mut c = case(
        "Offline_nothing_completes",
        quick(Offline, PerformanceOnly),
        Behaviour::CompleteFirst(0),
    );
    c.invalid = true;
    cases.push(c);

    // Refused completions are counted in `anomalies`.
    cases.push(case(
        "Offline_duplicate_completions",
        quick(Offline, SubmissionRun),
        Behaviour::Duplicate,
    ));

    // A settings error and a test05 warning in `diagnostics`; the schedule recorded; other
    // log file names.
    let mut c = case(
        "Offline_settings_diagnostics",
        TestSettings {
            test05: true,
            offline_expected_qps: -5.0,
            ..quick(Offline, SubmissionRun)
        },
        Behaviour::Answer,
    );
    c.log.record_query_schedule = true;
    c.log.log_output.suffix = "_x".to_string();
    c.log.log_output.prefix_with_datetime = true;
    cases.push(c);

    // FindPeakPerformance whose lower bound already misses the latency bound: no peak.
    cases.push(case(
        "Server_find_peak_no_peak",
        TestSettings {
            server_target_latency_ns: 1,
            ..quick(Server, FindPeakPerformance)
        },
        Behaviour::Answer,
    ));

    // FindPeakPerformance aborted during its first run: the base qps is the peak.
    let mut c = case(
        "Server_find_peak_aborted",
        TestSettings {
            min_duration_ms: 2_000,
            server_target_qps: 1_000.0,
            server_target_latency_ns: 1_000_000_000,
            ..quick(Server, FindPeakPerformance)
        },
        Behaviour::AbortAt(20),
    );
    c.stop = Some("Aborted");
    cases.push(c);
    cases
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("host crate has a parent directory")
        .to_path_buf()
}

fn schema_path() -> PathBuf {
    repo_root().join("schema/result.schema.json")
}

fn can_import_jsonschema(python: &Path) -> bool {
    Command::new(python)
        .args(["-c", "import jsonschema"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// The official-LoadGen venv's Python, if it has `jsonschema`; otherwise skips (or fails on CI).
pub(crate) fn python_or_skip(test: &str) -> Option<PathBuf> {
    let candidate = match std::env::var_os("MLPERF_OFFICIAL_PYTHON") {
        Some(p) => PathBuf::from(p),
        None => repo_root().join(".venv/bin/python"),
    };
    if can_import_jsonschema(&candidate) {
        return Some(candidate);
    }
    let msg = format!(
        "no Python with the `jsonschema` package: {} cannot `import jsonschema`. \
         Run scripts/setup-official-loadgen.sh in the repository root, or set MLPERF_OFFICIAL_PYTHON.",
        candidate.display()
    );
    if std::env::var_os("CI").is_some() {
        panic!("{test}: {msg} (CI is set, so this is a failure)");
    }
    eprintln!();
    eprintln!("##################################################################################");
    eprintln!("## SKIPPED {test}: {msg}");
    eprintln!("##################################################################################");
    eprintln!();
    None
}

/// Checks the schema against the draft 2020-12 meta-schema and that every closed object
/// requires all of its properties; then validates each document. Prints a JSON object:
/// `{"<path>": ["<error>", ...], ...}` (an empty list for a valid document).
const VALIDATOR: &str = r##"
import json, sys
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

schema = json.load(open(sys.argv[1]))
Draft202012Validator.check_schema(schema)
assert schema.get("$schema") == "https://json-schema.org/draft/2020-12/schema", schema.get("$schema")

def closed_objects(node, where):
    if isinstance(node, dict):
        if node.get("additionalProperties") is False and "properties" in node:
            missing = sorted(set(node["properties"]) - set(node.get("required", [])))
            if missing:
                raise SystemExit(f"schema lint: {where} does not require {missing}")
        for key, value in node.items():
            closed_objects(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            closed_objects(value, f"{where}/{i}")

closed_objects(schema, "#")

validator = Draft202012Validator(schema)
report = {}
for path in sys.argv[2:]:
    with open(path) as f:
        document = json.load(f)
    errors = sorted(validator.iter_errors(document), key=lambda e: list(map(str, e.absolute_path)))
    # best_match descends into anyOf/oneOf to the error that explains the failure.
    errors = [best_match([e]) for e in errors]
    report[path] = [
        "/" + "/".join(map(str, e.absolute_path)) + ": " + e.message[:300] for e in errors
    ]
print(json.dumps(report))
"##;

/// Validates the files; returns each file's errors (empty when valid).
pub(crate) fn validate(python: &Path, files: &[PathBuf]) -> Vec<(PathBuf, Vec<String>)> {
    let output = Command::new(python)
        .arg("-c")
        .arg(VALIDATOR)
        .arg(schema_path())
        .args(files)
        .output()
        .expect("run the Python validator");
    assert!(
        output.status.success(),
        "the validator failed: {}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "validator output is not JSON ({e}): {}",
            String::from_utf8_lossy(&output.stdout)
        )
    });
    files
        .iter()
        .map(|file| {
            let errors = report[file.to_str().unwrap()]
                .as_array()
                .unwrap_or_else(|| panic!("no report for {}", file.display()))
                .iter()
                .map(|e| e.as_str().unwrap().to_string())
                .collect();
            (file.clone(), errors)
        })
        .collect()
}

fn work_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mlperf-result-schema-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The name of a serialized `StopReason`: a unit variant is a string, a data variant an
/// object with one key.
fn stop_name(stop: &Value) -> String {
    match stop {
        Value::String(s) => s.clone(),
        Value::Object(map) => map.keys().next().cloned().unwrap_or_default(),
        other => panic!("unexpected stop {other}"),
    }
}

/// A change that makes a valid document invalid: what it does, a substring of the error the
/// validator must report, and the edit (false when the value it needs is absent).
type Mutation = (&'static str, &'static str, fn(&mut Value) -> bool);

fn remove(value: Option<&mut Value>, key: &str) -> bool {
    value
        .and_then(Value::as_object_mut)
        .and_then(|o| o.remove(key))
        .is_some()
}

fn set(slot: Option<&mut Value>, new: Value) -> bool {
    match slot {
        Some(slot) => {
            *slot = new;
            true
        }
        None => false,
    }
}

fn insert(value: Option<&mut Value>, key: &str, new: Value) -> bool {
    value
        .and_then(Value::as_object_mut)
        .map(|o| o.insert(key.to_string(), new))
        .is_some()
}

const MUTATIONS: [Mutation; 18] = [
    (
        "top-level key removed",
        "/: 'effective' is a required property",
        |d| remove(Some(d), "effective"),
    ),
    (
        "nested required key removed",
        "/performance/validity: 'valid' is a required property",
        |d| remove(d.pointer_mut("/performance/validity"), "valid"),
    ),
    (
        "settings field removed",
        "/requested: 'server_target_qps' is a required property",
        |d| remove(d.get_mut("requested"), "server_target_qps"),
    ),
    (
        "string for an integer",
        "/qsl_total_sample_count: '48' is not of type 'integer'",
        |d| set(d.get_mut("qsl_total_sample_count"), json!("48")),
    ),
    (
        "fraction for an integer",
        "/series/0/queries_issued: 1.5 is not of type 'integer'",
        |d| set(d.pointer_mut("/series/0/queries_issued"), json!(1.5)),
    ),
    (
        "string for a float",
        "/effective/target_qps: '1000' is not of type",
        |d| set(d.pointer_mut("/effective/target_qps"), json!("1000")),
    ),
    (
        "negative unsigned",
        "/effective/min_query_count: -1 is less than the minimum of 0",
        |d| set(d.pointer_mut("/effective/min_query_count"), json!(-1)),
    ),
    ("unknown top-level key", "('extra' was unexpected)", |d| {
        insert(Some(d), "extra", json!(1))
    }),
    (
        "unknown nested key",
        "/effective/requested: Additional properties are not allowed ('bogus_setting'",
        |d| {
            insert(
                d.pointer_mut("/effective/requested"),
                "bogus_setting",
                json!(true),
            )
        },
    ),
    (
        "bad scenario",
        "/effective/scenario: 'Streaming' is not one of",
        |d| set(d.pointer_mut("/effective/scenario"), json!("Streaming")),
    ),
    (
        "bad severity",
        "/diagnostics/0/severity: 'Fatal' is not one of",
        |d| set(d.pointer_mut("/diagnostics/0/severity"), json!("Fatal")),
    ),
    ("unknown stop variant", "/series/0/stop", |d| {
        set(d.pointer_mut("/series/0/stop"), json!({"Bogus": 1}))
    }),
    ("bad stop payload", "/series/0/stop", |d| {
        set(
            d.pointer_mut("/series/0/stop"),
            json!({"MaxQueryCount": -1}),
        )
    }),
    (
        "nanos out of range",
        "/series/0/power_end/nanos_since_epoch: 1000000000 is greater than the maximum",
        |d| {
            set(
                d.pointer_mut("/series/0/power_end/nanos_since_epoch"),
                json!(1_000_000_000u64),
            )
        },
    ),
    (
        "percentile pair too short",
        "/performance/sample_latency/percentiles/0: [0.5] is too short",
        |d| {
            set(
                d.pointer_mut("/performance/sample_latency/percentiles/0"),
                json!([0.5]),
            )
        },
    ),
    (
        "performance missing in a performance run",
        "/performance: None is not of type 'object'",
        |d| set(d.get_mut("performance"), Value::Null),
    ),
    (
        "VALID with a failed check",
        "/performance/validity/min_duration_met: True was expected",
        |d| {
            set(
                d.pointer_mut("/performance/validity/min_duration_met"),
                json!(false),
            )
        },
    ),
    (
        "bad datetime",
        "/test_datetime: 'yesterday' does not match",
        |d| set(d.get_mut("test_datetime"), json!("yesterday")),
    ),
];

#[test]
fn every_result_json_matches_the_schema() {
    // Some cases call `abort_test`, which would end the other tests of this binary too.
    if crate::support::ran_in_own_process("result_schema::every_result_json_matches_the_schema") {
        return;
    }
    let Some(python) = python_or_skip("every_result_json_matches_the_schema") else {
        return;
    };
    let dir = work_dir();
    let mut files = Vec::new();
    let mut stops_seen = Vec::new();
    let cases = cases();
    for case in &cases {
        let outdir = dir.join(&case.name);
        std::fs::create_dir_all(&outdir).unwrap();
        let mut log = case.log.clone();
        log.log_output.outdir = Some(outdir.clone());
        let sut = TinySut::new(case.behaviour);
        let result = start_test(&sut, &mut TinyQsl, &case.settings, &log)
            .unwrap_or_else(|e| panic!("{}: start_test failed: {e}", case.name));
        let path = result
            .log_files
            .as_ref()
            .expect("log files with an outdir")
            .result
            .clone();
        assert!(path.exists(), "{}: no {}", case.name, path.display());
        let doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap())
            .unwrap_or_else(|e| panic!("{}: result.json is not JSON: {e}", case.name));
        if case.invalid {
            assert_eq!(
                doc["performance"]["validity"]["valid"],
                json!(false),
                "{}: expected an INVALID run",
                case.name
            );
        }
        let stops: Vec<String> = doc["series"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| stop_name(&s["stop"]))
            .collect();
        if let Some(stop) = case.stop {
            assert!(
                stops.iter().any(|s| s == stop),
                "{}: expected a series stopped by {stop}, got {stops:?}",
                case.name
            );
        }
        stops_seen.extend(stops);
        files.push(path);
    }
    // The shapes the schema must cover did occur.
    let docs: Vec<Value> = files
        .iter()
        .map(|f| serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap())
        .collect();
    assert!(docs.iter().any(|d| d["find_peak"]["peak_qps"].is_number()));
    assert!(docs
        .iter()
        .any(|d| d["find_peak"].is_object() && d["find_peak"]["peak_qps"].is_null()));
    assert!(docs
        .iter()
        .any(|d| d["anomalies"]["duplicate"].as_u64() > Some(0)));
    assert!(docs.iter().any(|d| d["performance"]["tokens"].is_object()));
    assert!(docs
        .iter()
        .any(|d| d["performance"].is_object() && d["performance"]["sample_latency"].is_null()));
    assert!(docs
        .iter()
        .any(|d| d["series"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| !s["scheduled_offsets_ns"].as_array().unwrap().is_empty())));
    assert!(docs.iter().any(|d| d["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .any(|x| x["severity"] == "Warning")));
    for unit in ["MinimumsMet", "GeneratedQueriesIssued"] {
        assert!(
            stops_seen.iter().any(|s| s == unit),
            "no series stopped by {unit}: {stops_seen:?}"
        );
    }

    // Every real document is valid.
    let failures: Vec<String> = validate(&python, &files)
        .into_iter()
        .filter(|(_, errors)| !errors.is_empty())
        .map(|(file, errors)| format!("{}:\n  {}", file.display(), errors.join("\n  ")))
        .collect();
    assert!(
        failures.is_empty(),
        "result.json does not match {}:\n{}",
        schema_path().display(),
        failures.join("\n")
    );

    // Every mutation of a valid document is caught.
    let base_index = cases
        .iter()
        .position(|c| c.name == "Offline_SubmissionRun")
        .unwrap();
    let base = &docs[base_index];
    assert_eq!(base["performance"]["validity"]["valid"], json!(true));
    let mut mutated = Vec::new();
    for (i, (what, _, edit)) in MUTATIONS.iter().enumerate() {
        let mut doc = base.clone();
        assert!(edit(&mut doc), "mutation {what:?} found nothing to change");
        assert_ne!(&doc, base, "mutation {what:?} changed nothing");
        let path = dir.join(format!("mutated_{i}.json"));
        std::fs::write(&path, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
        mutated.push(path);
    }
    for ((file, errors), (what, expected, _)) in
        validate(&python, &mutated).into_iter().zip(MUTATIONS)
    {
        assert!(
            errors.iter().any(|e| e.contains(expected)),
            "the schema did not reject a document with {what} as expected ({expected:?}); \
             errors for {}: {errors:#?}",
            file.display()
        );
    }
    if std::env::var_os("RESULT_SCHEMA_KEEP").is_some() {
        eprintln!("result_schema: documents kept in {}", dir.display());
    } else {
        let _ = std::fs::remove_dir_all(&dir);
    }
}
