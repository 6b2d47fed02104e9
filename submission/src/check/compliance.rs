//! The compliance folders a closed submission needs: present, passing, and their performance
//! runs held to the same rules as the submission's own.

use std::path::Path;

use serde_json::Value;

use super::{performance, Context};
use crate::rule::Rule;
use crate::rules::Rules;
use crate::scenario::Scenario;
use crate::tree::{performance_run, ScenarioDir, ACCURACY_LOG, ACCURACY_TXT, LOG_FILES};

pub(super) fn check(context: &mut Context, target: &ScenarioDir, rules: &Rules, system: &Value) {
    if target.submitter.division.is_open() {
        return;
    }
    for test in &rules.compliance {
        let dir = target.compliance(test);
        if !dir.is_dir() {
            context.error(
                &dir,
                Rule::ComplianceMissing,
                format!(
                    "{} requires {test} in the {} division",
                    rules.benchmark, target.submitter.division
                ),
            );
            continue;
        }
        let verifies_accuracy = matches!(test.as_str(), "TEST01" | "TEST06");
        let verifies_performance = matches!(test.as_str(), "TEST01" | "TEST04");
        // TEST07 (accuracy of a performance-mode run), TEST08 (dlrm-v3's NE) and TEST09
        // (output lengths) leave one verdict file each.
        let verdict = match test.as_str() {
            "TEST07" | "TEST08" => Some("verify_accuracy.txt"),
            "TEST09" => Some("verify_output_len.txt"),
            _ => None,
        };
        if let Some(verdict) = verdict {
            check_pass_line(context, &dir.join(verdict), Rule::ComplianceAccuracy);
        }
        if verifies_accuracy {
            check_accuracy(context, test, &dir, rules, target.scenario);
        }
        if verifies_performance {
            let verdict = dir.join("verify_performance.txt");
            check_pass_line(context, &verdict, Rule::CompliancePerformance);
            let run = performance_run(&dir);
            if !run.join(LOG_FILES[1]).is_file() {
                context.error(&run.join(LOG_FILES[1]), Rule::ComplianceFiles, "missing");
                continue;
            }
            performance::check_run(
                context,
                &run,
                target.scenario,
                target.submitter.division,
                rules,
                system,
            );
        }
    }
}

fn check_accuracy(
    context: &mut Context,
    test: &str,
    dir: &Path,
    rules: &Rules,
    scenario: Scenario,
) {
    let verdict = dir.join("verify_accuracy.txt");
    let Ok(text) = std::fs::read_to_string(&verdict) else {
        context.error(&verdict, Rule::ComplianceFiles, "missing");
        return;
    };
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    if test == "TEST06" {
        let first_token = lines.contains(&"First token check pass: True")
            || lines.contains(&"First token check pass: Skipped");
        let eos = lines.contains(&"EOS check pass: True");
        let length = lines.contains(&"Sample length check pass: True");
        if !(first_token && eos && length) {
            context.error(
                &verdict,
                Rule::ComplianceAccuracy,
                format!(
                    "TEST06 failed: first token {first_token}, EOS {eos}, sample length {length}"
                ),
            );
        }
        return;
    }
    if lines.contains(&"TEST PASS") {
        return;
    }
    // TEST01's fallback: the accuracy of the sampled responses agrees with the baseline.
    let accuracy_dir = dir.join("accuracy");
    let files = [
        ACCURACY_LOG,
        ACCURACY_TXT,
        "baseline_accuracy.txt",
        "compliance_accuracy.txt",
    ];
    if let Some(missing) = files.iter().find(|f| !accuracy_dir.join(f).is_file()) {
        context.error(
            &verdict,
            Rule::ComplianceAccuracy,
            format!("TEST01's responses differ from the accuracy run's, and accuracy/{missing} (the scores that could show they agree) is missing"),
        );
        return;
    }
    let targets = rules.accuracy_targets(scenario);
    if targets.is_empty() {
        context.error(
            &verdict,
            Rule::ComplianceAccuracy,
            "TEST01 failed and the benchmark has no accuracy metric to compare",
        );
        return;
    }
    let read = |name: &str| std::fs::read_to_string(accuracy_dir.join(name)).unwrap_or_default();
    let (baseline_text, compliance_text) = (
        read("baseline_accuracy.txt"),
        read("compliance_accuracy.txt"),
    );
    for target in targets {
        let allowed = rules.test01_delta_percent(&target.name);
        match (
            target.score_in(&baseline_text),
            target.score_in(&compliance_text),
        ) {
            (Some(baseline), Some(compliance)) if baseline > 0.0 && compliance > 0.0 => {
                let delta = (1.0 - baseline / compliance).abs() * 100.0;
                if delta > allowed {
                    context.error(
                        &accuracy_dir,
                        Rule::ComplianceAccuracy,
                        format!("TEST01: {} baseline {baseline} and compliance {compliance} differ by {delta:.3} % (at most {allowed} %)", target.name),
                    );
                }
            }
            _ => context.error(
                &accuracy_dir,
                Rule::ComplianceAccuracy,
                format!(
                    "TEST01: no {} score in baseline_accuracy.txt or compliance_accuracy.txt",
                    target.name
                ),
            ),
        }
    }
}

fn check_pass_line(context: &mut Context, path: &Path, rule: Rule) {
    match std::fs::read_to_string(path) {
        Err(_) => context.error(path, Rule::ComplianceFiles, "missing"),
        Ok(text) if text.contains("TEST PASS") => {}
        Ok(_) => context.error(path, rule, "no TEST PASS line: the compliance test failed"),
    }
}
