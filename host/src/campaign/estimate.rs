//! How long each run of a campaign will take, from the settings it runs with: the expected
//! latency or rate they state (a tuned user.conf's once tuned) against the round's minimum
//! duration and query count, as the LoadGen will run it.

use mlperf_loadgen::{EffectiveSettings, TestScenario, TestSettings};

use super::plan::RunKind;
use super::PowerChoice;

/// The power client waits 10 s before and after each of its two runs (ranging, testing).
const POWER_DEV_WAITS_S: f64 = 40.0;
/// A tuning's trials, about (`tune`'s defaults: probes, then trials of 2 s).
const TUNE_S: f64 = 30.0;

/// Seconds for one run of `kind` with `settings` on a library of `total` samples, `performance`
/// of which fit in memory.
pub fn run_seconds(
    kind: &RunKind,
    settings: &TestSettings,
    performance: u64,
    total: u64,
    power: &PowerChoice,
) -> f64 {
    let (effective, _) = EffectiveSettings::new(settings, performance.max(1), total.max(1));
    // Queries per second: SingleStream's and MultiStream's from their expected latency.
    let rate = effective.target_qps.max(1e-9);
    match kind {
        RunKind::Tune => TUNE_S,
        RunKind::Accuracy => match effective.scenario {
            TestScenario::SingleStream => total as f64 / rate,
            TestScenario::MultiStream => {
                (total as f64 / effective.samples_per_query.max(1) as f64).ceil() / rate
            }
            TestScenario::Offline | TestScenario::Server => total as f64 / rate,
        },
        RunKind::Performance | RunKind::Compliance(_) => {
            let min_duration_s = effective.target_duration_ms as f64 / 1e3;
            let min_queries = effective.min_query_count as f64;
            let once = match effective.scenario {
                TestScenario::SingleStream | TestScenario::MultiStream => {
                    min_duration_s.max(min_queries / rate)
                }
                TestScenario::Offline => effective.samples_per_query as f64 / rate,
                TestScenario::Server => min_duration_s.max(min_queries / rate),
            };
            match (kind, power) {
                // Ranging, then testing, each between the client's waits.
                (RunKind::Performance, PowerChoice::PowerDev { .. }) => {
                    2.0 * once + POWER_DEV_WAITS_S
                }
                // A PTDaemon meter ranges first too.
                (RunKind::Performance, PowerChoice::Meters(meters))
                    if meters.iter().any(|m| m.starts_with("ptd://")) =>
                {
                    2.0 * once
                }
                _ => once,
            }
        }
    }
}

/// `1 h 05 min`, `12 min 30 s`, `45 s`.
pub fn human(seconds: f64) -> String {
    if seconds < 9.95 {
        // `+ 0.0` turns -0.0 into 0.0.
        return format!("{:.1} s", seconds.max(0.0) + 0.0);
    }
    let s = seconds.round() as u64;
    match s {
        0..=59 => format!("{s} s"),
        60..=3599 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, s % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(scenario: TestScenario) -> TestSettings {
        TestSettings {
            scenario,
            min_duration_ms: 600_000,
            single_stream_expected_latency_ns: 1e6,
            offline_expected_qps: 1000.0,
            server_target_qps: 100.0,
            min_query_count: 1024,
            ..TestSettings::default()
        }
    }

    #[test]
    fn performance_runs_last_the_round_s_minimums_at_the_expected_pace() {
        let none = PowerChoice::None;
        let ss = settings(TestScenario::SingleStream);
        assert_eq!(
            run_seconds(&RunKind::Performance, &ss, 1024, 1024, &none),
            600.0
        );
        // 10 % more samples than 600 s at 1000/s.
        let offline = settings(TestScenario::Offline);
        let seconds = run_seconds(&RunKind::Performance, &offline, 1024, 1024, &none);
        assert!((seconds - 660.0).abs() < 1e-6, "{seconds}");
        let power_dev = PowerChoice::PowerDev { client: "c".into() };
        assert_eq!(
            run_seconds(&RunKind::Performance, &ss, 1024, 1024, &power_dev),
            1240.0
        );
        assert_eq!(
            run_seconds(
                &RunKind::Compliance("TEST04".into()),
                &ss,
                1024,
                1024,
                &power_dev
            ),
            600.0
        );
    }

    #[test]
    fn accuracy_runs_cover_the_data_set_once() {
        let none = PowerChoice::None;
        let ss = settings(TestScenario::SingleStream);
        assert_eq!(
            run_seconds(&RunKind::Accuracy, &ss, 1024, 10_000, &none),
            10.0
        );
        let server = settings(TestScenario::Server);
        assert_eq!(
            run_seconds(&RunKind::Accuracy, &server, 1024, 10_000, &none),
            100.0
        );
    }

    #[test]
    fn durations_read_as_people_write_them() {
        assert_eq!(human(0.04), "0.0 s");
        assert_eq!(human(2.26), "2.3 s");
        assert_eq!(human(45.2), "45 s");
        assert_eq!(human(750.0), "12 min 30 s");
        assert_eq!(human(3900.0), "1 h 05 min");
    }
}
