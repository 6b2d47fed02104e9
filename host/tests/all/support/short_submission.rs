//! A short submission of one of the round's benchmarks on its fixture, made as a submitter
//! makes one with the official LoadGen: an accuracy run, a performance run, the round's
//! compliance tests, `sysinfo`, `submit`, then `check --allow-short --json`.

use std::path::{Path, PathBuf};

use super::{assert_success, describe, onnx_benchmark_host, TempDir};

/// What a small fixture, an untrained model and a generated system description cannot meet:
/// the round's accuracy target, its data set size and performance sample count, the edge
/// system's other required scenarios, the description's fields left to fill in.
pub(crate) const FIXTURE_LIMITS: [&str; 5] = [
    "accuracy-target",
    "dataset-size",
    "performance-sample-count",
    "required-scenarios",
    "system-fill-in",
];

/// What `check` found in the tree.
pub(crate) struct ShortSubmission {
    _dir: TempDir,
    pub(crate) tree: PathBuf,
    /// The scenario's folder inside the tree, relative to it.
    pub(crate) scenario: String,
    pub(crate) code: Option<i32>,
    /// Each error's (rule, file, message).
    pub(crate) errors: Vec<(String, String, String)>,
}

impl ShortSubmission {
    /// The accuracy.txt `submit` filed.
    pub(crate) fn accuracy_txt(&self) -> String {
        let path = self.tree.join(&self.scenario).join("accuracy/accuracy.txt");
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// Every error is one of [`FIXTURE_LIMITS`], and accuracy.txt's error states
    /// `metric_value` (the checker's pattern read the line).
    pub(crate) fn assert_only_fixture_limits(&self, metric_value: &str) {
        let rules = FIXTURE_LIMITS;
        assert_eq!(self.code, Some(3), "{:#?}", self.errors);
        assert!(
            self.errors
                .iter()
                .all(|(rule, _, _)| rules.contains(&rule.as_str())),
            "{:#?}",
            self.errors
        );
        assert!(
            self.errors
                .iter()
                .any(|(rule, file, message)| rule == "accuracy-target"
                    && file.starts_with(&self.scenario)
                    && file.ends_with("accuracy/accuracy.txt")
                    && message.contains(metric_value)),
            "{:#?}",
            self.errors
        );
    }
}

/// `benchmark`'s short submission in `scenario` (data/`prepared` holds its model), with the
/// `tests` the round requires and `settings` (`--set`) for the timed runs. The compliance
/// tests compare their speed with the performance run's: on a shared VM the runs can drift
/// apart, and then the test is made again, then the performance run and the tests (up to
/// four times). A `Server` submission is filed for a datacenter system, the others for an
/// edge one.
pub(crate) fn short_submission(
    prepared: &str,
    benchmark: &str,
    scenario: &str,
    tests: &[&str],
    settings: &[&str],
) -> ShortSubmission {
    let host = |args: &[&str]| onnx_benchmark_host(prepared, args);
    let dir = TempDir::new();
    let runs = dir.path().join("runs");
    let s = |path: &Path| path.to_str().unwrap().to_string();
    let (accuracy, performance) = (s(&runs.join("accuracy")), s(&runs.join("performance")));
    let common = [
        "--engine",
        "official",
        "--benchmark",
        benchmark,
        "--scenario",
        scenario,
    ];
    let run = |out: &str, extra: &[&str]| {
        let mut args = vec!["run"];
        args.extend_from_slice(&common);
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--out", out, "--quiet"]);
        assert_success(&host(&args));
    };
    run(&accuracy, &["--mode", "AccuracyOnly"]);
    let mut settings_args = Vec::new();
    for setting in settings {
        settings_args.extend_from_slice(&["--set", setting]);
    }
    // A compliance test whose speed missed the performance run's is made again (up to three
    // times) before the performance run itself is.
    let audit = |test: &str| -> Option<String> {
        let out = s(&runs.join(test));
        let mut args = vec!["audit", "--test", test, "--performance-run", &performance];
        args.extend_from_slice(&common);
        if test == "TEST01" {
            args.extend_from_slice(&["--accuracy-run", &accuracy]);
        }
        args.extend_from_slice(&settings_args);
        args.extend_from_slice(&["--out", &out, "--quiet"]);
        let output = host(&args);
        if output.status.code() != Some(3) {
            assert_success(&output);
            return None;
        }
        let verdicts = ["verify_accuracy.txt", "verify_performance.txt"]
            .map(|file| std::fs::read_to_string(runs.join(test).join(file)));
        Some(format!("{test}: {verdicts:?}\n{}", describe(&output)))
    };
    for attempt in 1..=4 {
        run(&performance, &settings_args);
        let failed: Vec<String> = tests
            .iter()
            .filter_map(|test| {
                let mut failure = audit(test)?;
                for _ in 0..2 {
                    eprintln!("attempt {attempt}: {failure}");
                    failure = audit(test)?;
                }
                Some(failure)
            })
            .collect();
        if failed.is_empty() {
            break;
        }
        assert!(attempt < 4, "{}", failed[0]);
        eprintln!("attempt {attempt}: a compliance test failed: {}", failed[0]);
    }
    // Server belongs to datacenter systems only.
    let (system, system_type) = match scenario {
        "Server" => ("ci-datacenter-box", "datacenter"),
        _ => ("ci-edge-box", "edge"),
    };
    let system_json =
        super::typed_system_description(dir.path(), system, "mlperf-host-ci", system_type);
    let tree = dir.path().join("tree");
    let mut submit = vec![
        "submit".to_string(),
        "--benchmark".into(),
        benchmark.into(),
        "--system".into(),
        s(&system_json),
        "--out".into(),
        s(&tree),
        accuracy.clone(),
        performance.clone(),
    ];
    submit.extend(tests.iter().map(|test| s(&runs.join(test))));
    let submit: Vec<&str> = submit.iter().map(String::as_str).collect();
    let output = host(&submit);
    assert!(output.status.code().is_some(), "{}", describe(&output));
    let (code, findings) = super::check_json(&tree, true);
    let errors = findings
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| {
            let field = |key: &str| f[key].as_str().unwrap_or_default().to_string();
            (field("rule"), field("file"), field("message"))
        })
        .collect();
    ShortSubmission {
        _dir: dir,
        tree,
        scenario: format!("closed/mlperf-host-ci/results/{system}/{benchmark}/{scenario}"),
        code,
        errors,
    }
}
