//! result.json's `latency_breakdown` (a run that divided its latencies, `--sample-timing`):
//! read back, and drawn as a stacked bar per percentile, how each latency divides into
//! LoadGen's issue, the host's part and the plugin's queue, preparation, compute and
//! completion.

use std::fmt::Write as _;

use serde_json::Value;

use super::svg::escape;

/// The parts in the order they happen, with their colours.
const PARTS: [(&str, &str, &str); 7] = [
    ("issue_ns", "issue", "#9e9e9e"),
    ("host_ns", "host", "#5c6bc0"),
    ("queue_ns", "queue", "#ffa726"),
    ("prepare_ns", "prepare", "#ffee58"),
    ("compute_ns", "compute", "#43a047"),
    ("completion_ns", "completion", "#26c6da"),
    ("plugin_ns", "plugin (undivided)", "#ef5350"),
];

/// The parts at one percentile: (percentile, mean latency ns, [part ns or 0]).
pub struct BreakdownRow {
    pub percentile: f64,
    pub latency_ns: f64,
    pub parts: [f64; PARTS.len()],
}

/// A run's division: overall, and per device for a run over several.
pub struct Breakdown {
    pub samples: u64,
    pub timed: u64,
    pub out_of_order: u64,
    pub overall: Vec<BreakdownRow>,
    /// (lane, rows).
    pub devices: Vec<(u64, Vec<BreakdownRow>)>,
}

/// Reads result.json's `latency_breakdown`; none when it has none.
pub(super) fn read(result: &Value) -> Option<Breakdown> {
    let breakdown = result.get("latency_breakdown")?;
    let rows = |list: &Value| -> Vec<BreakdownRow> {
        list.as_array()
            .into_iter()
            .flatten()
            .filter_map(|at| {
                let mut parts = [0.0; PARTS.len()];
                for (slot, (key, _, _)) in parts.iter_mut().zip(PARTS) {
                    *slot = at.get(key).and_then(Value::as_f64).unwrap_or(0.0).max(0.0);
                }
                Some(BreakdownRow {
                    percentile: at.get("percentile")?.as_f64()?,
                    latency_ns: at.get("mean_latency_ns")?.as_f64()?,
                    parts,
                })
            })
            .collect()
    };
    Some(Breakdown {
        samples: breakdown.get("samples")?.as_u64()?,
        timed: breakdown.get("timed")?.as_u64()?,
        out_of_order: breakdown
            .get("out_of_order")
            .and_then(Value::as_u64)
            .unwrap_or(0),
        overall: rows(breakdown.get("percentiles")?),
        devices: breakdown
            .get("devices")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|d| Some((d.get("lane")?.as_u64()?, rows(d.get("percentiles")?))))
            .collect(),
    })
}

/// The section: a chart for the run, and one per device.
pub(super) fn to_html(breakdown: &Breakdown, device_names: &[String]) -> String {
    let mut html = String::from("<h3>Where the latency goes</h3>");
    let _ = write!(
        html,
        "<p class=\"note\">{} samples, {} divided by the plugin's own timing{}; each bar is the mean of the samples ranked within 0.5 % of the percentile.</p>",
        breakdown.samples,
        breakdown.timed,
        if breakdown.out_of_order > 0 {
            format!(", {} with times out of order", breakdown.out_of_order)
        } else {
            String::new()
        }
    );
    html.push_str(&legend());
    html.push_str(&chart("all samples", &breakdown.overall));
    for (lane, rows) in &breakdown.devices {
        let name = device_names
            .get(*lane as usize)
            .cloned()
            .unwrap_or_else(|| format!("instance {lane}"));
        html.push_str(&chart(&name, rows));
    }
    html
}

fn legend() -> String {
    let mut html = String::from("<p class=\"legend\">");
    for (_, label, colour) in PARTS {
        let _ = write!(
            html,
            "<span style=\"display:inline-block;width:10px;height:10px;background:{colour}\"></span> {label} &nbsp; "
        );
    }
    html.push_str("</p>");
    html
}

/// One horizontal stacked bar per percentile, on a common scale.
fn chart(title: &str, rows: &[BreakdownRow]) -> String {
    const WIDTH: f64 = 560.0;
    const LABEL: f64 = 70.0;
    const BAR: f64 = 16.0;
    const GAP: f64 = 6.0;
    let scale = rows
        .iter()
        .map(|r| r.parts.iter().sum::<f64>().max(r.latency_ns))
        .fold(0.0, f64::max);
    if scale <= 0.0 {
        return String::new();
    }
    let height = 24.0 + rows.len() as f64 * (BAR + GAP);
    let mut svg = format!(
        "<svg class=\"breakdown\" width=\"{}\" height=\"{height}\" viewBox=\"0 0 {} {height}\"><text x=\"0\" y=\"14\" font-size=\"12\">{}</text>",
        LABEL + WIDTH + 90.0,
        LABEL + WIDTH + 90.0,
        escape(title)
    );
    for (k, row) in rows.iter().enumerate() {
        let y = 22.0 + k as f64 * (BAR + GAP);
        let _ = write!(
            svg,
            "<text x=\"0\" y=\"{}\" font-size=\"11\">p{}</text>",
            y + BAR - 4.0,
            row.percentile * 100.0
        );
        let mut x = LABEL;
        for (value, (_, label, colour)) in row.parts.iter().zip(PARTS) {
            if *value <= 0.0 {
                continue;
            }
            let width = value / scale * WIDTH;
            let _ = write!(
                svg,
                "<rect x=\"{x:.1}\" y=\"{y}\" width=\"{width:.1}\" height=\"{BAR}\" fill=\"{colour}\"><title>{label}: {}</title></rect>",
                nanos(*value)
            );
            x += width;
        }
        let _ = write!(
            svg,
            "<text x=\"{:.1}\" y=\"{}\" font-size=\"11\">{}</text>",
            x + 4.0,
            y + BAR - 4.0,
            nanos(row.latency_ns)
        );
    }
    svg.push_str("</svg>");
    svg
}

fn nanos(ns: f64) -> String {
    match ns {
        n if n >= 1e9 => format!("{:.2} s", n / 1e9),
        n if n >= 1e6 => format!("{:.2} ms", n / 1e6),
        n if n >= 1e3 => format!("{:.1} us", n / 1e3),
        n => format!("{n:.0} ns"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_breakdown_is_read_and_each_known_part_drawn() {
        let result: Value = serde_json::json!({
            "latency_breakdown": {
                "samples": 10, "handed_over": 10, "timed": 10, "out_of_order": 0,
                "mean": {"issue_ns": 1},
                "percentiles": [
                    {"percentile": 0.5, "latency_ns": 1000, "samples": 1, "mean_latency_ns": 1000,
                     "issue_ns": 100, "host_ns": 100, "queue_ns": 200, "compute_ns": 500,
                     "completion_ns": 100}
                ],
                "devices": [{"lane": 1, "samples": 5, "percentiles": []}]
            }
        });
        let breakdown = read(&result).unwrap();
        assert_eq!(breakdown.overall.len(), 1);
        assert_eq!(breakdown.overall[0].parts[4], 500.0);
        assert_eq!(breakdown.devices[0].0, 1);
        let html = to_html(&breakdown, &["0 (a)".into(), "1 (b)".into()]);
        assert!(html.contains("<title>compute: 500 ns</title>"), "{html}");
        assert!(
            !html.contains("<title>prepare"),
            "absent parts are not drawn"
        );
        assert!(read(&serde_json::json!({})).is_none());
    }
}
