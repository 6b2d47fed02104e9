//! FindPeakPerformance (Server): widen the target qps until a run misses the latency bound,
//! then binary-search the highest rate that meets it (spec §4.5).

use serde::Serialize;

use super::{Engine, TestError};
use crate::diagnostics::Diagnostic;
use crate::effective::EffectiveSettings;
use crate::results::PerformanceSummary;
use crate::settings::TestScenario;
use crate::sut::QuerySampleLibrary;

/// FindPeakPerformance's search (Server).
#[derive(Debug, Clone, Serialize)]
pub struct FindPeakReport {
    /// `(target_qps, latency constraint met)` for every run, in order.
    pub trials: Vec<(f64, bool)>,
    /// The highest target qps that met the latency constraint, if any did.
    pub peak_qps: Option<f64>,
}

impl Engine<'_> {
    /// FindPeakPerformance (Server): widen the bounds, then binary-search the highest qps
    /// whose run meets the latency constraint.
    pub(super) fn find_peak(
        &mut self,
        qsl: &mut dyn QuerySampleLibrary,
    ) -> Result<(Option<PerformanceSummary>, FindPeakReport), TestError> {
        if self.settings.scenario != TestScenario::Server {
            self.shared.diagnostics.push(Diagnostic::error(
                "error_invalid_config",
                "Finding peak performance is only supported in Server scenarios.",
            ));
            return Err(TestError::FindPeakScenario(self.settings.scenario));
        }
        self.info("Starting FindPeakPerformance mode");
        let mut trials = Vec::new();
        let base = self.settings.clone();
        self.info(&format!(
            "FindPeakPerformance: Check validity of the base settings field: {}",
            std_to_string(base.target_qps)
        ));
        let lower_summary = self.run_performance_checked(qsl, &base, false)?;
        let met = lower_summary.validity.perf_constraints_met;
        trials.push((base.target_qps, met));
        if !met {
            self.shared.diagnostics.push(Diagnostic::error(
                "error_runtime",
                format!(
                    "FindPeakPerformance: Initial lower bound does not satisfy performance constraints, msg: {}",
                    perf_recommendation(&lower_summary)
                ),
            ));
            self.log_result(&lower_summary, &base);
            return Ok((
                Some(lower_summary),
                FindPeakReport {
                    trials,
                    peak_qps: None,
                },
            ));
        }
        let step = base.requested.server_find_peak_qps_boundary_step_size;
        let decimals = base.requested.server_find_peak_qps_decimals_of_precision;
        let mut lower = (base.target_qps, lower_summary);
        // Widen until a run fails the constraint.
        let upper_qps = loop {
            if self.stopped() {
                return Ok((
                    Some(lower.1),
                    FindPeakReport {
                        trials,
                        peak_qps: Some(lower.0),
                    },
                ));
            }
            let candidate = lower.0 * (1.0 + step);
            self.info(&format!(
                "FindBoundaries: Checking fields [{}, {})",
                std_to_string(lower.0),
                std_to_string(candidate)
            ));
            let summary = self.run_at(qsl, &base, candidate)?;
            let met = summary.validity.perf_constraints_met;
            trials.push((candidate, met));
            if !met {
                break candidate;
            }
            lower = (candidate, summary);
        };
        self.info(&format!(
            "FindPeakPerformance: Found boundaries: [{}, {})",
            std_to_string(lower.0),
            std_to_string(upper_qps)
        ));
        let mut upper = upper_qps;
        let scale = 10f64.powi(decimals);
        while (lower.0 * scale).floor() + 1.0 < (upper * scale).floor() {
            if self.stopped() {
                break;
            }
            let mid = lower.0 + (upper - lower.0) / 2.0;
            self.info(&format!(
                "FindPeakPerformanceBinarySearch: Testing the mid value of bounds [{}, {}): {}",
                std_to_string(lower.0),
                std_to_string(upper),
                std_to_string(mid)
            ));
            let summary = self.run_at(qsl, &base, mid)?;
            let met = summary.validity.perf_constraints_met;
            trials.push((mid, met));
            if met {
                lower = (mid, summary);
            } else {
                upper = mid;
            }
        }
        self.info(&format!(
            "FindPeakPerformance: Found peak performance field: {}",
            std_to_string(lower.0)
        ));
        let mut reported = base.clone();
        reported.target_qps = lower.0;
        self.log_result(&lower.1, &reported);
        Ok((
            Some(lower.1),
            FindPeakReport {
                trials,
                peak_qps: Some(lower.0),
            },
        ))
    }

    fn run_at(
        &mut self,
        qsl: &mut dyn QuerySampleLibrary,
        base: &EffectiveSettings,
        qps: f64,
    ) -> Result<PerformanceSummary, TestError> {
        let mut settings = base.clone();
        settings.target_qps = qps;
        self.run_performance_checked(qsl, &settings, false)
    }
}

/// `std::to_string(double)`: fixed notation with six decimals.
fn std_to_string(value: f64) -> String {
    format!("{value:.6}")
}

/// The official perf-constraint recommendation: its reasons joined as summary bullets.
fn perf_recommendation(summary: &PerformanceSummary) -> String {
    let perf_reasons: Vec<&str> = summary
        .validity
        .reasons
        .iter()
        .map(String::as_str)
        .filter(|reason| reason.contains("Reduce target QPS"))
        .collect();
    perf_reasons.join("\n * ")
}
