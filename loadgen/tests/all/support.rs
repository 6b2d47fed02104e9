//! Shared pieces of the engine's tests: a SUT and a QSL that record what the engine asks, the
//! official wheel's goldens, and a way to run a test in a process of its own.

use mlperf_loadgen::TestSettings;

pub(crate) use mlperf_loadgen::testing::{RecordingQsl, RecordingSut};

/// TestSettings from a JSON object of official field names (bools may be given as 0/1).
pub(crate) fn settings_from_json(fields: &serde_json::Value) -> TestSettings {
    let mut object = fields.as_object().cloned().unwrap_or_default();
    let defaults = serde_json::to_value(TestSettings::default()).unwrap();
    for (key, value) in object.iter_mut() {
        if defaults.get(key).is_some_and(|d| d.is_boolean()) {
            if let Some(n) = value.as_u64() {
                *value = serde_json::Value::Bool(n != 0);
            }
        }
    }
    serde_json::from_value(serde_json::Value::Object(object)).expect("valid settings JSON")
}

pub(crate) fn golden(name: &str) -> serde_json::Value {
    let path = format!("{}/tests/data/golden/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).expect(&path)).expect("golden JSON")
}

/// Runs the test named `test` (its path in this binary, e.g. `abort::some_test`) alone in a
/// child process of this test binary and returns true; in that child it returns false, so the
/// caller goes on with the test's body. For tests that call `abort_test`, which ends every test
/// running in the process.
pub(crate) fn ran_in_own_process(test: &str) -> bool {
    const CHILD: &str = "MLPERF_LOADGEN_TEST_ALONE";
    if std::env::var_os(CHILD).is_some() {
        return false;
    }
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--test-threads=1", "--nocapture"])
        .env(CHILD, "1")
        .output()
        .expect("the test binary runs again");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "{test} in its own process: {}\n{stdout}\n{stderr}",
        output.status
    );
    true
}
