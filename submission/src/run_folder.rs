//! A run directory given to `submit`: what it holds (a performance run, an accuracy run or a
//! compliance test's folder), for which model and scenario, read from its detail log.

use std::path::{Path, PathBuf};

use mlperf_loadgen::TestScenario;

use super::power_dev;
use super::tree::{performance_run, ACCURACY_LOG, LOG_FILES};
use crate::compliance::ComplianceTest;
use crate::logs::{DetailLog, DETAIL_LOG, PROVENANCE_FILE};
use crate::scenario::{logged_scenario, Scenario};

/// The model of a run shown whose logs do not name it.
pub const UNNAMED_MODEL: &str = "-";

/// What a run directory is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunKind {
    Performance,
    Accuracy,
    /// A compliance test's folder (`mlperf-host audit --out`): TEST01, TEST04, TEST06, TEST07, TEST08 or TEST09.
    Compliance(String),
}

/// A classified run directory.
#[derive(Debug, Clone)]
pub struct RunFolder {
    /// The folder given (a power-dev session's folder when its `run_1/` was given).
    pub dir: PathBuf,
    /// The folder holding the run's LoadGen logs (`run_1/` of a power-dev session).
    pub logs: PathBuf,
    /// The power-dev session (`ranging/`, `run_1/`, `power/`) the performance run is the
    /// testing run of, if it is one.
    pub power_session: Option<PathBuf>,
    pub kind: RunKind,
    /// The model the run's config files were read for (`sut_model`), else the one given.
    /// Without `-interactive` (that is in `folder_scenario`).
    pub model: String,
    pub scenario: TestScenario,
    /// The scenario folder it is filed under: LoadGen's scenario, or Interactive for a
    /// Server run of an `-interactive` model.
    pub folder_scenario: Scenario,
    /// The detail log of the run (of `performance/run_1/` for a compliance folder).
    pub log: DetailLog,
}

#[derive(Debug, thiserror::Error)]
pub enum RunFolderError {
    #[error("{}: {message}", dir.display())]
    Unusable { dir: PathBuf, message: String },
    #[error(transparent)]
    Log(#[from] crate::logs::DetailLogError),
}

impl RunFolder {
    /// Reads `dir`; `model` names the benchmark when the log does not (runs made before
    /// mlperf-host logged `sut_model`, or by another LoadGen).
    pub fn read(dir: &Path, model: Option<&str>) -> Result<RunFolder, RunFolderError> {
        Self::read_as(dir, model, true)
    }

    /// Reads `dir` to show it (`results`, `report`): a run whose logs do not name the model
    /// (the official LoadGen's, as a power-dev session holds them) is shown as model `-`.
    pub fn read_to_show(dir: &Path) -> Result<RunFolder, RunFolderError> {
        Self::read_as(dir, None, false)
    }

    fn read_as(
        dir: &Path,
        model: Option<&str>,
        model_required: bool,
    ) -> Result<RunFolder, RunFolderError> {
        let power_session = power_dev::session_of(dir);
        let dir = power_session.as_deref().unwrap_or(dir);
        let unusable = |message: String| RunFolderError::Unusable {
            dir: dir.to_path_buf(),
            message,
        };
        let compliance_test = compliance_test(dir);
        let logs_dir = match (&compliance_test, &power_session) {
            (Some(_), _) => performance_run(dir),
            (None, Some(session)) => session.join(power_dev::TESTING),
            (None, None) => dir.to_path_buf(),
        };
        if let Some(missing) = LOG_FILES.iter().find(|f| !logs_dir.join(f).is_file()) {
            return Err(unusable(format!(
                "no {missing}: not a LoadGen run directory (nor a compliance test folder from `mlperf-host audit`, nor a power-dev session)"
            )));
        }
        let mut log = DetailLog::read(&logs_dir.join(DETAIL_LOG))?;
        // An official-engine run's provenance lies beside its logs (audit moves it up).
        for folder in [&logs_dir, &dir.to_path_buf()] {
            log.add_provenance_from(&folder.join(PROVENANCE_FILE))?;
        }
        let logged = log
            .str("effective_scenario")
            .ok_or_else(|| unusable("the detail log has no effective_scenario".into()))?;
        let scenario = logged_scenario(logged).ok_or_else(|| {
            unusable(format!(
                "the detail log's effective_scenario {logged:?} is not a LoadGen scenario"
            ))
        })?;
        let model = match (log.str("sut_model"), model) {
            (_, Some(given)) => given.to_string(),
            (Some(logged), None) => logged.to_string(),
            (None, None) if !model_required => UNNAMED_MODEL.to_string(),
            (None, None) if power_session.is_some() => {
                return Err(unusable(
                    "the session's detail log does not name the model (the power client copies \
                     only the detail and summary logs of the official LoadGen): give --benchmark"
                        .into(),
                ))
            }
            (None, None) => {
                return Err(unusable(
                    "the detail log does not name the model (sut_model): give --benchmark".into(),
                ))
            }
        };
        let logged_interactive = log
            .str("sut_model")
            .is_some_and(|logged| Scenario::of_run(scenario, logged).0 == Scenario::Interactive);
        let (folder_scenario, base) = Scenario::of_run(scenario, &model);
        let folder_scenario = if logged_interactive {
            Scenario::Interactive
        } else {
            folder_scenario
        };
        let model = base.to_string();
        if power_session.is_some() && log.str("effective_test_mode") != Some("PerformanceOnly") {
            return Err(unusable(
                "a power session's testing run (run_1/) must be a PerformanceOnly run".into(),
            ));
        }
        let kind = match compliance_test {
            Some(test) => RunKind::Compliance(test),
            None => match log.str("effective_test_mode") {
                Some("PerformanceOnly") => RunKind::Performance,
                Some("AccuracyOnly") => {
                    if !dir.join(ACCURACY_LOG).is_file() {
                        return Err(unusable(format!("an accuracy run without {ACCURACY_LOG}")));
                    }
                    RunKind::Accuracy
                }
                other => {
                    return Err(unusable(format!(
                    "test mode {other:?}: a submission files PerformanceOnly and AccuracyOnly runs"
                )))
                }
            },
        };
        Ok(RunFolder {
            dir: dir.to_path_buf(),
            logs: logs_dir,
            power_session,
            kind,
            model,
            scenario,
            folder_scenario,
            log,
        })
    }

    pub fn describe(&self) -> String {
        let kind = match &self.kind {
            RunKind::Performance if self.power_session.is_some() => {
                "power session (performance run)".to_string()
            }
            RunKind::Performance => "performance run".to_string(),
            RunKind::Accuracy => "accuracy run".to_string(),
            RunKind::Compliance(test) => format!("{test} compliance folder"),
        };
        format!(
            "{kind} {} ({} {})",
            self.dir.display(),
            self.model,
            self.folder_scenario
        )
    }
}

/// The compliance test a folder holds: its name when it is `TEST0x`, else what its
/// verification files say (TEST01 verifies both, TEST04 performance, TEST06 accuracy).
fn compliance_test(dir: &Path) -> Option<String> {
    let accuracy = dir.join("verify_accuracy.txt").is_file();
    let performance = dir.join("verify_performance.txt").is_file();
    let output_len = dir.join("verify_output_len.txt").is_file();
    if !(accuracy || performance || output_len) || !performance_run(dir).is_dir() {
        return None;
    }
    let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if ComplianceTest::ALL.iter().any(|test| test.name() == name) {
        return Some(name.to_string());
    }
    // A folder of another name, told by its verdicts (TEST07 and TEST08 write what TEST06
    // does, each with its own summary line).
    let accuracy_text = if accuracy {
        std::fs::read_to_string(dir.join("verify_accuracy.txt")).unwrap_or_default()
    } else {
        String::new()
    };
    Some(
        match (accuracy, performance, output_len) {
            (_, _, true) => "TEST09",
            (true, true, _) => "TEST01",
            (false, true, _) => "TEST04",
            _ if accuracy_text.contains("TEST07 Verification Summary") => "TEST07",
            _ if accuracy_text.contains("TEST08 verification complete") => "TEST08",
            _ => "TEST06",
        }
        .to_string(),
    )
}
