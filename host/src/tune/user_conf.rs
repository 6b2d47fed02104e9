//! The user.conf `tune` writes: the submitter's own file first (when there is one), then the
//! tuned value under comments that say how it was found, so the last line wins.

use super::{FullRunEstimate, Tuned};

/// The file's text. `model` is the config files' model name; `previous` the user.conf the
/// trials ran with (its path and text).
pub fn render_user_conf(
    model: &str,
    tuned: &Tuned,
    estimate: &FullRunEstimate,
    previous: Option<(&str, &str)>,
) -> String {
    let mut text = String::new();
    let what = match model {
        "*" => format!("{} (no model named: every model)", tuned.scenario),
        model => format!("{model} {}", tuned.scenario),
    };
    text.push_str(&format!(
        "# Written by mlperf-host tune {} for {what}.\n",
        env!("CARGO_PKG_VERSION"),
    ));
    if let Some((path, contents)) = previous {
        text.push_str(&format!(
            "# The trials ran with {path}, copied here first:\n"
        ));
        text.push_str(contents);
        if !contents.ends_with('\n') {
            text.push('\n');
        }
        text.push_str("# End of the copy.\n");
    }
    text.push('\n');
    for line in &tuned.how {
        text.push_str(&format!("# {line}\n"));
    }
    let trials: Vec<String> = tuned
        .trials
        .iter()
        .map(|trial| format!("{} ({})", trial.name, trial.dir.display()))
        .collect();
    text.push_str(&format!("# trials: {}\n", trials.join(", ")));
    text.push_str(&format!(
        "# the full run: about {} ({} {})\n",
        human_duration(estimate.seconds),
        estimate.queries,
        if estimate.queries == 1 {
            "query"
        } else {
            "queries"
        }
    ));
    text.push_str(&tuned.conf_line(model));
    text.push('\n');
    text
}

/// `12 min 5 s`, `3.2 s`, `2 h 4 min`.
pub fn human_duration(seconds: f64) -> String {
    if !seconds.is_finite() {
        return "an unknown time".to_string();
    }
    if seconds < 60.0 {
        return format!("{seconds:.1} s");
    }
    let whole = seconds.round() as u64;
    let (hours, minutes, secs) = (whole / 3600, whole / 60 % 60, whole % 60);
    if hours > 0 {
        format!("{hours} h {minutes} min")
    } else {
        format!("{minutes} min {secs} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(human_duration(3.21), "3.2 s");
        assert_eq!(human_duration(725.0), "12 min 5 s");
        assert_eq!(human_duration(7440.0), "2 h 4 min");
    }
}
