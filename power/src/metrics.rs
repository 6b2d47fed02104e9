//! The power metric of each scenario, as MLPerf's power checker computes it from the average
//! power and the run's performance figures: watts and samples (or tokens) per joule for
//! Offline and Server; millijoules per query and queries (or samples) per joule for
//! SingleStream and MultiStream.

use crate::account::EnergyReport;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PowerScenario {
    SingleStream,
    MultiStream,
    Server,
    Offline,
}

/// What the power metric divides by, from the run's results.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PerformanceFigures {
    /// Offline: result_samples_per_second; Server: result_completed_samples_per_sec (tokens
    /// per second for token runs, with `tokens` set).
    pub per_second: f64,
    pub tokens: bool,
    /// SingleStream and MultiStream: result_query_count.
    pub query_count: u64,
    /// Samples per query (MultiStream: 8).
    pub samples_per_query: u64,
}

/// The scenario's power metric.
#[derive(Debug, Clone, PartialEq)]
pub enum PowerMetrics {
    /// Offline, Server: average watts and efficiency (result per second ÷ watts).
    Throughput {
        watts: f64,
        per_joule: f64,
        /// "Samples per joule", "Queries per joule (qps_per_watt)", "Tokens per joule".
        per_joule_label: &'static str,
    },
    /// SingleStream, MultiStream: energy per query and its inverse.
    Energy {
        millijoules_per_query: f64,
        per_joule: f64,
        /// "Queries per joule" or "Samples per joule".
        per_joule_label: &'static str,
    },
}

/// The metric of `scenario`; None when the report has no average power or the figures
/// divide by zero.
pub fn metrics(
    report: &EnergyReport,
    scenario: PowerScenario,
    performance: &PerformanceFigures,
) -> Option<PowerMetrics> {
    let watts = report.mean_watts.filter(|w| *w > 0.0)?;
    match scenario {
        PowerScenario::Offline | PowerScenario::Server => Some(PowerMetrics::Throughput {
            watts,
            per_joule: performance.per_second / watts,
            per_joule_label: match (performance.tokens, scenario) {
                (true, _) => "Tokens per joule",
                (false, PowerScenario::Server) => "Queries per joule (qps_per_watt)",
                (false, _) => "Samples per joule",
            },
        }),
        PowerScenario::SingleStream | PowerScenario::MultiStream => {
            if performance.query_count == 0 {
                return None;
            }
            let millijoules =
                watts * report.window_seconds * 1000.0 / performance.query_count as f64;
            let (per_query, label) = if scenario == PowerScenario::SingleStream {
                (1.0, "Queries per joule")
            } else {
                (performance.samples_per_query as f64, "Samples per joule")
            };
            Some(PowerMetrics::Energy {
                millijoules_per_query: millijoules,
                per_joule: per_query * 1000.0 / millijoules,
                per_joule_label: label,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn report(watts: f64, seconds: f64) -> EnergyReport {
        EnergyReport {
            window_seconds: seconds,
            samples: 60,
            invalid_samples: 0,
            mean_watts: Some(watts),
            energy_joules: Some(watts * seconds),
            trapezoid_joules: None,
            counter_joules: None,
            min_watts: Some(watts),
            max_watts: Some(watts),
            largest_gap: Duration::from_secs(1),
            problems: Vec::new(),
            warnings: Vec::new(),
        }
    }

    fn figures(per_second: f64, query_count: u64, samples_per_query: u64) -> PerformanceFigures {
        PerformanceFigures {
            per_second,
            tokens: false,
            query_count,
            samples_per_query,
        }
    }

    #[test]
    fn offline_and_server_divide_throughput_by_watts() {
        let offline = metrics(
            &report(250.0, 600.0),
            PowerScenario::Offline,
            &figures(5000.0, 1, 1),
        );
        assert_eq!(
            offline,
            Some(PowerMetrics::Throughput {
                watts: 250.0,
                per_joule: 20.0,
                per_joule_label: "Samples per joule"
            })
        );
        let server = metrics(
            &report(400.0, 600.0),
            PowerScenario::Server,
            &figures(1000.0, 1, 1),
        );
        assert!(matches!(
            server,
            Some(PowerMetrics::Throughput { per_joule, per_joule_label, .. })
                if per_joule == 2.5 && per_joule_label.contains("qps_per_watt")
        ));
        let tokens = PerformanceFigures {
            tokens: true,
            ..figures(3000.0, 1, 1)
        };
        let llm = metrics(&report(300.0, 600.0), PowerScenario::Offline, &tokens);
        assert!(
            matches!(llm, Some(PowerMetrics::Throughput { per_joule, per_joule_label, .. })
            if per_joule == 10.0 && per_joule_label == "Tokens per joule")
        );
    }

    #[test]
    fn single_and_multi_stream_give_millijoules_per_query() {
        // 200 W over 600 s = 120 kJ; 24,000 queries: 5000 mJ each, 0.2 queries per joule.
        let single = metrics(
            &report(200.0, 600.0),
            PowerScenario::SingleStream,
            &figures(0.0, 24_000, 1),
        );
        assert_eq!(
            single,
            Some(PowerMetrics::Energy {
                millijoules_per_query: 5000.0,
                per_joule: 0.2,
                per_joule_label: "Queries per joule"
            })
        );
        // MultiStream: 8 samples a query, so 1.6 samples per joule.
        let multi = metrics(
            &report(200.0, 600.0),
            PowerScenario::MultiStream,
            &figures(0.0, 24_000, 8),
        );
        assert!(matches!(multi, Some(PowerMetrics::Energy { per_joule, .. }) if per_joule == 1.6));
        assert_eq!(
            metrics(
                &report(200.0, 600.0),
                PowerScenario::SingleStream,
                &figures(0.0, 0, 1)
            ),
            None
        );
        let no_power = EnergyReport {
            mean_watts: None,
            ..report(0.0, 1.0)
        };
        assert_eq!(
            metrics(&no_power, PowerScenario::Offline, &figures(1.0, 1, 1)),
            None
        );
    }
}
