//! A point's figures from its records, over a window of it: the requests sent inside the
//! window count, and rates are per second of the window.

use mlperf_loadgen::early_stopping::percentile_estimate;

use crate::gaps::TokenGap;
use crate::records::RequestRecord;

/// A latency's spread, in nanoseconds (percentiles at LoadGen's rank: the value at
/// `floor(p * n)` of the sorted samples), with LoadGen's early-stopping estimate beside each.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Distribution {
    pub count: usize,
    pub min: f64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
    pub estimates: EarlyStoppingEstimates,
}

/// What each percentile is, at most, with 99 % confidence, from this many samples (LoadGen's
/// early-stopping estimate, as its SingleStream results give it): None where the samples are
/// too few for any estimate (661 for the 99th percentile).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EarlyStoppingEstimates {
    pub p50: Option<f64>,
    pub p90: Option<f64>,
    pub p95: Option<f64>,
    pub p99: Option<f64>,
}

impl Distribution {
    pub fn of(mut values: Vec<f64>) -> Distribution {
        if values.is_empty() {
            return Distribution::default();
        }
        values.sort_unstable_by(f64::total_cmp);
        let n = values.len();
        let at = |p: f64| values[((p * n as f64) as usize).min(n - 1)];
        let estimate = |p: f64| {
            percentile_estimate(n as u64, p)
                .index()
                .map(|index| values[index.min(n - 1)])
        };
        Distribution {
            count: n,
            min: values[0],
            mean: values.iter().sum::<f64>() / n as f64,
            p50: at(0.5),
            p90: at(0.9),
            p95: at(0.95),
            p99: at(0.99),
            max: values[n - 1],
            estimates: EarlyStoppingEstimates {
                p50: estimate(0.5),
                p90: estimate(0.9),
                p95: estimate(0.95),
                p99: estimate(0.99),
            },
        }
    }
}

/// Service levels a request must meet to count toward goodput (each optional), in ns.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Slo {
    pub ttft_ns: Option<f64>,
    pub tpot_ns: Option<f64>,
    pub e2e_ns: Option<f64>,
}

/// A point's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct PointSummary {
    pub window_s: f64,
    /// Requests sent in the window that were answered, failed, or never ended.
    pub completed: usize,
    pub failed: usize,
    pub unfinished: usize,
    pub requests_per_s: f64,
    pub output_tokens_per_s: f64,
    /// Prompt tokens of the answered requests, per second (0 when the target counts none).
    pub input_tokens_per_s: f64,
    /// Tokens per answered request: the prompt's (where counted) and the answer's.
    pub input_tokens: Distribution,
    pub output_tokens: Distribution,
    /// Answers whose tokens the client counted, and of those, how many differ from the
    /// target's own count (an LLM server's usage).
    pub tokens_counted: usize,
    pub token_count_mismatches: usize,
    /// Each answered request's output tokens over its generation time, averaged.
    pub tokens_per_s_per_user: f64,
    /// Requests in flight, averaged over the window, and at most.
    pub mean_concurrency: f64,
    pub max_concurrency: usize,
    pub ttft: Distribution,
    /// Per request: (end − first token) / (output tokens − 1), for requests of 2+ tokens.
    pub tpot: Distribution,
    /// The gaps between streamed pieces of the answers, pooled over requests (as vLLM's bench
    /// serve gives ITL): none when the target reports only first tokens and ends.
    pub itl: Distribution,
    pub e2e: Distribution,
    /// How late requests were sent after they were due (a concurrency cap, or an issue
    /// thread that could not keep up).
    pub send_lateness: Distribution,
    /// Answered requests meeting every SLO, per second of the window.
    pub goodput_per_s: f64,
}

/// The answered requests' values over a window, each series in request order (for files
/// that keep whole distributions, as MLPerf Endpoints' result summary does).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    /// Requests sent in the window, and of those, failed ones and ones never ended.
    pub issued: usize,
    pub failed: usize,
    pub unfinished: usize,
    /// ns.
    pub ttft: Vec<f64>,
    pub tpot: Vec<f64>,
    pub e2e: Vec<f64>,
    /// Tokens (input: where counted).
    pub input_tokens: Vec<f64>,
    pub output_tokens: Vec<f64>,
}

/// The series of the requests sent in `[from_ns, to_ns)`.
pub fn series(records: &[RequestRecord], from_ns: i64, to_ns: i64) -> Series {
    let inside = records.iter().filter(|r| r.sent_in(from_ns, to_ns));
    let mut series = Series::default();
    for r in inside {
        series.issued += 1;
        match r.completed_ns {
            None => series.unfinished += 1,
            Some(_) if r.failed => series.failed += 1,
            Some(_) => {
                series.ttft.extend(r.ttft_ns());
                series.tpot.extend(r.tpot_ns());
                series.e2e.extend(r.e2e_ns());
                series.input_tokens.extend(r.input_tokens.map(|n| n as f64));
                series.output_tokens.push(r.output_tokens as f64);
            }
        }
    }
    series
}

/// The figures of the requests sent in `[from_ns, to_ns)`; `records` in id order (as a
/// [`crate::PointRun`] has them), `gaps` naming requests by id.
pub fn summarize(
    records: &[RequestRecord],
    gaps: &[TokenGap],
    from_ns: i64,
    to_ns: i64,
    slo: &Slo,
) -> PointSummary {
    let window_ns = (to_ns - from_ns).max(1);
    let window_s = window_ns as f64 / 1e9;
    let inside: Vec<&RequestRecord> = records
        .iter()
        .filter(|r| r.sent_in(from_ns, to_ns))
        .collect();
    let answered: Vec<&RequestRecord> = inside
        .iter()
        .copied()
        .filter(|r| r.completed_ns.is_some() && !r.failed)
        .collect();
    let per_user: Vec<f64> = answered
        .iter()
        .filter_map(|r| {
            let generating = (r.completed_ns? - r.first_token_ns.unwrap_or(r.sent_ns)) as f64;
            (generating > 0.0).then(|| r.output_tokens as f64 / (generating / 1e9))
        })
        .collect();
    let meets = |r: &&RequestRecord| {
        slo.ttft_ns
            .is_none_or(|bound| r.ttft_ns().is_some_and(|t| t <= bound))
            && slo
                .tpot_ns
                .is_none_or(|bound| r.tpot_ns().is_none_or(|t| t <= bound))
            && slo
                .e2e_ns
                .is_none_or(|bound| r.e2e_ns().is_some_and(|t| t <= bound))
    };
    let (mean_concurrency, max_concurrency) = concurrency(records, from_ns, to_ns);
    PointSummary {
        window_s,
        completed: answered.len(),
        failed: inside
            .iter()
            .filter(|r| r.completed_ns.is_some() && r.failed)
            .count(),
        unfinished: inside.iter().filter(|r| r.completed_ns.is_none()).count(),
        requests_per_s: answered.len() as f64 / window_s,
        output_tokens_per_s: answered.iter().map(|r| r.output_tokens).sum::<u64>() as f64
            / window_s,
        input_tokens_per_s: answered.iter().filter_map(|r| r.input_tokens).sum::<u64>() as f64
            / window_s,
        input_tokens: Distribution::of(
            answered
                .iter()
                .filter_map(|r| r.input_tokens.map(|n| n as f64))
                .collect(),
        ),
        output_tokens: Distribution::of(answered.iter().map(|r| r.output_tokens as f64).collect()),
        tokens_counted: answered
            .iter()
            .filter(|r| r.counted_tokens.is_some())
            .count(),
        token_count_mismatches: answered
            .iter()
            .filter(|r| r.counted_tokens.is_some_and(|n| n != r.output_tokens))
            .count(),
        tokens_per_s_per_user: match per_user.len() {
            0 => 0.0,
            n => per_user.iter().sum::<f64>() / n as f64,
        },
        mean_concurrency,
        max_concurrency,
        ttft: Distribution::of(answered.iter().filter_map(|r| r.ttft_ns()).collect()),
        tpot: Distribution::of(answered.iter().filter_map(|r| r.tpot_ns()).collect()),
        itl: Distribution::of(
            gaps.iter()
                .filter(|gap| {
                    records.get(gap.request).is_some_and(|r| {
                        r.sent_in(from_ns, to_ns) && r.completed_ns.is_some() && !r.failed
                    })
                })
                .map(|gap| gap.gap_ns as f64)
                .collect(),
        ),
        e2e: Distribution::of(answered.iter().filter_map(|r| r.e2e_ns()).collect()),
        send_lateness: Distribution::of(
            inside
                .iter()
                .map(|r| (r.sent_ns - r.scheduled_ns) as f64)
                .collect(),
        ),
        goodput_per_s: answered.iter().filter(|r| meets(r)).count() as f64 / window_s,
    }
}

/// Requests in flight over `[from_ns, to_ns)`: the time average, and the most at once.
fn concurrency(records: &[RequestRecord], from_ns: i64, to_ns: i64) -> (f64, usize) {
    let mut events: Vec<(i64, i32)> = Vec::with_capacity(records.len() * 2);
    let mut busy_ns = 0i128;
    for r in records {
        let end = r.completed_ns.unwrap_or(to_ns);
        let (start, end) = (r.sent_ns.max(from_ns), end.min(to_ns));
        if start < end {
            busy_ns += (end - start) as i128;
            events.push((start, 1));
            events.push((end, -1));
        }
    }
    // Ends before starts at the same instant: a request that replaces one is not counted twice.
    events.sort_unstable();
    let (mut now, mut most) = (0i64, 0i64);
    for (_, step) in events {
        now += i64::from(step);
        most = most.max(now);
    }
    let window = (to_ns - from_ns).max(1) as f64;
    (busy_ns as f64 / window, most as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(sent: i64, first: i64, end: i64, tokens: u64) -> RequestRecord {
        RequestRecord {
            scheduled_ns: sent,
            sent_ns: sent,
            first_token_ns: Some(first),
            completed_ns: Some(end),
            output_tokens: tokens,
            input_tokens: None,
            counted_tokens: None,
            failed: false,
        }
    }

    #[test]
    fn figures_of_known_requests() {
        // Two requests in a 1 s window, each 10 tokens: 100 ms to the first token, then
        // 9 more over 90 ms (10 ms a token); they overlap for 100 ms.
        let ms = 1_000_000;
        let records = [
            request(0, 100 * ms, 190 * ms, 10),
            request(90 * ms, 190 * ms, 280 * ms, 10),
            // Sent after the window: not counted, but in flight inside it.
            request(1_000 * ms, 1_100 * ms, 1_190 * ms, 10),
        ];
        let slo = Slo {
            ttft_ns: Some(100.0 * ms as f64),
            ..Slo::default()
        };
        let gaps = [
            TokenGap {
                request: 0,
                gap_ns: 8 * ms,
            },
            TokenGap {
                request: 1,
                gap_ns: 12 * ms,
            },
            // A request sent after the window: its gaps do not count.
            TokenGap {
                request: 2,
                gap_ns: 50 * ms,
            },
        ];
        let summary = summarize(&records, &gaps, 0, 1_000 * ms, &slo);
        assert_eq!(summary.completed, 2);
        assert_eq!(summary.requests_per_s, 2.0);
        assert_eq!(summary.output_tokens_per_s, 20.0);
        assert_eq!(summary.ttft.mean, 100.0 * ms as f64);
        assert_eq!(summary.tpot.p99, 10.0 * ms as f64);
        assert_eq!(summary.itl.count, 2);
        assert_eq!(summary.itl.mean, 10.0 * ms as f64);
        assert_eq!(summary.itl.max, 12.0 * ms as f64);
        assert_eq!(summary.e2e.max, 190.0 * ms as f64);
        // 10 tokens over 90 ms of generation each.
        assert!((summary.tokens_per_s_per_user - 10.0 / 0.09).abs() < 1e-6);
        assert!((summary.mean_concurrency - 0.38).abs() < 1e-9);
        assert_eq!(summary.max_concurrency, 2);
        assert_eq!(summary.goodput_per_s, 2.0);
        let strict = Slo {
            e2e_ns: Some(189.0 * ms as f64),
            ..Slo::default()
        };
        assert_eq!(
            summarize(&records, &gaps, 0, 1_000 * ms, &strict).goodput_per_s,
            0.0
        );
    }

    #[test]
    fn percentiles_are_at_loadgens_rank() {
        let d = Distribution::of((1..=100).map(f64::from).collect());
        assert_eq!((d.p50, d.p90, d.p99, d.max), (51.0, 91.0, 100.0, 100.0));
        assert_eq!(Distribution::of(Vec::new()).count, 0);
    }

    #[test]
    fn early_stopping_estimates_need_enough_samples_and_lie_above_the_percentile() {
        // LoadGen's estimate of a 99th percentile needs 662 samples; of a 90th, 64.
        let few = Distribution::of((1..=661).map(f64::from).collect());
        assert_eq!(few.estimates.p99, None);
        assert!(few.estimates.p90.is_some());
        let many = Distribution::of((1..=10_000).map(f64::from).collect());
        // Values are their ranks: the estimate lies above the percentile by about 2.3
        // standard deviations of a binomial count (99 % one-sided), never below it.
        for (p, percentile, estimate) in [
            (0.5f64, many.p50, many.estimates.p50),
            (0.9, many.p90, many.estimates.p90),
            (0.99, many.p99, many.estimates.p99),
        ] {
            let estimate = estimate.expect("enough samples");
            let sd = (10_000.0 * p * (1.0 - p)).sqrt();
            assert!(estimate >= percentile + sd, "{estimate} vs {percentile}");
            assert!(
                estimate <= percentile + 3.0 * sd,
                "{estimate} vs {percentile}"
            );
        }
    }
}
