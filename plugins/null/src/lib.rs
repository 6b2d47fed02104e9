//! The null SUT backend as a plugin: answers every sample with its index as 4 little-endian
//! bytes (or with its own data), inline or from worker threads, with optional fixed or per-index latency. Built on
//! the plugin SDK; see `config.rs` for its settings. The same library offers a simulated power
//! meter (`meter.rs`) through its second entry, `mlperf_power_plugin_entry`.

mod answer;
mod config;
mod meter;
mod workers;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use mlperf_plugin_api::ffi::{CAP_ASYNC_COMPLETION, CAP_CONCURRENT_ISSUE, CAP_TOKENS};
use mlperf_plugin_api::sdk::{
    Completer, Device, DeviceKind, Host, Input, Level, PluginError, Sample, SutPlugin,
};

pub use config::{Config, ResponseKind};
pub use meter::{MeterConfig, NullMeter};

use answer::{answer, answer_inline, Item, SampleData};
use workers::Workers;

pub struct NullPlugin {
    config: Arc<Config>,
    /// Samples issued so far, to place the configured faults.
    issued: AtomicU64,
    /// None: complete inline. Dropped with the plugin, which joins the threads.
    workers: Option<Workers>,
    /// Inline, no latency, no faults: the allocation-free path.
    plain: bool,
    /// `answer_input`: the named input each sample is answered with.
    answer_input: Option<Input>,
}

impl SutPlugin for NullPlugin {
    fn create(config: &str, host: &Host) -> Result<Self, PluginError> {
        let config = Arc::new(Config::parse(config)?);
        let answer_input = match &config.answer_input {
            None => None,
            Some(name) => Some(named_input(host, name)?),
        };
        let workers = match config.workers {
            0 => None,
            n => Some(Workers::start(n, Arc::clone(&config), host.completer())?),
        };
        host.logger().log(
            Level::Info,
            &format!(
                "null plugin: {} worker(s), latency {} us + {} us per index, tokens {}, response {:?}",
                config.workers,
                config.latency_us,
                config.latency_per_index_us,
                config.tokens,
                config.response
            ),
        );
        let plain = workers.is_none()
            && config.response == ResponseKind::Index
            && !config.has_latency()
            && config.service_us == 0
            && config.panic_after.is_none()
            && config.complete_twice_after.is_none()
            && config.never_complete_after.is_none()
            && config.fail_after.is_none();
        Ok(NullPlugin {
            plain,
            answer_input,
            config,
            issued: AtomicU64::new(0),
            workers,
        })
    }

    fn issue_query(
        &self,
        samples: &[Sample<'_>],
        completer: &Completer,
    ) -> Result<(), PluginError> {
        if self.plain {
            answer_inline(samples, self.config.tokens, completer);
            return Ok(());
        }
        let issued = Instant::now();
        let first = self
            .issued
            .fetch_add(samples.len() as u64, Ordering::Relaxed);
        let mut items: Vec<Item> = samples
            .iter()
            .zip(first..)
            .map(|(sample, ordinal)| self.item(sample, ordinal))
            .collect::<Result<_, _>>()?;
        match &self.workers {
            Some(workers) => workers.submit(items, issued),
            None => answer(&self.config, &mut items, issued, completer),
        }
        Ok(())
    }

    fn devices(config: &str) -> Result<Vec<Device>, PluginError> {
        let config = Config::parse(config)?;
        Ok((0..config.devices)
            .map(|ordinal| Device {
                ordinal,
                kind: DeviceKind::Other,
                name: format!("null-{ordinal}"),
                id: None,
                memory_bytes: 0,
            })
            .collect())
    }

    fn attributes(&self) -> Vec<(String, String)> {
        let config = &self.config;
        [
            ("vendor", "mlperf-host".to_owned()),
            ("device", "cpu".to_owned()),
            ("precision", "none".to_owned()),
            ("driver_version", "none".to_owned()),
            ("firmware_version", "none".to_owned()),
            ("plugin", format!("null {}", env!("CARGO_PKG_VERSION"))),
            ("workers", config.workers.to_string()),
            ("latency_us", config.latency_us.to_string()),
            ("service_us", config.service_us.to_string()),
            (
                "latency_per_index_us",
                config.latency_per_index_us.to_string(),
            ),
            ("tokens", config.tokens.to_string()),
            ("response", format!("{:?}", config.response).to_lowercase()),
        ]
        .into_iter()
        .map(|(key, value)| (key.to_owned(), value))
        .collect()
    }
}

impl NullPlugin {
    /// The sample as a work item, with the fault configured for its ordinal, if any.
    fn item(&self, sample: &Sample<'_>, ordinal: u64) -> Result<Item, PluginError> {
        let config = &self.config;
        if config.panic_after == Some(ordinal) {
            panic!("null plugin: panic_after = {ordinal} reached");
        }
        let failed = config.fail_after.is_some_and(|after| ordinal >= after);
        let copies = if config.complete_twice_after == Some(ordinal) {
            2
        } else if config.never_complete_after == Some(ordinal) || failed {
            0
        } else {
            1
        };
        let data = match (config.response, &self.answer_input) {
            (ResponseKind::Index, _) => None,
            (ResponseKind::Empty, _) => Some(SampleData::of(&[])),
            (ResponseKind::Data, None) => Some(SampleData::of(sample.data())),
            (ResponseKind::Data, Some(input)) => Some(SampleData::of(input.data(sample))),
        };
        Ok(Item {
            id: sample.id(),
            index: sample.index(),
            copies,
            fails: failed,
            data,
        })
    }
}

/// The run's named input `name` (from the run description).
fn named_input(host: &Host, name: &str) -> Result<Input, PluginError> {
    let inputs = host.run().map_or(&[][..], |run| &run.inputs[..]);
    inputs
        .iter()
        .find(|input| input.name == name)
        .cloned()
        .ok_or_else(|| {
            let names: Vec<String> = inputs.iter().map(|i| format!("'{}'", i.name)).collect();
            PluginError::invalid_config(format!(
                "null plugin: answer_input = {name:?}, but the run's samples have no input of that name (named inputs: [{}])",
                names.join(", ")
            ))
        })
}

mlperf_plugin_api::export_plugin!(
    NullPlugin,
    name = "null",
    version = env!("CARGO_PKG_VERSION"),
    capabilities = CAP_ASYNC_COMPLETION | CAP_CONCURRENT_ISSUE | CAP_TOKENS,
    power_meter = NullMeter,
);
