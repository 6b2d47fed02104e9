//! The results table of `mlperf-host results`: one row per performance result, with the columns
//! of the official final report (system, benchmark, scenario, metric and units, validity,
//! power, accuracy), read from submission trees or from run folders.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::check::performance::folder_metric;
use super::round::Round;
use super::rules::Rules;
use super::run_folder::{RunFolder, RunFolderError, RunKind};
use super::tree::{performance_run, subdirectories, ACCURACY_TXT, RUN_1};
use crate::division::Division;
use crate::logs::{DetailLog, DetailLogError, DETAIL_LOG};
use crate::power::POWER_SUMMARY;
use crate::scenario::Scenario;
use mlperf_loadgen::TestScenario;

/// One result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResultRow {
    /// `closed`, `open` or `network` in a tree; None for a run folder.
    pub division: Option<Division>,
    pub submitter: Option<String>,
    /// The tree's system folder, or a run's SUT name.
    pub system: String,
    pub benchmark: String,
    pub scenario: Scenario,
    /// What the official report calls the scenario's metric.
    pub metric: &'static str,
    pub value: Option<f64>,
    pub units: &'static str,
    /// `result_validity` of the performance run (None for an accuracy run).
    pub valid: Option<bool>,
    /// The power metric (watts for Offline and Server, millijoules per query otherwise).
    pub power: Option<f64>,
    pub power_units: Option<String>,
    pub power_valid: Option<bool>,
    /// Whether the power was measured with a simulated meter or analyzer.
    pub power_simulated: Option<bool>,
    /// accuracy.txt's first figure and its verdict, e.g. `accuracy=97.110% PASS`.
    pub accuracy: Option<String>,
    /// The performance run (or accuracy run) the row was read from.
    pub source: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    #[error("{}: neither a submission tree (closed/, open/ or network/) nor a LoadGen run folder", .0.display())]
    NotAResult(PathBuf),
    #[error(transparent)]
    RunFolder(#[from] RunFolderError),
    #[error(transparent)]
    Log(#[from] DetailLogError),
    #[error("{}: {message}", path.display())]
    Read { path: PathBuf, message: String },
}

/// The rows of every path: a submission tree's every scenario folder, or one run folder.
pub fn collect(paths: &[PathBuf]) -> Result<Vec<ResultRow>, ResultsError> {
    let mut rows = Vec::new();
    for path in paths {
        // A path that cannot be opened at all (missing, a symlink loop, no permission) says
        // why, rather than reading as a folder of the wrong kind.
        if let Err(error) = std::fs::metadata(path) {
            return Err(ResultsError::Read {
                path: path.clone(),
                message: error.to_string(),
            });
        }
        if Division::ALL.iter().any(|d| path.join(d.as_str()).is_dir()) {
            rows.extend(tree_rows(path)?);
        } else if path.join(DETAIL_LOG).is_file() || performance_run(path).is_dir() {
            rows.push(run_folder_row(path)?);
        } else {
            return Err(ResultsError::NotAResult(path.clone()));
        }
    }
    Ok(rows)
}

/// The scenario's metric as the official report names it, and its units; LLMs report tokens.
fn metric(scenario: Scenario, rules: Option<&Rules>) -> (&'static str, &'static str) {
    use TestScenario::*;
    let scenario = scenario.loadgen();
    let field = rules.map_or("", |r| r.result_field(scenario));
    let in_seconds = rules.is_some_and(|r| r.latency_in_seconds);
    match scenario {
        SingleStream | MultiStream if in_seconds => ("Latency", "s"),
        Offline | Server if field.contains("tokens") => ("Tokens/s", "tokens/s"),
        Offline => ("Samples/s", "samples/s"),
        Server => ("Queries/s", "queries/s"),
        SingleStream if field.contains("percentile") => ("90th percentile latency", "ms"),
        SingleStream | MultiStream => ("Early stopping latency", "ms"),
    }
}

/// The default round's rules for an MLPerf model (their result fields), none for ours.
fn round_rules(round: Option<&Round>, benchmark: &str) -> Option<Rules> {
    round?.model(benchmark).cloned()
}

fn tree_rows(root: &Path) -> Result<Vec<ResultRow>, ResultsError> {
    let round = Round::find(None).ok();
    let mut rows = Vec::new();
    for division in Division::ALL {
        for submitter in subdirectories(&root.join(division.as_str())) {
            let results = root
                .join(division.as_str())
                .join(&submitter)
                .join("results");
            for system in subdirectories(&results) {
                for benchmark in subdirectories(&results.join(&system)) {
                    let rules = round_rules(round.as_ref(), &benchmark);
                    for scenario in Scenario::ALL {
                        let dir = results
                            .join(&system)
                            .join(&benchmark)
                            .join(scenario.as_str());
                        if !dir.is_dir() {
                            continue;
                        }
                        let run = performance_run(&dir);
                        let log = DetailLog::read(&run.join(DETAIL_LOG))?;
                        let mut row =
                            row_from(&log, &system, &benchmark, scenario, &run, rules.as_ref());
                        row.division = Some(division);
                        row.submitter = Some(submitter.clone());
                        add_power(&mut row, &dir.join("performance").join(POWER_SUMMARY))?;
                        if row.power.is_none() {
                            add_power_from_logs(&mut row, &dir.join("performance"));
                        }
                        row.accuracy = accuracy(&dir.join("accuracy").join(ACCURACY_TXT))?;
                        rows.push(row);
                    }
                }
            }
        }
    }
    Ok(rows)
}

fn run_folder_row(dir: &Path) -> Result<ResultRow, ResultsError> {
    let run = RunFolder::read_to_show(dir)?;
    // A run folder has no system description: its SUT's name is the plugin's, not a system.
    let system = String::new();
    let logs_dir = run.logs.clone();
    let rules = round_rules(Round::find(None).ok().as_ref(), &run.model);
    let mut row = row_from(
        &run.log,
        &system,
        &run.model,
        run.folder_scenario,
        &logs_dir,
        rules.as_ref(),
    );
    if run.kind == RunKind::Accuracy {
        // Its figure is the accuracy column's.
        (row.metric, row.units) = ("Accuracy", "");
        row.value = None;
        row.valid = None;
        row.accuracy = accuracy(&dir.join(ACCURACY_TXT))?;
    } else {
        add_power(&mut row, &logs_dir.join(POWER_SUMMARY))?;
        if row.power.is_none() {
            add_power_from_logs(&mut row, run.power_session.as_deref().unwrap_or(&logs_dir));
        }
    }
    Ok(row)
}

fn row_from(
    log: &DetailLog,
    system: &str,
    benchmark: &str,
    scenario: Scenario,
    source: &Path,
    rules: Option<&Rules>,
) -> ResultRow {
    let (metric, units) = metric(scenario, rules);
    ResultRow {
        division: None,
        submitter: None,
        system: system.to_string(),
        benchmark: benchmark.to_string(),
        scenario,
        metric,
        value: folder_metric(log, scenario, rules),
        units,
        valid: log.str("result_validity").map(|v| v == "VALID"),
        power: None,
        power_units: None,
        power_valid: None,
        power_simulated: None,
        accuracy: None,
        source: source.to_path_buf(),
    }
}

/// The first meter's power metric from power_summary.json, when the run measured power.
fn add_power(row: &mut ResultRow, path: &Path) -> Result<(), ResultsError> {
    let Some(text) = read_if_present(path)? else {
        return Ok(());
    };
    let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| ResultsError::Read {
        path: path.to_path_buf(),
        message: format!("not JSON: {e}"),
    })?;
    let metric = &json["sources"][0]["metric"];
    row.power = metric["power_metric"].as_f64();
    row.power_units = metric["power_metric_units"].as_str().map(str::to_string);
    row.power_valid = json["valid"].as_bool();
    row.power_simulated = json["simulated"].as_bool();
    Ok(())
}

/// The power metric recomputed from an analyzer's spl.txt and the detail log (a power-dev
/// session, or a tree's `performance/` folder), as the official checker computes it; nothing
/// when there is no spl.txt or it cannot be read.
fn add_power_from_logs(row: &mut ResultRow, dir: &Path) {
    let testing = if dir.join(RUN_1).is_dir() {
        dir.join(RUN_1)
    } else {
        dir.to_path_buf()
    };
    if !testing.join("spl.txt").is_file() {
        return;
    }
    let Ok(result) = crate::power::report_dir(dir) else {
        return;
    };
    let json = crate::power::result::to_json(&result);
    let metric = &json["sources"][0]["metric"];
    row.power = metric["power_metric"].as_f64();
    row.power_units = metric["power_metric_units"].as_str().map(str::to_string);
    row.power_valid = Some(result.is_valid());
    row.power_simulated = json["simulated"].as_bool();
}

/// accuracy.txt's first `key=value` and the verdict it gives, if any.
fn accuracy(path: &Path) -> Result<Option<String>, ResultsError> {
    let Some(text) = read_if_present(path)? else {
        return Ok(None);
    };
    let first = text
        .lines()
        .next()
        .and_then(|line| line.split(',').next())
        .unwrap_or("")
        .trim();
    let verdict = if text.contains(": PASS") {
        " PASS"
    } else if text.contains(": FAIL") {
        " FAIL"
    } else {
        ""
    };
    Ok(Some(format!("{first}{verdict}")))
}

fn read_if_present(path: &Path) -> Result<Option<String>, ResultsError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ResultsError::Read {
            path: path.to_path_buf(),
            message: e.to_string(),
        }),
    }
}

/// The table's columns, in order.
const COLUMNS: [&str; 12] = [
    "division",
    "submitter",
    "system",
    "benchmark",
    "scenario",
    "metric",
    "value",
    "units",
    "valid",
    "power",
    "power_units",
    "accuracy",
];

fn cells(row: &ResultRow) -> [String; 12] {
    let text = |v: &Option<String>| v.clone().unwrap_or_default();
    let number = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v}"));
    // A power figure carries the meter's precision at most: four significant digits.
    let power = |v: Option<f64>| v.map_or(String::new(), |v| significant(v, 4));
    let validity = |v: Option<bool>| match v {
        Some(true) => "VALID".to_string(),
        Some(false) => "INVALID".to_string(),
        None => String::new(),
    };
    let power_units = match (&row.power_units, row.power_valid, row.power_simulated) {
        (Some(units), Some(false), Some(true)) => format!("{units} (INVALID, simulated)"),
        (Some(units), Some(false), _) => format!("{units} (INVALID)"),
        (Some(units), _, Some(true)) => format!("{units} (simulated)"),
        (units, _, _) => text(units),
    };
    [
        row.division.map(|d| d.to_string()).unwrap_or_default(),
        text(&row.submitter),
        row.system.clone(),
        row.benchmark.clone(),
        row.scenario.to_string(),
        row.metric.to_string(),
        number(row.value),
        row.units.to_string(),
        validity(row.valid),
        power(row.power),
        power_units,
        text(&row.accuracy),
    ]
}

/// `value` to `digits` significant digits, without trailing zeros: 5.421964 → "5.422",
/// 1234.56 → "1235", 0.012345 → "0.01235".
fn significant(value: f64, digits: i32) -> String {
    if value == 0.0 || !value.is_finite() {
        return format!("{value}");
    }
    let decimals = (digits - 1 - value.abs().log10().floor() as i32).max(0) as usize;
    let rounded = round_significant(value, digits);
    let text = format!("{rounded:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// RFC 4180 CSV with a header line.
pub fn to_csv(rows: &[ResultRow]) -> String {
    let quote = |cell: &str| {
        if cell.contains([',', '"', '\n']) {
            format!("\"{}\"", cell.replace('"', "\"\""))
        } else {
            cell.to_string()
        }
    };
    let mut out = COLUMNS.join(",") + "\n";
    for row in rows {
        let line: Vec<String> = cells(row).iter().map(|c| quote(c)).collect();
        out.push_str(&line.join(","));
        out.push('\n');
    }
    out
}

/// A Markdown table.
pub fn to_markdown(rows: &[ResultRow]) -> String {
    let mut out = format!("| {} |\n", COLUMNS.join(" | "));
    out.push_str(&format!("|{}\n", "---|".repeat(COLUMNS.len())));
    for row in rows {
        let line: Vec<String> = cells(row).iter().map(|c| c.replace('|', "\\|")).collect();
        out.push_str(&format!("| {} |\n", line.join(" | ")));
    }
    out
}

/// `value` with `digits` significant digits (and never 0 for a positive value).
pub fn round_significant(value: f64, digits: i32) -> f64 {
    if value <= 0.0 || !value.is_finite() {
        return value;
    }
    let scale = 10f64.powi(digits - 1 - value.log10().floor() as i32);
    (value * scale).round() / scale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn significant_digits() {
        assert_eq!(round_significant(1234.5678, 5), 1234.6);
        assert_eq!(round_significant(0.000123456, 3), 0.000123);
        assert_eq!(round_significant(987654321.0, 5), 987650000.0);
    }

    fn row() -> ResultRow {
        ResultRow {
            division: Some(Division::Closed),
            submitter: Some("org".into()),
            system: "box".into(),
            benchmark: "fmnist".into(),
            scenario: Scenario::Offline,
            metric: "Samples/s",
            value: Some(1234.5),
            units: "samples/s",
            valid: Some(true),
            power: Some(200.0),
            power_units: Some("Watts".into()),
            power_valid: Some(false),
            power_simulated: None,
            accuracy: Some("accuracy=97.1%, \"x\" PASS".into()),
            source: PathBuf::from("r"),
        }
    }

    #[test]
    fn csv_quotes_cells_with_commas_and_quotes() {
        let csv = to_csv(&[row()]);
        let line = csv.lines().nth(1).unwrap();
        assert_eq!(
            line,
            "closed,org,box,fmnist,Offline,Samples/s,1234.5,samples/s,VALID,200,Watts (INVALID),\"accuracy=97.1%, \"\"x\"\" PASS\""
        );
    }

    #[test]
    fn markdown_has_a_header_a_rule_and_a_row_per_result() {
        let md = to_markdown(&[row(), row()]);
        let lines: Vec<&str> = md.lines().collect();
        assert_eq!(lines.len(), 4);
        assert!(lines[0].starts_with("| division | submitter | system |"));
        assert_eq!(lines[1].matches("---|").count(), COLUMNS.len());
        assert!(lines[2].contains("| Offline | Samples/s | 1234.5 |"));
    }

    #[test]
    fn power_has_four_significant_digits() {
        for (power, cell) in [
            (5.421964377694039, "5.422"),
            (200.0, "200"),
            (1234.56, "1235"),
            (0.012345, "0.01235"),
        ] {
            let row = ResultRow {
                power: Some(power),
                ..row()
            };
            assert_eq!(cells(&row)[9], cell);
        }
    }

    #[test]
    fn a_simulated_power_is_labelled() {
        let simulated = ResultRow {
            power_valid: Some(true),
            power_simulated: Some(true),
            ..row()
        };
        assert_eq!(cells(&simulated)[10], "Watts (simulated)");
        let invalid = ResultRow {
            power_simulated: Some(true),
            ..row()
        };
        assert_eq!(cells(&invalid)[10], "Watts (INVALID, simulated)");
    }
}
