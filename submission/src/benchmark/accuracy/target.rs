//! A score judged as the submission checker judges it: each of the round's accuracy targets
//! for the benchmark read back from the printed line by the checker's own pattern, and held
//! to its bound.

use crate::round::Round;
use crate::rules::AccuracyTarget;

/// One target of the round, and what the line says of it.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetCheck {
    /// The checker's metric name (`acc`, `mAP`, `DICE`).
    pub metric: String,
    pub bound: f64,
    /// How the bound is made (`99 % of the reference acc 76.46`).
    pub why: String,
    /// The value the checker's pattern reads from the line; None: it reads none.
    pub value: Option<f64>,
    /// The bound is an upper one (an LLM's answer length).
    pub at_most: bool,
}

impl TargetCheck {
    pub fn passed(&self) -> bool {
        self.value.is_some_and(|value| {
            if self.at_most {
                value <= self.bound
            } else {
                value >= self.bound
            }
        })
    }

    /// A line for accuracy.txt, which no checker pattern reads (it starts `target`).
    pub fn report_line(&self, round: &str) -> String {
        let verdict = if self.passed() { "PASS" } else { "FAIL" };
        let relation = if self.at_most { "<=" } else { ">=" };
        match self.value {
            Some(value) => format!(
                "target ({round}): {} {value} {relation} {:.6} ({}): {verdict}",
                self.metric, self.bound, self.why
            ),
            None => format!(
                "target ({round}): {} {relation} {:.6} ({}): FAIL, the checker's pattern reads no value from the line",
                self.metric, self.bound, self.why
            ),
        }
    }
}

/// The targets of `round` for `benchmark` (the lower bounds, then the upper ones), read off
/// `line`.
pub(super) fn judge(line: &str, targets: &RoundTargets) -> Vec<TargetCheck> {
    let check = |target: &AccuracyTarget, at_most: bool| TargetCheck {
        metric: target.name.clone(),
        bound: target.bound,
        why: target.why.clone(),
        value: target.score(line),
        at_most,
    };
    let lower = targets.lower.iter().map(|t| check(t, false));
    lower
        .chain(targets.upper.iter().map(|t| check(t, true)))
        .collect()
}

/// A benchmark's accuracy bounds in a round: what a score must reach, and not exceed.
#[derive(Debug, Clone, Default)]
pub(super) struct RoundTargets {
    pub(super) lower: Vec<AccuracyTarget>,
    pub(super) upper: Vec<AccuracyTarget>,
}

/// The round a benchmark's accuracy is judged in (the built-in one unless a file overrides
/// it), and its targets for `benchmark` (none for a benchmark outside the round).
pub(super) fn round_targets(benchmark: &str) -> (String, RoundTargets) {
    match Round::find(None) {
        Ok(round) => {
            let targets = round
                .model(benchmark)
                .map(|rules| RoundTargets {
                    lower: rules.accuracy.clone(),
                    upper: rules.accuracy_upper.clone(),
                })
                .unwrap_or_default();
            (round.name, targets)
        }
        Err(error) => {
            tracing::warn!(%error, "no round to judge accuracy by");
            (String::from("no round"), RoundTargets::default())
        }
    }
}

/// A benchmark's score with the round's verdicts on it.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged<S> {
    pub score: S,
    /// The round's name.
    pub round: String,
    pub targets: Vec<TargetCheck>,
}

impl<S> Judged<S> {
    /// Every target reached; false where the round sets none (nothing to pass).
    pub fn passes(&self) -> bool {
        !self.targets.is_empty() && self.targets.iter().all(TargetCheck::passed)
    }

    /// The checker's lines after the score's own line.
    pub fn target_lines(&self) -> String {
        let mut text = String::new();
        for target in &self.targets {
            text.push_str(&target.report_line(&self.round));
            text.push('\n');
        }
        if self.targets.is_empty() {
            text.push_str(&format!(
                "target ({}): none, the round has no accuracy target for this benchmark\n",
                self.round
            ));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checkers_pattern_reads_the_line_and_the_bound_holds_it() {
        let (round, targets) = round_targets("resnet");
        assert_eq!(round, "v6.1");
        let judged = Judged {
            score: (),
            round,
            targets: judge("accuracy=76.456%, good=38228, total=50000", &targets),
        };
        assert_eq!(judged.targets[0].value, Some(76.456));
        assert!(judged.passes(), "{:?}", judged.targets);
        let low = judge("accuracy=75.694%, good=1, total=2", &targets);
        assert!(!low[0].passed());
        let unread = judge("top1 is 80%", &targets);
        assert_eq!(unread[0].value, None);
        assert!(!unread[0].passed());
        let lines = Judged {
            score: (),
            round: "v6.1".into(),
            targets: low,
        }
        .target_lines();
        assert!(
            lines.starts_with("target (v6.1): acc 75.694 >= 75.695400"),
            "{lines}"
        );
        assert!(lines.trim_end().ends_with("FAIL"), "{lines}");
        assert!(round_targets("fmnist").1.lower.is_empty());
        // An LLM's answer length is held below a bound too.
        let (_, llama) = round_targets("llama3.1-8b");
        let line = "{'rouge1': '38.8', 'rouge2': '15.95', 'rougeL': '24.5', 'rougeLsum': '35.8', 'gen_len': 9000000, 'gen_num': 13368}";
        let checks = judge(line, &llama);
        let too_long: Vec<_> = checks.iter().filter(|c| !c.passed()).collect();
        assert_eq!(too_long.len(), 1, "{checks:?}");
        assert!(
            too_long[0].at_most && too_long[0].metric == "GEN_LEN",
            "{checks:?}"
        );
        assert!(
            too_long[0]
                .report_line("v6.1")
                .contains("9000000 <= 8984408"),
            "{}",
            too_long[0].report_line("v6.1")
        );
    }
}
