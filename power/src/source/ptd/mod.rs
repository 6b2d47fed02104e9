//! `ptd://HOST:PORT[?settle=SECS&timeout=SECS]`: a client of SPEC PTDaemon's TCP text
//! protocol, running MLCommons' procedure (reference §1.3): automatic ranges for the ranging
//! run, the ranging run's maximum volts and 1.1 × its maximum amps for the testing run, a
//! settle wait after setting ranges and before `Stop`, and the initial ranges put back at the
//! end. Not valid for submission (only the official power-dev client and server are); for lab
//! work and tests against `mlperf-ptd-simulator`.

mod client;
mod connection;
pub mod protocol;

use std::time::Duration;

pub use client::{MeterReport, PtdSource, RangingMaxima};

use super::{PowerSource, SourceError};

/// MLCommons' `ANALYZER_SLEEP_SECONDS`: the analyzer settles this long after its ranges are
/// set and after the workload, before `Stop`.
pub const DEFAULT_SETTLE: Duration = Duration::from_secs(10);
/// How long any reply may take before the daemon is taken for stalled.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(15);

/// Where the daemon is and how to talk to it, from the spec.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// `host:port` as written.
    pub address: String,
    pub settle: Duration,
    pub timeout: Duration,
}

impl Target {
    /// Parses `HOST:PORT[?settle=SECS&timeout=SECS]` (the spec after `ptd://`).
    pub fn parse(text: &str) -> Result<Target, String> {
        let (address, query) = text.split_once('?').unwrap_or((text, ""));
        let example = "e.g. ptd://127.0.0.1:8888";
        let (host, port) = address
            .rsplit_once(':')
            .ok_or_else(|| format!("{address:?} is not HOST:PORT ({example})"))?;
        if host.is_empty() || host == "[]" {
            return Err(format!("{address:?} names no host ({example})"));
        }
        match port.parse::<u16>() {
            Ok(port) if port > 0 => {}
            _ => return Err(format!("{port:?} is not a TCP port ({example})")),
        }
        let mut target = Target {
            address: address.to_owned(),
            settle: DEFAULT_SETTLE,
            timeout: DEFAULT_TIMEOUT,
        };
        for option in query.split('&').filter(|o| !o.is_empty()) {
            let (key, value) = option.split_once('=').unwrap_or((option, ""));
            let seconds = || {
                value
                    .parse::<f64>()
                    .ok()
                    .and_then(|s| Duration::try_from_secs_f64(s).ok())
                    .ok_or_else(|| format!("{key}={value:?}: not a number of seconds"))
            };
            match key {
                "settle" => target.settle = seconds()?,
                "timeout" => {
                    target.timeout = seconds()?;
                    if target.timeout.is_zero() {
                        return Err("timeout=0: a reply cannot arrive in no time".into());
                    }
                }
                other => {
                    return Err(format!(
                        "unknown option {other:?} (known: settle=SECS, timeout=SECS)"
                    ))
                }
            }
        }
        Ok(target)
    }
}

/// The source `ptd://HOST:PORT[?options]` names: connects and identifies the daemon now, so a
/// meter that is not there or is not PTDaemon is found before any run.
pub fn open(spec: &str, address: &str) -> Result<Box<dyn PowerSource>, SourceError> {
    let target = Target::parse(address).map_err(|message| SourceError::Spec {
        spec: spec.to_owned(),
        message,
    })?;
    Ok(Box::new(PtdSource::connect(spec, target)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_with_their_options() {
        let target = Target::parse("127.0.0.1:8888").unwrap();
        assert_eq!(target.address, "127.0.0.1:8888");
        assert_eq!(
            (target.settle, target.timeout),
            (DEFAULT_SETTLE, DEFAULT_TIMEOUT)
        );
        let target = Target::parse("[::1]:4444?settle=0.2&timeout=3").unwrap();
        assert_eq!(target.address, "[::1]:4444");
        assert_eq!(target.settle, Duration::from_millis(200));
        assert_eq!(target.timeout, Duration::from_secs(3));
        assert_eq!(
            Target::parse("h:1?settle=0").unwrap().settle,
            Duration::ZERO
        );
        for (text, words) in [
            ("127.0.0.1", "HOST:PORT"),
            (":8888", "no host"),
            ("h:0", "TCP port"),
            ("h:x", "TCP port"),
            ("h:1?settle=-1", "seconds"),
            ("h:1?settle=abc", "seconds"),
            ("h:1?timeout=0", "timeout=0"),
            ("h:1?speed=2", "unknown option \"speed\""),
        ] {
            let error = Target::parse(text).unwrap_err();
            assert!(error.contains(words), "{text}: {error}");
        }
    }

    #[test]
    fn a_bad_spec_is_named_in_the_error() {
        let error = crate::source::open("ptd://localhost")
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("ptd://localhost") && error.contains("HOST:PORT"),
            "{error}"
        );
    }
}
