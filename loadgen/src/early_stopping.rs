//! Early stopping: the binomial confidence test LoadGen applies to SingleStream,
//! MultiStream and Server performance runs, and the text it puts in the summary.
//!
//! A port of LoadGen 6.0.17 `early_stopping.cc` plus the `EarlyStopping` part of
//! `results.cc` (spec §4.8, §6.2). Results are integers chosen by comparing floating-point
//! probabilities against `1 - confidence`, so everything is evaluated in `f64` with the
//! same operation order as the C++ source and with the platform libm (`lgamma`, `log`,
//! `exp`), which keeps the bits equal to the official build on glibc.
//!
//! The searches are bracketed by a memo of earlier answers ([`MinPassingQueriesFinder`]).
//! The bracket can exclude the true minimum, so answers depend on the call history of one
//! finder; every public evaluation here uses a fresh finder, exactly as LoadGen creates one
//! per `EarlyStopping` call.

use std::collections::BTreeMap;

use super::early_stopping_table;

mod libm {
    use std::os::raw::c_int;

    extern "C" {
        // glibc's `lgamma` is `lgamma_r` plus a store to the global `signgam`; the
        // reentrant entry point gives the same bits without that data race.
        fn lgamma_r(x: f64, sign: *mut c_int) -> f64;
    }

    /// `std::lgamma(x)` as libstdc++ computes it (glibc libm).
    pub(super) fn ln_gamma(x: f64) -> f64 {
        let mut sign: c_int = 0;
        // SAFETY: pure libm function; `sign` is a valid, exclusively borrowed out-pointer.
        unsafe { lgamma_r(x, &mut sign) }
    }
}

/// Confidence and tolerance of the test. LoadGen hard-codes 0.99 and 0.0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EarlyStoppingConfig {
    /// Required confidence that the true percentile is within the bound (0.99).
    pub confidence: f64,
    /// Slack subtracted from the percentile (0.0).
    pub tolerance: f64,
}

impl Default for EarlyStoppingConfig {
    fn default() -> Self {
        Self {
            confidence: 0.99,
            tolerance: 0.0,
        }
    }
}

/// The percentile LoadGen always adds to SingleStream early stopping (used to infer
/// MultiStream from SingleStream); `early_stopping_latency_ms`.
pub const MULTI_STREAM_PERCENTILE: f64 = 0.99;

// ---------------------------------------------------------------------------------------
// Math (early_stopping.cc)
// ---------------------------------------------------------------------------------------

fn ln_beta(x: i64, y: i64) -> f64 {
    libm::ln_gamma(x as f64) + libm::ln_gamma(y as f64) - libm::ln_gamma((x + y) as f64)
}

/// Gauss hypergeometric 2F1(1, b; c; x), summed term by term (DLMF 15.2.1). The loop
/// stops after the first term with |term| <= 2^-33; that term is still added.
fn hypergeometric_2f1_a1(b: i64, c: i64, x: f64) -> f64 {
    const TOLERANCE: f64 = 1.0 / (1u64 << 33) as f64;
    let mut term = 1.0_f64;
    let mut result = 1.0_f64;
    let mut i: i64 = 0;
    while term.abs() > TOLERANCE {
        // Same association as C++ `term *= (b + i) * x / (c + i)`.
        term *= (b + i) as f64 * x / (c + i) as f64;
        result += term;
        i += 1;
    }
    result
}

/// BetaRegularized[x, a, b] via x^a (1-x)^(b-1) / (a B(a,b)) 2F1(1, 1-b; 1+a; x/(x-1)).
fn beta_regularized(x: f64, a: i64, b: i64) -> f64 {
    (a as f64 * x.ln() + (b - 1) as f64 * (1.0 - x).ln() - ln_beta(a, b)).exp() / a as f64
        * hypergeometric_2f1_a1(1 - b, 1 + a, x / (x - 1.0))
}

/// Probability of at most `t` over-latency queries among `h + t` when each query is
/// under latency with probability `p - d` (a binomial CDF).
fn odds(h: i64, t: i64, p: f64, d: f64) -> f64 {
    beta_regularized(p - d, h, 1 + t)
}

/// `std::lower_bound`-style search for the smallest h in [min_h, max_h] with
/// `odds < 1 - c`; returns `max_h` when none in the range passes.
fn find_min_passing(mut min_h: i64, max_h: i64, t: i64, p: f64, d: f64, c: f64) -> i64 {
    let mut count = max_h - min_h;
    while count > 0 {
        let step = count / 2;
        let h = min_h + step;
        if odds(h, t, p, d) < 1.0 - c {
            count = step;
        } else {
            min_h = h + 1;
            count -= step + 1;
        }
    }
    min_h
}

/// The smallest h with `odds(h, t) < 1 - c`, searched near the normal approximation of the
/// binomial so that `odds` is only evaluated close to the answer, where it is accurate.
fn min_passing_near(t: i64, p: f64, d: f64, c: f64) -> i64 {
    let passes = |h: i64| h >= 1 && odds(h, t, p, d) < 1.0 - c;
    let success = p - d;
    let failure = 1.0 - success;
    // Failures among N trials: mean N·f, deviation √(N·f·s); the test passes about where
    // t = N·f − z·√(N·f·s) with z the one-sided normal quantile of c (2.33 for 0.99).
    let z = normal_quantile(c);
    let root = (z * (failure * success).sqrt()
        + (z * z * failure * success + 4.0 * failure * t as f64).sqrt())
        / (2.0 * failure);
    let guess = ((root * root) as i64 - t).max(1);
    // Gallop to a failing `low` and a passing `high`, then bisect between them.
    let (mut low, mut high);
    let mut step = 1;
    if passes(guess) {
        high = guess;
        low = guess - step;
        while low >= 1 && passes(low) {
            high = low;
            step *= 2;
            low = high - step;
        }
        low = low.max(0);
    } else {
        low = guess;
        high = guess + step;
        while !passes(high) {
            low = high;
            step *= 2;
            high = low + step;
        }
    }
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if passes(mid) {
            high = mid;
        } else {
            low = mid;
        }
    }
    high
}

/// The standard normal quantile at `c` (0.5 < c < 1), Abramowitz & Stegun 26.2.23: only a
/// starting point for a search, so its 4.5e-4 error does not matter.
fn normal_quantile(c: f64) -> f64 {
    let q = (1.0 - c).clamp(1e-300, 0.5);
    let r = (-2.0 * q.ln()).sqrt();
    r - (2.515517 + 0.802853 * r + 0.010328 * r * r)
        / (1.0 + 1.432788 * r + 0.189269 * r * r + 0.001308 * r * r * r)
}

/// LoadGen's `MinPassingQueriesFinder`: the minimum number `h` of under-latency queries
/// that, together with `t` over-latency ones, passes the test. Answers are memoised per
/// (p, d, c) and seed the search bracket of later calls, so one finder must live for
/// exactly one early-stopping evaluation to reproduce LoadGen.
#[derive(Debug, Default)]
pub struct MinPassingQueriesFinder {
    // Keyed by the bit patterns of (p, d, c); few keys, so a linear scan is enough.
    caches: Vec<([u64; 3], BTreeMap<i64, i64>)>,
}

impl MinPassingQueriesFinder {
    /// An empty finder, for one early-stopping evaluation.
    pub fn new() -> Self {
        Self::default()
    }

    /// Minimum passing `h` for `t` over-latency queries at percentile `p`, tolerance `d`
    /// and confidence `c`.
    pub fn find(&mut self, t: i64, p: f64, d: f64, c: f64) -> i64 {
        let key = [p.to_bits(), d.to_bits(), c.to_bits()];
        let slot = match self.caches.iter().position(|(k, _)| *k == key) {
            Some(slot) => slot,
            None => {
                self.caches.push((key, BTreeMap::new()));
                self.caches.len() - 1
            }
        };
        let cache = &mut self.caches[slot].1;
        if let Some(&h) = cache.get(&t) {
            return h;
        }

        // Bracket from the two largest memoised t' < t (defaults when there are none).
        let mut x0: i64 = -1;
        let mut y0: i64 = 0;
        let mut x1: i64 = 0;
        let mut y1: i64 = ((1.0 - c).ln() / (p - d).ln()).ceil() as i64;
        let mut below = cache.range(..t).rev();
        if let Some((&x, &y)) = below.next() {
            x1 = x;
            y1 = y;
            if let Some((&x, &y)) = below.next() {
                x0 = x;
                y0 = y;
            }
        }

        let min_slope = (p - d) / (1.0 - p + d);
        // A product, not a ratio, in the source; kept because it shapes the bracket.
        let max_slope = ((y1 - y0) * (x1 - x0)) as f64;
        let min_h = ((t - x1) as f64 * min_slope + y1 as f64) as i64;
        let max_h = ((t - x1) as f64 * max_slope + y1 as f64 + 1.0) as i64;
        let h = find_min_passing(min_h, max_h, t, p, d, c);
        cache.insert(t, h);
        h
    }
}

// ---------------------------------------------------------------------------------------
// Scenario evaluations (results.cc `EarlyStopping`)
// ---------------------------------------------------------------------------------------

/// SingleStream / MultiStream early-stopping outcome for `processed` queries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PercentileEstimate {
    /// Too few queries; the test fails.
    NotEnoughQueries {
        processed: u64,
        /// `h_min + 1`: queries needed for any estimate.
        min_queries: u64,
    },
    /// The test passes; the estimate is the latency at `index` of the ascending array.
    Estimate {
        processed: u64,
        /// `h_min + 1`.
        min_queries: u64,
        /// `t - 1`: highest latencies discarded.
        discarded: u64,
        /// `n - t`: position of the estimate in the ascending sorted latencies.
        index: usize,
    },
}

impl PercentileEstimate {
    /// Whether enough queries were processed for an estimate.
    pub fn passed(&self) -> bool {
        matches!(self, Self::Estimate { .. })
    }

    /// Index of the estimate in the ascending sorted latencies, when it passed.
    pub fn index(&self) -> Option<usize> {
        match *self {
            Self::Estimate { index, .. } => Some(index),
            Self::NotEnoughQueries { .. } => None,
        }
    }
}

/// SingleStream / MultiStream estimate for `n` processed queries at percentile `p`, with
/// LoadGen's confidence 0.99 and tolerance 0.
pub fn percentile_estimate(n: u64, p: f64) -> PercentileEstimate {
    percentile_estimate_with(n, p, &EarlyStoppingConfig::default())
}

/// [`percentile_estimate`] with an explicit confidence and tolerance.
pub fn percentile_estimate_with(
    n: u64,
    p: f64,
    config: &EarlyStoppingConfig,
) -> PercentileEstimate {
    estimate_in(&mut MinPassingQueriesFinder::new(), n, p, config)
}

fn estimate_in(
    finder: &mut MinPassingQueriesFinder,
    n: u64,
    p: f64,
    config: &EarlyStoppingConfig,
) -> PercentileEstimate {
    let (d, c) = (config.tolerance, config.confidence);
    let queries = i64::try_from(n).expect("query count fits in i64");
    // A fresh finder asked for t = 1, 2, 3, … in order gives the same answers whatever n is,
    // so those answers come from the process-wide sequence (computed once, possibly ahead
    // of time while the run was still issuing). A finder with other history keeps its own.
    let fresh = finder
        .caches
        .iter()
        .all(|(key, _)| *key != [p.to_bits(), d.to_bits(), c.to_bits()]);
    if fresh {
        return estimate_from_sequence(n, p, config);
    }
    let h_min = finder.find(1, p, d, c);
    let min_queries = (h_min + 1) as u64;
    if queries < h_min + 1 {
        return PercentileEstimate::NotEnoughQueries {
            processed: n,
            min_queries,
        };
    }
    // t = number of over-percentile queries that can be tolerated; the first i whose
    // requirement exceeds n ends the scan (it always does by i = n, since h >= 1).
    let mut t: i64 = 1;
    for i in 2..=queries {
        if queries < finder.find(i, p, d, c) + i {
            t = i - 1;
            break;
        }
    }
    PercentileEstimate::Estimate {
        processed: n,
        min_queries,
        discarded: (t - 1) as u64,
        index: (queries - t) as usize,
    }
}

fn estimate_from_sequence(n: u64, p: f64, config: &EarlyStoppingConfig) -> PercentileEstimate {
    let queries = i64::try_from(n).expect("query count fits in i64");
    let sequence = MinPassingSequence::shared(p, config);
    let mut sequence = sequence.lock().unwrap_or_else(|e| e.into_inner());
    let h_min = sequence.value(1);
    let min_queries = (h_min + 1) as u64;
    if queries < h_min + 1 {
        return PercentileEstimate::NotEnoughQueries {
            processed: n,
            min_queries,
        };
    }
    let steps = SEQUENTIAL_PREFIX.saturating_sub(sequence.values.len());
    let t = if sequence.extend_past_for(queries, steps) {
        first_over_in(&sequence.values, queries) - 1
    } else {
        first_over_beyond(&sequence, queries) - 1
    };
    PercentileEstimate::Estimate {
        processed: n,
        min_queries,
        discarded: (t - 1) as u64,
        index: (queries - t) as usize,
    }
}

/// Answers past this many are searched for directly instead of computed in sequence: by then
/// every step of the sequence lands inside its bracket (see [`min_passing_near`]).
const SEQUENTIAL_PREFIX: usize = 20_000;

/// LoadGen's loop over i = 2, 3, … stops at the first i with n < h(i) + i. `values[k]` answers
/// i = k + 1 and cover that point (or reach i = n). h(i) + i strictly increases, so the first
/// such i is a partition point; none failing leaves i = 2 (t = 1).
fn first_over_in(values: &[i64], n: i64) -> i64 {
    let upper = values.len().min(n as usize);
    let (mut low, mut high) = (1, upper.max(1));
    while low < high {
        let mid = low + (high - low) / 2;
        if n > values[mid] + mid as i64 {
            low = mid + 1;
        } else {
            high = mid;
        }
    }
    if low < upper {
        low as i64 + 1
    } else {
        2
    }
}

/// As [`first_over_in`] when the known answers end below the stopping point: a bisection over
/// the i past them, each h(i) found on its own.
fn first_over_beyond(sequence: &MinPassingSequence, n: i64) -> i64 {
    let (mut low, mut high) = (sequence.values.len() as i64 + 1, n);
    while low < high {
        let mid = low + (high - low) / 2;
        if sequence.min_passing_direct(mid) + mid > n {
            high = mid;
        } else {
            low = mid + 1;
        }
    }
    low
}

/// The answers of a fresh [`MinPassingQueriesFinder`] asked for t = 1, 2, 3, … in order — all
/// that SingleStream and MultiStream estimates ask. Only the last two answers shape the next
/// bracket, so the sequence is extended without the finder's map.
pub struct MinPassingSequence {
    p: f64,
    d: f64,
    c: f64,
    /// `values[k]` answers t = k + 1.
    values: Vec<i64>,
}

type SharedSequence = std::sync::Arc<std::sync::Mutex<MinPassingSequence>>;

impl MinPassingSequence {
    /// The process-wide sequence for this percentile and configuration.
    pub fn shared(p: f64, config: &EarlyStoppingConfig) -> SharedSequence {
        static ALL: std::sync::Mutex<Vec<([u64; 3], SharedSequence)>> =
            std::sync::Mutex::new(Vec::new());
        let key = [
            p.to_bits(),
            config.tolerance.to_bits(),
            config.confidence.to_bits(),
        ];
        let mut all = ALL.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, sequence)) = all.iter().find(|(k, _)| *k == key) {
            return std::sync::Arc::clone(sequence);
        }
        let default = EarlyStoppingConfig::default();
        let values =
            if config.tolerance == default.tolerance && config.confidence == default.confidence {
                early_stopping_table::values(p).unwrap_or_default()
            } else {
                Vec::new()
            };
        let sequence = std::sync::Arc::new(std::sync::Mutex::new(MinPassingSequence {
            p,
            d: config.tolerance,
            c: config.confidence,
            values,
        }));
        all.push((key, std::sync::Arc::clone(&sequence)));
        sequence
    }

    /// A sequence computed from scratch, ignoring the shipped table (for checking it).
    pub fn computed(p: f64, config: &EarlyStoppingConfig) -> MinPassingSequence {
        MinPassingSequence {
            p,
            d: config.tolerance,
            c: config.confidence,
            values: Vec::new(),
        }
    }

    /// The answers known so far.
    pub fn values(&self) -> &[i64] {
        &self.values
    }

    /// The answer for `t` (≥ 1), computing the sequence up to it.
    pub fn value(&mut self, t: i64) -> i64 {
        while (self.values.len() as i64) < t {
            self.push_next();
        }
        self.values[(t - 1) as usize]
    }

    /// Extends until some t has h(t) + t > n (the point where an estimate for n stops),
    /// or t reaches n. Returns true once that point is covered.
    pub fn extend_past(&mut self, n: i64) -> bool {
        self.extend_past_for(n, usize::MAX)
    }

    /// As [`extend_past`](Self::extend_past), doing at most `steps` new answers.
    pub fn extend_past_for(&mut self, n: i64, steps: usize) -> bool {
        let mut done = 0;
        loop {
            let len = self.values.len() as i64;
            if len >= n.max(1) || self.values.last().is_some_and(|&last| last + len > n) {
                return true;
            }
            if done == steps {
                return false;
            }
            self.push_next();
            done += 1;
        }
    }

    /// The answer for `t` without the answers before it: the smallest h that passes, found
    /// by galloping out from the normal approximation and bisecting.
    ///
    /// The sequence finds h(t) by a search bracketed by h(t - 1) + ⌊p/(1-p)⌋ and
    /// h(t - 1) + (h(t - 1) - h(t - 2)) + 1, returning the bracket's end when nothing in it
    /// passes. Once t is large the increments of the true minimum only take the two values
    /// around p/(1-p), which that bracket always holds, so both give the same answer; tests
    /// check this past [`SEQUENTIAL_PREFIX`] and past the shipped tables, and against the
    /// official LoadGen's loop up to 10^8 queries.
    fn min_passing_direct(&self, t: i64) -> i64 {
        min_passing_near(t, self.p, self.d, self.c)
    }

    fn push_next(&mut self) {
        let t = self.values.len() as i64 + 1;
        let (p, d, c) = (self.p, self.d, self.c);
        // The same bracket the finder builds from its two largest memoised t' < t.
        let (mut x0, mut y0) = (-1i64, 0i64);
        let (mut x1, mut y1) = (0i64, ((1.0 - c).ln() / (p - d).ln()).ceil() as i64);
        let len = self.values.len();
        if len >= 1 {
            x1 = len as i64;
            y1 = self.values[len - 1];
        }
        if len >= 2 {
            x0 = len as i64 - 1;
            y0 = self.values[len - 2];
        }
        let min_slope = (p - d) / (1.0 - p + d);
        let max_slope = ((y1 - y0) * (x1 - x0)) as f64;
        let min_h = ((t - x1) as f64 * min_slope + y1 as f64) as i64;
        let max_h = ((t - x1) as f64 * max_slope + y1 as f64 + 1.0) as i64;
        self.values.push(find_min_passing(min_h, max_h, t, p, d, c));
    }
}

/// Server early-stopping outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerEarlyStopping {
    pub passed: bool,
    /// Queries issued (n).
    pub processed: u64,
    /// Latencies strictly above the target (t).
    pub overlatency: u64,
    /// `h + t`: queries needed for a pass with this many over-latency queries.
    pub required_queries: u64,
    /// `h + t - n` when failed, else 0.
    pub more_queries_needed: u64,
}

/// Server test for `n` issued queries of which `overlatency` had a latency strictly
/// greater than the target, at percentile `p` (confidence 0.99, tolerance 0).
pub fn server_check(n: u64, overlatency: u64, p: f64) -> ServerEarlyStopping {
    server_check_with(n, overlatency, p, &EarlyStoppingConfig::default())
}

/// [`server_check`] with an explicit confidence and tolerance.
pub fn server_check_with(
    n: u64,
    overlatency: u64,
    p: f64,
    config: &EarlyStoppingConfig,
) -> ServerEarlyStopping {
    let t = i64::try_from(overlatency).expect("overlatency count fits in i64");
    let h = MinPassingQueriesFinder::new().find(t, p, config.tolerance, config.confidence);
    let required_queries = (h + t) as u64;
    let passed = n >= required_queries;
    ServerEarlyStopping {
        passed,
        processed: n,
        overlatency,
        required_queries,
        more_queries_needed: if passed { 0 } else { required_queries - n },
    }
}

// ---------------------------------------------------------------------------------------
// Summary text (results.cc recommendation strings, spec §6.2)
// ---------------------------------------------------------------------------------------

/// What one scenario's early-stopping evaluation reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EarlyStoppingReport {
    /// `early_stopping_met` (Offline, which has no test, is not covered here).
    pub passed: bool,
    /// The lines under `Early Stopping Result:` in the summary, in order.
    pub lines: Vec<String>,
    /// `early_stopping_latency_ss`: SingleStream target-percentile estimate.
    pub latency_ss: Option<i64>,
    /// `early_stopping_latency_ms`: SingleStream 99th-percentile estimate, or the
    /// MultiStream target-percentile estimate.
    pub latency_ms: Option<i64>,
}

impl EarlyStoppingReport {
    /// LoadGen's recommendation string: the lines joined with `\n`.
    pub fn text(&self) -> String {
        self.lines.join("\n")
    }

    /// The detail-log value (`early_stopping_result`): newlines become spaces.
    pub fn detail_text(&self) -> String {
        self.lines.join(" ")
    }
}

/// `%.1f` of the percentile in percent, as LoadGen labels it ("90.0", "99.9").
fn percent_label(p: f64) -> String {
    format!("{:.1}", p * 100.0)
}

fn not_enough_lines(processed: u64, min_queries: u64) -> Vec<String> {
    vec![
        format!(" * Only processed {processed} queries."),
        format!(" * Need to process at least {min_queries} queries for early stopping."),
    ]
}

fn estimate_lines(
    processed: u64,
    min_queries: u64,
    discarded: u64,
    p: f64,
    latency: i64,
) -> Vec<String> {
    vec![
        format!(" * Processed at least {min_queries} queries ({processed})."),
        format!(" * Would discard {discarded} highest latency queries."),
        format!(
            " * Early stopping {}th percentile estimate: {latency}",
            percent_label(p)
        ),
    ]
}

fn latency_at(sorted_latencies: &[i64], index: usize) -> i64 {
    debug_assert!(
        sorted_latencies.windows(2).all(|w| w[0] <= w[1]),
        "latencies must be sorted"
    );
    *sorted_latencies.get(index).unwrap_or_else(|| {
        panic!(
            "need at least n latencies; index {index} of {}",
            sorted_latencies.len()
        )
    })
}

/// SingleStream: `n` queries issued, `sorted_latencies` the sample latencies (ns) in
/// ascending order (at least `n` of them), `p` the target percentile. On a pass also
/// reports the 99th-percentile estimate, or why there is none.
pub fn single_stream_report(n: u64, p: f64, sorted_latencies: &[i64]) -> EarlyStoppingReport {
    single_stream_report_by(n, p, |index| latency_at(sorted_latencies, index))
}

/// [`single_stream_report`] reading the latency of each rank it needs from `latency_at_rank`.
pub fn single_stream_report_by(
    n: u64,
    p: f64,
    mut latency_at_rank: impl FnMut(usize) -> i64,
) -> EarlyStoppingReport {
    let config = EarlyStoppingConfig::default();
    // One finder for the whole evaluation, as in LoadGen.
    let mut finder = MinPassingQueriesFinder::new();
    let (min_queries, discarded, index) = match estimate_in(&mut finder, n, p, &config) {
        PercentileEstimate::NotEnoughQueries {
            processed,
            min_queries,
        } => return failed_report(not_enough_lines(processed, min_queries)),
        PercentileEstimate::Estimate {
            min_queries,
            discarded,
            index,
            ..
        } => (min_queries, discarded, index),
    };
    let latency_ss = latency_at_rank(index);
    let mut lines = estimate_lines(n, min_queries, discarded, p, latency_ss);

    let mut latency_ms = None;
    match estimate_in(&mut finder, n, MULTI_STREAM_PERCENTILE, &config) {
        PercentileEstimate::NotEnoughQueries { min_queries, .. } => {
            lines.push(format!(
                " * Not enough queries processed for {}th percentile",
                percent_label(MULTI_STREAM_PERCENTILE)
            ));
            lines.push(" early stopping estimate (would need to process at".to_string());
            lines.push(format!(" least {min_queries} total queries)."));
        }
        PercentileEstimate::Estimate { index, .. } => {
            let latency = latency_at_rank(index);
            lines.push(format!(
                " * Early stopping {}th percentile estimate: {latency}",
                percent_label(MULTI_STREAM_PERCENTILE)
            ));
            latency_ms = Some(latency);
        }
    }
    EarlyStoppingReport {
        passed: true,
        lines,
        latency_ss: Some(latency_ss),
        latency_ms,
    }
}

/// MultiStream: `n` queries issued, `sorted_query_latencies` the per-query latencies (ns)
/// in ascending order (at least `n` of them), `p` the target percentile.
pub fn multi_stream_report(n: u64, p: f64, sorted_query_latencies: &[i64]) -> EarlyStoppingReport {
    multi_stream_report_by(n, p, |index| latency_at(sorted_query_latencies, index))
}

/// [`multi_stream_report`] reading the latency of each rank it needs from `latency_at_rank`.
pub fn multi_stream_report_by(
    n: u64,
    p: f64,
    latency_at_rank: impl FnOnce(usize) -> i64,
) -> EarlyStoppingReport {
    match percentile_estimate(n, p) {
        PercentileEstimate::NotEnoughQueries {
            processed,
            min_queries,
        } => failed_report(not_enough_lines(processed, min_queries)),
        PercentileEstimate::Estimate {
            min_queries,
            discarded,
            index,
            ..
        } => {
            let latency = latency_at_rank(index);
            EarlyStoppingReport {
                passed: true,
                lines: estimate_lines(n, min_queries, discarded, p, latency),
                latency_ss: None,
                latency_ms: Some(latency),
            }
        }
    }
}

/// Server: `n` queries issued, `latencies` the sample latencies (ns, any order),
/// over-latency meaning strictly greater than `target_latency_ns`.
pub fn server_report(
    n: u64,
    latencies: &[i64],
    target_latency_ns: i64,
    p: f64,
) -> EarlyStoppingReport {
    let overlatency = latencies.iter().filter(|&&l| l > target_latency_ns).count() as u64;
    server_report_for(n, overlatency, p)
}

/// [`server_report`] for `overlatency` of `n` queries over the bound.
pub fn server_report_for(n: u64, overlatency: u64, p: f64) -> EarlyStoppingReport {
    let check = server_check(n, overlatency, p);
    EarlyStoppingReport {
        passed: check.passed,
        lines: server_lines(&check),
        latency_ss: None,
        latency_ms: None,
    }
}

/// Summary lines for a Server check.
pub fn server_lines(check: &ServerEarlyStopping) -> Vec<String> {
    if check.passed {
        return vec![" * Run successful.".to_string()];
    }
    vec![
        " * Run unsuccessful.".to_string(),
        format!(" * Processed {} queries.", check.processed),
        format!(
            " * Would need to run at least {} more queries,",
            check.more_queries_needed
        ),
        " with the run being successful if every additional".to_string(),
        " query were under latency.".to_string(),
    ]
}

fn failed_report(lines: Vec<String>) -> EarlyStoppingReport {
    EarlyStoppingReport {
        passed: false,
        lines,
        latency_ss: None,
        latency_ms: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn discarded(n: u64, p: f64) -> Option<u64> {
        match percentile_estimate(n, p) {
            PercentileEstimate::Estimate { discarded, .. } => Some(discarded),
            PercentileEstimate::NotEnoughQueries { .. } => None,
        }
    }

    #[test]
    fn reentrant_lgamma_matches_lgamma() {
        extern "C" {
            fn lgamma(x: f64) -> f64;
        }
        for x in (1..5000).chain((1..200).map(|k| k * 7919 + 12345)) {
            let x = x as f64;
            // SAFETY: plain libm call; only this test thread reads `signgam`.
            let plain = unsafe { lgamma(x) };
            assert_eq!(libm::ln_gamma(x).to_bits(), plain.to_bits(), "x = {x}");
        }
    }

    #[test]
    fn minimum_queries_match_reference() {
        for (p, min) in [(0.9, 64), (0.99, 662), (0.999, 6636)] {
            assert_eq!(
                percentile_estimate(min - 1, p),
                PercentileEstimate::NotEnoughQueries {
                    processed: min - 1,
                    min_queries: min
                }
            );
            assert_eq!(
                percentile_estimate(min, p),
                PercentileEstimate::Estimate {
                    processed: min,
                    min_queries: min,
                    discarded: 0,
                    index: (min - 1) as usize
                }
            );
        }
        assert!(!percentile_estimate(0, 0.9).passed());
    }

    #[test]
    fn server_zero_overlatency_requirements() {
        for (p, need) in [(0.9, 44), (0.99, 459), (0.999, 4603)] {
            let pass = server_check(need, 0, p);
            assert!(pass.passed);
            assert_eq!((pass.required_queries, pass.more_queries_needed), (need, 0));
            let fail = server_check(need - 1, 0, p);
            assert!(!fail.passed);
            assert_eq!(fail.more_queries_needed, 1);
        }
        // Spec §13 failure example: 384 queries, none over latency, p = 0.99.
        assert_eq!(server_check(384, 0, 0.99).more_queries_needed, 75);
        // A published resnet50 Server summary: 100 queries, all over the 15 ms target.
        assert_eq!(server_check(100, 100, 0.99).more_queries_needed, 12471);
    }

    #[test]
    fn discards_match_reference() {
        assert_eq!(discarded(200, 0.9), Some(9));
        assert_eq!(discarded(700, 0.9), Some(50));
        assert_eq!(discarded(1000, 0.9), Some(77));
        assert_eq!(discarded(662, 0.99), Some(0));
        assert_eq!(discarded(700, 0.99), Some(0));
        assert_eq!(percentile_estimate(700, 0.9).index(), Some(649));
        assert_eq!(percentile_estimate(100_000, 0.9).index(), Some(90_221));
    }

    /// Ascending latencies 0, 1, 2, ... where each `(index, value)` restarts the ramp at
    /// `value`, so the latency at `index` is exactly `value`.
    fn latencies_with(n: usize, at: &[(usize, i64)]) -> Vec<i64> {
        let mut v = Vec::with_capacity(n);
        let mut next = 0;
        for i in 0..n {
            if let Some(&(_, value)) = at.iter().find(|&&(k, _)| k == i) {
                next = value;
            }
            v.push(next);
            next += 1;
        }
        assert!(v.windows(2).all(|w| w[0] <= w[1]));
        v
    }

    #[test]
    fn single_stream_text_matches_resnet50_example() {
        // resnet50_SingleStream: n = 700, estimates at indices 649 and 699.
        let lat = latencies_with(700, &[(649, 1_121_814), (699, 4_606_440)]);
        let r = single_stream_report(700, 0.9, &lat);
        assert!(r.passed);
        assert_eq!(
            r.lines,
            [
                " * Processed at least 64 queries (700).",
                " * Would discard 50 highest latency queries.",
                " * Early stopping 90.0th percentile estimate: 1121814",
                " * Early stopping 99.0th percentile estimate: 4606440",
            ]
        );
        assert_eq!(
            (r.latency_ss, r.latency_ms),
            (Some(1_121_814), Some(4_606_440))
        );
        assert_eq!(
            r.detail_text(),
            " * Processed at least 64 queries (700).  * Would discard 50 highest latency \
             queries.  * Early stopping 90.0th percentile estimate: 1121814  * Early \
             stopping 99.0th percentile estimate: 4606440"
        );
    }

    #[test]
    fn single_stream_text_without_99th_estimate() {
        let lat: Vec<i64> = (0..200).collect();
        let r = single_stream_report(200, 0.9, &lat);
        assert!(r.passed);
        assert_eq!(
            r.lines,
            [
                " * Processed at least 64 queries (200).",
                " * Would discard 9 highest latency queries.",
                " * Early stopping 90.0th percentile estimate: 190",
                " * Not enough queries processed for 99.0th percentile",
                " early stopping estimate (would need to process at",
                " least 662 total queries).",
            ]
        );
        assert_eq!((r.latency_ss, r.latency_ms), (Some(190), None));
    }

    #[test]
    fn single_and_multi_stream_failure_text() {
        let lat: Vec<i64> = (0..63).collect();
        let expected = [
            " * Only processed 63 queries.",
            " * Need to process at least 64 queries for early stopping.",
        ];
        let ss = single_stream_report(63, 0.9, &lat);
        assert!(!ss.passed);
        assert_eq!(ss.lines, expected);
        let ms = multi_stream_report(63, 0.9, &lat);
        assert!(!ms.passed);
        assert_eq!(ms.lines, expected);
    }

    #[test]
    fn multi_stream_text_matches_resnet50_example() {
        let lat = latencies_with(662, &[(661, 19_161_429)]);
        let r = multi_stream_report(662, 0.99, &lat);
        assert!(r.passed);
        assert_eq!(
            r.text(),
            " * Processed at least 662 queries (662).\n * Would discard 0 highest latency \
             queries.\n * Early stopping 99.0th percentile estimate: 19161429"
        );
        assert_eq!((r.latency_ss, r.latency_ms), (None, Some(19_161_429)));
        let r999 = multi_stream_report(6636, 0.999, &(0..6636).collect::<Vec<_>>());
        assert_eq!(
            r999.lines[2],
            " * Early stopping 99.9th percentile estimate: 6635"
        );
    }

    #[test]
    fn server_text() {
        let target = 15_000_000;
        let ok = server_report(600, &vec![1_000_000; 600], target, 0.99);
        assert!(ok.passed);
        assert_eq!(ok.lines, [" * Run successful."]);
        // Latencies equal to the target are not over latency.
        let at_target = server_report(459, &vec![target; 459], target, 0.99);
        assert!(at_target.passed);

        let fail = server_report(384, &vec![1; 384], target, 0.99);
        assert!(!fail.passed);
        assert_eq!(
            fail.lines,
            [
                " * Run unsuccessful.",
                " * Processed 384 queries.",
                " * Would need to run at least 75 more queries,",
                " with the run being successful if every additional",
                " query were under latency.",
            ]
        );
    }

    #[test]
    fn shared_sequence_equals_a_fresh_finder_asked_in_order() {
        for p in [0.9, 0.95, 0.99, 0.999] {
            let mut finder = MinPassingQueriesFinder::new();
            let sequence = MinPassingSequence::shared(p, &EarlyStoppingConfig::default());
            let mut sequence = sequence.lock().unwrap();
            for t in 1..=20_000 {
                assert_eq!(
                    sequence.value(t),
                    finder.find(t, p, 0.0, 0.99),
                    "p {p} t {t}"
                );
            }
        }
    }

    #[test]
    fn direct_answers_equal_the_sequence_past_its_prefix() {
        // 0.95 has no shipped table: its sequence is computed, then searched directly.
        for p in [0.9, 0.95, 0.99, 0.999] {
            let mut sequence = MinPassingSequence::computed(p, &EarlyStoppingConfig::default());
            let end = SEQUENTIAL_PREFIX as i64 + 3_000;
            sequence.value(end);
            for t in SEQUENTIAL_PREFIX as i64..=end {
                assert_eq!(
                    sequence.min_passing_direct(t),
                    sequence.values[(t - 1) as usize],
                    "p {p} t {t}"
                );
            }
        }
    }

    #[test]
    fn direct_answers_equal_the_sequence_past_the_shipped_tables() {
        for p in [0.9, 0.99, 0.999] {
            let mut sequence = MinPassingSequence {
                values: early_stopping_table::values(p).expect("a shipped table"),
                ..MinPassingSequence::computed(p, &EarlyStoppingConfig::default())
            };
            let end = sequence.values.len() as i64;
            sequence.value(end + 1_000);
            for t in end + 1..=end + 1_000 {
                assert_eq!(
                    sequence.min_passing_direct(t),
                    sequence.values[(t - 1) as usize],
                    "p {p} t {t}"
                );
            }
        }
    }

    #[test]
    fn estimates_past_the_shipped_tables_equal_the_official_loop() {
        // (p, n, t): the official LoadGen 6.0.17's SingleStream loop (results.cc's
        // `for (i = 2; ...) if (queries_issued < h + i) t = i - 1`) over its
        // early_stopping.cc, compiled and run outside this repository.
        let official = [
            (0.9, 17_000_000, 1_697_122),
            (0.9, 20_000_000, 1_996_878),
            (0.9, 25_000_000, 2_496_510),
            (0.9, 40_000_000, 3_995_586),
            (0.9, 70_000_000, 6_994_161),
            (0.9, 100_000_000, 9_993_021),
            (0.99, 17_000_000, 169_045),
            (0.99, 30_000_000, 298_732),
            (0.99, 50_000_000, 498_363),
            (0.99, 100_000_000, 997_685),
            (0.999, 20_000_000, 19_671),
            (0.999, 50_000_000, 49_480),
            (0.999, 100_000_000, 99_264),
        ];
        for (p, n, t) in official {
            assert_eq!(discarded(n, p), Some(t - 1), "p {p} n {n}");
        }
    }

    #[test]
    fn finder_memoises_per_percentile() {
        // A finder driven t = 1, 2, ... (SingleStream) and a fresh one (Server) both
        // agree with the reference on t = 1.
        let mut seq = MinPassingQueriesFinder::new();
        assert_eq!(seq.find(1, 0.9, 0.0, 0.99), 63);
        assert_eq!(MinPassingQueriesFinder::new().find(1, 0.9, 0.0, 0.99), 63);
        // Memoised per (p, d, c): another percentile does not disturb it.
        assert_eq!(seq.find(1, 0.99, 0.0, 0.99), 661);
        assert_eq!(seq.find(1, 0.9, 0.0, 0.99), 63);
    }
}
