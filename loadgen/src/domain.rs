//! Values a settings field can hold but that mean nothing (a percentile of 1.5, a rate of 0):
//! the official LoadGen takes them and runs oddly or forever; config files and `--set` refuse
//! them, both through this one list.

use super::settings::TestSettings;

/// The most queries a test can count (its sample ids are 32-bit): a larger minimum would run
/// until the engine refused it.
pub const MOST_QUERIES: u64 = 1 << 32;

/// Why a field's value means nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutOfDomain {
    Percentile,
    Probability,
    Rate,
    BelowOne,
    QueryCount,
}

impl OutOfDomain {
    /// What is wrong with a value written in units of `scale` × the field's (0.01 for a
    /// percentage of a fraction, 1 for the field's own units).
    pub fn describe(self, scale: f64) -> String {
        let top = 1.0 / scale;
        match self {
            OutOfDomain::Percentile => {
                format!("is not a percentile above 0 and at most {top}")
            }
            OutOfDomain::Probability if scale == 1.0 => "is not a probability from 0 to 1".into(),
            OutOfDomain::Probability => format!("is not a percentage from 0 to {top}"),
            OutOfDomain::Rate => "must be above 0 queries per second".into(),
            OutOfDomain::BelowOne => "must be at least 1".into(),
            OutOfDomain::QueryCount => {
                format!("is more than the {MOST_QUERIES} queries one test can count")
            }
        }
    }
}

impl TestSettings {
    /// The fields whose values mean nothing, each with why.
    pub fn out_of_domain(&self) -> Vec<(&'static str, OutOfDomain)> {
        let mut found = Vec::new();
        for (field, percentile) in [
            (
                "single_stream_target_latency_percentile",
                self.single_stream_target_latency_percentile,
            ),
            (
                "multi_stream_target_latency_percentile",
                self.multi_stream_target_latency_percentile,
            ),
            (
                "server_target_latency_percentile",
                self.server_target_latency_percentile,
            ),
        ] {
            if !(percentile > 0.0 && percentile <= 1.0) {
                found.push((field, OutOfDomain::Percentile));
            }
        }
        if !(0.0..=1.0).contains(&self.accuracy_log_probability) {
            found.push(("accuracy_log_probability", OutOfDomain::Probability));
        }
        for (field, rate) in [
            ("server_target_qps", self.server_target_qps),
            ("offline_expected_qps", self.offline_expected_qps),
        ] {
            if rate <= 0.0 || rate.is_nan() {
                found.push((field, OutOfDomain::Rate));
            }
        }
        if self.multi_stream_samples_per_query < 1 {
            found.push(("multi_stream_samples_per_query", OutOfDomain::BelowOne));
        }
        for (field, count) in [
            ("min_query_count", self.min_query_count),
            ("max_query_count", self.max_query_count),
        ] {
            if count > MOST_QUERIES {
                found.push((field, OutOfDomain::QueryCount));
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_mean_something_and_each_rule_names_its_field() {
        assert_eq!(TestSettings::default().out_of_domain(), []);
        let settings = TestSettings {
            server_target_latency_percentile: 1.5,
            accuracy_log_probability: -0.1,
            offline_expected_qps: 0.0,
            multi_stream_samples_per_query: 0,
            max_query_count: MOST_QUERIES + 1,
            ..TestSettings::default()
        };
        assert_eq!(
            settings.out_of_domain(),
            [
                ("server_target_latency_percentile", OutOfDomain::Percentile),
                ("accuracy_log_probability", OutOfDomain::Probability),
                ("offline_expected_qps", OutOfDomain::Rate),
                ("multi_stream_samples_per_query", OutOfDomain::BelowOne),
                ("max_query_count", OutOfDomain::QueryCount),
            ]
        );
        assert_eq!(
            OutOfDomain::Percentile.describe(0.01),
            "is not a percentile above 0 and at most 100"
        );
        assert_eq!(
            OutOfDomain::Probability.describe(0.01),
            "is not a percentage from 0 to 100"
        );
    }
}
