//! The campaign's journal: each run as it starts and ends, with the hash of its inputs, its
//! outcome and its verdict. It is rewritten whole through a temporary file, synced and renamed
//! over the old one, so a crash at any instant leaves either the old journal or the new one.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{crash_point, CampaignError};

pub const JOURNAL_FILE: &str = "journal.json";
const FORMAT_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunState {
    /// Begun and not ended: the process died (or is running). Redone from scratch.
    Started,
    /// Ended with a result the rules accept.
    Done,
    /// Ended with an INVALID result, a failed verification, an accuracy below target or an
    /// error; redone on the next `campaign run`.
    Failed,
}

/// One run's record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The hash of the run's inputs when it started.
    pub inputs: String,
    pub state: RunState,
    /// Unix seconds.
    pub started: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<f64>,
    /// VALID/INVALID, PASS/FAIL, or the error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
    /// The headline figure (`samples_per_second=…`, `accuracy=…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    /// Why it failed, and the command to look at it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The folder `submit` files for this run (a power-dev session's, for power runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filed: Option<PathBuf>,
}

/// The last submit/check/results/report of the campaign.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FinishRecord {
    /// The hashes of every run's inputs it was made from, in plan order.
    pub inputs: Vec<String>,
    pub ended: f64,
    /// `check`'s errors and warnings.
    pub errors: usize,
    pub warnings: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Journal {
    pub version: u32,
    /// The campaign file it belongs to.
    pub campaign: PathBuf,
    pub runs: BTreeMap<String, RunRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished: Option<FinishRecord>,
}

impl Journal {
    /// The journal in `dir`, or an empty one for `campaign` when there is none yet.
    pub fn open(dir: &Path, campaign: &Path) -> Result<Journal, CampaignError> {
        let path = dir.join(JOURNAL_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Journal {
                    version: FORMAT_VERSION,
                    campaign: campaign.to_path_buf(),
                    ..Journal::default()
                })
            }
            Err(e) => return Err(io_error(&path, e)),
        };
        let journal: Journal = serde_json::from_str(&text).map_err(|e| CampaignError::File {
            path: path.clone(),
            message: format!("not a campaign journal: {e}"),
        })?;
        if journal.version != FORMAT_VERSION {
            return Err(CampaignError::File {
                path,
                message: format!(
                    "journal format {} (this mlperf-host reads {FORMAT_VERSION})",
                    journal.version
                ),
            });
        }
        if journal.campaign != campaign {
            return Err(CampaignError::File {
                path,
                message: format!(
                    "belongs to campaign {}, not {}: give each campaign its own dir",
                    journal.campaign.display(),
                    campaign.display()
                ),
            });
        }
        Ok(journal)
    }

    /// Writes the journal atomically into `dir`.
    pub fn save(&self, dir: &Path) -> Result<(), CampaignError> {
        let path = dir.join(JOURNAL_FILE);
        let temporary = dir.join(format!("{JOURNAL_FILE}.partial"));
        let mut text = serde_json::to_string_pretty(self).expect("a journal serializes");
        text.push('\n');
        let write = || -> std::io::Result<()> {
            std::fs::create_dir_all(dir)?;
            let mut file = std::fs::File::create(&temporary)?;
            file.write_all(text.as_bytes())?;
            file.sync_all()?;
            crash_point("journal");
            std::fs::rename(&temporary, &path)?;
            // The rename itself reaches the disk with the folder.
            std::fs::File::open(dir)?.sync_all()
        };
        write().map_err(|e| io_error(&path, e))
    }
}

fn io_error(path: &Path, error: std::io::Error) -> CampaignError {
    CampaignError::File {
        path: path.to_path_buf(),
        message: error.to_string(),
    }
}

/// Seconds since the Unix epoch.
pub fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// `2026-11-27 21:48:32` (UTC) for Unix seconds.
pub fn utc_text(unix_s: f64) -> String {
    let secs = unix_s.max(0.0) as i64;
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Days to a civil date (proleptic Gregorian), as in Howard Hinnant's date algorithms.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(utc_text(0.0), "1970-01-01 00:00:00");
        assert_eq!(utc_text(951_782_400.0), "2000-02-29 00:00:00");
        assert_eq!(utc_text(1_795_816_112.0), "2026-11-27 21:48:32");
    }

    #[test]
    fn a_saved_journal_reads_back_and_belongs_to_its_campaign() {
        let dir = std::env::temp_dir().join(format!("journal-test-{}", std::process::id()));
        let campaign = Path::new("/c/edge.toml");
        let mut journal = Journal::open(&dir, campaign).unwrap();
        journal.runs.insert(
            "a/Offline/accuracy".into(),
            RunRecord {
                inputs: "abc".into(),
                state: RunState::Done,
                started: 1.0,
                ended: Some(2.0),
                verdict: Some("PASS".into()),
                metric: None,
                reason: None,
                filed: None,
            },
        );
        journal.save(&dir).unwrap();
        assert_eq!(Journal::open(&dir, campaign).unwrap(), journal);
        let other = Journal::open(&dir, Path::new("/c/other.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            other.contains("belongs to campaign /c/edge.toml"),
            "{other}"
        );
        std::fs::write(dir.join(JOURNAL_FILE), "{").unwrap();
        let broken = Journal::open(&dir, campaign).unwrap_err().to_string();
        assert!(
            broken.contains("journal.json") && broken.contains("not a campaign journal"),
            "{broken}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
