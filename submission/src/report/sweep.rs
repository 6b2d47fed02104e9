//! A load sweep in the report (a folder `mlperf-host sweep` wrote: its sweep.json): the
//! points' table, the Pareto plot of system tokens/s against tokens/s per user, and latency
//! against load.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::svg::{escape, Chart, Series};
use super::ReportError;

/// The colours of a sweep's plots.
pub const SWEEP_POINTS_COLOR: &str = "#64748b";
pub const PARETO_COLOR: &str = "#0f766e";
pub const P50_COLOR: &str = "#2563eb";
pub const P90_COLOR: &str = "#d97706";
pub const P99_COLOR: &str = "#dc2626";

/// The file that makes a folder a sweep.
pub(super) const SWEEP_FILE: &str = "sweep.json";

/// One point as the report shows it (times in ms).
#[derive(Debug, Clone, PartialEq)]
pub struct SweepPointData {
    pub load: String,
    pub valid: bool,
    pub invalid_because: Vec<String>,
    pub requests_per_s: f64,
    pub output_tokens_per_s: f64,
    /// As MLPerf Endpoints defines it: 1000 / p90 TPOT in ms.
    pub tokens_per_s_per_user: f64,
    pub mean_concurrency: f64,
    pub goodput_per_s: f64,
    pub ttft_ms: [f64; 3],
    pub tpot_ms: [f64; 3],
    /// Inter-token latency, where the plugin reported the tokens after the first.
    pub itl_ms: Option<[f64; 3]>,
    pub e2e_ms: [f64; 3],
    /// Failed requests of the window.
    pub failed: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SweepData {
    pub dir: PathBuf,
    pub points: Vec<SweepPointData>,
    pub stopped: Option<String>,
    /// The accuracy pass in a line, when the sweep had one.
    pub accuracy: Option<String>,
}

/// Whether `dir` holds a sweep.
pub fn is_sweep(dir: &Path) -> bool {
    dir.join(SWEEP_FILE).is_file()
}

/// Reads `dir/sweep.json`.
pub fn read_sweep(dir: &Path) -> Result<SweepData, ReportError> {
    let path = dir.join(SWEEP_FILE);
    let bad = |message: String| ReportError::Read {
        path: path.clone(),
        message,
    };
    let text = std::fs::read_to_string(&path).map_err(|e| bad(e.to_string()))?;
    let json: Value = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let points = json["points"]
        .as_array()
        .ok_or_else(|| bad("no \"points\" list".to_string()))?
        .iter()
        .enumerate()
        .map(|(n, point)| read_point(point).map_err(|key| bad(format!("point {}: {key}", n + 1))))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(SweepData {
        dir: dir.to_path_buf(),
        points,
        stopped: json["stopped"].as_str().map(str::to_string),
        accuracy: accuracy_line(&json["accuracy"]),
    })
}

/// `Accuracy pass: 8 of 8 samples answered; rouge1=… (PASS)`, from sweep.json's `accuracy`.
fn accuracy_line(accuracy: &Value) -> Option<String> {
    if let Some(why) = accuracy["error"].as_str() {
        return Some(format!("Accuracy pass failed: {why}"));
    }
    let samples = accuracy["samples"].as_u64()?;
    let answered = accuracy["answered"].as_u64().unwrap_or(0);
    let score = match (accuracy["score"].as_str(), accuracy["passes"].as_bool()) {
        (Some(score), Some(passes)) => {
            format!("{score} ({})", if passes { "PASS" } else { "FAIL" })
        }
        (Some(score), None) => format!("{score} (no verdict: not the whole data set)"),
        _ => "not scored (no benchmark data set with an accuracy metric)".to_string(),
    };
    Some(format!(
        "Accuracy pass: {answered} of {samples} samples answered; {score}"
    ))
}

/// A point, or the key it lacks.
fn read_point(point: &Value) -> Result<SweepPointData, String> {
    let number = |path: &str| -> Result<f64, String> {
        point
            .pointer(path)
            .and_then(Value::as_f64)
            .ok_or_else(|| format!("no number at {path}"))
    };
    let ms = |name: &str| -> Result<[f64; 3], String> {
        Ok([
            number(&format!("/{name}/p50"))? / 1e6,
            number(&format!("/{name}/p90"))? / 1e6,
            number(&format!("/{name}/p99"))? / 1e6,
        ])
    };
    let tpot_ms = ms("tpot_ns")?;
    Ok(SweepPointData {
        load: label(&point["load"]),
        valid: point["result"] == "VALID",
        invalid_because: point["invalid_because"]
            .as_array()
            .map(|reasons| {
                reasons
                    .iter()
                    .filter_map(|r| r.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default(),
        requests_per_s: number("/requests_per_s")?,
        output_tokens_per_s: number("/output_tokens_per_s")?,
        tokens_per_s_per_user: if tpot_ms[1] > 0.0 {
            1000.0 / tpot_ms[1]
        } else {
            0.0
        },
        mean_concurrency: number("/mean_concurrency")?,
        goodput_per_s: number("/goodput_per_s")?,
        ttft_ms: ms("ttft_ns")?,
        tpot_ms,
        itl_ms: ms("itl_ns")
            .ok()
            .filter(|_| point["itl_ns"]["count"].as_u64() > Some(0)),
        e2e_ms: ms("e2e_ns")?,
        failed: point["failed"].as_u64().unwrap_or(0),
    })
}

/// `concurrency 8`, `poisson 2/s cap 4`, `trace replay`.
fn label(load: &Value) -> String {
    if let Some(n) = load["concurrency"].as_u64() {
        return format!("concurrency {n}");
    }
    let kind = load["arrivals"].as_str().unwrap_or("rate");
    let cap = load["max_concurrency"]
        .as_u64()
        .map_or(String::new(), |n| format!(" cap {n}"));
    if kind == "replay" {
        return format!("trace replay{cap}");
    }
    let rate = load["rate"].as_f64().unwrap_or(0.0);
    format!("{kind} {rate}/s{cap}")
}

/// The points no other point beats on both per-user and system tokens/s, by per-user speed.
pub fn pareto_frontier(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut by_speed = points.to_vec();
    by_speed.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.total_cmp(&a.1)));
    let mut frontier = Vec::new();
    let mut best = f64::NEG_INFINITY;
    for point in by_speed {
        if point.1 > best {
            best = point.1;
            frontier.push(point);
        }
    }
    frontier.reverse();
    frontier
}

/// The sweep's section of the report.
pub(super) fn sweep_section(n: usize, sweep: &SweepData) -> String {
    let mut html = format!(
        "<h2>{n}. Sweep: {}</h2>",
        escape(&sweep.dir.display().to_string())
    );
    if let Some(why) = &sweep.stopped {
        let _ = write!(
            html,
            "<p class=\"invalid\">Stopped early: {}</p>",
            escape(why)
        );
    }
    if let Some(line) = &sweep.accuracy {
        let _ = write!(html, "<p>{}</p>", escape(line));
    }
    html.push_str(
        "<table><tr><th>load</th><th>result</th><th>req/s</th><th>output tok/s</th>\
         <th>tok/s per user</th><th>in flight</th><th>TTFT p50 / p90 / p99 (ms)</th>\
         <th>TPOT p50 / p90 / p99 (ms)</th><th>ITL p50 / p90 / p99 (ms)</th>\
         <th>E2E p50 / p99 (ms)</th><th>goodput/s</th><th>failed</th></tr>",
    );
    for point in &sweep.points {
        let (class, verdict) = if point.valid {
            ("valid", "VALID")
        } else {
            ("invalid", "INVALID")
        };
        let three = |v: &[f64; 3]| format!("{:.1} / {:.1} / {:.1}", v[0], v[1], v[2]);
        let _ = write!(
            html,
            "<tr><td>{}</td><td class=\"{class}\" title=\"{}\">{verdict}</td><td>{:.2}</td>\
             <td>{:.1}</td><td>{:.1}</td><td>{:.2}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{:.1} / {:.1}</td><td>{:.2}</td><td>{}</td></tr>",
            escape(&point.load),
            escape(&point.invalid_because.join("; ")),
            point.requests_per_s,
            point.output_tokens_per_s,
            point.tokens_per_s_per_user,
            point.mean_concurrency,
            three(&point.ttft_ms),
            three(&point.tpot_ms),
            point.itl_ms.as_ref().map_or("-".to_string(), three),
            point.e2e_ms[0],
            point.e2e_ms[2],
            point.goodput_per_s,
            point.failed,
        );
    }
    html.push_str("</table><div class=\"charts\">");
    for chart in charts(sweep) {
        html.push_str(&chart.to_svg());
    }
    html.push_str("</div>");
    html
}

fn charts(sweep: &SweepData) -> Vec<Chart> {
    let mut all: Vec<(f64, f64)> = sweep
        .points
        .iter()
        .map(|p| (p.tokens_per_s_per_user, p.output_tokens_per_s))
        .collect();
    let frontier = pareto_frontier(&all);
    all.sort_by(|a, b| a.0.total_cmp(&b.0));
    let pareto = Chart {
        title: "Pareto: system against per-user speed".into(),
        x_label: "tokens/s per user (1000 / p90 TPOT ms)".into(),
        y_label: "output tokens/s".into(),
        series: vec![
            Series {
                label: "points".into(),
                color: SWEEP_POINTS_COLOR,
                points: all,
            },
            Series {
                label: "Pareto frontier".into(),
                color: PARETO_COLOR,
                points: frontier,
            },
        ],
        bars: None,
        shade: None,
        markers: true,
    };
    let mut by_load: Vec<&SweepPointData> = sweep.points.iter().collect();
    by_load.sort_by(|a, b| a.requests_per_s.total_cmp(&b.requests_per_s));
    let against_load = |title: &str, of: fn(&SweepPointData) -> [f64; 3]| Chart {
        title: format!("{title} against load"),
        x_label: "requests/s".into(),
        y_label: format!("{title} (ms)"),
        series: [("p50", P50_COLOR), ("p90", P90_COLOR), ("p99", P99_COLOR)]
            .into_iter()
            .enumerate()
            .map(|(i, (label, color))| Series {
                label: label.into(),
                color,
                points: by_load
                    .iter()
                    .map(|p| (p.requests_per_s, of(p)[i]))
                    .collect(),
            })
            .collect(),
        bars: None,
        shade: None,
        markers: true,
    };
    vec![
        pareto,
        against_load("TTFT", |p| p.ttft_ms),
        against_load("TPOT", |p| p.tpot_ms),
        against_load("E2E latency", |p| p.e2e_ms),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_frontier_keeps_only_points_nothing_beats_on_both_axes() {
        let points = [
            (10.0, 100.0),
            (20.0, 90.0),
            (15.0, 80.0),
            (5.0, 150.0),
            (20.0, 50.0),
        ];
        assert_eq!(
            pareto_frontier(&points),
            vec![(5.0, 150.0), (10.0, 100.0), (20.0, 90.0)]
        );
        assert!(pareto_frontier(&[]).is_empty());
    }
}
