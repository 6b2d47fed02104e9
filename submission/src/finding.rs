//! What a check says about a submission tree: one finding per defect, naming the file it is
//! about (relative to the tree's root) and the rule it breaks.

use std::fmt;
use std::path::{Path, PathBuf};

pub use super::rule::Rule;

/// Whether a finding stops the submission.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The official checker would reject the tree for this.
    Error,
    /// Worth a look; the official checker accepts it.
    Warning,
}

/// One defect: the file, the rule (a short stable name, e.g. `min-duration`) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    pub severity: Severity,
    pub file: PathBuf,
    pub rule: Rule,
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let severity = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(
            f,
            "{severity}: {}: [{}] {}",
            self.file.display(),
            self.rule,
            self.message
        )
    }
}

/// The findings of a check, in the order they were made.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Findings(pub Vec<Finding>);

impl Findings {
    pub fn error(&mut self, file: impl AsRef<Path>, rule: Rule, message: impl Into<String>) {
        self.push(Severity::Error, file, rule, message);
    }

    pub fn warning(&mut self, file: impl AsRef<Path>, rule: Rule, message: impl Into<String>) {
        self.push(Severity::Warning, file, rule, message);
    }

    fn push(
        &mut self,
        severity: Severity,
        file: impl AsRef<Path>,
        rule: Rule,
        message: impl Into<String>,
    ) {
        self.0.push(Finding {
            severity,
            file: file.as_ref().to_path_buf(),
            rule,
            message: message.into(),
        });
    }

    pub fn errors(&self) -> impl Iterator<Item = &Finding> {
        self.0.iter().filter(|f| f.severity == Severity::Error)
    }

    pub fn has_errors(&self) -> bool {
        self.errors().next().is_some()
    }

    pub fn extend(&mut self, other: Findings) {
        self.0.extend(other.0);
    }
}
