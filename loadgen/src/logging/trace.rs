//! `mlperf_log_trace.json`: Chrome trace events that Perfetto and chrome://tracing load —
//! one async `Sample` span per sample from its scheduled time to its completion, and a span per
//! series. Unlike the official file it is valid JSON. Written only when asked
//! (`LogSettings::enable_trace`): it holds two lines per sample.
//! The file's framing is here; the events come from `engine::trace`.

pub(crate) const HEADER: &str = "{\"traceEvents\":[\n";

/// The closing event and metadata; `origin_us` is the trace origin on the Unix clock.
pub(crate) fn footer(origin_us: u64) -> String {
    format!(
        "{{\"name\":\"LastTrace\"}}\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{{\n\"ts\":{origin_us},\n\"version\":\"MLPerf LoadGen v1.0\"\n}}\n}}\n"
    )
}
