//! The over-saturation stop: a point whose requests pile up faster than the server answers
//! them is ended early (its figures would only measure the queue), with the reason.
//!
//! Watched from its own thread, never the issue thread: every `check_every`, the requests
//! in flight, how late the last arrival was sent, and the median time to first token of the
//! requests sent since the last check (a request still waiting counts its wait so far).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mlperf_loadgen::monotonic_ns;

use crate::records::RequestRecords;

/// When a point counts as over-saturated: judged at each check once `min_checks` were made,
/// over all the point's checks so far, so that a slow server (a request a second) is judged
/// over enough of them to tell a growing pile from a queue that merely fluctuates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SaturationRule {
    pub check_every: Duration,
    pub min_checks: usize,
    /// With uncapped arrivals: the median TTFT of the last quarter of the checks, against
    /// that of the first quarter, at least this many times higher.
    pub ttft_growth: f64,
}

impl Default for SaturationRule {
    fn default() -> SaturationRule {
        SaturationRule {
            check_every: Duration::from_millis(500),
            min_checks: 8,
            ttft_growth: 2.0,
        }
    }
}

/// What one check saw.
#[derive(Clone, Copy)]
struct Check {
    in_flight: usize,
    lateness_ns: i64,
    /// Median TTFT of the first tokens since the check before (or the longest wait so far);
    /// None if nothing came and nothing waits.
    ttft_ns: Option<f64>,
}

/// Watches `records` until `done` (the issue thread ended) and returns why the point is
/// over-saturated, having set `stop`, or None.
pub(crate) fn watch(
    records: &RequestRecords,
    rule: &SaturationRule,
    capped: bool,
    done: &AtomicBool,
    stop: &AtomicBool,
) -> Option<String> {
    let start_ns = monotonic_ns();
    let mut checks: Vec<Check> = Vec::new();
    let (mut oldest, mut last_ns) = (0usize, start_ns);
    loop {
        if sleep_unless(done, rule.check_every) {
            return None;
        }
        let now = monotonic_ns();
        let mut ttft = records.ttft_since(&mut oldest, last_ns, now);
        last_ns = now;
        checks.push(Check {
            in_flight: records.in_flight(),
            lateness_ns: records.last_lateness_ns(),
            ttft_ns: median(&mut ttft),
        });
        if let Some(reason) = verdict(&checks, rule, capped) {
            stop.store(true, Ordering::Relaxed);
            return Some(format!(
                "over-saturated after {:.1} s: {reason}",
                (now - start_ns) as f64 / 1e9
            ));
        }
    }
}

/// Sleeps for `period` in short steps; true as soon as `done` is set.
fn sleep_unless(done: &AtomicBool, period: Duration) -> bool {
    let end = monotonic_ns() + period.as_nanos() as i64;
    loop {
        if done.load(Ordering::Relaxed) {
            return true;
        }
        let left = end - monotonic_ns();
        if left <= 0 {
            return false;
        }
        std::thread::sleep(Duration::from_nanos(left.min(10_000_000) as u64));
    }
}

fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_unstable_by(f64::total_cmp);
    Some(values[values.len() / 2])
}

/// Uncapped: requests in flight grow (a fitted slope above zero by two standard errors,
/// the pile up by at least 3 requests and by as many as the first quarter's level) while TTFT
/// grew `ttft_growth` times. Capped (the pile waits in the client, not the server): arrivals
/// sent later and later, by more than two periods over the point.
fn verdict(checks: &[Check], rule: &SaturationRule, capped: bool) -> Option<String> {
    let n = checks.len();
    if n < rule.min_checks.max(4) {
        return None;
    }
    let quarter = n / 4;
    let ms = |ns: f64| ns / 1e6;
    let period = rule.check_every.as_secs_f64();
    if capped {
        let lateness: Vec<f64> = checks.iter().map(|c| c.lateness_ns as f64).collect();
        let (slope, error) = fitted_slope(&lateness);
        let grew = slope * (n - 1) as f64;
        let enough = 2.0 * rule.check_every.as_nanos() as f64;
        return (slope - 2.0 * error > 0.0 && grew >= enough).then(|| {
            format!(
                "arrivals sent later and later, {:.0} ms late by now ({:.0} ms more per second), \
                 held back by the concurrency cap",
                ms(lateness[n - 1]),
                ms(slope / period)
            )
        });
    }
    let in_flight: Vec<f64> = checks.iter().map(|c| c.in_flight as f64).collect();
    let (slope, error) = fitted_slope(&in_flight);
    let grew = slope * (n - 1) as f64;
    let early_level = mean(&in_flight[..quarter]);
    let ttft = |part: &[Check]| {
        let mut medians: Vec<f64> = part.iter().filter_map(|c| c.ttft_ns).collect();
        median(&mut medians)
    };
    let (early, late) = (ttft(&checks[..quarter])?, ttft(&checks[n - quarter..])?);
    let piling = slope - 2.0 * error > 0.0 && grew >= early_level.max(3.0);
    (piling && late >= rule.ttft_growth * early.max(1.0)).then(|| {
        format!(
            "{} requests in flight and rising ({:.1} more per second), TTFT p50 {:.1} ms \
             against {:.1} ms at first",
            checks[n - 1].in_flight,
            slope / period,
            ms(late),
            ms(early)
        )
    })
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len().max(1) as f64
}

/// The least-squares slope of `values` against their position, and its standard error.
fn fitted_slope(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let x_mean = (n - 1.0) / 2.0;
    let y_mean = mean(values);
    let sxx: f64 = (0..values.len()).map(|i| (i as f64 - x_mean).powi(2)).sum();
    let sxy: f64 = values
        .iter()
        .enumerate()
        .map(|(i, y)| (i as f64 - x_mean) * (y - y_mean))
        .sum();
    let slope = sxy / sxx;
    let residuals: f64 = values
        .iter()
        .enumerate()
        .map(|(i, y)| (y - y_mean - slope * (i as f64 - x_mean)).powi(2))
        .sum();
    let error = (residuals / (n - 2.0).max(1.0) / sxx).sqrt();
    (slope, error)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(in_flight: usize, lateness_ms: i64, ttft_ms: f64) -> Check {
        Check {
            in_flight,
            lateness_ns: lateness_ms * 1_000_000,
            ttft_ns: Some(ttft_ms * 1e6),
        }
    }

    fn checks(points: &[(usize, i64, f64)]) -> Vec<Check> {
        points
            .iter()
            .map(|&(q, late, ttft)| check(q, late, ttft))
            .collect()
    }

    #[test]
    fn a_growing_pile_and_a_slower_first_token_together_are_saturation() {
        let rule = SaturationRule::default();
        // One more in flight per check, with noise; TTFT from 10 ms to 60 ms.
        let piling: Vec<(usize, i64, f64)> = (0..10)
            .map(|i| (2 + i + (i % 3), 0, 10.0 + 5.0 * i as f64))
            .collect();
        let reason = verdict(&checks(&piling), &rule, false).expect("saturated");
        assert!(
            reason.starts_with("11 requests in flight and rising"),
            "{reason}"
        );
        // The same pile with a TTFT that did not double is not.
        let calm: Vec<_> = piling.iter().map(|&(q, l, _)| (q, l, 10.0)).collect();
        assert_eq!(verdict(&checks(&calm), &rule, false), None);
        // A queue that fluctuates around 5 (TTFT as above) is not.
        let fluctuating: Vec<_> = piling
            .iter()
            .enumerate()
            .map(|(i, &(_, l, t))| (5 + [0, 3, 1, 4, 0, 2, 4, 1, 3, 0][i], l, t))
            .collect();
        assert_eq!(verdict(&checks(&fluctuating), &rule, false), None);
        // Too few checks yet.
        assert_eq!(verdict(&checks(&piling[..7]), &rule, false), None);
    }

    #[test]
    fn a_capped_point_saturates_when_arrivals_fall_further_behind() {
        let rule = SaturationRule::default();
        // 20 ms later at each 500 ms check: 180 ms behind after 10 checks, not yet.
        let behind: Vec<_> = (0..10).map(|i| (4, 20 * i as i64, 5.0)).collect();
        assert!(verdict(&checks(&behind), &rule, true).is_none());
        let further: Vec<_> = (0..10).map(|i| (4, 500 * i as i64, 5.0)).collect();
        let reason = verdict(&checks(&further), &rule, true).expect("saturated");
        assert!(
            reason.contains("held back by the concurrency cap"),
            "{reason}"
        );
        // Late but not falling further behind.
        let steady: Vec<_> = (0..10)
            .map(|i| (4, 400 + 30 * (i % 2) as i64, 5.0))
            .collect();
        assert_eq!(verdict(&checks(&steady), &rule, true), None);
    }
}
