//! Seeded property test of settings at their extremes: user.conf lines setting one to three
//! keys to the largest, smallest and odd values a number can take, in every scenario, must
//! either be refused (the parser's error, or the test's `TestError`, naming what to change) or
//! run, and never abort the process on an allocation they size (a query of 4 billion samples,
//! a schedule of 600 billion queries) or panic. Each case that parses runs for real, on a
//! SUT that answers inline, its duration capped so that the cases end.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

use mlperf_loadgen::config::{ConfigFile, ConfigLoader};
use mlperf_loadgen::testing::{MutationRng, NullQsl};
use mlperf_loadgen::{
    start_test, Completer, LogSettings, QuerySample, QuerySampleResponse, SystemUnderTest,
    TestScenario, TestSettings,
};

/// Cases per run: each a real (short) test.
const CASES: usize = 160;

/// The keys whose values size something: queries, sets, schedules, logs.
const KEYS: &[&str] = &[
    "target_qps",
    "target_latency",
    "target_latency_percentile",
    "samples_per_query",
    "max_async_queries",
    "min_query_count",
    "max_query_count",
    "min_duration",
    "target_duration",
    "performance_sample_count_override",
    "accuracy_sample_count_override",
    "accuracy_log_sampling_target",
    "accuracy_log_probability",
    "performance_issue_same",
    "performance_issue_same_index",
    "performance_issue_unique",
    "sample_concatenate_permutation",
    "coalesce_queries",
    "use_token_latencies",
    "ttft_latency",
    "tpot_latency",
    "token_latency_scaling_factor",
    "qsl_rng_seed",
    "schedule_rng_seed",
];

const VALUES: &[&str] = &[
    "0",
    "1",
    "2",
    "-1",
    "0.5",
    "99.9",
    "100",
    "101",
    "1e-15",
    "1e15",
    "1e308",
    "4294967295",
    "4294967296",
    "4000000000",
    "9223372036854775807",
    "18446744073709551615",
    "nan",
    "inf",
];

const SCENARIOS: &[TestScenario] = &[
    TestScenario::SingleStream,
    TestScenario::MultiStream,
    TestScenario::Server,
    TestScenario::Offline,
];

/// Answers every sample inline.
struct Inline;

impl SystemUnderTest for Inline {
    fn name(&self) -> &str {
        "Inline"
    }

    fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
        for sample in samples {
            completer.query_samples_complete(&[QuerySampleResponse::new(sample.id, &[1, 2])]);
        }
    }
}

#[test]
fn settings_at_their_extremes_are_refused_by_name_or_run_never_abort() {
    let mut rng = MutationRng(0x5e77_1e55);
    let (mut refused, mut failed, mut ran) = (0, 0, 0);
    for case in 0..CASES {
        let scenario = SCENARIOS[rng.below(SCENARIOS.len())];
        // Server at 1,000 qps unless the case says otherwise: mlperf.conf's 1 qps waits a
        // second for a query past the duration's cap, as the official LoadGen does.
        let mut text = match scenario {
            TestScenario::Server => "*.Server.target_qps = 1000\n".to_string(),
            _ => String::new(),
        };
        for _ in 0..1 + rng.below(3) {
            let key = KEYS[rng.below(KEYS.len())];
            let value = VALUES[rng.below(VALUES.len())];
            text.push_str(&format!("*.{scenario}.{key} = {value}\n"));
        }
        let conf = match ConfigFile::parse(&text, "extreme.conf") {
            Ok(conf) => conf,
            Err(error) => {
                let message = error.to_string();
                assert!(message.contains("extreme.conf:"), "case {case}: {message}");
                refused += 1;
                continue;
            }
        };
        let mut settings = TestSettings {
            scenario,
            ..TestSettings::default()
        };
        ConfigLoader::new().apply_user_conf(&mut settings, &conf, "model", scenario);
        // Bounded, whatever the durations and counts say.
        settings.max_duration_ms = 100;
        let log = LogSettings {
            drain_timeout: Duration::from_millis(100),
            ..LogSettings::default()
        };
        let mut qsl = NullQsl::holding(64);
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            start_test(&Inline, &mut qsl, &settings, &log)
        }));

        match outcome {
            Ok(Ok(_)) => ran += 1,
            Ok(Err(error)) => {
                assert!(!error.to_string().is_empty(), "case {case}");
                failed += 1;
            }
            Err(_) => panic!("case {case} panicked:\n{text}"),
        }
    }
    // The values reach the engine: most cases parse, and some are refused there.
    assert!(
        ran > CASES / 4,
        "ran {ran}, refused {refused}, failed {failed}"
    );
    assert!(
        failed > 0 && refused > 0,
        "ran {ran}, refused {refused}, failed {failed}"
    );
}

/// Issue threads take queries out of order, so their Server schedule is generated whole: 10^8
/// qps for 600 s would be 60 billion queries, ended by the out-of-memory killer after
/// minutes; it is refused before any is generated, naming the settings.
#[test]
fn a_schedule_issue_threads_would_hold_whole_is_refused_when_it_cannot_fit() {
    if mlperf_loadgen::available_memory().is_none() {
        return;
    }
    let settings = TestSettings {
        scenario: TestScenario::Server,
        server_target_qps: 1e8,
        server_num_issue_query_threads: 1,
        ..TestSettings::default()
    };
    let mut qsl = NullQsl::holding(64);
    let error = start_test(&Inline, &mut qsl, &settings, &LogSettings::default()).unwrap_err();
    let message = error.to_string();
    assert!(
        message.starts_with(
            "server_num_issue_query_threads > 0 holds the whole schedule before issuing: its "
        ) && message.ends_with(": lower server_target_qps or min_duration_ms"),
        "{message}"
    );
}
