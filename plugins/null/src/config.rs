//! The null plugin's settings, parsed from the TOML text the host hands to `create`.

use std::time::Duration;

use mlperf_plugin_api::sdk::{config_error_text, PluginError};
use serde::Deserialize;

/// Upper bound on `workers`, to turn a typo into an error rather than thousands of threads.
const MAX_WORKERS: usize = 1024;

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// 0: complete inline, inside issue_query; N: complete from N worker threads.
    pub workers: usize,
    /// Time from issue to completion of every sample.
    pub latency_us: u64,
    /// Added latency per unit of sample index (index-dependent latency).
    pub latency_per_index_us: u64,
    /// A server of fixed capacity instead of a fixed delay: each thread that answers (a
    /// worker, or the issuing thread when inline) serves its samples one after another, each
    /// taking this long from when the thread is free, so queueing shows in the latency and
    /// throughput is at most threads / service time.
    pub service_us: u64,
    /// Token run: report each sample's first token, then complete it with 2 + index % 7
    /// tokens.
    pub tokens: bool,
    /// What each sample is answered with.
    pub response: ResponseKind,
    /// With `response = "data"`: answer with the bytes of this named input of the sample
    /// (ABI 1.3, a data set with `--input-names`) instead of the whole sample.
    pub answer_input: Option<String>,
    /// Simulated devices to list (ABI 1.4): `--devices` then makes an instance per device,
    /// each with its own workers and service. 0: none.
    pub devices: u32,
    /// Faults for the host's tests, counted in samples issued to this instance: the sample
    /// after the first N panics in issue_query, ...
    pub panic_after: Option<u64>,
    /// ... is completed twice, ...
    pub complete_twice_after: Option<u64>,
    /// ... is never completed, ...
    pub never_complete_after: Option<u64>,
    /// ... is never completed, nor is any later one, and the plugin reports the failure
    /// through the host's fail callback (from the worker thread that had the sample).
    pub fail_after: Option<u64>,
}

/// The bytes a sample is answered with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResponseKind {
    /// Its index as 4 little-endian bytes (what the official LoadGen's null SUTs log).
    #[default]
    Index,
    /// Its own data, as the host handed it over (checks the data path end to end).
    Data,
    /// No bytes (a performance run that logs nothing).
    Empty,
}

impl Config {
    pub fn parse(text: &str) -> Result<Config, PluginError> {
        // On one line, with the line it points at (toml's Display adds a six-line snippet).
        let config: Config = toml::from_str(text).map_err(|e| {
            let message = config_error_text(text, e.span().map(|s| s.start), e.message());
            PluginError::invalid_config(format!("null plugin config: {message}"))
        })?;
        if config.answer_input.is_some() && config.response != ResponseKind::Data {
            return Err(PluginError::invalid_config(
                "null plugin config: answer_input applies to response = \"data\"",
            ));
        }
        if config.service_us > 0 && config.has_latency() {
            return Err(PluginError::invalid_config(
                "null plugin config: service_us and latency_us/latency_per_index_us are exclusive",
            ));
        }
        if config.workers > MAX_WORKERS {
            return Err(PluginError::invalid_config(format!(
                "null plugin config: workers = {} is more than {MAX_WORKERS}",
                config.workers
            )));
        }
        Ok(config)
    }

    pub fn latency(&self, index: u64) -> Duration {
        let micros = self
            .latency_per_index_us
            .saturating_mul(index)
            .saturating_add(self.latency_us);
        Duration::from_micros(micros)
    }

    pub fn has_latency(&self) -> bool {
        self.latency_us > 0 || self.latency_per_index_us > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_text_is_the_default() {
        assert_eq!(Config::parse("").unwrap(), Config::default());
    }

    #[test]
    fn reads_every_key() {
        let config = Config::parse(
            "workers = 2\nlatency_us = 10\nlatency_per_index_us = 3\ntokens = true\nresponse = 'data'\n\
             panic_after = 5\ncomplete_twice_after = 6\nnever_complete_after = 7\nfail_after = 8\n",
        )
        .unwrap();
        assert_eq!(config.workers, 2);
        assert_eq!(config.latency(4), Duration::from_micros(22));
        assert!(config.tokens);
        assert_eq!(config.response, ResponseKind::Data);
        assert_eq!(config.panic_after, Some(5));
        assert_eq!(config.complete_twice_after, Some(6));
        assert_eq!(config.never_complete_after, Some(7));
        assert_eq!(config.fail_after, Some(8));
    }

    #[test]
    fn refuses_unknown_keys_and_bad_values() {
        let unknown = Config::parse("worker = 2").unwrap_err();
        assert_eq!(unknown.code, mlperf_plugin_api::ffi::ERROR_INVALID_CONFIG);
        assert!(unknown.message.contains("worker"), "{}", unknown.message);
        assert!(Config::parse("workers = -1").is_err());
        assert!(Config::parse("workers = 100000").is_err());
    }
}
