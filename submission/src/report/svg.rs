//! Inline SVG charts: lines and bars over linear axes with rounded ticks. No script, no
//! network: the report draws the same in any browser, offline.

use std::fmt::Write as _;

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 300.0;
const LEFT: f64 = 72.0;
const RIGHT: f64 = 16.0;
/// The title's row, then the legend's, above the plot.
const TOP: f64 = 44.0;
const LEGEND_Y: f64 = 36.0;
/// About the width of a character of the legend's 11 px text.
const LEGEND_CHAR: f64 = 6.2;
const BOTTOM: f64 = 46.0;

/// One line of a chart.
pub(super) struct Series {
    pub label: String,
    /// A CSS colour; the tests find each plot by its colour in a screenshot.
    pub color: &'static str,
    pub points: Vec<(f64, f64)>,
}

/// A chart: lines (or, with `bars`, one bar per point of the first series, each `bar_width`
/// wide in x units), an optional shaded x range.
pub(super) struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
    pub bars: Option<f64>,
    /// A shaded x range and its label (power: the run's window).
    pub shade: Option<(f64, f64, String)>,
    /// A dot at each point of each line (a sweep's points).
    pub markers: bool,
}

impl Chart {
    pub(super) fn to_svg(&self) -> String {
        let points = self.series.iter().flat_map(|s| s.points.iter());
        let (mut x_min, mut x_max, mut y_max) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
        for &(x, y) in points {
            x_min = x_min.min(x);
            x_max = x_max.max(x + self.bars.unwrap_or(0.0));
            y_max = y_max.max(y);
        }
        if let Some((from, to, _)) = &self.shade {
            x_min = x_min.min(*from);
            x_max = x_max.max(*to);
        }
        if !x_min.is_finite() {
            (x_min, x_max) = (0.0, 1.0);
        }
        if x_max <= x_min {
            x_max = x_min + 1.0;
        }
        let x_axis = Axis::new(x_min, x_max);
        // Headroom, so that a flat line (a constant power) does not run along the frame.
        let y_axis = Axis::new(0.0, if y_max > 0.0 { y_max * 1.05 } else { 1.0 });
        let plot_w = WIDTH - LEFT - RIGHT;
        let plot_h = HEIGHT - TOP - BOTTOM;
        let sx = |x: f64| LEFT + (x - x_axis.low) / (x_axis.high - x_axis.low) * plot_w;
        let sy = |y: f64| TOP + plot_h - (y - y_axis.low) / (y_axis.high - y_axis.low) * plot_h;

        let mut svg = format!(
            r#"<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" role="img"><title>{}</title>"#,
            escape(&self.title)
        );
        let _ = write!(
            svg,
            r#"<text x="{LEFT}" y="20" class="chart-title">{}</text>"#,
            escape(&self.title)
        );
        if let Some((from, to, label)) = &self.shade {
            let _ = write!(
                svg,
                r##"<rect x="{:.1}" y="{TOP}" width="{:.1}" height="{plot_h}" fill="#fde9c8"/><text x="{:.1}" y="{:.1}" class="note">{}</text>"##,
                sx(*from),
                (sx(*to) - sx(*from)).max(1.0),
                sx(*from) + 4.0,
                TOP + 14.0,
                escape(label)
            );
        }
        for tick in x_axis.ticks() {
            let x = sx(tick);
            let _ = write!(
                svg,
                r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#e4e4e4"/><text x="{x:.1}" y="{:.1}" text-anchor="middle" class="tick">{}</text>"##,
                TOP + plot_h,
                TOP + plot_h + 16.0,
                number(tick)
            );
        }
        for tick in y_axis.ticks() {
            let y = sy(tick);
            let _ = write!(
                svg,
                r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e4e4e4"/><text x="{:.1}" y="{:.1}" text-anchor="end" class="tick">{}</text>"##,
                LEFT + plot_w,
                LEFT - 6.0,
                y + 4.0,
                number(tick)
            );
        }
        let _ = write!(
            svg,
            r##"<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#888"/><text x="{:.1}" y="{:.1}" text-anchor="middle" class="label">{}</text><text transform="translate(16 {:.1}) rotate(-90)" text-anchor="middle" class="label">{}</text>"##,
            LEFT + plot_w / 2.0,
            HEIGHT - 8.0,
            escape(&self.x_label),
            TOP + plot_h / 2.0,
            escape(&self.y_label)
        );
        for (n, series) in self.series.iter().enumerate() {
            match self.bars {
                Some(width) if n == 0 => {
                    for &(x, y) in &series.points {
                        let (left, right) = (sx(x), sx(x + width));
                        let _ = write!(
                            svg,
                            r#"<rect x="{left:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{}"/>"#,
                            sy(y),
                            (right - left - 0.5).max(1.0),
                            sy(0.0) - sy(y),
                            series.color
                        );
                    }
                }
                _ => {
                    let path: Vec<String> = series
                        .points
                        .iter()
                        .map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(y)))
                        .collect();
                    let _ = write!(
                        svg,
                        r#"<polyline fill="none" stroke="{}" stroke-width="2.5" points="{}"/>"#,
                        series.color,
                        path.join(" ")
                    );
                    if self.markers {
                        for &(x, y) in &series.points {
                            let _ = write!(
                                svg,
                                r#"<circle cx="{:.1}" cy="{:.1}" r="4" fill="{}"/>"#,
                                sx(x),
                                sy(y),
                                series.color
                            );
                        }
                    }
                }
            }
        }
        // The legend in one row above the plot, ending at its right edge: never over a point.
        let mut legend_x = LEFT + plot_w;
        for series in self.series.iter().rev() {
            legend_x -= 16.0 + LEGEND_CHAR * series.label.chars().count() as f64;
            let _ = write!(
                svg,
                r#"<rect x="{legend_x:.1}" y="{:.1}" width="12" height="8" fill="{}"/><text x="{:.1}" y="{LEGEND_Y:.1}" class="legend">{}</text>"#,
                LEGEND_Y - 8.0,
                series.color,
                legend_x + 16.0,
                escape(&series.label)
            );
            legend_x -= 12.0;
        }
        svg.push_str("</svg>");
        svg
    }
}

/// An axis from `low` to `high`, widened to whole ticks.
struct Axis {
    low: f64,
    high: f64,
    step: f64,
}

impl Axis {
    fn new(low: f64, high: f64) -> Axis {
        let raw = (high - low) / 5.0;
        let magnitude = 10f64.powf(raw.log10().floor());
        let step = [1.0, 2.0, 5.0, 10.0]
            .into_iter()
            .map(|m| m * magnitude)
            .find(|step| *step >= raw)
            .unwrap_or(10.0 * magnitude);
        Axis {
            low: (low / step).floor() * step,
            high: (high / step).ceil() * step,
            step,
        }
    }

    fn ticks(&self) -> Vec<f64> {
        let count = ((self.high - self.low) / self.step).round() as usize;
        (0..=count)
            .map(|i| self.low + i as f64 * self.step)
            .collect()
    }
}

/// A tick label: short, without float noise.
fn number(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude != 0.0 && !(1e-3..1e6).contains(&magnitude) {
        format!("{value:.1e}")
    } else {
        let text = format!("{:.3}", value);
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Text for HTML and SVG.
pub(super) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_data() {
        let axis = Axis::new(0.0, 1_013_803.0);
        assert_eq!(axis.step, 500_000.0);
        assert_eq!(axis.ticks(), vec![0.0, 500_000.0, 1_000_000.0, 1_500_000.0]);
        let axis = Axis::new(0.2, 0.93);
        assert_eq!(axis.step, 0.2);
        assert!(axis.high >= 0.93 && axis.low <= 0.2);
        assert_eq!(number(0.30000000000000004), "0.3");
        assert_eq!(number(2.5e7), "2.5e7");
    }

    #[test]
    fn a_chart_draws_every_series_and_escapes_text() {
        let chart = Chart {
            title: "Latency <p99>".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            series: vec![
                Series {
                    label: "a".into(),
                    color: "#123456",
                    points: vec![(0.0, 1.0), (1.0, 2.0)],
                },
                Series {
                    label: "b".into(),
                    color: "#654321",
                    points: vec![(0.0, 3.0)],
                },
            ],
            bars: None,
            shade: Some((0.2, 0.8, "window".into())),
            markers: true,
        };
        let svg = chart.to_svg();
        assert!(svg.contains("Latency &lt;p99&gt;"));
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains(r##"stroke="#123456""##));
        assert!(svg.contains("window"));
        assert_eq!(svg.matches("<circle").count(), 3);
    }
}
