//! Submissions: the system description (`system`), the tree of the MLPerf submission rules
//! assembled from run directories (`assemble`), and a pre-check of that tree with the official
//! checker's rules (`check`), each finding naming the file and the rule.

pub mod assemble;
mod benchmark_rules;
pub mod check;
pub mod compare;
pub mod finding;
pub mod power_dev;
pub mod results;
pub mod round;
pub mod rule;
pub mod rules;
pub mod run_folder;
pub mod scenario_files;
pub mod system;
pub mod tree;

pub use finding::{Finding, Findings, Severity};
