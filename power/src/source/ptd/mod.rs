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

use super::options::Argument;
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
    /// Parses `HOST:PORT[?settle=SECS&timeout=SECS]`, the argument of `spec` after `ptd://`.
    pub fn parse(spec: &str, argument: &str) -> Result<Target, SourceError> {
        let argument = Argument::parse(spec, argument, &["settle=SECS", "timeout=SECS"])?;
        let address = argument.base;
        let example = "e.g. ptd://127.0.0.1:8888";
        let (host, port) = address
            .rsplit_once(':')
            .ok_or_else(|| argument.error(format!("{address:?} is not HOST:PORT ({example})")))?;
        if host.is_empty() || host == "[]" {
            return Err(argument.error(format!("{address:?} names no host ({example})")));
        }
        match port.parse::<u16>() {
            Ok(port) if port > 0 => {}
            _ => return Err(argument.error(format!("{port:?} is not a TCP port ({example})"))),
        }
        let timeout = argument.seconds("timeout")?.unwrap_or(DEFAULT_TIMEOUT);
        if timeout.is_zero() {
            return Err(argument.error("timeout=0: a reply cannot arrive in no time"));
        }
        Ok(Target {
            address: address.to_owned(),
            settle: argument.seconds("settle")?.unwrap_or(DEFAULT_SETTLE),
            timeout,
        })
    }
}

/// The source `ptd://HOST:PORT[?options]` names: connects and identifies the daemon now, so a
/// meter that is not there or is not PTDaemon is found before any run.
pub fn open(spec: &str, argument: &str) -> Result<Box<dyn PowerSource>, SourceError> {
    let target = Target::parse(spec, argument)?;
    Ok(Box::new(PtdSource::connect(spec, target)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_with_their_options() {
        let parse = |argument: &str| Target::parse("ptd://x", argument);
        let target = parse("127.0.0.1:8888").unwrap();
        assert_eq!(target.address, "127.0.0.1:8888");
        assert_eq!(
            (target.settle, target.timeout),
            (DEFAULT_SETTLE, DEFAULT_TIMEOUT)
        );
        let target = parse("[::1]:4444?settle=0.2&timeout=3").unwrap();
        assert_eq!(target.address, "[::1]:4444");
        assert_eq!(target.settle, Duration::from_millis(200));
        assert_eq!(target.timeout, Duration::from_secs(3));
        assert_eq!(parse("h:1?settle=0").unwrap().settle, Duration::ZERO);
        for (text, words) in [
            ("127.0.0.1", "HOST:PORT"),
            (":8888", "no host"),
            ("h:0", "TCP port"),
            ("h:x", "TCP port"),
            ("h:1?settle=-1", "seconds"),
            ("h:1?settle=abc", "seconds"),
            ("h:1?timeout=0", "timeout=0"),
            (
                "h:1?speed=2",
                "unknown option \"speed\" (known: settle=SECS, timeout=SECS)",
            ),
            ("h:1?settle", "settle wants a value"),
        ] {
            let error = parse(text).unwrap_err().to_string();
            assert!(
                error.contains(words) && error.contains("\"ptd://x\""),
                "{text}: {error}"
            );
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
