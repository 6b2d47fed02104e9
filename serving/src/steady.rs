//! Which part of a point's measured window counts: the window is cut into equal bins, the
//! second half of them is the reference (where a point has settled, if it ever does), and
//! leading bins whose completions or requests in flight differ from it by more than chance
//! allows are dropped (a server still warming up, caches filling, a queue building).

use crate::records::RequestRecord;

/// How a window is judged.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SteadyRule {
    /// Bins the window is cut into (at least 4).
    pub bins: usize,
    /// How far a bin may stray from the reference, as a fraction of it, beyond the counting
    /// noise (3 standard deviations of a Poisson count, or of a mean of requests in flight).
    pub tolerance: f64,
}

impl Default for SteadyRule {
    fn default() -> SteadyRule {
        SteadyRule {
            bins: 10,
            tolerance: 0.15,
        }
    }
}

/// The verdict on a window.
#[derive(Debug, Clone, PartialEq)]
pub struct SteadyState {
    /// The part that counts: from the first steady bin to the window's end.
    pub from_ns: i64,
    pub to_ns: i64,
    /// Leading bins dropped.
    pub dropped_bins: usize,
    pub bins: usize,
    /// False when the reference half itself is not steady: the whole window is kept then,
    /// and the figures are of a point that never settled.
    pub steady: bool,
    /// Why, in a sentence.
    pub reason: String,
}

/// One bin's load: answers ending in it, and requests in flight on average.
#[derive(Debug, Clone, Copy)]
struct Bin {
    completions: f64,
    in_flight: f64,
}

/// Judges `[from_ns, to_ns)` of a point's records.
pub fn steady_window(
    records: &[RequestRecord],
    from_ns: i64,
    to_ns: i64,
    rule: &SteadyRule,
) -> SteadyState {
    let count = rule.bins.max(4);
    let width = ((to_ns - from_ns) / count as i64).max(1);
    let edges: Vec<i64> = (0..=count).map(|i| from_ns + i as i64 * width).collect();
    let bins: Vec<Bin> = edges.windows(2).map(|e| bin(records, e[0], e[1])).collect();
    let reference_from = count / 2;
    let reference = mean_bin(&bins[reference_from..]);
    let seconds = width as f64 / 1e9;
    let strays = |b: &Bin| -> Option<String> {
        if off(b.completions, reference.completions, rule) {
            Some(format!(
                "{:.1} answers/s against {:.1}",
                b.completions / seconds,
                reference.completions / seconds
            ))
        } else if off(b.in_flight, reference.in_flight, rule) {
            Some(format!(
                "{:.1} in flight against {:.1}",
                b.in_flight, reference.in_flight
            ))
        } else {
            None
        }
    };
    if let Some(why) = unsettled(&bins[reference_from..], rule, seconds) {
        return SteadyState {
            from_ns,
            to_ns,
            dropped_bins: 0,
            bins: count,
            steady: false,
            reason: format!("not steady: {why}; the whole window is kept"),
        };
    }
    let dropped: Vec<String> = bins[..reference_from].iter().map_while(strays).collect();
    let from = edges[dropped.len()];
    SteadyState {
        from_ns: from,
        to_ns,
        dropped_bins: dropped.len(),
        bins: count,
        steady: true,
        reason: if dropped.is_empty() {
            "steady over the whole window".to_string()
        } else {
            format!(
                "steady from {:.2} s: the first {} of {count} bins dropped ({})",
                (from - from_ns) as f64 / 1e9,
                dropped.len(),
                dropped.join("; "),
            )
        },
    }
}

/// Whether `value` strays from `expected` by more than the tolerance and counting noise.
fn off(value: f64, expected: f64, rule: &SteadyRule) -> bool {
    (value - expected).abs() > rule.tolerance * expected + 3.0 * expected.max(1.0).sqrt()
}

/// Why the reference bins are not settled, if they are not: their first and last quarters
/// of the window (summed, so that the noise allowance is that of the larger count) differ.
fn unsettled(reference: &[Bin], rule: &SteadyRule, seconds: f64) -> Option<String> {
    let k = reference.len() / 2;
    let (early, late) = (&reference[..k], &reference[reference.len() - k..]);
    let sum = |bins: &[Bin], of: fn(&Bin) -> f64| bins.iter().map(of).sum::<f64>();
    let rate = |bins: &[Bin]| sum(bins, |b| b.completions) / (k as f64 * seconds);
    let load = |bins: &[Bin]| sum(bins, |b| b.in_flight) / k as f64;
    if off(
        sum(early, |b| b.completions),
        sum(late, |b| b.completions),
        rule,
    ) {
        Some(format!(
            "the second half's answers went from {:.1}/s to {:.1}/s",
            rate(early),
            rate(late)
        ))
    } else if off(
        sum(early, |b| b.in_flight),
        sum(late, |b| b.in_flight),
        rule,
    ) {
        Some(format!(
            "the second half's requests in flight went from {:.1} to {:.1}",
            load(early),
            load(late)
        ))
    } else {
        None
    }
}

fn bin(records: &[RequestRecord], from_ns: i64, to_ns: i64) -> Bin {
    let mut completions = 0usize;
    let mut busy_ns = 0i128;
    for r in records {
        if let Some(end) = r.completed_ns {
            if !r.failed && end >= from_ns && end < to_ns {
                completions += 1;
            }
        }
        let (start, end) = (
            r.sent_ns.max(from_ns),
            r.completed_ns.unwrap_or(to_ns).min(to_ns),
        );
        if start < end {
            busy_ns += (end - start) as i128;
        }
    }
    Bin {
        completions: completions as f64,
        in_flight: busy_ns as f64 / (to_ns - from_ns).max(1) as f64,
    }
}

fn mean_bin(bins: &[Bin]) -> Bin {
    let n = bins.len().max(1) as f64;
    Bin {
        completions: bins.iter().map(|b| b.completions).sum::<f64>() / n,
        in_flight: bins.iter().map(|b| b.in_flight).sum::<f64>() / n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    /// A closed loop of `width` requests, each `service(t)` long, from 0 to `end`.
    fn closed_loop(width: usize, end: i64, service: impl Fn(i64) -> i64) -> Vec<RequestRecord> {
        let mut records = Vec::new();
        for lane in 0..width {
            let mut t = lane as i64 * MS / 10;
            while t < end {
                let done = t + service(t);
                records.push(RequestRecord {
                    scheduled_ns: t,
                    sent_ns: t,
                    first_token_ns: Some(t + MS),
                    completed_ns: Some(done),
                    output_tokens: 4,
                    input_tokens: None,
                    counted_tokens: None,
                    failed: false,
                });
                t = done;
            }
        }
        records
    }

    #[test]
    fn a_server_at_one_speed_is_steady_over_the_whole_window() {
        let records = closed_loop(4, 2_000 * MS, |_| 4 * MS);
        let verdict = steady_window(&records, 0, 2_000 * MS, &SteadyRule::default());
        assert!(verdict.steady, "{}", verdict.reason);
        assert_eq!((verdict.dropped_bins, verdict.from_ns), (0, 0));
    }

    #[test]
    fn a_warming_server_has_its_slow_start_dropped() {
        // 20 ms a request for the first 600 ms, then 4 ms: bins of 200 ms, the first three
        // slow (200/s against 1,000/s).
        let records = closed_loop(
            4,
            2_000 * MS,
            |t| if t < 600 * MS { 20 * MS } else { 4 * MS },
        );
        let verdict = steady_window(&records, 0, 2_000 * MS, &SteadyRule::default());
        assert!(verdict.steady, "{}", verdict.reason);
        assert_eq!(verdict.dropped_bins, 3, "{}", verdict.reason);
        assert_eq!(verdict.from_ns, 600 * MS);
        assert!(
            verdict.reason.contains("answers/s against"),
            "{}",
            verdict.reason
        );
    }

    #[test]
    fn a_point_still_changing_in_its_second_half_is_not_steady() {
        // Slower and slower: 2 ms a request plus 1 ms for every 40 ms run.
        let records = closed_loop(16, 2_000 * MS, |t| 2 * MS + t / 40);
        let verdict = steady_window(&records, 0, 2_000 * MS, &SteadyRule::default());
        assert!(!verdict.steady, "{}", verdict.reason);
        assert_eq!(verdict.from_ns, 0);
        assert!(
            verdict.reason.starts_with("not steady"),
            "{}",
            verdict.reason
        );
    }
}
