//! The run description a plugin instance is created with (ABI 1.3): the test's effective
//! settings, as the engine derives them, in the form `mlperf_run_description` carries.

use mlperf_loadgen::{EffectiveSettings, TestMode, TestScenario, TestSettings};
use mlperf_plugin_api::ffi;
use serde::{Deserialize, Serialize};

use super::batching::HostBatching;
use super::data_format::DataFormat;
use super::devices::RunDevice;

/// What a plugin is told about the test it serves: the test's settings and the sample
/// library's counts, from which the engine derives the effective settings. Plain data, so
/// that it also travels to an isolated plugin's process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunDescription {
    settings: TestSettings,
    performance_sample_count: u64,
    total_sample_count: u64,
    /// Named inputs of the samples and the outputs the run logs.
    #[serde(default)]
    format: DataFormat,
    /// Batches the host makes for a plugin that does not batch itself.
    #[serde(default)]
    batching: HostBatching,
    /// Hand the plugin a host table as a host of ABI 1.2 would (`plugins test`): its
    /// struct_size ends before `run`, and what lies past it is a pointer nothing may follow.
    #[serde(default)]
    as_host_of_1_2: bool,
    /// As a host of ABI 1.3 would: the run description ends before the device.
    #[serde(default)]
    as_host_of_1_3: bool,
    /// The device the instance serves (ABI 1.4), one of several the run spreads queries over.
    #[serde(default)]
    device: Option<RunDevice>,
    /// Keep the loaded samples in the host's memory even when the plugin offers its own.
    #[serde(default)]
    samples_in_host_memory: bool,
}

impl RunDescription {
    /// The description of a test of `settings` over a sample library of these counts.
    pub fn new(
        settings: &TestSettings,
        performance_sample_count: u64,
        total_sample_count: u64,
    ) -> RunDescription {
        RunDescription {
            settings: settings.clone(),
            performance_sample_count,
            total_sample_count,
            format: DataFormat::default(),
            batching: HostBatching::default(),
            as_host_of_1_2: false,
            as_host_of_1_3: false,
            device: None,
            samples_in_host_memory: false,
        }
    }

    /// The same, with the loaded samples kept in the host's memory: the plugin is never asked
    /// for its own (allocate_samples).
    pub fn with_samples_in_host_memory(mut self) -> RunDescription {
        self.samples_in_host_memory = true;
        self
    }

    pub fn samples_in_host_memory(&self) -> bool {
        self.samples_in_host_memory
    }

    /// The same, told to the plugin as a host of ABI 1.3 would: no device.
    pub fn as_host_of_1_3(mut self) -> RunDescription {
        self.as_host_of_1_3 = true;
        self
    }

    pub fn is_as_host_of_1_3(&self) -> bool {
        self.as_host_of_1_3
    }

    /// The same, for the instance serving `device`.
    pub fn with_device(mut self, device: RunDevice) -> RunDescription {
        self.device = Some(device);
        self
    }

    pub fn device(&self) -> Option<&RunDevice> {
        self.device.as_ref()
    }

    /// The same, told to the plugin as a host of ABI 1.2 would: no run description (the
    /// table ends before it), no sample sets, no named inputs.
    pub fn as_host_of_1_2(mut self) -> RunDescription {
        self.as_host_of_1_2 = true;
        self
    }

    pub fn is_as_host_of_1_2(&self) -> bool {
        self.as_host_of_1_2
    }

    /// The same, with the host batching for the plugin as `batching` says.
    pub fn with_batching(mut self, batching: HostBatching) -> RunDescription {
        self.batching = batching;
        self
    }

    pub fn batching(&self) -> HostBatching {
        self.batching
    }

    pub fn scenario(&self) -> TestScenario {
        self.settings.scenario
    }

    /// The same, with samples and responses read as `format` says.
    pub fn with_format(mut self, format: DataFormat) -> RunDescription {
        self.format = format;
        self
    }

    pub fn format(&self) -> &DataFormat {
        &self.format
    }

    /// The struct handed to the plugin.
    pub fn to_raw(&self) -> ffi::mlperf_run_description {
        let settings = &self.settings;
        let total = self.total_sample_count;
        let (effective, _) = EffectiveSettings::new(settings, self.performance_sample_count, total);
        let scenario = match effective.scenario {
            TestScenario::SingleStream => ffi::SCENARIO_SINGLE_STREAM,
            TestScenario::MultiStream => ffi::SCENARIO_MULTI_STREAM,
            TestScenario::Server => ffi::SCENARIO_SERVER,
            TestScenario::Offline => ffi::SCENARIO_OFFLINE,
        };
        let mode = match effective.mode {
            TestMode::SubmissionRun => ffi::MODE_SUBMISSION,
            TestMode::AccuracyOnly => ffi::MODE_ACCURACY,
            TestMode::PerformanceOnly => ffi::MODE_PERFORMANCE,
            TestMode::FindPeakPerformance => ffi::MODE_FIND_PEAK,
        };
        let expected_latency_ns = match effective.scenario {
            TestScenario::SingleStream => settings.single_stream_expected_latency_ns,
            TestScenario::MultiStream => settings.multi_stream_expected_latency_ns,
            _ => 0.0,
        };
        let server = effective.scenario == TestScenario::Server;
        let tokens = effective.use_token_latencies;
        let server_only = |value: u64| if server { value } else { 0 };
        // With several instances, each gets its share of the Offline query and of the
        // Server and Offline rates (SingleStream and MultiStream queries go whole to one).
        let (index, count) = self
            .device
            .as_ref()
            .map_or((0, 1), |d| (d.index, d.count.max(1)));
        let (samples_per_query, target_qps) = match effective.scenario {
            TestScenario::Offline => (
                even_share(effective.samples_per_query, index, count),
                effective.target_qps / f64::from(count),
            ),
            TestScenario::Server => (
                effective.samples_per_query,
                effective.target_qps / f64::from(count),
            ),
            _ => (effective.samples_per_query, effective.target_qps),
        };
        let token_bound = |value: u64| if server && tokens { value } else { 0 };
        ffi::mlperf_run_description {
            struct_size: std::mem::size_of::<ffi::mlperf_run_description>(),
            next: std::ptr::null(),
            scenario,
            mode,
            samples_per_query,
            target_qps,
            target_latency_ns: server_only(effective.target_latency_ns),
            target_latency_percentile: effective.target_latency_percentile,
            expected_latency_ns: expected_latency_ns.max(0.0) as u64,
            min_duration_ms: effective.min_duration_ms,
            min_query_count: effective.min_query_count,
            // What is loaded at once: an override above the data set's size loads it all.
            performance_sample_count: effective.performance_sample_count.min(total),
            total_sample_count: total,
            flags: if tokens { ffi::RUN_TOKEN_LATENCIES } else { 0 },
            issue_threads: u32::try_from(server_only(settings.server_num_issue_query_threads))
                .unwrap_or(u32::MAX),
            ttft_latency_ns: token_bound(effective.server_ttft_latency),
            tpot_latency_ns: token_bound(effective.server_tpot_latency),
            max_samples_per_call: self.batching.max_samples as u64,
            // Set by the instance, which owns the table they point at.
            inputs: std::ptr::null(),
            n_inputs: 0,
            device: std::ptr::null(),
            instance_index: index,
            instance_count: count,
        }
    }

    /// Several threads call `issue_query` at once.
    pub fn concurrent_issue(&self) -> bool {
        self.settings.scenario == TestScenario::Server
            && self.settings.server_num_issue_query_threads > 0
    }
}

/// Instance `index`'s part of `total` split evenly over `count`, the remainder one by one
/// from the first (as the host splits an Offline query).
pub(crate) fn even_share(total: u64, index: u32, count: u32) -> u64 {
    let count = u64::from(count.max(1));
    total / count + u64::from(u64::from(index) < total % count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_description_carries_the_bound_and_rate() {
        let settings = TestSettings {
            scenario: TestScenario::Server,
            server_target_qps: 250.0,
            server_target_latency_ns: 15_000_000,
            server_num_issue_query_threads: 2,
            ..TestSettings::default()
        };
        let described = RunDescription::new(&settings, 1024, 5000);
        assert!(described.concurrent_issue());
        let run = described.to_raw();
        assert_eq!(run.scenario, ffi::SCENARIO_SERVER);
        assert_eq!(run.mode, ffi::MODE_PERFORMANCE);
        assert_eq!(run.samples_per_query, 1);
        assert_eq!(run.target_qps, 250.0);
        assert_eq!(run.target_latency_ns, 15_000_000);
        assert_eq!(run.target_latency_percentile, 0.99);
        assert_eq!(run.issue_threads, 2);
        assert_eq!(run.expected_latency_ns, 0);
        assert_eq!(
            (run.performance_sample_count, run.total_sample_count),
            (1024, 5000)
        );
    }

    #[test]
    fn an_instance_of_several_devices_is_told_its_share_and_place() {
        use crate::plugin::devices::{DeviceInfo, RunDevice};
        let settings = TestSettings {
            scenario: TestScenario::Offline,
            offline_expected_qps: 1000.0,
            min_duration_ms: 1000,
            ..TestSettings::default()
        };
        let device = |index| RunDevice {
            device: DeviceInfo {
                ordinal: 7,
                kind: "gpu".into(),
                name: "g".into(),
                id: None,
                memory_bytes: 0,
            },
            index,
            count: 3,
        };
        // 1,100 samples over three: 367, 367, 366.
        let shares: Vec<u64> = (0..3)
            .map(|k| {
                let run = RunDescription::new(&settings, 100, 100).with_device(device(k));
                let raw = run.to_raw();
                assert_eq!((raw.instance_index, raw.instance_count), (k, 3));
                assert!((raw.target_qps - 1000.0 / 3.0).abs() < 1e-9);
                raw.samples_per_query
            })
            .collect();
        assert_eq!(shares, [367, 367, 366]);
        let single = TestSettings {
            scenario: TestScenario::SingleStream,
            ..TestSettings::default()
        };
        let whole = RunDescription::new(&single, 100, 100).to_raw();
        let one_of_three = RunDescription::new(&single, 100, 100)
            .with_device(device(2))
            .to_raw();
        assert_eq!(one_of_three.target_qps, whole.target_qps);
        assert_eq!(one_of_three.samples_per_query, 1);
    }

    #[test]
    fn offline_description_has_the_whole_query() {
        let settings = TestSettings {
            scenario: TestScenario::Offline,
            offline_expected_qps: 1000.0,
            min_duration_ms: 1000,
            ..TestSettings::default()
        };
        let described = RunDescription::new(&settings, 100, 100);
        assert!(!described.concurrent_issue());
        let run = described.to_raw();
        assert_eq!(run.scenario, ffi::SCENARIO_OFFLINE);
        // 1.1 x 1000 qps x 1 s, as LoadGen sizes the one query.
        assert_eq!(run.samples_per_query, 1100);
        assert_eq!(run.target_latency_ns, 0);
        assert_eq!(run.issue_threads, 0);
    }
}
