//! `mlperf-host sweep`: load as LLM serving benchmarks apply it (closed-loop concurrency, or
//! arrivals at a rate with an optional cap; `mlperf-serving`), through any plugin, one point
//! after another, each summed up over its measured window (after a warm-up that does not
//! count).

mod target;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use mlperf_loadgen::{TestScenario, TestSettings};
use mlperf_serving::{run_point, summarize, LoadError, LoadMode, PointPlan, PointSummary, Slo};

use crate::plugin::{DataFormat, RunDescription};
use crate::session::{open_plugin, PluginPlan, SampleLibrary, SamplePlan, SessionError};
use target::{PluginTarget, RecordSink};

/// A sweep: its points, in order, through one plugin instance.
pub struct SweepPlan {
    pub plugin: PluginPlan,
    pub samples: SamplePlan,
    pub points: Vec<LoadMode>,
    /// Each point's requests are started for this long; those started in the first
    /// `warmup` of it do not count.
    pub duration: Duration,
    pub warmup: Duration,
    pub max_requests: Option<usize>,
    pub slo: Slo,
    pub seed: u64,
    pub drain_timeout: Duration,
}

/// One point's load and figures.
#[derive(Debug, Clone)]
pub struct SweepPoint {
    pub mode: LoadMode,
    pub summary: PointSummary,
    /// Requests still unanswered when the drain after the point timed out.
    pub abandoned: usize,
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
}

/// Runs the points in order, handing each to `each` as it ends.
pub fn run_sweep(
    plan: &SweepPlan,
    mut each: impl FnMut(&SweepPoint),
) -> Result<Vec<SweepPoint>, SweepError> {
    if plan.points.is_empty() {
        return Err(SweepError::NoPoints);
    }
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
        });
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

    let sink = Arc::new(RecordSink::new(plan.points.len()));
    let mut points = Vec::with_capacity(plan.points.len());
    for (point, &mode) in plan.points.iter().enumerate() {
        let target = PluginTarget::new(&sut, Arc::clone(&sink), point);
        let run = run_point(
            &target,
            &PointPlan {
                mode,
                duration: plan.duration + plan.warmup,
                max_requests: plan.max_requests,
                samples: performance,
                seed: plan.seed.wrapping_add(point as u64),
                drain_timeout: plan.drain_timeout,
            },
        )
        .map_err(|source| SweepError::Load { point, source })?;
        if let Some(message) = sink.failure() {
            return Err(SweepError::PluginFailed { point, message });
        }
        let from = run.start_ns + plan.warmup.as_nanos() as i64;
        let to = run.start_ns + (plan.duration + plan.warmup).as_nanos() as i64;
        let swept = SweepPoint {
            mode,
            summary: summarize(&run.records, from, to.min(run.issue_end_ns + 1), &plan.slo),
            abandoned: run.abandoned,
        };
        each(&swept);
        points.push(swept);
    }
    if let Err(error) = sut.backend().unload_samples(&indices) {
        tracing::warn!("{error}");
    }
    let _ = library.as_qsl().unload_samples_from_ram(&indices);
    Ok(points)
}

/// What a sweep writes: each point's mode and figures (sweep.json).
pub fn points_json(points: &[SweepPoint]) -> serde_json::Value {
    serde_json::Value::Array(points.iter().map(point_json).collect())
}

fn point_json(point: &SweepPoint) -> serde_json::Value {
    let s = &point.summary;
    let distribution = |d: &mlperf_serving::Distribution| {
        serde_json::json!({
            "count": d.count, "mean_ns": d.mean, "p50_ns": d.p50, "p90_ns": d.p90,
            "p95_ns": d.p95, "p99_ns": d.p99, "max_ns": d.max,
        })
    };
    serde_json::json!({
        "load": mode_json(&point.mode),
        "window_s": s.window_s,
        "completed": s.completed,
        "failed": s.failed,
        "unfinished": s.unfinished,
        "abandoned": point.abandoned,
        "requests_per_s": s.requests_per_s,
        "output_tokens_per_s": s.output_tokens_per_s,
        "tokens_per_s_per_user": s.tokens_per_s_per_user,
        "mean_concurrency": s.mean_concurrency,
        "max_concurrency": s.max_concurrency,
        "goodput_per_s": s.goodput_per_s,
        "ttft": distribution(&s.ttft),
        "tpot": distribution(&s.tpot),
        "e2e": distribution(&s.e2e),
        "send_lateness": distribution(&s.send_lateness),
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
    }
}

/// The curve as CSV (sweep.csv): one line per point.
pub fn points_csv(points: &[SweepPoint]) -> String {
    let mut csv = String::from(
        "load,requests_per_s,output_tokens_per_s,tokens_per_s_per_user,mean_concurrency,\
         ttft_p50_ms,ttft_p90_ms,ttft_p99_ms,tpot_p50_ms,tpot_p90_ms,e2e_p50_ms,e2e_p99_ms,\
         goodput_per_s,completed,failed\n",
    );
    for point in points {
        let s = &point.summary;
        let ms = |ns: f64| ns / 1e6;
        csv.push_str(&format!(
            "{},{:.3},{:.3},{:.3},{:.3},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.3},{},{}\n",
            mode_label(&point.mode),
            s.requests_per_s,
            s.output_tokens_per_s,
            s.tokens_per_s_per_user,
            s.mean_concurrency,
            ms(s.ttft.p50),
            ms(s.ttft.p90),
            ms(s.ttft.p99),
            ms(s.tpot.p50),
            ms(s.tpot.p90),
            ms(s.e2e.p50),
            ms(s.e2e.p99),
            s.goodput_per_s,
            s.completed,
            s.failed,
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
    }
}

/// Where a sweep's files go.
pub fn files(out: &std::path::Path) -> (PathBuf, PathBuf) {
    (out.join("sweep.json"), out.join("sweep.csv"))
}
