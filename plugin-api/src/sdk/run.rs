//! [`RunDescription`]: the test an instance is created for (ABI 1.3; its device 1.4), typed.

use std::time::Duration;

use std::ffi::CStr;

use super::{DType, Device, Sample};
use crate::ffi::{self, mlperf_run_description};

/// The LoadGen scenario of the test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    SingleStream,
    MultiStream,
    Server,
    Offline,
}

/// The LoadGen mode of the test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestMode {
    Submission,
    Accuracy,
    Performance,
    FindPeak,
}

/// What the host says about the test an instance serves (`mlperf_run_description`): the
/// effective settings LoadGen derived from mlperf.conf and user.conf. A field that does not
/// apply to the scenario is zero.
#[derive(Debug, Clone, PartialEq)]
pub struct RunDescription {
    pub scenario: Scenario,
    pub mode: TestMode,
    /// SingleStream and Server 1, MultiStream its samples per query, Offline every sample of
    /// its one query.
    pub samples_per_query: u64,
    /// Server: the scheduled rate; Offline: the expected one; SingleStream and MultiStream:
    /// one second over the expected latency.
    pub target_qps: f64,
    /// Server: the bound the percentile must meet.
    pub target_latency: Duration,
    pub target_latency_percentile: f64,
    /// SingleStream and MultiStream: the latency expected per query.
    pub expected_latency: Duration,
    pub min_duration: Duration,
    pub min_query_count: u64,
    /// Samples loaded at once (see [`SutPlugin::load_samples`](super::SutPlugin::load_samples)).
    pub performance_sample_count: u64,
    pub total_sample_count: u64,
    /// A token run: report first tokens.
    pub token_latencies: bool,
    /// Server: threads that call `issue_query`; 0 otherwise.
    pub issue_threads: u32,
    /// Token runs (Server): time-to-first-token and time-per-output-token bounds.
    pub ttft_latency: Duration,
    pub tpot_latency: Duration,
    /// The most samples one `issue_query` call holds when the host batches for the plugin
    /// (`--plugin-batch`, only for a plugin without `CAP_NATIVE_BATCHING`); 0: whole queries.
    pub max_samples_per_call: u64,
    /// The named inputs within every sample's data; empty when a sample is one tensor.
    pub inputs: Vec<Input>,
    /// The device this instance serves, one the plugin listed (ABI 1.4); None when the run
    /// uses no device of its list, or the host is older.
    pub device: Option<Device>,
    /// The run's instances (one per device it uses) and this one's place among them, from 0:
    /// 0 of 1 without devices.
    pub instance_index: u32,
    pub instance_count: u32,
}

/// One named input within every sample's data (a data set run with `--input-names` or
/// `--dataset-input`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    pub name: String,
    pub dtype: DType,
    pub shape: Vec<i64>,
    /// Where it starts in a sample's data, and its bytes.
    pub offset: usize,
    pub length: usize,
}

impl Input {
    /// Its bytes in `sample` (empty if the sample is too short to hold it).
    #[inline]
    pub fn data<'a>(&self, sample: &Sample<'a>) -> &'a [u8] {
        sample
            .data()
            .get(self.offset..self.offset.saturating_add(self.length))
            .unwrap_or(&[])
    }
}

impl RunDescription {
    /// Reads the host's struct, or None when a value is not one this SDK knows (a host of a
    /// later minor may add scenarios; the plugin then runs on its defaults).
    ///
    /// # Safety
    /// `raw` points to a `mlperf_run_description` of at least `struct_size` bytes.
    pub(crate) unsafe fn from_raw(raw: *const mlperf_run_description) -> Option<RunDescription> {
        // SAFETY: the caller's contract.
        let raw = unsafe { raw.as_ref() }?;
        if raw.struct_size < ffi::RUN_SIZE_1_3 {
            return None;
        }
        // A host of 1.3 ends the struct before the device.
        let since_1_4 = raw.struct_size >= size_of::<mlperf_run_description>();
        let scenario = match raw.scenario {
            ffi::SCENARIO_SINGLE_STREAM => Scenario::SingleStream,
            ffi::SCENARIO_MULTI_STREAM => Scenario::MultiStream,
            ffi::SCENARIO_SERVER => Scenario::Server,
            ffi::SCENARIO_OFFLINE => Scenario::Offline,
            _ => return None,
        };
        let mode = match raw.mode {
            ffi::MODE_SUBMISSION => TestMode::Submission,
            ffi::MODE_ACCURACY => TestMode::Accuracy,
            ffi::MODE_PERFORMANCE => TestMode::Performance,
            ffi::MODE_FIND_PEAK => TestMode::FindPeak,
            _ => return None,
        };
        Some(RunDescription {
            scenario,
            mode,
            samples_per_query: raw.samples_per_query,
            target_qps: raw.target_qps,
            target_latency: Duration::from_nanos(raw.target_latency_ns),
            target_latency_percentile: raw.target_latency_percentile,
            expected_latency: Duration::from_nanos(raw.expected_latency_ns),
            min_duration: Duration::from_millis(raw.min_duration_ms),
            min_query_count: raw.min_query_count,
            performance_sample_count: raw.performance_sample_count,
            total_sample_count: raw.total_sample_count,
            token_latencies: raw.flags & ffi::RUN_TOKEN_LATENCIES != 0,
            issue_threads: raw.issue_threads,
            ttft_latency: Duration::from_nanos(raw.ttft_latency_ns),
            tpot_latency: Duration::from_nanos(raw.tpot_latency_ns),
            max_samples_per_call: raw.max_samples_per_call,
            // SAFETY: the host's inputs, valid as long as the description.
            inputs: unsafe { inputs(raw.inputs, raw.n_inputs) },
            // SAFETY: the host's copy of the device, valid as long as the description.
            device: since_1_4
                .then(|| unsafe { Device::from_raw(raw.device) })
                .flatten(),
            instance_index: if since_1_4 { raw.instance_index } else { 0 },
            instance_count: if since_1_4 {
                raw.instance_count.max(1)
            } else {
                1
            },
        })
    }

    /// The named input `name`, if samples have it.
    pub fn input(&self, name: &str) -> Option<&Input> {
        self.inputs.iter().find(|input| input.name == name)
    }
}

/// The host's `count` inputs at `inputs`, strided by their struct_size.
///
/// # Safety
/// `inputs` is NULL or `count` entries with NUL-terminated names and `rank` shape entries.
unsafe fn inputs(inputs: *const ffi::mlperf_input, count: u64) -> Vec<Input> {
    if inputs.is_null() || count == 0 {
        return Vec::new();
    }
    // SAFETY: the caller's contract.
    let stride = unsafe { (*inputs).struct_size };
    if stride < size_of::<ffi::mlperf_input>() {
        return Vec::new();
    }
    (0..count as usize)
        .map(|k| {
            // SAFETY: entry k lies k * stride bytes in.
            let raw = unsafe { &*inputs.byte_add(k * stride) };
            let name = if raw.name.is_null() {
                String::new()
            } else {
                // SAFETY: NUL-terminated, per the caller.
                unsafe { CStr::from_ptr(raw.name) }
                    .to_string_lossy()
                    .into_owned()
            };
            let shape = if raw.shape.is_null() || raw.rank == 0 {
                Vec::new()
            } else {
                // SAFETY: `rank` entries, per the caller.
                unsafe { std::slice::from_raw_parts(raw.shape, raw.rank as usize) }.to_vec()
            };
            Input {
                name,
                dtype: DType::from_raw(raw.dtype),
                shape,
                offset: raw.offset as usize,
                length: raw.length as usize,
            }
        })
        .collect()
}
