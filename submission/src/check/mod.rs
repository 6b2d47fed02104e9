//! `check`: the rules the official submission checker applies to the files it reads, over a
//! whole tree. Each finding names the file (relative to the tree) and the rule.

mod accuracy;
mod compliance;
mod dataset;
pub(crate) mod performance;
mod power;
mod scenario;
mod tree_safety;

use std::path::Path;

use super::finding::Findings;
use super::round::Round;
use super::rules::Rules;
use super::tree::{relative, subdirectories, SubmitterDir};
use crate::division::Division;
use crate::logs::DetailLog;
use crate::rule::Rule;
use crate::scenario::Scenario;

/// How strict to be.
#[derive(Debug, Clone, Copy, Default)]
pub struct CheckOptions {
    /// A test flag: accept what a short test submission lacks — performance and compliance
    /// runs below the minimum duration and query count, and a simulated power analyzer —
    /// as warnings.
    pub allow_short: bool,
    /// A test flag: accept closed and network results whose logs another LoadGen than the
    /// official one made (mlperf-host's native engine) as warnings.
    pub allow_native: bool,
}

/// What one check looks at: the tree's root (findings name files relative to it) and the
/// options.
pub(crate) struct Context<'a> {
    pub root: &'a Path,
    pub options: CheckOptions,
    /// The round whose rules the tree is held to.
    pub round: &'a Round,
    pub findings: Findings,
}

impl Context<'_> {
    fn file(&self, path: &Path) -> std::path::PathBuf {
        relative(self.root, path)
    }

    /// An error, or a warning under `--allow-short` for the rules it relaxes.
    fn short(&mut self, path: &Path, rule: Rule, message: String) {
        let file = self.file(path);
        if self.options.allow_short {
            self.findings
                .warning(file, rule, format!("{message} (accepted: --allow-short)"));
        } else {
            self.findings.error(file, rule, message);
        }
    }

    fn error(&mut self, path: &Path, rule: Rule, message: impl Into<String>) {
        let file = self.file(path);
        self.findings.error(file, rule, message);
    }

    fn warning(&mut self, path: &Path, rule: Rule, message: impl Into<String>) {
        let file = self.file(path);
        self.findings.warning(file, rule, message);
    }

    /// `[official-loadgen]`: closed and network results must come from the official LoadGen
    /// (the inference rules' "standard load generator"); its logs name a release and the git
    /// revision it was built from (`6.0.17 @ d6147c7eb7`).
    fn official_loadgen(&mut self, path: &Path, log: &DetailLog, division: Division) {
        if division.is_open() {
            return;
        }
        let logged = log.str("loadgen_version").unwrap_or("");
        if is_official_loadgen_version(logged) {
            return;
        }
        let (version, hash) = logged.split_once(" @ ").unwrap_or((logged, "none"));
        let message = format!(
            "the logs were not made by the official LoadGen (loadgen_version {version:?}, git hash {hash:?}); {division} results need it: run with `--engine official`"
        );
        let file = self.file(path);
        if self.options.allow_native {
            self.findings.warning(
                file,
                Rule::OfficialLoadgen,
                format!("{message} (accepted: --allow-native)"),
            );
        } else {
            self.findings.error(file, Rule::OfficialLoadgen, message);
        }
    }

    /// The detail log at `path`, or an error finding saying why not.
    fn detail_log(&mut self, path: &Path) -> Option<DetailLog> {
        if !path.is_file() {
            self.error(path, Rule::RequiredFile, "missing");
            return None;
        }
        match DetailLog::read(path) {
            Ok(log) => Some(log),
            Err(e) => {
                self.error(path, Rule::LogFormat, e.to_string());
                None
            }
        }
    }
}

/// `MAJOR.MINOR.PATCH @ HASH`, the hash a git revision's hex prefix: what the official
/// LoadGen logs (mlperf-host's native engine logs `6.0.17 compatible @ mlperf-host`).
pub fn is_official_loadgen_version(logged: &str) -> bool {
    let Some((version, hash)) = logged.split_once(" @ ") else {
        return false;
    };
    let parts: Vec<&str> = version.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        && (7..=40).contains(&hash.len())
        && hash.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Checks every submission under `root` against `round`'s rules.
pub fn check_tree(root: &Path, options: CheckOptions, round: &Round) -> Findings {
    let mut context = Context {
        root,
        options,
        round,
        findings: Findings::default(),
    };
    let divisions: Vec<Division> = subdirectories(root)
        .iter()
        .filter_map(|name| Division::parse(name))
        .collect();
    if divisions.is_empty() {
        context.error(
            root,
            Rule::TreeLayout,
            format!(
                "no division folder ({}) at the top of the tree",
                Division::names()
            ),
        );
    }
    tree_safety::check_no_symlinks(&mut context, root);
    if !divisions.is_empty() {
        tree_safety::check_has_results(&mut context, root, &divisions);
    }
    for &division in &divisions {
        for submitter in subdirectories(&root.join(division.as_str())) {
            let dir = SubmitterDir {
                root: root.to_path_buf(),
                division,
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
        context.error(&results, Rule::TreeLayout, "no system folders with results");
    }
    let src = dir.path().join("src");
    if !src.is_dir() {
        context.error(
            &src,
            Rule::SrcDir,
            "missing (the checker requires the submitter's src/ folder)",
        );
    }
    for system in systems {
        let Some(system_json) = scenario::read_system(context, dir, &system) else {
            continue;
        };
        for benchmark in subdirectories(&results.join(&system)) {
            let rules = match Rules::for_benchmark(&benchmark, context.round) {
                Ok(rules) => rules,
                Err(e) => {
                    context.error(
                        &results.join(&system).join(&benchmark),
                        Rule::UnknownBenchmark,
                        e.to_string(),
                    );
                    continue;
                }
            };
            let folders = subdirectories(&results.join(&system).join(&benchmark));
            let scenarios: Vec<Scenario> =
                folders.iter().filter_map(|f| Scenario::parse(f)).collect();
            scenario::check_scenario_set(
                context,
                dir,
                &results.join(&system).join(&benchmark),
                &system_json,
                &rules,
                &scenarios,
            );
            dataset::check(
                context,
                &results.join(&system).join(&benchmark),
                &rules,
                &scenarios,
            );
            for folder in &folders {
                let Some(scenario) = Scenario::parse(folder) else {
                    context.error(
                        &results.join(&system).join(&benchmark).join(folder),
                        Rule::UnknownScenario,
                        format!("{folder:?} is not one of {}", Scenario::names()),
                    );
                    continue;
                };
                let target = dir.scenario(&system, &benchmark, scenario);
                scenario::check_scenario(context, &target, &rules, &system_json);
            }
        }
    }
}
