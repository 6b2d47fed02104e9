//! Dividing latencies: each sample's latency into its parts, and the parts at the percentiles
//! LoadGen reports (the mean of each part over the samples ranked around the percentile).

use serde::{Deserialize, Serialize};

use crate::loadgen::{SampleTimes, REPORTED_PERCENTILES};

use super::table::RecordedTimes;

/// Samples averaged at a percentile: those ranked within this fraction of the count either
/// side of its rank (at least the one at the rank), so one odd sample does not make the
/// division.
const WINDOW: f64 = 0.005;

/// One sample's latency (scheduled to completed) divided, in ns. A part not known is `None`:
/// without the handed-over time only `issue` is; without the plugin's times (or with times out
/// of order) the plugin's part is one, `plugin`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SampleParts {
    pub latency_ns: i64,
    pub issue_ns: i64,
    pub host_ns: Option<i64>,
    pub queue_ns: Option<i64>,
    pub prepare_ns: Option<i64>,
    pub compute_ns: Option<i64>,
    pub completion_ns: Option<i64>,
    pub plugin_ns: Option<i64>,
    /// The plugin reported times that do not keep the order handed ≤ dequeued ≤ compute
    /// start ≤ compute end ≤ completed.
    pub out_of_order: bool,
    pub lane: u32,
}

impl SampleParts {
    /// The parts of a completed sample, its host and plugin times converted from
    /// `CLOCK_MONOTONIC` by the test clock's `origin_ns`; `None` for one never completed.
    pub fn divide(sample: &SampleTimes, recorded: &RecordedTimes, origin_ns: i64) -> Option<Self> {
        let completed = sample.completed_ns?;
        let on_test_clock = |t: u64| (t != 0).then(|| t as i64 - origin_ns);
        let mut parts = SampleParts {
            latency_ns: completed - sample.scheduled_ns,
            issue_ns: sample.issued_ns - sample.scheduled_ns,
            lane: recorded.lane,
            ..SampleParts::default()
        };
        let Some(handed) = on_test_clock(recorded.handed_ns) else {
            return Some(parts);
        };
        parts.host_ns = Some(handed - sample.issued_ns);
        let dequeued = on_test_clock(recorded.dequeued_ns);
        let start = on_test_clock(recorded.compute_start_ns);
        let end = on_test_clock(recorded.compute_end_ns);
        let (Some(start), Some(end)) = (start, end) else {
            parts.plugin_ns = Some(completed - handed);
            parts.out_of_order = start.is_some() != end.is_some() || dequeued.is_some();
            return Some(parts);
        };
        let queue_end = dequeued.unwrap_or(start);
        if !(handed <= queue_end && queue_end <= start && start <= end && end <= completed) {
            parts.plugin_ns = Some(completed - handed);
            parts.out_of_order = true;
            return Some(parts);
        }
        parts.queue_ns = Some(queue_end - handed);
        parts.prepare_ns = dequeued.map(|d| start - d);
        parts.compute_ns = Some(end - start);
        parts.completion_ns = Some(completed - end);
        Some(parts)
    }
}

/// The mean of each part over some samples; a part none of them has is absent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Parts {
    pub issue_ns: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_ns: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_ns: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prepare_ns: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute_ns: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_ns: Option<i64>,
    /// Handed over to completed, for samples the plugin did not divide.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin_ns: Option<i64>,
}

impl Parts {
    fn mean_of(samples: &[SampleParts]) -> Parts {
        fn mean(values: impl Iterator<Item = i64>) -> Option<i64> {
            let (sum, count) = values.fold((0i128, 0i128), |(s, c), v| (s + i128::from(v), c + 1));
            (count > 0).then(|| (sum / count) as i64)
        }
        Parts {
            issue_ns: mean(samples.iter().map(|s| s.issue_ns)).unwrap_or(0),
            host_ns: mean(samples.iter().filter_map(|s| s.host_ns)),
            queue_ns: mean(samples.iter().filter_map(|s| s.queue_ns)),
            prepare_ns: mean(samples.iter().filter_map(|s| s.prepare_ns)),
            compute_ns: mean(samples.iter().filter_map(|s| s.compute_ns)),
            completion_ns: mean(samples.iter().filter_map(|s| s.completion_ns)),
            plugin_ns: mean(samples.iter().filter_map(|s| s.plugin_ns)),
        }
    }
}

/// The parts at one percentile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BreakdownAt {
    pub percentile: f64,
    /// The latency at the percentile's rank.
    pub latency_ns: i64,
    /// The samples averaged (ranked around it), and their mean latency, which the parts sum to
    /// when every one of them was divided alike.
    pub samples: u64,
    pub mean_latency_ns: i64,
    #[serde(flatten)]
    pub parts: Parts,
}

/// One instance's samples divided (a run over several devices).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceBreakdown {
    /// The instance's place among the run's (its device is result.json's `devices[lane]`).
    pub lane: u32,
    pub samples: u64,
    pub percentiles: Vec<BreakdownAt>,
}

/// result.json's `latency_breakdown`: a performance series' completed samples divided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyBreakdown {
    /// Completed samples divided: every one, or for a series of more than a million an even
    /// stride through it.
    pub samples: u64,
    /// Samples whose hand-over to the plugin the host noted.
    pub handed_over: u64,
    /// Samples the plugin's report divided into queue, compute and completion.
    pub timed: u64,
    /// Samples whose reported times were out of order (counted in `plugin_ns` instead).
    pub out_of_order: u64,
    pub mean: Parts,
    pub percentiles: Vec<BreakdownAt>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<DeviceBreakdown>,
}

impl LatencyBreakdown {
    /// The division of `samples` (completed ones), overall and, with `lanes` > 1, per lane.
    pub fn of(mut samples: Vec<SampleParts>, lanes: u32) -> Option<LatencyBreakdown> {
        if samples.is_empty() {
            return None;
        }
        samples.sort_by_key(|s| s.latency_ns);
        let devices = if lanes > 1 {
            (0..lanes)
                .map(|lane| {
                    let own: Vec<SampleParts> =
                        samples.iter().filter(|s| s.lane == lane).copied().collect();
                    DeviceBreakdown {
                        lane,
                        samples: own.len() as u64,
                        percentiles: at_percentiles(&own),
                    }
                })
                .collect()
        } else {
            Vec::new()
        };
        Some(LatencyBreakdown {
            samples: samples.len() as u64,
            handed_over: samples.iter().filter(|s| s.host_ns.is_some()).count() as u64,
            timed: samples.iter().filter(|s| s.compute_ns.is_some()).count() as u64,
            out_of_order: samples.iter().filter(|s| s.out_of_order).count() as u64,
            mean: Parts::mean_of(&samples),
            percentiles: at_percentiles(&samples),
            devices,
        })
    }
}

/// The parts at each reported percentile of `sorted` (by latency).
fn at_percentiles(sorted: &[SampleParts]) -> Vec<BreakdownAt> {
    if sorted.is_empty() {
        return Vec::new();
    }
    let n = sorted.len();
    let half_window = (n as f64 * WINDOW) as usize;
    REPORTED_PERCENTILES
        .iter()
        .map(|&percentile| {
            let rank = ((percentile * n as f64) as usize).min(n - 1);
            let window = &sorted[rank.saturating_sub(half_window)..(rank + half_window + 1).min(n)];
            BreakdownAt {
                percentile,
                latency_ns: sorted[rank].latency_ns,
                samples: window.len() as u64,
                mean_latency_ns: (window
                    .iter()
                    .map(|s| i128::from(s.latency_ns))
                    .sum::<i128>()
                    / window.len() as i128) as i64,
                parts: Parts::mean_of(window),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loadgen::ResponseId;

    const ORIGIN: i64 = 1_000_000;

    fn sample(scheduled: i64, issued: i64, completed: i64) -> SampleTimes {
        SampleTimes {
            id: ResponseId(1),
            index: 0,
            query_seq: 0,
            scheduled_ns: scheduled,
            issued_ns: issued,
            completed_ns: Some(completed),
        }
    }

    /// Times on the test clock, as the table holds them (monotonic).
    fn recorded(handed: i64, dequeued: i64, start: i64, end: i64) -> RecordedTimes {
        let mono = |t: i64| if t == 0 { 0 } else { (t + ORIGIN) as u64 };
        RecordedTimes {
            handed_ns: mono(handed),
            dequeued_ns: mono(dequeued),
            compute_start_ns: mono(start),
            compute_end_ns: mono(end),
            lane: 0,
        }
    }

    #[test]
    fn a_timed_sample_divides_into_parts_that_sum_to_its_latency() {
        let parts = SampleParts::divide(
            &sample(100, 110, 1000),
            &recorded(130, 300, 350, 900),
            ORIGIN,
        )
        .unwrap();
        assert_eq!(parts.latency_ns, 900);
        assert_eq!(parts.issue_ns, 10);
        assert_eq!(parts.host_ns, Some(20));
        assert_eq!(parts.queue_ns, Some(170));
        assert_eq!(parts.prepare_ns, Some(50));
        assert_eq!(parts.compute_ns, Some(550));
        assert_eq!(parts.completion_ns, Some(100));
        assert_eq!(parts.plugin_ns, None);
        let sum = parts.issue_ns
            + [
                parts.host_ns,
                parts.queue_ns,
                parts.prepare_ns,
                parts.compute_ns,
                parts.completion_ns,
            ]
            .iter()
            .flatten()
            .sum::<i64>();
        assert_eq!(sum, parts.latency_ns);
    }

    #[test]
    fn without_the_plugins_times_the_plugin_is_one_part() {
        let parts =
            SampleParts::divide(&sample(100, 110, 1000), &recorded(130, 0, 0, 0), ORIGIN).unwrap();
        assert_eq!((parts.host_ns, parts.plugin_ns), (Some(20), Some(870)));
        assert_eq!(parts.compute_ns, None);
        assert!(!parts.out_of_order);
        let parts =
            SampleParts::divide(&sample(100, 110, 1000), &recorded(0, 0, 0, 0), ORIGIN).unwrap();
        assert_eq!(
            (parts.issue_ns, parts.host_ns, parts.plugin_ns),
            (10, None, None)
        );
    }

    #[test]
    fn times_out_of_order_are_not_divided_and_are_counted() {
        // Compute ended after the completion arrived: a clock the host does not share.
        let parts = SampleParts::divide(
            &sample(100, 110, 1000),
            &recorded(130, 0, 200, 5000),
            ORIGIN,
        )
        .unwrap();
        assert!(parts.out_of_order);
        assert_eq!((parts.compute_ns, parts.plugin_ns), (None, Some(870)));
        let breakdown = LatencyBreakdown::of(vec![parts], 1).unwrap();
        assert_eq!((breakdown.out_of_order, breakdown.timed), (1, 0));
    }

    #[test]
    fn a_percentile_averages_the_samples_ranked_around_it() {
        // 1000 samples, latency i, compute = latency / 2.
        let samples = (0..1000)
            .map(|i| SampleParts {
                latency_ns: i,
                compute_ns: Some(i / 2),
                lane: (i % 2) as u32,
                ..SampleParts::default()
            })
            .rev()
            .collect();
        let breakdown = LatencyBreakdown::of(samples, 2).unwrap();
        let p90 = breakdown
            .percentiles
            .iter()
            .find(|p| p.percentile == 0.90)
            .unwrap();
        assert_eq!(p90.latency_ns, 900);
        // Ranks 895..=905.
        assert_eq!(p90.samples, 11);
        assert_eq!(p90.mean_latency_ns, 900);
        assert_eq!(p90.parts.compute_ns, Some(449));
        assert_eq!(breakdown.devices.len(), 2);
        assert_eq!(breakdown.devices[1].samples, 500);
        let last = breakdown.percentiles.last().unwrap();
        assert_eq!(last.latency_ns, 999);
        assert_eq!(last.samples, 6);
    }
}
