//! `check`: the rules the official submission checker applies to the files it reads, over a
//! whole tree. Each finding names the file (relative to the tree) and the rule.

mod accuracy;
mod compliance;
mod performance;
mod power;
mod scenario;

use std::path::Path;

use super::detail_log::DetailLog;
use super::finding::Findings;
use super::rules::Rules;
use super::tree::{relative, subdirectories, SubmitterDir, DIVISIONS, SCENARIOS};

/// How strict to be.
#[derive(Debug, Clone, Copy, Default)]
pub struct CheckOptions {
    /// A test flag: accept what a short test submission lacks — performance and compliance
    /// runs below the minimum duration and query count, and a simulated power analyzer —
    /// as warnings.
    pub allow_short: bool,
}

/// What one check looks at: the tree's root (findings name files relative to it) and the
/// options.
pub(crate) struct Context<'a> {
    pub root: &'a Path,
    pub options: CheckOptions,
    pub findings: Findings,
}

impl Context<'_> {
    fn file(&self, path: &Path) -> std::path::PathBuf {
        relative(self.root, path)
    }

    /// An error, or a warning under `--allow-short` for the rules it relaxes.
    fn short(&mut self, path: &Path, rule: &'static str, message: String) {
        let file = self.file(path);
        if self.options.allow_short {
            self.findings
                .warning(file, rule, format!("{message} (accepted: --allow-short)"));
        } else {
            self.findings.error(file, rule, message);
        }
    }

    fn error(&mut self, path: &Path, rule: &'static str, message: impl Into<String>) {
        let file = self.file(path);
        self.findings.error(file, rule, message);
    }

    fn warning(&mut self, path: &Path, rule: &'static str, message: impl Into<String>) {
        let file = self.file(path);
        self.findings.warning(file, rule, message);
    }

    /// The detail log at `path`, or an error finding saying why not.
    fn detail_log(&mut self, path: &Path) -> Option<DetailLog> {
        if !path.is_file() {
            self.error(path, "required-file", "missing");
            return None;
        }
        match DetailLog::read(path) {
            Ok(log) => Some(log),
            Err(e) => {
                self.error(path, "log-format", e.to_string());
                None
            }
        }
    }
}

/// Checks every submission under `root`.
pub fn check_tree(root: &Path, options: CheckOptions) -> Findings {
    let mut context = Context {
        root,
        options,
        findings: Findings::default(),
    };
    let divisions: Vec<String> = subdirectories(root)
        .into_iter()
        .filter(|d| DIVISIONS.contains(&d.as_str()))
        .collect();
    if divisions.is_empty() {
        context.error(
            root,
            "tree-layout",
            format!(
                "no division folder ({}) at the top of the tree",
                DIVISIONS.join(", ")
            ),
        );
    }
    for division in divisions {
        for submitter in subdirectories(&root.join(&division)) {
            let dir = SubmitterDir {
                root: root.to_path_buf(),
                division: division.clone(),
                submitter,
            };
            check_submitter(&mut context, &dir);
        }
    }
    context.findings
}

fn check_submitter(context: &mut Context, dir: &SubmitterDir) {
    let results = dir.path().join("results");
    let systems = subdirectories(&results);
    if systems.is_empty() {
        context.error(&results, "tree-layout", "no system folders with results");
    }
    let src = dir.path().join("src");
    if !src.is_dir() {
        context.error(
            &src,
            "src-dir",
            "missing (the checker requires the submitter's src/ folder)",
        );
    }
    for system in systems {
        let Some(system_json) = scenario::read_system(context, dir, &system) else {
            continue;
        };
        for benchmark in subdirectories(&results.join(&system)) {
            let rules = match Rules::for_benchmark(&benchmark) {
                Ok(rules) => rules,
                Err(e) => {
                    context.error(
                        &results.join(&system).join(&benchmark),
                        "unknown-benchmark",
                        e.to_string(),
                    );
                    continue;
                }
            };
            let scenarios = subdirectories(&results.join(&system).join(&benchmark));
            scenario::check_required_scenarios(
                context,
                dir,
                &system,
                &system_json,
                &rules,
                &scenarios,
            );
            for scenario in scenarios {
                let target = dir.scenario(&system, &benchmark, &scenario);
                if !SCENARIOS.contains(&scenario.as_str()) {
                    context.error(
                        &target.path(),
                        "unknown-scenario",
                        format!("{scenario:?} is not one of {}", SCENARIOS.join(", ")),
                    );
                    continue;
                }
                scenario::check_scenario(context, &target, &rules, &system_json);
            }
        }
    }
}
