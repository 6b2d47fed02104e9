//! Every rule `check` applies, in one table: the name a finding carries (`[min-duration]`,
//! stable: scripts match on it) for each rule the code names by type.

use std::fmt;

macro_rules! rules {
    ($($rule:ident => $id:literal,)*) => {
        /// A rule of `check`; a finding names the one it breaks.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Rule {
            $($rule,)*
        }

        impl Rule {
            /// Every rule, in the table's order.
            pub const ALL: &[Rule] = &[$(Rule::$rule,)*];

            /// The name findings carry, e.g. `min-duration`.
            pub fn id(self) -> &'static str {
                match self {
                    $(Rule::$rule => $id,)*
                }
            }
        }
    };
}

rules! {
    // The tree and its files.
    UnknownBenchmark => "unknown-benchmark",
    UnknownScenario => "unknown-scenario",
    TreeLayout => "tree-layout",
    NoResults => "no-results",
    Symlink => "symlink",
    RequiredFile => "required-file",
    SrcDir => "src-dir",
    LogFormat => "log-format",
    // The system description.
    SystemDivision => "system-division",
    SystemSubmitter => "system-submitter",
    SystemFieldEmpty => "system-field-empty",
    SystemFieldMissing => "system-field-missing",
    SystemFieldNotInteger => "system-field-not-integer",
    SystemFieldNotNumeric => "system-field-not-numeric",
    SystemFieldType => "system-field-type",
    SystemFieldUnknown => "system-field-unknown",
    SystemFillIn => "system-fill-in",
    SystemJson => "system-json",
    SystemNetworkMode => "system-network-mode",
    SystemNotObject => "system-not-object",
    SystemPowerFieldMissing => "system-power-field-missing",
    SystemStatus => "system-status",
    SystemType => "system-type",
    // A scenario's folder.
    RequiredScenarios => "required-scenarios",
    MeasurementsFiles => "measurements-files",
    MeasurementsFields => "measurements-fields",
    NameplatePower => "nameplate-power",
    // Performance runs.
    ResultValid => "result-valid",
    ScenarioMismatch => "scenario-mismatch",
    OfficialLoadgen => "official-loadgen",
    Seeds => "seeds",
    PerformanceSampleCount => "performance-sample-count",
    EarlyStopping => "early-stopping",
    LatencyBound => "latency-bound",
    TokenLatencies => "token-latencies",
    MinDuration => "min-duration",
    MinQueryCount => "min-query-count",
    OfflineSamplesPerQuery => "offline-samples-per-query",
    NetworkMode => "network-mode",
    NetworkBatching => "network-batching",
    InferredResult => "inferred-result",
    LoadgenErrors => "loadgen-errors",
    SummaryMatchesDetail => "summary-matches-detail",
    // Accuracy runs.
    AccuracyLogTruncated => "accuracy-log-truncated",
    AccuracyLogWhole => "accuracy-log-whole",
    AccuracyMode => "accuracy-mode",
    AccuracyFiles => "accuracy-files",
    AccuracyHash => "accuracy-hash",
    AccuracyTarget => "accuracy-target",
    AccuracyUpperLimit => "accuracy-upper-limit",
    DatasetSize => "dataset-size",
    DatasetHash => "dataset-hash",
    // Compliance tests.
    ComplianceMissing => "compliance-missing",
    ComplianceFiles => "compliance-files",
    CompliancePerformance => "compliance-performance",
    ComplianceAccuracy => "compliance-accuracy",
    // Power.
    PowerRanging => "power-ranging",
    PowerDebug => "power-debug",
    PowerFiles => "power-files",
    PowerFormat => "power-format",
    PowerLogs => "power-logs",
    PowerMessages => "power-messages",
    PowerPtdConfig => "power-ptd-config",
    PowerPtdLogs => "power-ptd-logs",
    PowerPtdMessages => "power-ptd-messages",
    PowerResultsChecksum => "power-results-checksum",
    PowerSession => "power-session",
    PowerSessionName => "power-session-name",
    PowerSimulated => "power-simulated",
    PowerSources => "power-sources",
    PowerTime => "power-time",
    PowerUuid => "power-uuid",
    PowerWindow => "power-window",
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl serde::Serialize for Rule {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.id())
    }
}

#[cfg(test)]
mod tests {
    use super::Rule;

    #[test]
    fn every_rule_has_a_name_of_its_own_in_lowercase_words() {
        let mut ids: Vec<&str> = Rule::ALL.iter().map(|rule| rule.id()).collect();
        let word = |w: &str| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        };
        assert!(ids.iter().all(|id| id.split('-').all(word)), "{ids:?}");
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), Rule::ALL.len());
    }
}
