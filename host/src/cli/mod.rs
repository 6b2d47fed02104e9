//! The `mlperf-host` subcommands other than `bench`, and what they share: logging set-up,
//! duration arguments and error reporting at the binary's edge.

pub(crate) mod audit;
pub(crate) mod benchmark;
pub(crate) mod campaign;
mod campaign_run;
pub(crate) mod check;
pub(crate) mod compare;
pub(crate) mod console;
pub(crate) mod dataset;
pub(crate) mod plugin_flags;
mod plugin_sdk;
pub(crate) mod plugins;
pub(crate) mod power;
pub(crate) mod progress;
pub(crate) mod report;
pub(crate) mod results;
pub(crate) mod run;
pub(crate) mod run_args;
pub(crate) mod run_plan;
pub(crate) mod set;
mod shell;
pub(crate) mod submit;
pub(crate) mod sweep;
pub(crate) mod sysinfo;
pub(crate) mod tune;

use std::process::ExitCode;
use std::time::Duration;

use tracing_subscriber::EnvFilter;

/// The environment variable holding a tracing filter (`info`, `mlperf_host=debug`, …). When set
/// it replaces the level `-v`/`--quiet` choose.
/// Exit status of a completed run that is INVALID under `--require-valid`, and of a failed
/// verification or check.
pub(crate) const EXIT_INVALID: u8 = 3;

pub(crate) const LOG_ENV: &str = "MLPERF_HOST_LOG";

/// Sends tracing to stderr: warnings by default, `-v` info, `-vv` debug, `-vvv` trace,
/// `--quiet` errors only; [`LOG_ENV`] overrides all of them.
pub(crate) fn init_logging(verbose: u8, quiet: bool) {
    let level = match (quiet, verbose) {
        (true, _) => "error",
        (false, 0) => "warn",
        (false, 1) => "info",
        (false, 2) => "debug",
        (false, _) => "trace",
    };
    let mut bad_env = None;
    let filter = match std::env::var(LOG_ENV) {
        Ok(spec) if !spec.trim().is_empty() => EnvFilter::try_new(&spec).unwrap_or_else(|e| {
            bad_env = Some(format!("ignoring {LOG_ENV}={spec:?}: {e}"));
            EnvFilter::new(level)
        }),
        _ => EnvFilter::new(level),
    };
    // Fails only if a subscriber is already installed; that one is kept.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .try_init();
    if let Some(message) = bad_env {
        eprintln!("warning: {message}");
    }
}

/// Prints an error as one `error: …` line chain (each cause after a colon) and fails.
pub(crate) fn report_error(error: &anyhow::Error) -> ExitCode {
    eprintln!("error: {error:#}");
    ExitCode::FAILURE
}

/// Listens for SIGINT, SIGTERM and SIGHUP for the session about to run.
pub(crate) fn watch_signals() {
    if let Err(error) = mlperf_host::session::interrupt::install() {
        tracing::warn!("cannot watch for SIGINT/SIGTERM: {error}");
    }
}

/// The exit status of a run a signal ended (128 + its number), after saying so.
pub(crate) fn interrupted(out: &std::path::Path) -> Option<ExitCode> {
    let (number, name) = mlperf_host::session::interrupt::received()?;
    eprintln!(
        "error: interrupted by {name}; the run is INVALID (logs as far as written in {})",
        out.display()
    );
    Some(ExitCode::from((128 + number) as u8))
}

/// Ends the process now with status 1: the plugin's destroy has not returned, and exit
/// handlers could wait on what it holds.
pub(crate) fn exit_without_plugin(args: &run_args::RunArgs) -> ! {
    eprintln!(
        "error: the plugin's destroy has not returned after {:?} (--stall-timeout); exiting without it (logs in {})",
        args.stall_timeout,
        args.out.display()
    );
    mlperf_host::official::engine::exit_immediately(1)
}

/// What `run` and `audit` do when a call into an in-process plugin outlasts `--stall-timeout`:
/// the engine has written every log, INVALID with the reason; print the summary and end the
/// process with status 1 without waiting for the call.
pub(crate) fn abandon_hook(args: &run_args::RunArgs) -> mlperf_host::loadgen::AbandonHook {
    let (out, quiet) = (args.out.clone(), args.quiet);
    mlperf_host::loadgen::AbandonHook(std::sync::Arc::new(move |result| {
        if !quiet {
            print!(
                "{}",
                mlperf_host::loadgen::logging::summary::render_summary(result)
            );
        }
        eprintln!(
            "error: {} (--stall-timeout): the run is INVALID; exiting without the plugin (logs in {})",
            result.abandoned.as_deref().unwrap_or("a call into the plugin has not returned"),
            out.display()
        );
        mlperf_host::official::engine::exit_immediately(1)
    }))
}

pub(crate) use mlperf_host::error_chain;

/// Maps a subcommand's result to the process exit status.
pub(crate) fn exit_with(result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => report_error(&error),
    }
}

/// A duration with a unit: `250us`, `1ms`, `1.5s`, `2m` (also `ns`, `µs`). `0` needs none.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    parse_duration_with(text, None)
}

/// As [`parse_duration`], a bare number being seconds.
pub(crate) fn parse_seconds(text: &str) -> Result<Duration, String> {
    parse_duration_with(text, Some(1.0))
}

/// As [`parse_seconds`], refusing a duration of nothing: a bound no call or measurement can
/// keep (a stall timeout of 0 blames every plugin; a sweep point of 0 s measures nothing).
pub(crate) fn parse_positive_seconds(text: &str) -> Result<Duration, String> {
    let duration = parse_seconds(text)?;
    if duration.is_zero() {
        return Err(format!(
            "{text:?} is no time: give a duration of more than 0 (e.g. 10s)"
        ));
    }
    Ok(duration)
}

/// A count of at least one (`bench --queries`, `--samples`, `--qsl-samples`).
pub(crate) fn parse_count(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(0) => Err("0: give at least 1".to_owned()),
        Ok(count) => Ok(count),
        Err(_) => Err(format!("{text:?} is not a whole number of at least 1")),
    }
}

/// A rate above 0 (`bench --qps`).
pub(crate) fn parse_rate(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(rate) if rate.is_finite() && rate > 0.0 => Ok(rate),
        _ => Err(format!("{text:?} is not a rate above 0 (e.g. 200000)")),
    }
}

fn parse_duration_with(text: &str, bare_unit_s: Option<f64>) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E'))
        .unwrap_or(text.len());
    // `1e3ms`: the exponent is part of the number; `e` never starts a unit.
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration (e.g. 250us, 1ms, 2s)"))?;
    let scale_s = match unit.trim() {
        "" if value == 0.0 => 0.0,
        "" => bare_unit_s
            .ok_or_else(|| format!("{text:?} needs a unit (ns, us, ms, s or m), e.g. 1ms"))?,
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "m" | "min" => 60.0,
        other => {
            return Err(format!(
                "unknown unit {other:?} in {text:?} (ns, us, ms, s or m)"
            ))
        }
    };
    Duration::try_from_secs_f64(value * scale_s).map_err(|e| format!("{text:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(parse_duration("1ms"), Ok(Duration::from_millis(1)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("100ns"), Ok(Duration::from_nanos(100)));
        assert_eq!(parse_duration("1e3us"), Ok(Duration::from_millis(1)));
        assert!(parse_duration("5").unwrap_err().contains("needs a unit"));
        assert!(parse_duration("5h").unwrap_err().contains("unknown unit"));
        assert!(parse_duration("-1ms").is_err());
        assert!(parse_duration("ms").is_err());
        assert_eq!(parse_seconds("30"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_seconds("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_positive_seconds("2"), Ok(Duration::from_secs(2)));
        for zero in ["0", "0s", "0.1ns"] {
            let error = parse_positive_seconds(zero).unwrap_err();
            assert!(error.contains("more than 0"), "{zero}: {error}");
        }
    }

    #[test]
    fn counts_and_rates() {
        assert_eq!(parse_count("12"), Ok(12));
        assert!(parse_count("0").unwrap_err().contains("at least 1"));
        assert!(parse_count("-3").unwrap_err().contains("\"-3\""));
        assert_eq!(parse_rate("2.5e5"), Ok(250_000.0));
        for bad in ["0", "-1", "nan", "inf", "fast"] {
            assert!(parse_rate(bad).is_err(), "{bad}");
        }
    }
}
