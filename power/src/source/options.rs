//! Reading a source spec, `KIND:ARGUMENT` or `KIND?OPTIONS`, where the argument is
//! `BASE?key=value&key=value`: the one parser of every kind (sim, ptd, nvml, rapl, hwmon).
//! Each error is a [`SourceError::Spec`], so it names the spec as written.

use std::time::Duration;

use super::SourceError;

/// A spec's error, naming the spec.
pub(super) fn spec_error(spec: &str, message: impl Into<String>) -> SourceError {
    SourceError::Spec {
        spec: spec.to_owned(),
        message: message.into(),
    }
}

/// `kind:argument` → (`kind`, `argument`); `kind?options` (a kind without an argument, as in
/// `rapl?period_ms=20`) → (`kind`, `?options`); `kind` → (`kind`, "").
pub(super) fn split_kind(spec: &str) -> (&str, &str) {
    match spec.find([':', '?']) {
        Some(at) if spec[at..].starts_with(':') => (&spec[..at], &spec[at + 1..]),
        Some(at) => (&spec[..at], &spec[at..]),
        None => (spec, ""),
    }
}

/// A kind's argument, `BASE?key=value&key=value`, with its options checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Argument<'a> {
    spec: &'a str,
    /// What stands before `?`: `200`, `127.0.0.1:8888`, `package-0,dram`.
    pub base: &'a str,
    options: Vec<(&'a str, &'a str)>,
}

impl<'a> Argument<'a> {
    /// Splits `argument` (of `spec`), refusing an option not in `known`, one without a
    /// value and one given twice. Each of `known` is written `key=WHAT` (`period_ms=MS`),
    /// which is how an error lists them.
    pub(super) fn parse(
        spec: &'a str,
        argument: &'a str,
        known: &[&str],
    ) -> Result<Argument<'a>, SourceError> {
        let (base, query) = argument.split_once('?').unwrap_or((argument, ""));
        let mut options: Vec<(&str, &str)> = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let Some(form) = known
                .iter()
                .find(|form| form.split_once('=').map_or(**form, |(k, _)| k) == key)
            else {
                let listing = if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                };
                return Err(spec_error(
                    spec,
                    format!("unknown option {key:?} (known: {listing})"),
                ));
            };
            if value.is_empty() {
                return Err(spec_error(
                    spec,
                    format!("option {key} wants a value ({form})"),
                ));
            }
            if options.iter().any(|(k, _)| *k == key) {
                return Err(spec_error(spec, format!("option {key} given twice")));
            }
            options.push((key, value));
        }
        Ok(Argument {
            spec,
            base,
            options,
        })
    }

    /// An error about this spec.
    pub(super) fn error(&self, message: impl Into<String>) -> SourceError {
        spec_error(self.spec, message)
    }

    /// The base as a list, `a, b,c` → `["a", "b", "c"]` (none for an empty base).
    pub(super) fn selectors(&self) -> Vec<String> {
        self.base
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    }

    pub(super) fn option(&self, key: &str) -> Option<&'a str> {
        self.options
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| *v)
    }

    /// `period_ms`, 1 ms to an hour, or `default`.
    pub(super) fn period(&self, default: Duration) -> Result<Duration, SourceError> {
        let Some(value) = self.option("period_ms") else {
            return Ok(default);
        };
        value
            .parse::<u64>()
            .ok()
            .filter(|ms| (1..=3_600_000).contains(ms))
            .map(Duration::from_millis)
            .ok_or_else(|| {
                self.error(format!(
                    "period_ms={value:?}: want milliseconds, 1 to 3600000"
                ))
            })
    }

    /// Option `key` as a number of seconds (`0.5`), where it is given.
    pub(super) fn seconds(&self, key: &str) -> Result<Option<Duration>, SourceError> {
        let Some(value) = self.option(key) else {
            return Ok(None);
        };
        value
            .parse::<f64>()
            .ok()
            .and_then(|s| Duration::try_from_secs_f64(s).ok())
            .map(Some)
            .ok_or_else(|| self.error(format!("{key}={value:?}: not a number of seconds")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWN: &[&str] = &["period_ms=MS", "root=PATH"];

    #[test]
    fn kinds_split_from_their_arguments() {
        assert_eq!(
            split_kind("sim:200?period_ms=5"),
            ("sim", "200?period_ms=5")
        );
        assert_eq!(split_kind("ptd://h:1"), ("ptd", "//h:1"));
        assert_eq!(split_kind("rapl?period_ms=20"), ("rapl", "?period_ms=20"));
        assert_eq!(split_kind("hwmon"), ("hwmon", ""));
    }

    #[test]
    fn arguments_split_into_selectors_and_options() {
        let argument =
            Argument::parse("rapl:x", "package-0, dram?period_ms=20&root=/tmp/x", KNOWN).unwrap();
        assert_eq!(argument.base, "package-0, dram");
        assert_eq!(argument.selectors(), ["package-0", "dram"]);
        assert_eq!(argument.option("root"), Some("/tmp/x"));
        let default = Duration::from_millis(100);
        assert_eq!(argument.period(default).unwrap(), Duration::from_millis(20));
        let plain = Argument::parse("rapl", "", KNOWN).unwrap();
        assert!(plain.selectors().is_empty());
        assert_eq!(plain.period(default).unwrap(), default);
        for (argument, words) in [
            (
                "?rate=3",
                "unknown option \"rate\" (known: period_ms=MS, root=PATH)",
            ),
            (
                "?period_ms",
                "option period_ms wants a value (period_ms=MS)",
            ),
            ("?period_ms=1&period_ms=2", "given twice"),
        ] {
            let error = Argument::parse("rapl:y", argument, KNOWN).unwrap_err();
            let error = error.to_string();
            assert!(
                error.contains(words) && error.contains("\"rapl:y\""),
                "{error}"
            );
        }
        for bad in ["0", "abc", "-5", "3600001"] {
            let text = format!("?period_ms={bad}");
            let argument = Argument::parse("rapl", &text, KNOWN).unwrap();
            let error = argument.period(default).unwrap_err().to_string();
            assert!(error.contains("1 to 3600000"), "{bad}: {error}");
        }
    }

    #[test]
    fn seconds_are_checked() {
        let argument = Argument::parse(
            "ptd",
            "h:1?settle=0.25&timeout=x",
            &["settle=S", "timeout=S"],
        )
        .unwrap();
        assert_eq!(
            argument.seconds("settle").unwrap(),
            Some(Duration::from_millis(250))
        );
        let error = argument.seconds("timeout").unwrap_err().to_string();
        assert!(
            error.contains("timeout=\"x\": not a number of seconds"),
            "{error}"
        );
        assert_eq!(argument.seconds("other").unwrap(), None);
    }
}
