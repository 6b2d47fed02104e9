//! The searches, one per kind of setting. Every trial is PerformanceOnly without equal-issue
//! padding (which would stretch a short trial to whole sample sets), with its own minimum
//! duration and query count.

use std::time::Duration;

use mlperf_loadgen::{TestMode, TestScenario, TestSettings};

use super::{Trial, TrialRunner, TuneError, TuneOptions, Tuned};

/// Queries of the first SingleStream probe, which only sizes the measuring trial.
const LATENCY_PROBE_QUERIES: u64 = 32;
/// MultiStream queries of the first probe.
const MULTI_STREAM_PROBE_QUERIES: u64 = 8;
/// Samples of the Offline probe (also the Server search's first capacity estimate).
const THROUGHPUT_PROBE_SAMPLES: u64 = 64;
/// LoadGen generates 2 × min_duration / expected latency queries; an expected latency at most
/// this many times the mean keeps them outlasting min_duration.
const LATENCY_CAP_OVER_MEAN: f64 = 1.5;
/// A latency percentile is taken when the trial has this many queries beyond it (10 for p90:
/// 100 queries; 1,000 for p99); otherwise the mean.
const PERCENTILE_QUERIES_BEYOND: f64 = 10.0;
/// Offline trials after the probe, at most, until two agree.
const OFFLINE_TRIALS: usize = 4;
/// Server: the confirmation trial is this many times as long as the others; when it fails,
/// the rate steps down by the precision and is confirmed again, this many times at most.
const CONFIRM_LENGTH: u32 = 2;
const CONFIRM_ATTEMPTS: usize = 3;

/// Finds the setting `base.scenario`'s full run needs, with trials carried out by `runner`.
pub fn tune(
    base: &TestSettings,
    options: &TuneOptions,
    runner: &mut dyn TrialRunner,
) -> Result<Tuned, TuneError> {
    let mut search = Search {
        base: base.clone(),
        options: *options,
        runner,
        trials: Vec::new(),
    };
    let (key, value, how, basis) = match base.scenario {
        TestScenario::SingleStream | TestScenario::MultiStream => search.latency()?,
        TestScenario::Offline => search.offline()?,
        TestScenario::Server => search.server()?,
    };
    Ok(Tuned {
        scenario: base.scenario,
        key,
        value: super::written_value(key, value),
        how,
        basis,
        trials: search.trials,
    })
}

type Found = (&'static str, f64, Vec<String>, Trial);

struct Search<'a> {
    base: TestSettings,
    options: TuneOptions,
    runner: &'a mut dyn TrialRunner,
    trials: Vec<Trial>,
}

impl Search<'_> {
    fn settings(&self, min_duration: Duration, min_queries: u64) -> TestSettings {
        let mut settings = self.base.clone();
        settings.mode = TestMode::PerformanceOnly;
        settings.min_duration_ms = min_duration.as_millis() as u64;
        settings.min_query_count = min_queries;
        settings.sample_concatenate_permutation = false;
        settings
    }

    fn trial(&mut self, settings: &TestSettings) -> Result<Trial, TuneError> {
        if self.trials.len() >= self.options.max_trials {
            return Err(TuneError::Search(format!(
                "no answer within {} trials (--max-trials)",
                self.options.max_trials
            )));
        }
        let name = format!("trial-{}", self.trials.len() + 1);
        let trial = self.runner.run(&name, settings)?;
        self.trials.push(trial.clone());
        Ok(trial)
    }

    /// SingleStream/MultiStream: the latency at the target percentile of a trial of the
    /// trial duration, sized by a short probe.
    fn latency(&mut self) -> Result<Found, TuneError> {
        let multi = self.base.scenario == TestScenario::MultiStream;
        let (key, probe_queries) = if multi {
            (
                "multi_stream_expected_latency_ns",
                MULTI_STREAM_PROBE_QUERIES,
            )
        } else {
            ("single_stream_expected_latency_ns", LATENCY_PROBE_QUERIES)
        };
        let probe = self.trial(&self.settings(Duration::ZERO, probe_queries))?;
        let mut settings = self.settings(self.options.trial_duration, 1);
        // Half the probe's mean: enough queries generated for the whole trial duration.
        let expected = (probe.mean_latency_ns / 2.0).max(1.0);
        set_expected_latency(&mut settings, expected);
        let measured = self.trial(&settings)?;
        let unit = if multi { "query" } else { "sample" };
        // A percentile needs queries beyond it: with fewer, it is one of the few slowest.
        let needed = (PERCENTILE_QUERIES_BEYOND / (1.0 - measured.percentile) - 1e-6).ceil() as u64;
        let (mut value, mut how) = if measured.queries >= needed {
            (
                measured.percentile_latency_ns,
                vec![format!(
                    "{key}: the {} percentile {unit} latency of {} ({} queries in {:.2} s; mean {:.0} ns)",
                    percentile_name(measured.percentile),
                    measured.name,
                    measured.queries,
                    measured.duration_s,
                    measured.mean_latency_ns,
                )],
            )
        } else {
            (
                measured.mean_latency_ns,
                vec![format!(
                    "{key}: the mean {unit} latency of {} ({} queries in {:.2} s: too few for the {} percentile, which needs {needed}; a longer --trial-duration gives it)",
                    measured.name,
                    measured.queries,
                    measured.duration_s,
                    percentile_name(measured.percentile),
                )],
            )
        };
        let cap = LATENCY_CAP_OVER_MEAN * measured.mean_latency_ns;
        if value > cap {
            value = cap;
            how.push(format!(
                "capped at {LATENCY_CAP_OVER_MEAN} x the mean latency: LoadGen generates 2 x min_duration / expected latency queries, which must outlast min_duration"
            ));
        }
        let value = value.max(1.0);
        Ok((key, value, how, measured))
    }

    /// Offline: the samples per second of trials of the trial duration, each sized by the
    /// rate the one before measured, until two agree within the precision.
    fn offline(&mut self) -> Result<Found, TuneError> {
        let key = "offline_expected_qps";
        let probe = self.trial(&self.settings(Duration::ZERO, THROUGHPUT_PROBE_SAMPLES))?;
        let mut rate = positive_rate(&probe)?;
        let mut agreed = None;
        let mut last = probe;
        for _ in 0..OFFLINE_TRIALS {
            let mut settings = self.settings(self.options.trial_duration, 1);
            settings.offline_expected_qps = rate;
            let trial = self.trial(&settings)?;
            let measured = positive_rate(&trial)?;
            let change = (measured - rate).abs() / rate;
            rate = measured;
            last = trial;
            if change <= self.options.precision {
                agreed = Some(change);
                break;
            }
        }
        let mut how = vec![format!(
            "{key}: the samples per second of {} ({} samples in {:.2} s)",
            last.name, last.samples, last.duration_s
        )];
        match agreed {
            Some(change) => how.push(format!(
                "within {:.1} % of the trial before it; LoadGen issues 1.1 x min_duration x this many samples",
                change * 100.0
            )),
            None => how.push(format!(
                "the rate still moved by more than {:.0} % between the last trials: check it with a longer --trial-duration",
                self.options.precision * 100.0
            )),
        }
        Ok((key, rate, how, last))
    }

    /// Server: the highest target QPS whose trial is VALID (latency and token bounds held,
    /// early stopping met), bracketed from half an Offline probe's rate by doubling or
    /// halving, bisected geometrically to the precision, then confirmed by a longer trial.
    fn server(&mut self) -> Result<Found, TuneError> {
        let key = "server_target_qps";
        let mut probe_settings = self.settings(Duration::ZERO, THROUGHPUT_PROBE_SAMPLES);
        probe_settings.scenario = TestScenario::Offline;
        let probe = self.trial(&probe_settings)?;
        let mut qps = positive_rate(&probe)? / 2.0;

        let mut passed: Option<(f64, Trial)> = None;
        let mut failed: Option<(f64, Trial)> = None;
        while passed.is_none() || failed.is_none() {
            let trial = self.server_trial(qps, 1)?;
            if trial.valid {
                passed = Some((qps, trial));
                qps *= 2.0;
            } else {
                failed = Some((qps, trial));
                qps /= 2.0;
            }
        }
        let (mut low, mut low_trial) = passed.expect("bracketed");
        let (mut high, mut high_trial) = failed.expect("bracketed");
        while high / low > 1.0 + self.options.precision {
            let middle = (low * high).sqrt();
            let trial = self.server_trial(middle, 1)?;
            if trial.valid {
                (low, low_trial) = (middle, trial);
            } else {
                (high, high_trial) = (middle, trial);
            }
        }

        let highest = low;
        let mut target = low * (1.0 - self.options.margin);
        let mut confirmed = None;
        for _ in 0..CONFIRM_ATTEMPTS {
            let trial = self.server_trial(target, CONFIRM_LENGTH)?;
            if trial.valid {
                confirmed = Some(trial);
                break;
            }
            (high, high_trial) = (target, trial);
            target /= 1.0 + self.options.precision;
        }
        let Some(confirmation) = confirmed else {
            return Err(TuneError::Search(format!(
                "no longer trial was VALID down to {target:.4} qps: the system's latency does not settle (last: {})",
                high_trial.reasons
            )));
        };
        let how = vec![
            format!(
                "the highest target QPS whose trial was VALID: {} ({}: {} queries, {} percentile latency {:.3} ms)",
                fmt_qps(highest),
                low_trial.name,
                low_trial.queries,
                percentile_name(low_trial.percentile),
                low_trial.percentile_latency_ns / 1e6,
            ),
            format!(
                "{} was INVALID ({}: {})",
                fmt_qps(high),
                high_trial.name,
                if high_trial.reasons.is_empty() { "no reason given" } else { &high_trial.reasons }
            ),
            format!(
                "bisected to within {:.0} %; {key}: {}, {:.0} % below it (--margin), confirmed by {}, a trial {CONFIRM_LENGTH} x as long",
                self.options.precision * 100.0,
                fmt_qps(target),
                (1.0 - target / highest) * 100.0,
                confirmation.name
            ),
        ];
        Ok((key, target, how, confirmation))
    }

    /// A Server trial at `qps`, `length` times the trial duration, with enough queries for
    /// early stopping.
    fn server_trial(&mut self, qps: f64, length: u32) -> Result<Trial, TuneError> {
        if !(qps.is_finite() && qps >= 1e-3) {
            return Err(TuneError::Search(format!(
                "no target QPS found: the search reached {qps:e} qps"
            )));
        }
        let mut settings = self.settings(
            self.options.trial_duration * length,
            self.options.trial_queries * length as u64,
        );
        settings.server_target_qps = qps;
        self.trial(&settings)
    }
}

fn set_expected_latency(settings: &mut TestSettings, ns: f64) {
    match settings.scenario {
        TestScenario::MultiStream => settings.multi_stream_expected_latency_ns = ns,
        _ => settings.single_stream_expected_latency_ns = ns,
    }
}

fn positive_rate(trial: &Trial) -> Result<f64, TuneError> {
    let rate = trial.samples_per_second;
    if rate.is_finite() && rate > 0.0 {
        Ok(rate)
    } else {
        Err(TuneError::Search(format!(
            "{} measured no throughput ({rate} samples/s; logs in {})",
            trial.name,
            trial.dir.display()
        )))
    }
}

/// `90th`, `99th`, `99.9th`.
fn percentile_name(percentile: f64) -> String {
    format!("{}th", round_percent(percentile * 100.0))
}

fn round_percent(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

fn fmt_qps(qps: f64) -> String {
    format!("{qps:.2} qps")
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    /// A system with a fixed service time and one server: latency grows with the load as an
    /// M/D/1 queue's does, approximated by its mean wait.
    struct ModelSystem {
        service_s: f64,
        bound_s: f64,
        queries: u64,
        runs: Vec<TestSettings>,
    }

    impl TrialRunner for ModelSystem {
        fn run(&mut self, name: &str, settings: &TestSettings) -> Result<Trial, TuneError> {
            self.runs.push(settings.clone());
            let s = self.service_s;
            let (rate, latency) = match settings.scenario {
                TestScenario::Server => {
                    let load = settings.server_target_qps * s;
                    let latency = if load < 1.0 {
                        s + load * s / (2.0 * (1.0 - load)) * 4.0
                    } else {
                        f64::INFINITY
                    };
                    (settings.server_target_qps, latency)
                }
                TestScenario::MultiStream => (8.0 / (8.0 * s), 8.0 * s),
                _ => (1.0 / s, s),
            };
            let valid = latency <= self.bound_s;
            Ok(Trial {
                name: name.to_string(),
                dir: PathBuf::from(name),
                valid,
                reasons: if valid {
                    String::new()
                } else {
                    "latency".into()
                },
                queries: self.queries,
                samples: self.queries,
                duration_s: 1.0,
                samples_per_second: rate,
                mean_latency_ns: latency.min(1e3) * 1e9,
                percentile_latency_ns: latency.min(1e3) * 1.2e9,
                percentile: 0.9,
                performance_sample_count: 1024,
                total_sample_count: 1024,
            })
        }
    }

    fn system() -> ModelSystem {
        ModelSystem {
            service_s: 0.001,
            bound_s: 0.010,
            queries: 100,
            runs: Vec::new(),
        }
    }

    fn base(scenario: TestScenario) -> TestSettings {
        TestSettings {
            scenario,
            ..TestSettings::default()
        }
    }

    #[test]
    fn single_stream_takes_the_percentile_of_the_measuring_trial() {
        let mut sut = system();
        let tuned = tune(
            &base(TestScenario::SingleStream),
            &TuneOptions::default(),
            &mut sut,
        )
        .unwrap();
        assert_eq!(tuned.key, "single_stream_expected_latency_ns");
        assert_eq!(tuned.value, 1.2e6);
        // The measuring trial lasts the trial duration and generates queries for it.
        let measuring = &sut.runs[1];
        assert_eq!(measuring.min_duration_ms, 2000);
        assert!(measuring.single_stream_expected_latency_ns <= 0.5e6 + 1.0);
        assert!(!measuring.sample_concatenate_permutation);
        assert_eq!(measuring.mode, TestMode::PerformanceOnly);
    }

    #[test]
    fn too_few_queries_for_the_percentile_give_the_mean() {
        let mut sut = ModelSystem {
            queries: 99,
            ..system()
        };
        let tuned = tune(
            &base(TestScenario::SingleStream),
            &TuneOptions::default(),
            &mut sut,
        )
        .unwrap();
        assert_eq!(tuned.value, 1e6);
        assert!(tuned.how[0].contains("needs 100"), "{:?}", tuned.how);
    }

    #[test]
    fn offline_stops_when_two_trials_agree() {
        let mut sut = system();
        let tuned = tune(
            &base(TestScenario::Offline),
            &TuneOptions::default(),
            &mut sut,
        )
        .unwrap();
        assert_eq!(tuned.key, "offline_expected_qps");
        assert!((tuned.value - 1000.0).abs() < 1e-6);
        assert_eq!(sut.runs.len(), 2, "the probe, then one trial that agrees");
        assert_eq!(sut.runs[1].offline_expected_qps, 1000.0);
    }

    #[test]
    fn server_finds_the_highest_valid_rate_within_the_precision() {
        let mut sut = system();
        let options = TuneOptions::default();
        let tuned = tune(&base(TestScenario::Server), &options, &mut sut).unwrap();
        // Latency 10 ms: 1 + 2 load / (1 - load) = 10 at load 9/11; written 10 % below.
        let answer = 1000.0 * 9.0 / 11.0 * (1.0 - options.margin);
        assert!(tuned.value <= answer, "{} > {answer}", tuned.value);
        assert!(
            tuned.value >= answer / (1.0 + options.precision),
            "{} < {answer} / 1.05",
            tuned.value
        );
        assert!(
            tuned.how.iter().any(|line| line.contains("10 % below it")),
            "{:?}",
            tuned.how
        );
        assert_eq!(
            sut.runs[0].scenario,
            TestScenario::Offline,
            "the capacity probe"
        );
        let last = sut.runs.last().unwrap();
        assert_eq!(
            last.min_duration_ms, 4000,
            "confirmed by a trial twice as long"
        );
        assert!((last.server_target_qps - tuned.value).abs() < 0.01 * tuned.value);
    }

    #[test]
    fn server_gives_up_within_the_trial_limit() {
        let mut sut = ModelSystem {
            bound_s: 0.0001, // below the service time: never VALID
            ..system()
        };
        let error = tune(
            &base(TestScenario::Server),
            &TuneOptions::default(),
            &mut sut,
        )
        .unwrap_err()
        .to_string();
        assert!(error.contains("within 16 trials"), "{error}");
    }
}
