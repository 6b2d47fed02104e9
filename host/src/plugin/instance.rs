//! The plugin instance a run drives: in this process, or in a process of its own.

use std::sync::Arc;
use std::time::Duration;

use super::devices::{DeviceInfo, RunDevice};
use super::isolated::{IsolatedSut, Isolation};
use super::spread::{DeviceShare, DeviceSpread};
use super::{PluginError, PluginSut, RunDescription};
use crate::loadgen::{Completer, QuerySample, SystemUnderTest};
use crate::samples::{Preprocessing, SampleArena};

/// How an instance's `destroy` went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Destroyed {
    /// It returned within the limit.
    pub returned: bool,
    /// Callbacks from the plugin after it returned (a thread it did not join); counted only
    /// for an isolated plugin, whose process keeps the host's table alive to see them.
    pub late_callbacks: u64,
}

/// What a run asks of a plugin instance besides LoadGen's calls, the same whether the plugin
/// runs in this process ([`PluginSut`]) or in a process of its own ([`IsolatedSut`]).
pub trait PluginBackend: SystemUnderTest {
    /// Tells the plugin LoadGen loaded the samples of `indices` (their data in the arena by
    /// now): its `load_samples` (ABI 1.3), if it has one. The error names the call.
    fn load_samples(&self, indices: &[usize]) -> Result<(), PluginError>;
    /// Tells the plugin the set of `indices` is released: its `unload_samples` (ABI 1.3).
    fn unload_samples(&self, indices: &[usize]) -> Result<(), PluginError>;
    /// The plugin's attributes (vendor, device, driver, precision, ...).
    fn attributes(&self) -> &[(String, String)];
    /// The plugin's MLPERF_CAP_* bits.
    fn capabilities(&self) -> u64;
    /// Path, sha256, ABI version, name, version, capabilities and attributes, for the logs.
    fn provenance(&self) -> Vec<(String, String)>;
    /// Sizes (and touches) what a query of `samples` is handed over in, untimed, ahead of the
    /// test; false when the memory cannot be had.
    fn reserve_samples(&self, samples: usize) -> bool;
    /// Hands issued samples their data from `arena` (filled by the sample library's loads).
    fn read_samples_from(&mut self, arena: Arc<SampleArena>);
    /// Note when each sample is handed to the plugin in `sink`, and take the plugin's timing
    /// reports there (ABI 1.4), for the run's latency breakdown. Once, before the test.
    fn note_timing(&self, sink: crate::timing::TimingSink);
    /// What each device was given, when the run spreads queries over several (ABI 1.4).
    fn device_shares(&self) -> Vec<DeviceShare> {
        Vec::new()
    }
}

// One per run, never moved about: the in-process instance stays inline (no pointer to chase
// on each issue, which matches on the two rather than going through `PluginBackend`).
#[allow(clippy::large_enum_variant)]
pub enum Instance {
    InProcess(PluginSut),
    Isolated(IsolatedSut),
    /// One instance per device.
    Devices(Box<DeviceSpread>),
}

impl Instance {
    /// Opens the plugin `spec` with `config` for the test `run` describes: in this process,
    /// or (with `isolation`) in a child process; `samples`: issued samples carry data.
    pub fn open(
        spec: &str,
        config: &str,
        samples: bool,
        isolation: Option<&Isolation>,
        run: Option<&RunDescription>,
    ) -> Result<Instance, PluginError> {
        match isolation {
            None => super::open_sut(spec, config, run).map(Instance::InProcess),
            Some(isolation) => {
                IsolatedSut::spawn(spec, config, samples, isolation, run).map(Instance::Isolated)
            }
        }
    }

    /// One instance per device of `devices`, each opened as [`Instance::open`] does with
    /// its device in the run description, the queries of the test `run` describes spread
    /// over them.
    pub fn open_devices(
        spec: &str,
        config: &str,
        samples: bool,
        isolation: Option<&Isolation>,
        run: &RunDescription,
        devices: Vec<DeviceInfo>,
    ) -> Result<Instance, PluginError> {
        let count = devices.len() as u32;
        let mut instances = Vec::with_capacity(devices.len());
        for (index, device) in devices.iter().enumerate() {
            let run = run.clone().with_device(RunDevice {
                device: device.clone(),
                index: index as u32,
                count,
            });
            // An instance that fails to open is named by its device; those opened are dropped.
            let instance =
                Instance::open(spec, config, samples, isolation, Some(&run)).map_err(|source| {
                    PluginError::Device {
                        device: device.label(),
                        source: Box::new(source),
                    }
                })?;
            instances.push(instance);
        }
        Ok(Instance::Devices(Box::new(DeviceSpread::new(
            instances,
            devices,
            run.scenario(),
        ))))
    }

    /// The instance, wherever it runs.
    pub fn backend(&self) -> &dyn PluginBackend {
        match self {
            Instance::InProcess(sut) => sut,
            Instance::Isolated(sut) => sut,
            Instance::Devices(spread) => &**spread,
        }
    }

    pub fn backend_mut(&mut self) -> &mut dyn PluginBackend {
        match self {
            Instance::InProcess(sut) => sut,
            Instance::Isolated(sut) => sut,
            Instance::Devices(spread) => &mut **spread,
        }
    }

    /// The tokens after each answer's first (ABI 1.5) go to `reports`, from an instance in
    /// this process, in its own, or one per device.
    pub(crate) fn report_tokens_to(&self, reports: Arc<dyn super::TokenReports>) {
        match self {
            Instance::InProcess(sut) => sut.report_tokens_to(reports),
            Instance::Isolated(sut) => sut.report_tokens_to(reports),
            Instance::Devices(spread) => spread.report_tokens_to(reports),
        }
    }

    /// The thread that issues never takes completions (a sweep's, unlike LoadGen's, which takes
    /// them as it issues and polls in `issuer_idle`: a sweep's would count answers' tokens on
    /// its issue thread and send late): a plugin in its own process hands every one to the
    /// host's reader thread as it comes.
    pub(crate) fn leave_completions_to_reader(&self) {
        match self {
            Instance::InProcess(_) => {}
            Instance::Isolated(sut) => sut.leave_completions_to_reader(),
            Instance::Devices(spread) => spread.leave_completions_to_reader(),
        }
    }

    /// Single samples' failures (ABI 1.5) go to `reports` instead of failing the test, from
    /// every instance, as for [`Instance::report_tokens_to`].
    pub(crate) fn report_failures_to(&self, reports: Arc<dyn super::FailureReports>) {
        match self {
            Instance::InProcess(sut) => sut.report_failures_to(reports),
            Instance::Isolated(sut) => sut.report_failures_to(reports),
            Instance::Devices(spread) => spread.report_failures_to(reports),
        }
    }

    /// It runs in this process (every instance, for one per device).
    pub fn in_process(&self) -> bool {
        match self {
            Instance::InProcess(_) => true,
            Instance::Isolated(_) => false,
            Instance::Devices(spread) => spread.in_process(),
        }
    }

    /// See [`PluginSut::preprocess_timed`]; an isolated instance has none (refused when the
    /// run is planned).
    pub fn preprocess_timed(&mut self, preprocessing: Arc<Preprocessing>) {
        match self {
            Instance::InProcess(sut) => sut.preprocess_timed(preprocessing),
            Instance::Isolated(_) => {}
            Instance::Devices(spread) => spread.preprocess_timed(preprocessing),
        }
    }

    /// Destroys the instance, waiting at most `limit` for the plugin's `destroy`; not
    /// `returned` when it had not by then (an in-process one is left to finish, or not, until
    /// the process ends; an isolated one is killed).
    pub fn destroy_within(self, limit: Duration) -> Destroyed {
        match self {
            Instance::InProcess(sut) => Destroyed {
                returned: destroy_in_process(sut, limit),
                late_callbacks: 0,
            },
            Instance::Isolated(sut) => sut.destroy_within(limit),
            Instance::Devices(spread) => spread.destroy_within(limit),
        }
    }
}

fn destroy_in_process(sut: PluginSut, limit: Duration) -> bool {
    let (done, destroyed) = std::sync::mpsc::channel();
    let destroying = std::thread::Builder::new()
        .name("mlperf-plugin-destroy".into())
        .spawn(move || {
            drop(sut);
            let _ = done.send(());
        });
    // Without a thread, the closure (and so the instance) was dropped here already.
    destroying.is_err() || destroyed.recv_timeout(limit).is_ok()
}

impl SystemUnderTest for Instance {
    fn name(&self) -> &str {
        self.backend().name()
    }

    #[inline]
    fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
        match self {
            Instance::InProcess(sut) => sut.issue_query(samples, completer),
            Instance::Isolated(sut) => sut.issue_query(samples, completer),
            Instance::Devices(spread) => spread.issue_query(samples, completer),
        }
    }

    #[inline]
    fn prepare_query(&self, samples: &[QuerySample]) {
        match self {
            Instance::InProcess(sut) => sut.prepare_query(samples),
            Instance::Isolated(sut) => sut.prepare_query(samples),
            Instance::Devices(spread) => spread.prepare_query(samples),
        }
    }

    fn flush_queries(&self) {
        self.backend().flush_queries()
    }

    fn issuer_idle(&self) {
        self.backend().issuer_idle()
    }

    fn issuer_idle_until(&self, deadline: std::time::Instant) {
        self.backend().issuer_idle_until(deadline)
    }
}
