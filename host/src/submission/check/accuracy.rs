//! The accuracy folder: its files, the score in accuracy.txt against the benchmark's target,
//! the hash line, the truncated log, and a run that covered the whole data set.

use std::path::Path;

use super::Context;
use crate::submission::rules::{AccuracyTarget, Rules, MAX_ACCURACY_LOG_BYTES};
use crate::submission::tree::{ScenarioDir, ACCURACY_LOG, ACCURACY_TXT, LOG_FILES};

pub fn check(context: &mut Context, target: &ScenarioDir, rules: &Rules) {
    let dir = target.accuracy();
    if !dir.is_dir() {
        context.error(
            &dir,
            "required-file",
            "missing: every scenario needs its accuracy run",
        );
        return;
    }
    for name in [LOG_FILES[0], ACCURACY_TXT, ACCURACY_LOG] {
        if !dir.join(name).is_file() {
            context.error(&dir.join(name), "required-file", "missing");
        }
    }
    let closed = target.submitter.division != "open";
    if let Ok(text) = std::fs::read_to_string(dir.join(ACCURACY_TXT)) {
        check_accuracy_txt(context, &dir.join(ACCURACY_TXT), &text, rules, closed);
    }
    if let Ok(meta) = std::fs::metadata(dir.join(ACCURACY_LOG)) {
        if meta.len() > MAX_ACCURACY_LOG_BYTES {
            context.error(
                &dir.join(ACCURACY_LOG),
                "accuracy-log-truncated",
                format!("{} bytes: the tree holds the log truncated to at most {MAX_ACCURACY_LOG_BYTES} bytes (its hash goes into accuracy.txt)", meta.len()),
            );
        }
    }
    let path = dir.join(LOG_FILES[1]);
    let Some(log) = context.detail_log(&path) else {
        return;
    };
    context.official_loadgen(&path, &log, &target.submitter.division);
    for error in log
        .errors
        .iter()
        .filter(|e| !e.contains("uncommitted changes"))
    {
        context.error(
            &path,
            "loadgen-errors",
            format!("LoadGen logged an error: {error}"),
        );
    }
    if log.str("effective_test_mode") != Some("AccuracyOnly") {
        context.error(
            &path,
            "accuracy-mode",
            format!(
                "the run's test mode is {:?}, not AccuracyOnly",
                log.str("effective_test_mode").unwrap_or("missing")
            ),
        );
    }
    let covered = log
        .u64("effective_accuracy_sample_count")
        .or_else(|| log.u64("qsl_reported_total_count"))
        .unwrap_or(0);
    if covered != rules.dataset_size {
        context.error(
            &path,
            "dataset-size",
            format!(
                "the accuracy run covers {covered} samples; the {} data set has {}",
                rules.benchmark, rules.dataset_size
            ),
        );
    }
}

/// The score line reaches the target (closed division) and the hash line is there.
fn check_accuracy_txt(context: &mut Context, path: &Path, text: &str, rules: &Rules, closed: bool) {
    if !text.lines().any(|line| {
        line.strip_prefix("hash=").is_some_and(|h| {
            !h.is_empty() && h.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    }) {
        context.error(
            path,
            "accuracy-hash",
            "no hash= line (the full accuracy log's sha256)",
        );
    }
    let Some(target) = &rules.accuracy else {
        return;
    };
    match score(text, target) {
        None => context.error(
            path,
            "accuracy-target",
            format!("no {}=… line to read the score from", target.name),
        ),
        Some(value) if closed && value < target.minimum => context.error(
            path,
            "accuracy-target",
            format!(
                "{}={value} is below the target {:.4} ({})",
                target.name, target.minimum, target.why
            ),
        ),
        Some(_) => {}
    }
}

/// The first `NAME=<number>` at the start of a line.
pub fn score(text: &str, target: &AccuracyTarget) -> Option<f64> {
    text.lines().find_map(|line| {
        let rest = line.strip_prefix(target.name)?.strip_prefix('=')?;
        let number: String = rest
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        number.parse().ok()
    })
}
