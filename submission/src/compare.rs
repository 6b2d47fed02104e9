//! `compare`: whether a rerun reproduces a run, as the audit guidelines ask of an auditee —
//! the result within a tolerance (2 %), both runs VALID, and the same settings, seeds, plugin,
//! model, data set and LoadGen. Each check names what differs.

use std::path::Path;

use serde::Serialize;

use super::check::performance::result_metric;
use super::round::Round;
use super::rules::default_result_field;
use super::run_folder::{RunFolder, RunFolderError};
use crate::logs::{DetailLog, DATASET_SHA256};
use crate::scenario::Scenario;

/// The audit guidelines' tolerance for a rerun's result, in percent.
pub const DEFAULT_TOLERANCE_PERCENT: f64 = 2.0;

/// Provenance both runs must share (when either logs it).
const SAME_PROVENANCE: [(&str, &str); 5] = [
    ("sut_plugin_sha256", "plugin"),
    ("sut_model", "model"),
    (DATASET_SHA256, "data set"),
    ("loadgen_version", "LoadGen"),
    ("effective_test_mode", "test mode"),
];

/// One check and its outcome.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub check: String,
    pub passed: bool,
    pub detail: String,
}

/// Both runs' results and the checks.
#[derive(Debug, Clone, Serialize)]
pub struct Compared {
    pub scenario: Scenario,
    pub metric: Option<String>,
    pub a: Option<f64>,
    pub b: Option<f64>,
    pub difference_percent: Option<f64>,
    pub checks: Vec<Comparison>,
}

impl Compared {
    pub fn passed(&self) -> bool {
        self.checks.iter().all(|c| c.passed)
    }
}

/// Compares run folder `b` (the rerun) with `a`.
pub fn compare(
    a: &Path,
    b: &Path,
    tolerance_percent: f64,
    round: &Round,
) -> Result<Compared, RunFolderError> {
    // Runs that name no model (the null plugin's by default) compare too.
    let (run_a, run_b) = (RunFolder::read_to_show(a)?, RunFolder::read_to_show(b)?);
    let (log_a, log_b) = (&run_a.log, &run_b.log);
    let mut checks = Vec::new();
    let scenario = run_a.scenario;
    checks.push(Comparison {
        check: "scenario".into(),
        passed: run_a.scenario == run_b.scenario,
        detail: format!("{} and {}", run_a.scenario, run_b.scenario),
    });
    for (run, name) in [(&run_a, "A"), (&run_b, "B")] {
        let validity = run.log.str("result_validity").unwrap_or("missing");
        checks.push(Comparison {
            check: format!("run {name} VALID"),
            passed: validity == "VALID",
            detail: format!("{}: result_validity {validity}", run.dir.display()),
        });
    }
    let rules = round.model(&run_a.model);
    let metric = Some(
        rules
            .map_or(default_result_field(scenario), |r| r.result_field(scenario))
            .to_string(),
    );
    let (value_a, value_b) = (
        result_metric(log_a, scenario, rules),
        result_metric(log_b, scenario, rules),
    );
    let difference_percent = match (value_a, value_b) {
        (Some(a), Some(b)) if a > 0.0 => Some((b - a) / a * 100.0),
        _ => None,
    };
    checks.push(Comparison {
        check: format!("result within {tolerance_percent} %"),
        passed: difference_percent.is_some_and(|d| d.abs() <= tolerance_percent),
        detail: match (value_a, value_b, difference_percent) {
            (Some(a), Some(b), Some(d)) => format!(
                "{} {a} and {b}: {d:+.3} %",
                metric.as_deref().unwrap_or("result")
            ),
            _ => format!(
                "{} missing from a log",
                metric.as_deref().unwrap_or("the result")
            ),
        },
    });
    checks.push(same_settings(log_a, log_b));
    for (key, what) in SAME_PROVENANCE {
        let (x, y) = (log_a.str(key), log_b.str(key));
        if x.is_none() && y.is_none() {
            continue;
        }
        checks.push(Comparison {
            check: format!("same {what}"),
            passed: x == y,
            detail: format!(
                "{key}: {} and {}",
                x.unwrap_or("(not logged)"),
                y.unwrap_or("(not logged)")
            ),
        });
    }
    Ok(Compared {
        scenario: Scenario::from(scenario),
        metric,
        a: value_a,
        b: value_b,
        difference_percent,
        checks,
    })
}

/// Every `effective_*` setting (seeds included) equal in both logs.
fn same_settings(a: &DetailLog, b: &DetailLog) -> Comparison {
    let mut keys: Vec<&str> = a
        .keys()
        .chain(b.keys())
        .filter(|k| k.starts_with("effective_"))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let differing: Vec<String> = keys
        .into_iter()
        .filter(|k| a.get(k) != b.get(k))
        .map(|k| {
            let show = |log: &DetailLog| {
                log.get(k)
                    .map_or("(not logged)".to_string(), |v| v.to_string())
            };
            format!("{k} {} and {}", show(a), show(b))
        })
        .collect();
    Comparison {
        check: "same settings and seeds".into(),
        passed: differing.is_empty(),
        detail: if differing.is_empty() {
            "every effective_* setting is equal".into()
        } else {
            differing.join("; ")
        },
    }
}
