//! One instance per device (ABI 1.4), as one system under test: SingleStream, MultiStream and
//! Server queries each go whole to the instance with the fewest samples outstanding (ties to
//! the first), the Offline query is split evenly (the remainder one by one from the first).
//! Each instance completes through a completer of its own that counts what it finished
//! before handing the responses on, so the count costs the runs without devices nothing.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use mlperf_loadgen::TestScenario;
use serde::Serialize;

use super::devices::DeviceInfo;
use super::error::PluginError;
use super::host_api::{FailureReports, TokenReports};
use super::instance::{Destroyed, Instance, PluginBackend};
use super::run::even_share;
use crate::loadgen::{
    Completer, CompletionSink, QuerySample, QuerySampleResponse, ResponseId, SystemUnderTest,
};
use crate::samples::{Preprocessing, SampleArena};

/// The instances of a run over several devices, and how the queries were shared.
pub struct DeviceSpread {
    instances: Vec<Instance>,
    lanes: Vec<Lane>,
    scenario: TestScenario,
    provenance: Vec<(String, String)>,
}

/// One instance's bookkeeping.
struct Lane {
    device: DeviceInfo,
    /// Samples issued to it and not completed yet.
    outstanding: Arc<AtomicI64>,
    issued: AtomicU64,
    /// The test's completer, wrapped to count this instance's completions: made at the first
    /// issue (the engine's completer is the same for every query of a test).
    completer: OnceLock<Completer>,
}

/// What one device was given, for result.json and the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeviceShare {
    pub ordinal: u32,
    pub name: String,
    pub samples: u64,
    /// Its fraction of all samples issued.
    pub share: f64,
}

impl DeviceSpread {
    /// Spreads a test of `scenario` over `instances`, one per device of `devices` (in order).
    pub fn new(instances: Vec<Instance>, devices: Vec<DeviceInfo>, scenario: TestScenario) -> Self {
        assert_eq!(instances.len(), devices.len(), "one instance per device");
        let mut provenance = instances[0].backend().provenance();
        let listed: Vec<String> = devices.iter().map(DeviceInfo::label).collect();
        provenance.push(("plugin_devices".into(), listed.join(", ")));
        let lanes = devices
            .into_iter()
            .map(|device| Lane {
                device,
                outstanding: Arc::new(AtomicI64::new(0)),
                issued: AtomicU64::new(0),
                completer: OnceLock::new(),
            })
            .collect();
        DeviceSpread {
            instances,
            lanes,
            scenario,
            provenance,
        }
    }

    /// Each instance in process (none in a process of its own).
    pub fn in_process(&self) -> bool {
        self.instances.iter().all(Instance::in_process)
    }

    pub fn shares(&self) -> Vec<DeviceShare> {
        let issued: Vec<u64> = self
            .lanes
            .iter()
            .map(|l| l.issued.load(Ordering::Relaxed))
            .collect();
        let total = issued.iter().sum::<u64>().max(1) as f64;
        self.lanes
            .iter()
            .zip(issued)
            .map(|(lane, samples)| DeviceShare {
                ordinal: lane.device.ordinal,
                name: lane.device.name.clone(),
                samples,
                share: samples as f64 / total,
            })
            .collect()
    }

    fn completer_of(&self, lane: usize, completer: &Completer) -> &Completer {
        let lane = &self.lanes[lane];
        lane.completer.get_or_init(|| {
            Completer::forwarding_to(Arc::new(CountingSink {
                inner: completer.clone(),
                outstanding: Arc::clone(&lane.outstanding),
                device: lane.device.label(),
            }))
        })
    }

    /// The instance with the fewest samples outstanding, the first of equals.
    fn least_loaded(&self) -> usize {
        let mut best = (0, i64::MAX);
        for (k, lane) in self.lanes.iter().enumerate() {
            // Never below 0: a plugin that ends a sample twice (fails it, then completes it)
            // must not draw every query to its device.
            let outstanding = lane.outstanding.load(Ordering::Acquire).max(0);
            if outstanding < best.1 {
                best = (k, outstanding);
            }
        }
        best.0
    }

    fn issue_to(&self, lane: usize, samples: &[QuerySample], completer: &Completer) {
        let completer = self.completer_of(lane, completer);
        let counts = &self.lanes[lane];
        counts
            .outstanding
            .fetch_add(samples.len() as i64, Ordering::AcqRel);
        counts
            .issued
            .fetch_add(samples.len() as u64, Ordering::Relaxed);
        self.instances[lane].issue_query(samples, completer);
    }

    /// The Offline query's part for each instance, in order.
    fn split<'a>(&self, samples: &'a [QuerySample]) -> impl Iterator<Item = &'a [QuerySample]> {
        let count = self.lanes.len() as u32;
        let mut rest = samples;
        (0..count).map(move |k| {
            let (part, after) = rest.split_at(even_share(samples.len() as u64, k, count) as usize);
            rest = after;
            part
        })
    }
}

/// Counts an instance's completions before the engine sees them, and names its device in a
/// failure.
struct CountingSink {
    inner: Completer,
    outstanding: Arc<AtomicI64>,
    device: String,
}

impl CompletionSink for CountingSink {
    fn complete(&self, responses: &[QuerySampleResponse<'_>]) {
        // Counted first: the engine may issue the next query as soon as it has these.
        self.outstanding
            .fetch_sub(responses.len() as i64, Ordering::AcqRel);
        self.inner.query_samples_complete(responses);
    }

    fn first_token(&self, responses: &[QuerySampleResponse<'_>]) {
        self.inner.first_token_complete(responses);
    }

    fn fail(&self, message: String) {
        self.inner
            .fail(format!("device {}: {message}", self.device));
    }

    fn is_released(&self, id: ResponseId) -> bool {
        self.inner.is_released(id)
    }
}

/// Counts an instance's failed samples as finished before the sweep sees them, and names its
/// device in their messages.
struct CountingFailures {
    inner: Arc<dyn FailureReports>,
    outstanding: Arc<AtomicI64>,
    device: String,
}

impl FailureReports for CountingFailures {
    fn sample_failed(&self, id: u64, kind: i32, status: i32, message: &str, now_ns: i64) {
        self.outstanding.fetch_sub(1, Ordering::AcqRel);
        let message = format!("device {}: {message}", self.device);
        self.inner.sample_failed(id, kind, status, &message, now_ns);
    }
}

impl SystemUnderTest for DeviceSpread {
    fn name(&self) -> &str {
        self.instances[0].name()
    }

    fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
        if self.scenario != TestScenario::Offline {
            return self.issue_to(self.least_loaded(), samples, completer);
        }
        for (lane, part) in self.split(samples).enumerate() {
            if !part.is_empty() {
                self.issue_to(lane, part, completer);
            }
        }
    }

    fn prepare_query(&self, samples: &[QuerySample]) {
        if self.scenario == TestScenario::Offline {
            for (instance, part) in self.instances.iter().zip(self.split(samples)) {
                instance.prepare_query(part);
            }
        }
    }

    fn flush_queries(&self) {
        for instance in &self.instances {
            instance.flush_queries();
        }
    }

    fn issuer_idle(&self) {
        for instance in &self.instances {
            instance.issuer_idle();
        }
    }

    fn issuer_idle_until(&self, deadline: std::time::Instant) {
        for instance in &self.instances {
            instance.issuer_idle_until(deadline);
        }
    }
}

impl PluginBackend for DeviceSpread {
    fn load_samples(&self, indices: &[usize]) -> Result<(), PluginError> {
        self.instances
            .iter()
            .try_for_each(|i| i.backend().load_samples(indices))
    }

    fn unload_samples(&self, indices: &[usize]) -> Result<(), PluginError> {
        // Every instance lets go, the first failure told.
        let mut first = Ok(());
        for instance in &self.instances {
            if let Err(error) = instance.backend().unload_samples(indices) {
                first = first.and(Err(error));
            }
        }
        first
    }

    fn attributes(&self) -> &[(String, String)] {
        self.instances[0].backend().attributes()
    }

    fn capabilities(&self) -> u64 {
        self.instances[0].backend().capabilities()
    }

    fn provenance(&self) -> Vec<(String, String)> {
        self.provenance.clone()
    }

    fn reserve_samples(&self, samples: usize) -> bool {
        self.instances
            .iter()
            .all(|i| i.backend().reserve_samples(samples))
    }

    fn read_samples_from(&mut self, arena: Arc<SampleArena>) {
        for instance in &mut self.instances {
            instance.backend_mut().read_samples_from(Arc::clone(&arena));
        }
    }

    fn device_shares(&self) -> Vec<DeviceShare> {
        self.shares()
    }

    /// Each instance notes into the run's table under its own lane.
    fn note_timing(&self, sink: crate::timing::TimingSink) {
        for (lane, instance) in self.instances.iter().enumerate() {
            instance.backend().note_timing(crate::timing::TimingSink {
                table: Arc::clone(&sink.table),
                lane: lane as u32,
            });
        }
    }
}

impl DeviceSpread {
    /// See [`Instance::leave_completions_to_reader`]: for each instance.
    pub(crate) fn leave_completions_to_reader(&self) {
        for instance in &self.instances {
            instance.leave_completions_to_reader();
        }
    }

    /// Every instance's tokens after each answer's first go to `reports`.
    pub(crate) fn report_tokens_to(&self, reports: Arc<dyn TokenReports>) {
        for instance in &self.instances {
            instance.report_tokens_to(Arc::clone(&reports));
        }
    }

    /// Every instance's failed samples go to `reports`, each counted as finished on its
    /// device (else a device that fails samples would look ever busier and be given none).
    pub(crate) fn report_failures_to(&self, reports: Arc<dyn FailureReports>) {
        for (instance, lane) in self.instances.iter().zip(&self.lanes) {
            instance.report_failures_to(Arc::new(CountingFailures {
                inner: Arc::clone(&reports),
                outstanding: Arc::clone(&lane.outstanding),
                device: lane.device.label(),
            }));
        }
    }

    /// See [`Instance::preprocess_timed`]: for each instance.
    pub fn preprocess_timed(&mut self, preprocessing: Arc<Preprocessing>) {
        for instance in &mut self.instances {
            instance.preprocess_timed(Arc::clone(&preprocessing));
        }
    }

    /// Destroys every instance, each given `limit`.
    pub fn destroy_within(self, limit: Duration) -> Destroyed {
        let mut all = Destroyed {
            returned: true,
            late_callbacks: 0,
        };
        for instance in self.instances {
            let destroyed = instance.destroy_within(limit);
            all.returned &= destroyed.returned;
            all.late_callbacks += destroyed.late_callbacks;
        }
        all
    }
}
