//! Submissions: the system description (`system`), the tree of the MLPerf submission rules
//! assembled from run directories, and a pre-check of that tree with the official checker's
//! rules, each finding naming the file and the rule.

pub mod finding;
pub mod system;

pub use finding::{Finding, Findings, Severity};
