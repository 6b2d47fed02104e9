//! Query generation in the official draw order (spec §4.3), produced lazily: one query at a
//! time as the issue loop asks, so start-up does not grow with the length of the run.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::loadable_sets::LoadableSet;
use super::rng::{exponential_gap_ns, period_ns, shuffle, skip_shuffles, uniform_int, Mt19937};
use super::settings::{TestMode, TestScenario};
use super::types::{QuerySample, QuerySampleIndex, ResponseId};

/// What query generation needs from the effective settings.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GenerationParams {
    pub scenario: TestScenario,
    /// AccuracyOnly or PerformanceOnly: the mode of this series, not of the test.
    pub mode: TestMode,
    pub samples_per_query: u64,
    pub min_query_count: u64,
    pub target_duration_ms: u64,
    pub target_qps: f64,
    pub sample_index_rng_seed: u64,
    pub schedule_rng_seed: u64,
    pub sample_concatenate_permutation: bool,
    pub performance_issue_unique: bool,
    pub performance_issue_same: bool,
    pub performance_issue_same_index: u64,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum GenerationError {
    #[error("the loadable set is empty: the sample library reports no samples to load")]
    EmptyLoadableSet,
    #[error(
        "samples_per_query is 0 (Offline: min_query_count and 1.1 x min_duration x target qps are both 0)"
    )]
    ZeroSamplesPerQuery,
    #[error(
        "target qps {0} gives a query period that truncates to 0 ns: no finite run can be generated"
    )]
    ZeroPeriod(f64),
    #[error("target qps {0} must be positive and finite")]
    InvalidQps(f64),
    #[error("performance_issue_same_index {index} is outside the loaded set of {len} samples")]
    SameIndexOutOfRange { index: u64, len: usize },
}

#[derive(Clone)]
enum Schedule {
    Poisson { rng: Box<Mt19937>, qps: f64 },
    Period(i64),
}

impl Schedule {
    #[inline]
    fn next_gap(&mut self) -> i64 {
        match self {
            Schedule::Poisson { rng, qps } => exponential_gap_ns(rng, *qps),
            Schedule::Period(period) => *period,
        }
    }
}

/// How a SingleStream/Server sample slot (or a MultiStream query start) is chosen.
enum Pick {
    Unique,
    Same(usize),
    EqualIssue,
    Uniform,
    AccuracyList,
}

/// Generates the queries of one series in exactly the order the official LoadGen does.
pub(crate) struct QueryGenerator {
    scenario: TestScenario,
    loaded: Vec<QuerySampleIndex>,
    distribution_end: usize,
    samples_per_query: usize,
    equal_issue: bool,
    pick: Pick,
    sample_rng: Mt19937,
    timeline: Timeline,
    accuracy_list: Vec<u32>,
    accuracy_pos: usize,
    unique_list: Vec<u32>,
    unique_pos: usize,
    equal_issue_order: EqualIssueOrder,
    next_sample_id: u64,
}

impl QueryGenerator {
    /// `first_sample_id`: the sequence id of the first generated sample. Every generated
    /// sample takes the next id, issued or not, as in the official LoadGen.
    pub(crate) fn new(
        params: &GenerationParams,
        set: &LoadableSet,
        first_sample_id: u64,
    ) -> Result<Self, GenerationError> {
        let scenario = params.scenario;
        let mode = params.mode;
        let loaded = set.samples.clone();
        let set_len = loaded.len();
        if set_len == 0 || set.distribution_end == 0 {
            return Err(GenerationError::EmptyLoadableSet);
        }
        let accuracy = mode == TestMode::AccuracyOnly;

        // §4.3 steps 1-2.
        let duration_multiplier = if scenario == TestScenario::Server {
            1
        } else {
            2
        };
        let mut gen_duration_ns =
            duration_multiplier * (params.target_duration_ms as i64).saturating_mul(1_000_000);
        let mut min_queries = params.min_query_count;
        let mut samples_per_query = params.samples_per_query;
        if accuracy && scenario == TestScenario::Offline {
            samples_per_query = set.distribution_end as u64;
        }
        if samples_per_query == 0 {
            return Err(GenerationError::ZeroSamplesPerQuery);
        }
        if accuracy || params.performance_issue_unique {
            gen_duration_ns = 0;
            min_queries = set_len as u64 / samples_per_query;
        }

        // Step 3-4: the distributions, constructed in this order because each consumes draws.
        let mut sample_rng = Mt19937::new(params.sample_index_rng_seed);
        let stride = if scenario == TestScenario::MultiStream {
            samples_per_query as usize
        } else {
            1
        };
        let accuracy_list = if accuracy {
            shuffled_strided(set.distribution_end, stride, &mut sample_rng)
        } else {
            Vec::new()
        };
        let unique_list = shuffled_strided(set.distribution_end, stride, &mut sample_rng);
        let equal_issue_used = params.sample_concatenate_permutation
            && matches!(scenario, TestScenario::SingleStream | TestScenario::Server)
            && !params.performance_issue_unique
            && !params.performance_issue_same;
        let equal_issue_order =
            EqualIssueOrder::new(min_queries, set_len, &mut sample_rng, equal_issue_used);

        let schedule = if scenario == TestScenario::Server {
            if params.target_qps.is_nan()
                || params.target_qps <= 0.0
                || params.target_qps.is_infinite()
            {
                return Err(GenerationError::InvalidQps(params.target_qps));
            }
            Schedule::Poisson {
                rng: Box::new(Mt19937::new(params.schedule_rng_seed)),
                qps: params.target_qps,
            }
        } else {
            let period = period_ns(params.target_qps);
            // A zero period never advances time; the official code loops forever there.
            if period <= 0 && gen_duration_ns > 0 {
                return Err(GenerationError::ZeroPeriod(params.target_qps));
            }
            Schedule::Period(period)
        };

        // Step 5: equal-issue padding to whole sets.
        let equal_issue = params.sample_concatenate_permutation;
        if !accuracy && equal_issue {
            let len = set_len as u64;
            if scenario == TestScenario::Offline {
                if !samples_per_query.is_multiple_of(len) {
                    samples_per_query += len - samples_per_query % len;
                }
            } else if !min_queries.is_multiple_of(len) {
                min_queries += len - min_queries % len;
            }
        }

        let pick = if params.performance_issue_unique {
            Pick::Unique
        } else if params.performance_issue_same {
            let index = params.performance_issue_same_index;
            if index >= set_len as u64 {
                return Err(GenerationError::SameIndexOutOfRange {
                    index,
                    len: set_len,
                });
            }
            Pick::Same(index as usize)
        } else if equal_issue && scenario != TestScenario::MultiStream {
            // MultiStream and Offline never read the equal-issue list.
            Pick::EqualIssue
        } else if accuracy {
            Pick::AccuracyList
        } else {
            Pick::Uniform
        };

        let timeline = Timeline {
            schedule,
            gen_duration_ns,
            min_queries,
            timestamp: 0,
            prev_timestamp: 0,
            generated: 0,
            equal_issue: equal_issue && scenario != TestScenario::Offline,
            set_len: set_len as u64,
            samples_per_query,
            remainder_pending: accuracy && scenario == TestScenario::Offline,
        };
        Ok(QueryGenerator {
            scenario,
            loaded,
            distribution_end: set.distribution_end,
            samples_per_query: samples_per_query as usize,
            equal_issue,
            pick,
            sample_rng,
            timeline,
            accuracy_list,
            accuracy_pos: 0,
            unique_list,
            unique_pos: 0,
            equal_issue_order,
            next_sample_id: first_sample_id,
        })
    }

    /// Samples per query after equal-issue padding (`generated_samples_per_query`).
    pub(crate) fn samples_per_query(&self) -> usize {
        self.samples_per_query
    }

    /// About how many queries this series will generate, to size buffers up front.
    pub(crate) fn expected_queries(&self) -> u64 {
        self.timeline.expected_queries()
    }

    pub(crate) fn generated_queries(&self) -> u64 {
        self.timeline.generated
    }

    /// The schedule of this generator as it stands, to count the queries ahead of it without
    /// drawing any sample.
    pub(crate) fn timeline(&self) -> Timeline {
        self.timeline.clone()
    }

    /// Appends the next query's samples to `out` and returns its scheduled offset from the
    /// series start; `None` when generation is complete. A sample's `ResponseId` is its
    /// sequence id plus one.
    pub(crate) fn next_query(&mut self, out: &mut Vec<QuerySample>) -> Option<i64> {
        if self.timeline.loop_continues() {
            self.fill_query(out);
            return Some(self.timeline.advance());
        }
        // Offline accuracy: a remainder query when the set is not a multiple of the query
        // size. With query size = set size this never fires, as in the official code.
        let remainder = self.timeline.take_remainder()?;
        for _ in 0..remainder {
            let k = self.next_accuracy_slot();
            let index = self.loaded[k];
            self.push(out, index);
        }
        Some(self.timeline.timestamp)
    }

    /// Runs the rest of the generation without producing samples (ids still advance), and
    /// returns how many more queries there would have been and the final
    /// `generated_query_duration`. Reports the official counts after a run stopped early.
    pub(crate) fn count_remaining(&mut self, limit: &CountLimit<'_>) -> Remaining {
        let remaining = self.timeline.count_remaining(limit);
        self.next_sample_id += remaining.samples;
        remaining
    }

    /// The final timestamp, one interval past the last query (`generated_query_duration`).
    pub(crate) fn final_timestamp(&self) -> i64 {
        self.timeline.timestamp
    }

    fn fill_query(&mut self, out: &mut Vec<QuerySample>) {
        match self.scenario {
            TestScenario::MultiStream => {
                let start = match self.pick {
                    Pick::Unique => self.next_unique(),
                    Pick::Same(index) => index,
                    Pick::AccuracyList => self.next_accuracy_slot(),
                    Pick::Uniform => self.next_uniform(),
                    Pick::EqualIssue => unreachable!("MultiStream never picks equal issue"),
                };
                let end = (start + self.samples_per_query).min(self.loaded.len());
                let first_id = self.next_sample_id;
                out.extend(self.loaded[start..end].iter().zip(first_id..).map(sample));
                self.next_sample_id += (end - start) as u64;
            }
            TestScenario::Offline => {
                if let Pick::Same(index) = self.pick {
                    let index = self.loaded[index];
                    let first_id = self.next_sample_id;
                    out.extend(
                        (first_id..first_id + self.samples_per_query as u64)
                            .map(|seq| sample((&index, seq))),
                    );
                    self.next_sample_id += self.samples_per_query as u64;
                    return;
                }
                let len = self.loaded.len();
                let full_repeats = self.samples_per_query / len;
                let remainder = self.samples_per_query % len;
                out.reserve(self.samples_per_query);
                for _ in 0..full_repeats {
                    let start = out.len();
                    let first_id = self.next_sample_id;
                    out.extend(self.loaded.iter().zip(first_id..).map(sample));
                    if self.equal_issue {
                        // Ids follow positions: renumber the (cache-hot) segment after the shuffle.
                        shuffle(&mut out[start..], &mut self.sample_rng);
                        for (s, seq) in out[start..].iter_mut().zip(first_id..) {
                            s.id = ResponseId(seq + 1);
                        }
                    }
                    self.next_sample_id += len as u64;
                }
                let first_id = self.next_sample_id;
                out.extend(self.loaded[..remainder].iter().zip(first_id..).map(sample));
                self.next_sample_id += remainder as u64;
            }
            TestScenario::SingleStream | TestScenario::Server => {
                for _ in 0..self.samples_per_query {
                    let k = match self.pick {
                        Pick::Unique => self.next_unique(),
                        Pick::Same(index) => index,
                        Pick::EqualIssue => self.next_equal_issue(),
                        Pick::AccuracyList => self.next_accuracy_slot(),
                        Pick::Uniform => self.next_uniform(),
                    };
                    let index = self.loaded[k];
                    self.push(out, index);
                }
            }
        }
    }

    #[inline]
    fn push(&mut self, out: &mut Vec<QuerySample>, index: QuerySampleIndex) {
        out.push(sample((&index, self.next_sample_id)));
        self.next_sample_id += 1;
    }

    /// The id the next generated sample will take.
    pub(crate) fn next_sample_id(&self) -> u64 {
        self.next_sample_id
    }

    #[inline]
    fn next_uniform(&mut self) -> usize {
        // `uniform_int_distribution<int>(0, end - 1)`
        uniform_int(&mut self.sample_rng, 0, self.distribution_end as u64 - 1) as usize
    }

    fn next_unique(&mut self) -> usize {
        let k = cyclic(&self.unique_list, self.unique_pos);
        self.unique_pos += 1;
        k
    }

    fn next_accuracy_slot(&mut self) -> usize {
        let k = cyclic(&self.accuracy_list, self.accuracy_pos);
        self.accuracy_pos += 1;
        k
    }

    #[inline]
    fn next_equal_issue(&mut self) -> usize {
        self.equal_issue_order.next()
    }
}

/// The sample with sequence id `seq` (its `ResponseId` is `seq + 1`: 0 is never an id).
#[inline]
fn sample((&index, seq): (&QuerySampleIndex, u64)) -> QuerySample {
    QuerySample {
        id: ResponseId(seq + 1),
        index,
    }
}

/// Reads a list cyclically. The official code reads past the end of the unique and accuracy
/// lists (undefined behaviour) only in configurations it never reaches; wrapping keeps us safe.
#[inline]
fn cyclic(list: &[u32], pos: usize) -> usize {
    list[pos % list.len()] as usize
}

/// `[0, stride, 2*stride, ... < end]` shuffled with `rng`.
fn shuffled_strided(end: usize, stride: usize, rng: &mut Mt19937) -> Vec<u32> {
    let mut list: Vec<u32> = (0..end).step_by(stride.max(1)).map(|i| i as u32).collect();
    shuffle(&mut list, rng);
    list
}

/// The official equal-issue list: ⌈min_queries / set_len⌉ successive shuffles of `0..set_len`
/// (each shuffling the one before), concatenated and read cyclically. Each round is drawn when
/// reading reaches it, from the sample engine's state where the rounds begin, so a long run
/// neither waits for them at start-up nor holds them all.
struct EqualIssueOrder {
    /// The sample engine where the first round is drawn.
    start: Mt19937,
    rng: Mt19937,
    permutation: Vec<u32>,
    rounds: u64,
    /// Rounds drawn into `permutation` since the last wrap (0: none yet).
    round: u64,
    position: usize,
}

impl EqualIssueOrder {
    /// Advances `rng` past every round, as the official code draws them all up front. Only a
    /// generator that reads the list (`keep`) holds them; otherwise the draws are made and
    /// dropped. A generator that keeps them never draws from `rng` again, so it is left where
    /// the rounds begin.
    fn new(min_queries: u64, set_len: usize, rng: &mut Mt19937, keep: bool) -> Self {
        let rounds = min_queries.div_ceil(set_len as u64);
        let start = rng.clone();
        if !keep {
            skip_shuffles(rounds, set_len, rng);
        }
        EqualIssueOrder {
            rng: start.clone(),
            start,
            permutation: (0..set_len as u32).collect(),
            rounds,
            round: 0,
            position: 0,
        }
    }

    #[inline]
    fn next(&mut self) -> usize {
        if self.rounds == 0 {
            // Zero rounds: the official list is empty and reading it would fault; read the
            // identity so a configuration that still reads it stays defined.
            let k = self.permutation[self.position % self.permutation.len()];
            self.position += 1;
            return k as usize;
        }
        if self.round == 0 || self.position == self.permutation.len() {
            self.next_round();
        }
        let k = self.permutation[self.position];
        self.position += 1;
        k as usize
    }

    #[cold]
    fn next_round(&mut self) {
        if self.round == self.rounds {
            // Past the end the official list is read again from its first round.
            self.rng = self.start.clone();
            for (slot, k) in self.permutation.iter_mut().zip(0..) {
                *slot = k;
            }
            self.round = 0;
        }
        shuffle(&mut self.permutation, &mut self.rng);
        self.round += 1;
        self.position = 0;
    }
}

/// The part of generation that decides how many queries there are and when: everything but
/// the sample draws. Cloning it counts the queries of a series without generating them.
#[derive(Clone)]
pub(crate) struct Timeline {
    schedule: Schedule,
    gen_duration_ns: i64,
    min_queries: u64,
    timestamp: i64,
    prev_timestamp: i64,
    generated: u64,
    /// Equal issue outside Offline keeps generating whole sets while time is short.
    equal_issue: bool,
    set_len: u64,
    samples_per_query: u64,
    remainder_pending: bool,
}

/// What is left of a series' generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Remaining {
    pub queries: u64,
    pub samples: u64,
    pub final_timestamp: i64,
    /// The count ran past its deadline: the rest is estimated from the mean gap.
    pub estimated: bool,
}

impl Timeline {
    /// Whether the gaps are drawn (Server) rather than constant.
    pub(crate) fn is_poisson(&self) -> bool {
        matches!(self.schedule, Schedule::Poisson { .. })
    }

    /// The official generation loop's condition.
    fn loop_continues(&self) -> bool {
        self.prev_timestamp < self.gen_duration_ns || self.generated < self.min_queries
    }

    /// Counts a generated query and moves the clock one gap on (one schedule draw, even for
    /// the last query); returns the query's scheduled offset.
    fn advance(&mut self) -> i64 {
        let scheduled = self.timestamp;
        self.generated += 1;
        self.prev_timestamp = self.timestamp;
        self.timestamp += self.schedule.next_gap();
        if self.equal_issue
            && self.generated >= self.min_queries
            && self.prev_timestamp < self.gen_duration_ns
        {
            self.min_queries += self.set_len;
        }
        scheduled
    }

    /// The size of the Offline-accuracy remainder query, once, if there is one.
    fn take_remainder(&mut self) -> Option<u64> {
        if !std::mem::take(&mut self.remainder_pending) {
            return None;
        }
        let remainder = self.set_len % self.samples_per_query;
        if remainder == 0 {
            return None;
        }
        self.generated += 1;
        Some(remainder)
    }

    /// About how many queries the series will have: exact for constant periods, a generous
    /// bound for Poisson schedules.
    pub(crate) fn expected_queries(&self) -> u64 {
        let by_time = match &self.schedule {
            Schedule::Period(period) if *period > 0 => {
                (self.gen_duration_ns as u64).div_ceil(*period as u64) + 1
            }
            Schedule::Period(_) => 0,
            Schedule::Poisson { qps, .. } => {
                let mean = self.gen_duration_ns as f64 / 1e9 * qps;
                (mean + 6.0 * mean.sqrt() + 16.0) as u64
            }
        };
        self.min_queries.max(by_time)
    }

    /// The queries (and their samples) still to come, consuming the schedule. A Poisson
    /// schedule is counted draw by draw (minutes for billions of queries): once `limit.stop`
    /// is set (the test was aborted) the count ends where it is, and past `limit.deadline` the
    /// rest is estimated from the mean gap instead (`Remaining::estimated`).
    pub(crate) fn count_remaining(&mut self, limit: &CountLimit<'_>) -> Remaining {
        let mut queries = 0u64;
        loop {
            if queries.is_multiple_of(1 << 16) && queries > 0 {
                if limit.stop.load(Ordering::Relaxed) {
                    return Remaining {
                        queries,
                        samples: queries * self.samples_per_query,
                        final_timestamp: self.timestamp,
                        estimated: false,
                    };
                }
                if limit
                    .deadline
                    .is_some_and(|deadline| Instant::now() >= deadline)
                {
                    let rest = self.estimate_rest();
                    let queries = queries + rest;
                    return Remaining {
                        queries,
                        samples: queries * self.samples_per_query,
                        final_timestamp: self.timestamp + (rest as f64 * self.mean_gap_ns()) as i64,
                        estimated: true,
                    };
                }
            }
            if let Schedule::Period(period) = self.schedule {
                if self.generated > 0 && !self.equal_issue && !self.remainder_pending {
                    // Constant period: the rest follows in closed form.
                    let mut by_time = 0u64;
                    if self.prev_timestamp < self.gen_duration_ns && period > 0 {
                        by_time = ((self.gen_duration_ns - self.prev_timestamp) as u64)
                            .div_ceil(period as u64);
                    }
                    let extra = by_time.max(self.min_queries.saturating_sub(self.generated));
                    self.generated += extra;
                    self.timestamp += extra as i64 * period;
                    self.prev_timestamp = self.timestamp - period;
                    queries += extra;
                    return Remaining {
                        queries,
                        samples: queries * self.samples_per_query,
                        final_timestamp: self.timestamp,
                        estimated: false,
                    };
                }
            }
            if self.loop_continues() {
                self.advance();
                queries += 1;
                continue;
            }
            let remainder = self.take_remainder();
            return Remaining {
                queries: queries + u64::from(remainder.is_some()),
                samples: queries * self.samples_per_query + remainder.unwrap_or(0),
                final_timestamp: self.timestamp,
                estimated: false,
            };
        }
    }

    /// The mean gap between queries, in ns.
    fn mean_gap_ns(&self) -> f64 {
        match &self.schedule {
            Schedule::Poisson { qps, .. } => 1e9 / qps,
            Schedule::Period(period) => *period as f64,
        }
    }

    /// How many more queries the generation loop would make, from the mean gap.
    fn estimate_rest(&self) -> u64 {
        let gap = self.mean_gap_ns();
        let by_time = if self.prev_timestamp < self.gen_duration_ns && gap > 0.0 {
            ((self.gen_duration_ns - self.prev_timestamp) as f64 / gap).ceil() as u64
        } else {
            0
        };
        by_time.max(self.min_queries.saturating_sub(self.generated))
    }
}

/// How long a count may run on past a run's `max_duration_ms` before it is estimated.
const COUNT_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

impl<'a> CountLimit<'a> {
    /// A count made while a series issues, from its start: in a series with `max_duration_ms`
    /// it may take that long and the grace. Without one (0) it is exact however long it
    /// takes, as upstream.
    pub(crate) fn while_issuing(stop: &'a AtomicBool, max_duration_ms: u64) -> Self {
        let deadline = (max_duration_ms > 0).then(|| {
            Instant::now() + std::time::Duration::from_millis(max_duration_ms) + COUNT_GRACE
        });
        CountLimit { stop, deadline }
    }

    /// A count made once issuing ended: with `max_duration_ms`, only the grace is left.
    pub(crate) fn after_issuing(stop: &'a AtomicBool, max_duration_ms: u64) -> Self {
        let deadline = (max_duration_ms > 0).then(|| Instant::now() + COUNT_GRACE);
        CountLimit { stop, deadline }
    }
}

/// When [`Timeline::count_remaining`] must end.
#[derive(Clone, Copy)]
pub(crate) struct CountLimit<'a> {
    /// Set when the test is aborted: the count ends where it is.
    pub stop: &'a AtomicBool,
    /// Past it, the rest is estimated (a run with `max_duration_ms` ends in bounded time).
    pub deadline: Option<Instant>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The official construction: every round drawn up front into one list.
    fn concatenated_rounds(min_queries: u64, set_len: usize, rng: &mut Mt19937) -> Vec<u32> {
        let mut permutation: Vec<u32> = (0..set_len as u32).collect();
        let mut list = Vec::new();
        for _ in 0..min_queries.div_ceil(set_len as u64) {
            shuffle(&mut permutation, rng);
            list.extend_from_slice(&permutation);
        }
        list
    }

    #[test]
    fn equal_issue_rounds_drawn_as_read_equal_the_official_list_read_cyclically() {
        for (min_queries, set_len) in [(200, 100), (1_000, 7), (64, 64), (5, 1_024)] {
            let mut rng = Mt19937::new(2_747_215_439_041_700_203);
            let list = concatenated_rounds(min_queries, set_len, &mut rng.clone());
            let mut order = EqualIssueOrder::new(min_queries, set_len, &mut rng, true);
            // Read well past the end: the list starts over from its first round.
            for i in 0..list.len() * 3 + 11 {
                assert_eq!(order.next(), list[i % list.len()] as usize, "read {i}");
            }
        }
    }

    #[test]
    fn unread_equal_issue_rounds_advance_the_engine_as_shuffles_do() {
        for (min_queries, set_len) in [(1_000, 100), (70_000, 70_000), (3, 1)] {
            let mut shuffled = Mt19937::new(7);
            concatenated_rounds(min_queries, set_len, &mut shuffled);
            let mut skipped = Mt19937::new(7);
            EqualIssueOrder::new(min_queries, set_len, &mut skipped, false);
            assert_eq!(
                skipped.next_u32(),
                shuffled.next_u32(),
                "{min_queries} {set_len}"
            );
        }
    }
}
