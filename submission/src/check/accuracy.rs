//! The accuracy folder: its files, the score in accuracy.txt against the benchmark's target,
//! the hash line, the truncated log, and a run that covered the whole data set.

use std::path::Path;

use super::Context;
use crate::rule::Rule;
use crate::rules::Rules;
use crate::scenario::Scenario;
use crate::tree::{ScenarioDir, ACCURACY_LOG, ACCURACY_TXT, LOG_FILES};

pub(super) fn check(context: &mut Context, target: &ScenarioDir, rules: &Rules) {
    let dir = target.accuracy();
    if !dir.is_dir() {
        context.error(
            &dir,
            Rule::RequiredFile,
            "missing: every scenario needs its accuracy run",
        );
        return;
    }
    for name in [LOG_FILES[0], ACCURACY_TXT, ACCURACY_LOG] {
        if !dir.join(name).is_file() {
            context.error(&dir.join(name), Rule::RequiredFile, "missing");
        }
    }
    check_accuracy_files(context, &dir, rules);
    let closed = !target.submitter.division.is_open();
    if let Ok(text) = std::fs::read_to_string(dir.join(ACCURACY_TXT)) {
        check_accuracy_txt(
            context,
            &dir.join(ACCURACY_TXT),
            &text,
            rules,
            target.scenario,
            closed,
        );
    }
    if let Ok(meta) = std::fs::metadata(dir.join(ACCURACY_LOG)) {
        if meta.len() > rules.max_accuracy_log_bytes {
            context.error(
                &dir.join(ACCURACY_LOG),
                Rule::AccuracyLogTruncated,
                format!(
                    "{} bytes: the tree holds the log truncated to at most {} bytes (its hash goes into accuracy.txt)",
                    meta.len(),
                    rules.max_accuracy_log_bytes
                ),
            );
        }
    }
    let path = dir.join(LOG_FILES[1]);
    let Some(log) = context.detail_log(&path) else {
        return;
    };
    check_whole_log(context, &dir.join(ACCURACY_LOG), &log);
    context.official_loadgen(&path, &log, target.submitter.division);
    for error in log
        .errors
        .iter()
        .filter(|e| !e.contains("uncommitted changes"))
    {
        context.error(
            &path,
            Rule::LoadgenErrors,
            format!("LoadGen logged an error: {error}"),
        );
    }
    if log.str("effective_test_mode") != Some("AccuracyOnly") {
        context.error(
            &path,
            Rule::AccuracyMode,
            format!(
                "the run's test mode is {:?}, not AccuracyOnly",
                log.str("effective_test_mode").unwrap_or("missing")
            ),
        );
    }
    let covered = log.accuracy_sample_count().unwrap_or(0);
    let expected = rules.accuracy_sample_count_for(target.scenario);
    if covered != expected {
        context.error(
            &path,
            Rule::DatasetSize,
            format!(
                "the accuracy run covers {covered} samples; {} {} needs {expected}",
                rules.benchmark, target.scenario
            ),
        );
    }
}

/// A log short enough to be filed whole (the truncation keeps both ends of a longer one, which
/// no longer parses) must parse and cover the run's samples: an empty or cut log under the
/// score of an earlier accuracy.txt would otherwise pass.
fn check_whole_log(context: &mut Context, path: &Path, log: &crate::logs::DetailLog) {
    let Ok(text) = std::fs::read(path) else {
        return;
    };
    if text.windows(7).any(|window| window == b"\n\n...\n\n") {
        return;
    }
    if let Err(error) = crate::logs::accuracy::verify_whole(path, log.accuracy_sample_count()) {
        let message = error.to_string();
        let message = message
            .strip_prefix(&format!("{}: ", path.display()))
            .unwrap_or(&message)
            .to_string();
        context.error(path, Rule::AccuracyLogWhole, message);
    }
}

/// The files the round asks for beside the logs (a video generator's sampled videos): each
/// named file, any extension, in its sub-folder.
fn check_accuracy_files(context: &mut Context, dir: &Path, rules: &Rules) {
    for (folder, names) in &rules.accuracy_files {
        let folder_path = dir.join(folder);
        let Ok(entries) = std::fs::read_dir(&folder_path) else {
            context.error(
                &folder_path,
                Rule::AccuracyFiles,
                format!(
                    "missing: {} keeps {} of its outputs here for the auditors",
                    rules.benchmark,
                    names.len()
                ),
            );
            continue;
        };
        // As the checker: a file's name up to its first dot.
        let stems: Vec<String> = entries
            .filter_map(Result::ok)
            .filter(|entry| entry.path().is_file())
            .filter_map(|entry| {
                let name = entry.file_name().to_str()?.to_string();
                Some(name.split('.').next().unwrap_or_default().to_string())
            })
            .collect();
        let missing: Vec<&str> = names
            .iter()
            .filter(|name| !stems.contains(name))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            context.error(
                &folder_path,
                Rule::AccuracyFiles,
                format!(
                    "{} of {}'s outputs missing: {}",
                    missing.len(),
                    rules.benchmark,
                    missing.join(", ")
                ),
            );
        }
    }
}

/// Every score line reaches its target (closed division) and stays within its upper limit,
/// and the hash line is there.
fn check_accuracy_txt(
    context: &mut Context,
    path: &Path,
    text: &str,
    rules: &Rules,
    scenario: Scenario,
    closed: bool,
) {
    if !text.lines().any(|line| {
        line.strip_prefix("hash=").is_some_and(|h| {
            !h.is_empty() && h.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    }) {
        context.error(
            path,
            Rule::AccuracyHash,
            "no hash= line (the full accuracy log's sha256)",
        );
    }
    for target in rules.accuracy_targets(scenario) {
        match target.score_in(text) {
            None => context.error(
                path,
                Rule::AccuracyTarget,
                format!(
                    "no line states {} (the score to hold to {})",
                    target.name, target.why
                ),
            ),
            Some(value) if closed && value < target.bound => context.error(
                path,
                Rule::AccuracyTarget,
                format!(
                    "{} {value} is below the target {:.6} ({})",
                    target.name, target.bound, target.why
                ),
            ),
            Some(_) => {}
        }
    }
    if !closed {
        return;
    }
    for limit in &rules.accuracy_upper {
        if let Some(value) = limit.score_in(text).filter(|v| *v > limit.bound) {
            context.error(
                path,
                Rule::AccuracyUpperLimit,
                format!(
                    "{} {value} is above the upper limit {:.6} ({})",
                    limit.name, limit.bound, limit.why
                ),
            );
        }
    }
}
