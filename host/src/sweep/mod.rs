//! `mlperf-host sweep`: load as LLM serving benchmarks apply it (closed-loop concurrency, or
//! arrivals at a rate with an optional cap; `mlperf-serving`), through any plugin, one point
//! after another, each summed up over its measured window (after a warm-up that does not
//! count).

pub mod accuracy;
mod conversation;
pub mod endpoints;
mod power;
mod provisioned;
mod requests;
pub mod synthetic;
mod target;
pub mod trace;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use mlperf_loadgen::{TestScenario, TestSettings};
use mlperf_serving::{
    run_point, series, steady_window, summarize, LoadError, LoadMode, PointPlan, PointSummary,
    Region, SaturationRule, Series, Slo, SteadyRule, SteadyState,
};
use mlperf_tokenizer::Tokenizer;

use crate::plugin::{DataFormat, RunDescription};
use crate::session::{open_plugin, PluginPlan, SampleLibrary, SamplePlan, SessionError};
pub use power::PointPower;
use power::{point_power, ClockPair};
pub use provisioned::ProvisionedPower;
pub use requests::{requests_file, write_requests_jsonl, PointRequests};
use target::{PluginTarget, RecordSink};

/// A sweep: its points, in order, through one plugin instance.
pub struct SweepPlan {
    pub plugin: PluginPlan,
    pub samples: SamplePlan,
    pub points: Vec<LoadMode>,
    /// Each point's Endpoints concurrency region, where the points were made from regions
    /// (empty: none).
    pub regions: Vec<Region>,
    /// Each point's requests are started for this long; those started in the first
    /// `warmup` of it do not count.
    pub duration: Duration,
    pub warmup: Duration,
    pub max_requests: Option<usize>,
    pub slo: Slo,
    pub seed: u64,
    pub drain_timeout: Duration,
    /// Counts each prompt's tokens and each answer's (answers as UTF-8 text), beside the
    /// plugin's own count (an LLM server's usage).
    pub tokenizer: Option<PathBuf>,
    /// Which part of each measured window counts.
    pub steady: SteadyRule,
    /// Ends a point, and the sweep, when the server is over-saturated (none: never).
    pub saturation: Option<SaturationRule>,
    /// `--power` meters, started before each point and stopped after it.
    pub power: Vec<String>,
    /// A replay's request times (ns from the start; request k on sample k).
    pub schedule: Option<Arc<[i64]>>,
    /// `--provisioned-power`: what output tokens/s per kW divides by.
    pub provisioned: Option<ProvisionedPower>,
    /// `--accuracy`: after the points, every sample answered once (not timed).
    pub accuracy: Option<AccuracyPass>,
    /// Multi-turn conversations of this many sessions (sample k: turn k / N of session
    /// k % N): each turn's input tokens count its session's history.
    pub sessions: Option<usize>,
    /// `--export-requests`: each point's requests' records go to `run_sweep`'s `each`
    /// (`SweepPoint::requests`).
    pub keep_requests: bool,
}

/// The accuracy pass: samples 0..n in order, each asked once, `concurrency` in flight.
#[derive(Debug, Clone, Copy)]
pub struct AccuracyPass {
    pub concurrency: usize,
    /// The first this many samples (none: every sample of the data set).
    pub samples: Option<usize>,
}

/// What the accuracy pass got back.
#[derive(Debug, Clone)]
pub struct AccuracyAnswers {
    /// Sample k's answer (none: it failed or never ended).
    pub answers: Vec<Option<Vec<u8>>>,
    pub failed: usize,
    pub abandoned: usize,
    /// From the first request to the last answer.
    pub duration_s: f64,
    /// The data set's samples (more than were asked with `--accuracy-samples`).
    pub data_set: usize,
}

/// One point's load and figures.
#[derive(Debug, Clone)]
pub struct SweepPoint {
    pub mode: LoadMode,
    /// Its Endpoints concurrency region, if the points were made from regions.
    pub region: Option<Region>,
    /// Figures over the steady part of the measured window.
    pub summary: PointSummary,
    /// The answered requests' values over that part.
    pub series: Series,
    pub steady: SteadyState,
    /// Requests still unanswered when the drain after the point timed out.
    pub abandoned: usize,
    /// Why the point was ended early.
    pub saturated: Option<String>,
    /// With `--power`: its figures over the steady window, or why there are none.
    pub power: Option<Result<PointPower, String>>,
    /// With `--provisioned-power`: the system's provisioned power (the same for every point).
    pub provisioned: Option<ProvisionedPower>,
    /// Failed requests of the window by kind (`status 503`, `timeout`, ...): how many, and
    /// the first one's message.
    pub errors: Vec<ErrorCount>,
    /// Why the point is not VALID (empty: it is).
    pub invalid: Vec<String>,
    /// Every request as it went, with `SweepPlan::keep_requests`: given to `run_sweep`'s
    /// `each`, then dropped.
    pub requests: Option<PointRequests>,
}

/// The failed requests of one kind.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorCount {
    pub kind: String,
    pub count: usize,
    pub first: String,
}

impl SweepPoint {
    pub fn valid(&self) -> bool {
        self.invalid.is_empty()
    }

    /// Output tokens/s per provisioned kW (MLPerf Endpoints' `system_tps_per_kw`).
    pub fn tokens_per_s_per_provisioned_kw(&self) -> Option<f64> {
        self.provisioned
            .as_ref()
            .map(|power| power.per_kw(self.summary.output_tokens_per_s))
    }
}

/// A sweep's points, and why it stopped before its last, if it did.
#[derive(Debug, Clone)]
pub struct Sweep {
    pub points: Vec<SweepPoint>,
    pub stopped: Option<String>,
    /// With `--accuracy`: the answers of the accuracy pass, or why it could not run (the
    /// points stand either way).
    pub accuracy: Option<Result<AccuracyAnswers, String>>,
}

#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error("point {point}: {source}")]
    Load { point: usize, source: LoadError },
    #[error("loading the samples: {0}")]
    Samples(String),
    #[error("the plugin failed during point {point}: {message}")]
    PluginFailed { point: usize, message: String },
    #[error("a sweep needs at least one point (--concurrency or --rate)")]
    NoPoints,
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    #[error(transparent)]
    Power(#[from] crate::power::PowerError),
}

/// Runs the points in order, handing each to `each` as it ends; an over-saturated point
/// ends the sweep.
pub fn run_sweep(plan: &SweepPlan, mut each: impl FnMut(&SweepPoint)) -> Result<Sweep, SweepError> {
    if plan.points.is_empty() {
        return Err(SweepError::NoPoints);
    }
    let tokenizer = plan
        .tokenizer
        .as_deref()
        .map(Tokenizer::from_file)
        .transpose()
        .map_err(|e| SweepError::Tokenizer(e.to_string()))?;
    for (point, mode) in plan.points.iter().enumerate() {
        mode.check()
            .map_err(|source| SweepError::Load { point, source })?;
    }
    let mut library = SampleLibrary::open(&plan.samples)?;
    let (performance, total) = {
        let qsl = library.as_qsl();
        (qsl.performance_sample_count(), qsl.total_sample_count())
    };
    let settings = TestSettings {
        scenario: TestScenario::Server,
        ..TestSettings::default()
    };
    let run =
        RunDescription::new(&settings, performance as u64, total as u64).with_format(DataFormat {
            inputs: library.named_inputs(&plan.samples)?,
            logged_outputs: Vec::new(),
            postprocess: None,
        });
    // Opened before anything runs: a meter that cannot be reached is refused here.
    let mut meters = crate::power::Meters::open(&plan.power, plan.plugin.isolation.as_ref())?;
    let mut sut = open_plugin(&plan.plugin, &plan.samples, &run)?;
    library.attach(&mut sut);
    // One set, loaded untimed before the first point and kept through the sweep.
    let indices: Vec<usize> = (0..performance).collect();
    library
        .as_qsl()
        .load_samples_to_ram(&indices)
        .map_err(|e| SweepError::Samples(e.to_string()))?;
    sut.backend()
        .load_samples(&indices)
        .map_err(|e| SweepError::Samples(e.to_string()))?;

    let prompt_input = run
        .format()
        .inputs
        .iter()
        .find(|input| input.name == "prompt")
        .map(|input| (input.offset as usize, input.length as usize, input.dtype));
    let input_tokens = prompt_tokens(&library, &indices, prompt_input, tokenizer.as_ref())?;

    let accuracy_requests = plan
        .accuracy
        .map(|pass| pass.samples.unwrap_or(total).clamp(1, total.max(1)));
    let sink = Arc::new(RecordSink::new(
        plan.points.len(),
        tokenizer,
        accuracy_requests,
    ));
    // Inter-token gaps and single requests' failures reach a sweep from every instance.
    sut.report_tokens_to(Arc::clone(&sink) as Arc<dyn crate::plugin::TokenReports>);
    sut.report_failures_to(Arc::clone(&sink) as Arc<dyn crate::plugin::FailureReports>);
    sut.leave_completions_to_reader();
    // From here a signal ends the point under way and the sweep after it, with every file
    // of the points run written (before, it ends the process: nothing was measured).
    crate::session::interrupt::test_begins();
    let mut points = Vec::with_capacity(plan.points.len());
    let mut stopped = None;
    for (point, &mode) in plan.points.iter().enumerate() {
        if let Some((_, signal)) = crate::session::interrupt::received() {
            stopped = Some(not_run_after(point, plan.points.len(), signal));
            break;
        }
        let target = PluginTarget::new(&sut, Arc::clone(&sink), point, &input_tokens);
        let mark = match meters.as_mut() {
            Some(meters) => Some(meters.start(mlperf_power::Phase::Testing)?),
            None => None,
        };
        let clocks = ClockPair::now();
        let mut run = run_point(
            &target,
            &PointPlan {
                mode,
                duration: plan.duration + plan.warmup,
                max_requests: plan.max_requests,
                samples: performance,
                seed: plan.seed.wrapping_add(point as u64),
                drain_timeout: plan.drain_timeout,
                saturation: plan.saturation,
                schedule: plan.schedule.clone(),
            },
        )
        .map_err(|source| SweepError::Load { point, source })?;
        if let Some(sessions) = plan.sessions {
            conversation::count_histories(&mut run.records, performance, sessions);
        }
        let recording = meters.as_mut().zip(mark).map(|(m, mark)| m.stop(mark));
        if let Some(message) = sink.failure() {
            return Err(SweepError::PluginFailed { point, message });
        }
        let from = run.start_ns + plan.warmup.as_nanos() as i64;
        let to = (run.start_ns + (plan.duration + plan.warmup).as_nanos() as i64)
            .min(run.issue_end_ns + 1)
            .max(from + 1);
        let mut steady = match mode {
            // A trace's load changes as it was recorded: the whole window counts.
            LoadMode::Replay { .. } => SteadyState {
                from_ns: from,
                to_ns: to,
                dropped_bins: 0,
                bins: 0,
                steady: true,
                reason: "a replay is measured over its whole window".to_string(),
            },
            _ => steady_window(&run.records, from, to, &plan.steady),
        };
        // Judged steady while it was loaded; counted until its last answer.
        if let Some(end) = count_bound_end(&run) {
            steady.to_ns = steady.to_ns.max(end);
        }
        let errors = errors_by_kind(
            sink.take_request_failures(point),
            &run.records,
            steady.from_ns,
            steady.to_ns,
        );
        let summary = summarize(
            &run.records,
            &run.token_gaps,
            steady.from_ns,
            steady.to_ns,
            &plan.slo,
        );
        let power = recording.map(|recording| {
            let tokens = summary.output_tokens_per_s * summary.window_s;
            point_power(&recording, clocks, steady.from_ns, steady.to_ns, tokens)
        });
        let swept = SweepPoint {
            power,
            provisioned: plan.provisioned.clone(),
            invalid: invalid_because(
                &summary,
                &steady,
                &errors,
                run.abandoned,
                [&run.saturated, &run.aborted, &run.failing]
                    .into_iter()
                    .filter_map(|why| why.as_deref()),
            ),
            errors,
            mode,
            region: plan.regions.get(point).copied(),
            series: series(&run.records, steady.from_ns, steady.to_ns),
            summary,
            steady,
            abandoned: run.abandoned,
            saturated: run.saturated,
            requests: plan.keep_requests.then_some(PointRequests {
                point,
                records: run.records,
                start_ns: run.start_ns,
                samples: performance,
            }),
        };
        each(&swept);
        // Kept for `each` only: a long sweep would hold every request of every point.
        let mut swept = swept;
        swept.requests = None;
        let saturated = swept.saturated.is_some();
        points.push(swept);
        // An abort ends the sweep; failures in a row or over-saturation end it before the
        // next point.
        let left = plan.points.len() - point - 1;
        let not_run = match left {
            0 => String::new(),
            n => format!(": the {n} point(s) after it were not run"),
        };
        let label = format!("point {} ({})", point + 1, mode_label(&mode));
        let ended = match (&run.aborted, &run.failing) {
            (Some(why), _) => Some(format!("{label} was cut short, {why}{not_run}")),
            _ if left == 0 => None,
            (None, Some(why)) => Some(format!("{label}: {why}{not_run}")),
            (None, None) if saturated => Some(format!("{label} was over-saturated{not_run}")),
            (None, None) => None,
        };
        if ended.is_some() {
            stopped = ended;
            break;
        }
    }
    // The set loaded now: the performance set, or the accuracy pass's when it needed more.
    let mut loaded = indices;
    let interrupted = crate::session::interrupt::received();
    let accuracy = match (plan.accuracy, accuracy_requests) {
        (Some(_), Some(_)) if interrupted.is_some() => Some(Err(format!(
            "not run: the sweep was interrupted by {}",
            interrupted.map_or("", |(_, name)| name)
        ))),
        (Some(pass), Some(requests)) => {
            let abandoned = points.iter().map(|p: &SweepPoint| p.abandoned).sum();
            Some(accuracy_pass(
                plan,
                AccuracyRun {
                    pass,
                    requests,
                    data_set: total,
                    abandoned,
                },
                &sut,
                &sink,
                &mut library,
                &mut loaded,
            ))
        }
        _ => None,
    };
    if let Err(error) = sut.backend().unload_samples(&loaded) {
        tracing::warn!("{error}");
    }
    let _ = library.as_qsl().unload_samples_from_ram(&loaded);
    Ok(Sweep {
        points,
        stopped,
        accuracy,
    })
}

/// Why the points from `point` (0-based) on were not run.
fn not_run_after(point: usize, points: usize, signal: &str) -> String {
    format!(
        "interrupted by {signal} before point {}: the {} point(s) from it were not run",
        point + 1,
        points - point
    )
}

/// A point ended by `--max-requests` lasts until its last request ended (past its last send),
/// so that its rates count the time its requests took, as a client that sends a count of
/// requests measures them.
fn count_bound_end(run: &mlperf_serving::PointRun) -> Option<i64> {
    if !run.request_count_reached {
        return None;
    }
    let last_end = run.records.iter().filter_map(|r| r.completed_ns).max()?;
    Some(last_end.max(run.issue_end_ns) + 1)
}

/// What the accuracy pass asks: its settings, how many samples, of how many, and how many
/// requests of the points never ended.
struct AccuracyRun {
    pass: AccuracyPass,
    requests: usize,
    data_set: usize,
    abandoned: usize,
}

/// Samples 0..requests, each asked once in order with `pass.concurrency` in flight, their
/// answers kept; when they are more than the `loaded` set, they replace it (untimed). Its
/// failure is its own: the points before it stand.
fn accuracy_pass(
    plan: &SweepPlan,
    run: AccuracyRun,
    sut: &crate::plugin::Instance,
    sink: &Arc<RecordSink>,
    library: &mut SampleLibrary,
    loaded: &mut Vec<usize>,
) -> Result<AccuracyAnswers, String> {
    let point = plan.points.len();
    let requests = run.requests;
    if requests > loaded.len() {
        if run.abandoned > 0 {
            return Err(format!(
                "{} request(s) of the points never ended, and the pass would unload the samples \
                 they read to load its {requests}",
                run.abandoned
            ));
        }
        let samples: Vec<usize> = (0..requests).collect();
        let reload = |what: &str, e: &dyn std::fmt::Display| format!("{what}: {e}");
        sut.backend()
            .unload_samples(loaded)
            .map_err(|e| reload("unloading the performance set", &e))?;
        let qsl = library.as_qsl();
        qsl.unload_samples_from_ram(loaded)
            .map_err(|e| reload("unloading the performance set", &e))?;
        // Nothing is loaded from here until the new set is: say so to the caller.
        loaded.clear();
        qsl.load_samples_to_ram(&samples)
            .map_err(|e| reload("loading the samples", &e))?;
        sut.backend()
            .load_samples(&samples)
            .map_err(|e| reload("loading the samples", &e))?;
        *loaded = samples;
    }
    let target = PluginTarget::new(sut, Arc::clone(sink), point, &[]);
    let concurrency = run.pass.concurrency.max(1);
    // The request count ends it; requests that never end, at the latest when each round of
    // `concurrency` requests could have taken the drain timeout.
    let rounds = u32::try_from(requests.div_ceil(concurrency)).unwrap_or(u32::MAX);
    let records = run_point(
        &target,
        &PointPlan {
            mode: LoadMode::Concurrency(concurrency),
            duration: plan.drain_timeout.saturating_mul(rounds.saturating_add(1)),
            max_requests: Some(requests),
            samples: requests,
            seed: plan.seed,
            drain_timeout: plan.drain_timeout,
            saturation: None,
            schedule: None,
        },
    )
    .map_err(|e| e.to_string())?;
    if let Some(message) = sink.failure() {
        return Err(format!("the plugin failed: {message}"));
    }
    if let Some(why) = records.aborted {
        return Err(format!("cut short, {why}: not scored"));
    }
    let last_end = records
        .records
        .iter()
        .filter_map(|record| record.completed_ns)
        .max()
        .unwrap_or(records.start_ns);
    // Only answers that ended the request (not ones a plugin gave after failing it).
    let mut answers = sink.take_answers();
    for (answer, record) in answers.iter_mut().zip(&records.records) {
        if record.failed || record.completed_ns.is_none() {
            *answer = None;
        }
    }
    Ok(AccuracyAnswers {
        answers,
        failed: records
            .records
            .iter()
            .filter(|record| record.failed)
            .count(),
        abandoned: records.abandoned,
        duration_s: (last_end - records.start_ns) as f64 / 1e9,
        data_set: run.data_set,
    })
}

/// Why a point's figures do not stand: the server or the load went wrong, or the point never
/// settled.
fn invalid_because<'a>(
    summary: &PointSummary,
    steady: &SteadyState,
    errors: &[ErrorCount],
    abandoned: usize,
    ended_early: impl Iterator<Item = &'a str>,
) -> Vec<String> {
    let mut invalid: Vec<String> = ended_early.map(str::to_string).collect();
    if summary.completed == 0 {
        invalid.push("no request was answered in the measured window".to_string());
    }
    if summary.failed > 0 {
        let kinds: Vec<String> = errors
            .iter()
            .map(|e| format!("{}: {}", e.kind, e.count))
            .collect();
        invalid.push(match kinds.is_empty() {
            true => format!("{} request(s) failed", summary.failed),
            false => format!(
                "{} request(s) failed ({})",
                summary.failed,
                kinds.join(", ")
            ),
        });
    }
    if abandoned > 0 {
        invalid.push(format!("{abandoned} request(s) never ended"));
    }
    if !steady.steady {
        invalid.push(steady.reason.clone());
    }
    invalid
}

/// The failures of requests sent in `[from_ns, to_ns)`, counted by kind, most first.
fn errors_by_kind(
    failures: Vec<(usize, target::RequestFailure)>,
    records: &[mlperf_serving::RequestRecord],
    from_ns: i64,
    to_ns: i64,
) -> Vec<ErrorCount> {
    let mut counts: Vec<ErrorCount> = Vec::new();
    for (request, failure) in failures {
        let inside = records
            .get(request)
            .is_some_and(|r| r.sent_in(from_ns, to_ns));
        if !inside {
            continue;
        }
        let kind = failure.label();
        match counts.iter_mut().find(|c| c.kind == kind) {
            Some(count) => count.count += 1,
            None => counts.push(ErrorCount {
                kind,
                count: 1,
                first: failure.message,
            }),
        }
    }
    counts.sort_by(|a, b| b.count.cmp(&a.count).then(a.kind.cmp(&b.kind)));
    counts
}

/// The token ids in int32 `bytes` before their negative padding.
fn token_ids_in(bytes: &[u8]) -> u64 {
    let ids: Vec<i32> = bytes
        .chunks_exact(4)
        .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    ids.iter()
        .rposition(|&id| id >= 0)
        .map_or(0, |last| last + 1) as u64
}

/// Each loaded sample's prompt tokens: int32 token ids counted as they are (negative padding
/// dropped), or UTF-8 text (NUL padding dropped) through the tokenizer; 0 where unknown
/// (text without a tokenizer, samples without data).
fn prompt_tokens(
    library: &SampleLibrary,
    indices: &[usize],
    prompt_input: Option<(usize, usize, i32)>,
    tokenizer: Option<&Tokenizer>,
) -> Result<Vec<u64>, SweepError> {
    let SampleLibrary::Dataset { library, .. } = library else {
        return Ok(Vec::new());
    };
    let arena = library.arena();
    let loaded = arena
        .read()
        .ok_or_else(|| SweepError::Samples("the samples are not loaded".to_string()))?;
    let mut counts = vec![0; indices.iter().max().map_or(0, |&i| i + 1)];
    for &index in indices {
        // A set in a device's memory is not read here: its lengths stay unknown.
        let Some(sample) = loaded.get(index) else {
            continue;
        };
        // The input named `prompt`, where the samples have named inputs.
        let (data, dtype) = match prompt_input {
            Some((offset, length, dtype)) => (
                sample.data.get(offset..offset + length).unwrap_or_default(),
                mlperf_plugin_api::sdk::DType::from_raw(dtype),
            ),
            None => (sample.data, sample.dtype),
        };
        counts[index] = match dtype {
            // Token ids, padded at the end with negative ids (as the network plugin reads
            // them).
            mlperf_plugin_api::sdk::DType::I32 => token_ids_in(data),
            _ => {
                let Some(tokenizer) = tokenizer else {
                    continue;
                };
                let end = data.iter().position(|&b| b == 0).unwrap_or(data.len());
                let text = std::str::from_utf8(&data[..end]).map_err(|e| {
                    SweepError::Tokenizer(format!("sample {index} is not UTF-8 text: {e}"))
                })?;
                tokenizer
                    .encode(text)
                    .map_err(|e| SweepError::Tokenizer(format!("sample {index}: {e}")))?
                    .len() as u64
            }
        };
    }
    Ok(counts)
}

/// What a sweep writes (sweep.json): each point's mode and figures, and why it stopped early.
pub fn sweep_json(sweep: &Sweep) -> serde_json::Value {
    serde_json::json!({
        "points": sweep.points.iter().map(point_json).collect::<Vec<_>>(),
        "stopped": sweep.stopped,
    })
}

/// One point's load, verdict and figures (times in ns; the early-stopping estimate beside
/// each percentile, null where the samples are too few).
pub fn point_json(point: &SweepPoint) -> serde_json::Value {
    let s = &point.summary;
    let distribution = |d: &mlperf_serving::Distribution| {
        let e = &d.estimates;
        serde_json::json!({
            "count": d.count, "min": d.min, "mean": d.mean, "p50": d.p50, "p90": d.p90,
            "p95": d.p95, "p99": d.p99, "max": d.max,
            "early_stopping": {"p50": e.p50, "p90": e.p90, "p95": e.p95, "p99": e.p99},
        })
    };
    serde_json::json!({
        "load": mode_json(&point.mode),
        "region": point.region.map(Region::name),
        "result": if point.valid() { "VALID" } else { "INVALID" },
        "invalid_because": point.invalid,
        "steady_state": {
            "steady": point.steady.steady,
            "reason": point.steady.reason,
            "dropped_bins": point.steady.dropped_bins,
            "bins": point.steady.bins,
        },
        "saturated": point.saturated,
        "power": match &point.power {
            None => serde_json::Value::Null,
            Some(Ok(p)) => serde_json::json!({
                "mean_watts": p.mean_watts, "joules": p.joules, "readings": p.readings,
                "tokens_per_joule": p.tokens_per_joule,
                "output_tokens_per_s_per_kw": p.tokens_per_s_per_kw,
            }),
            Some(Err(why)) => serde_json::json!({ "error": why }),
        },
        "provisioned_power": point.provisioned.as_ref().map(|power| serde_json::json!({
            "kw": power.kw, "source": power.source,
            "output_tokens_per_s_per_kw": power.per_kw(s.output_tokens_per_s),
        })),
        "window_s": s.window_s,
        "completed": s.completed,
        "failed": s.failed,
        "errors": point.errors.iter().map(|e| {
            (e.kind.clone(), serde_json::json!({"count": e.count, "first": e.first}))
        }).collect::<serde_json::Map<_, _>>(),
        "unfinished": s.unfinished,
        "abandoned": point.abandoned,
        "requests_per_s": s.requests_per_s,
        "output_tokens_per_s": s.output_tokens_per_s,
        "tokens_per_s_per_user": s.tokens_per_s_per_user,
        "mean_concurrency": s.mean_concurrency,
        "max_concurrency": s.max_concurrency,
        "goodput_per_s": s.goodput_per_s,
        "input_tokens_per_s": s.input_tokens_per_s,
        "tokens_counted": s.tokens_counted,
        "token_count_mismatches": s.token_count_mismatches,
        "input_tokens": distribution(&s.input_tokens),
        "output_tokens": distribution(&s.output_tokens),
        "ttft_ns": distribution(&s.ttft),
        "tpot_ns": distribution(&s.tpot),
        "itl_ns": distribution(&s.itl),
        "e2e_ns": distribution(&s.e2e),
        "send_lateness_ns": distribution(&s.send_lateness),
    })
}

fn mode_json(mode: &LoadMode) -> serde_json::Value {
    use mlperf_serving::Arrivals;
    match *mode {
        LoadMode::Concurrency(n) => serde_json::json!({ "concurrency": n }),
        LoadMode::Rate {
            arrivals,
            max_concurrency,
        } => {
            let (kind, burstiness) = match arrivals {
                Arrivals::Poisson { .. } => ("poisson", None),
                Arrivals::Gamma { burstiness, .. } => ("gamma", Some(burstiness)),
                Arrivals::Constant { .. } => ("constant", None),
            };
            serde_json::json!({
                "rate": arrivals.rate(),
                "arrivals": kind,
                "burstiness": burstiness,
                "max_concurrency": max_concurrency,
            })
        }
        LoadMode::Replay { max_concurrency } => {
            serde_json::json!({ "arrivals": "replay", "max_concurrency": max_concurrency })
        }
    }
}

/// The curve as CSV (sweep.csv): one line per point.
pub fn points_csv(points: &[SweepPoint]) -> String {
    let mut csv = String::from(
        "load,result,requests_per_s,output_tokens_per_s,tokens_per_s_per_user,mean_concurrency,\
         ttft_p50_ms,ttft_p90_ms,ttft_p99_ms,tpot_p50_ms,tpot_p90_ms,itl_p50_ms,itl_p99_ms,\
         e2e_p50_ms,e2e_p99_ms,goodput_per_s,completed,failed,tokens_per_s_per_provisioned_kw\n",
    );
    for point in points {
        let s = &point.summary;
        let ms = |ns: f64| ns / 1e6;
        csv.push_str(&format!(
            "{},{},{:.3},{:.3},{:.3},{:.3},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.3},{},{},{}\n",
            mode_label(&point.mode),
            if point.valid() { "VALID" } else { "INVALID" },
            s.requests_per_s,
            s.output_tokens_per_s,
            s.tokens_per_s_per_user,
            s.mean_concurrency,
            ms(s.ttft.p50),
            ms(s.ttft.p90),
            ms(s.ttft.p99),
            ms(s.tpot.p50),
            ms(s.tpot.p90),
            ms(s.itl.p50),
            ms(s.itl.p99),
            ms(s.e2e.p50),
            ms(s.e2e.p99),
            s.goodput_per_s,
            s.completed,
            s.failed,
            point
                .tokens_per_s_per_provisioned_kw()
                .map_or(String::new(), |v| format!("{v:.3}")),
        ));
    }
    csv
}

/// A point's load in a few words: `concurrency 8`, `poisson 20/s`, `gamma(0.5) 20/s cap 8`.
pub fn mode_label(mode: &LoadMode) -> String {
    use mlperf_serving::Arrivals;
    match *mode {
        LoadMode::Concurrency(n) => format!("concurrency {n}"),
        LoadMode::Rate {
            arrivals,
            max_concurrency,
        } => {
            let kind = match arrivals {
                Arrivals::Poisson { .. } => "poisson".to_string(),
                Arrivals::Gamma { burstiness, .. } => format!("gamma({burstiness})"),
                Arrivals::Constant { .. } => "constant".to_string(),
            };
            let cap = max_concurrency.map_or(String::new(), |n| format!(" cap {n}"));
            format!("{kind} {}/s{cap}", arrivals.rate())
        }
        LoadMode::Replay { max_concurrency } => {
            let cap = max_concurrency.map_or(String::new(), |n| format!(" cap {n}"));
            format!("trace replay{cap}")
        }
    }
}

/// Where a sweep's files go.
pub fn files(out: &std::path::Path) -> (PathBuf, PathBuf) {
    (out.join("sweep.json"), out.join("sweep.csv"))
}

/// Where point `index` (from 0)'s own JSON goes: point-1.json, point-2.json, ...
pub fn point_file(out: &std::path::Path, index: usize) -> PathBuf {
    out.join(format!("point-{}.json", index + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_id_prompts_are_counted_without_their_padding() {
        let bytes =
            |ids: &[i32]| -> Vec<u8> { ids.iter().flat_map(|id| id.to_le_bytes()).collect() };
        assert_eq!(token_ids_in(&bytes(&[5, 0, 7, -1, -1])), 3);
        // Token 0 is a token; a negative inside the prompt is not padding.
        assert_eq!(token_ids_in(&bytes(&[0, -1, 4])), 3);
        assert_eq!(token_ids_in(&bytes(&[-1, -1])), 0);
        assert_eq!(token_ids_in(&[]), 0);
    }
}
