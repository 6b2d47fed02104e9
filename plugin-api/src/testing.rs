//! For tests of plugins (ours and vendors'): a host that records what a plugin sends it, and a
//! thin raw-ABI handle on one plugin instance. The real loader lives in the host.

use std::ffi::{c_char, c_void, CStr};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use std::{ptr, slice};

use crate::ffi::{self, mlperf_attribute, mlperf_host_api, mlperf_plugin_api, mlperf_response};
use crate::sdk::PluginError;

/// A response as the host received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub id: u64,
    pub data: Vec<u8>,
    pub n_tokens: i64,
    /// Named outputs (since 1.3): name and bytes, in the plugin's order.
    pub outputs: Vec<(String, Vec<u8>)>,
    pub at: Instant,
}

#[derive(Default)]
struct Recorded {
    completed: Mutex<Vec<Answer>>,
    first_tokens: Mutex<Vec<Answer>>,
    next_tokens: Mutex<Vec<Answer>>,
    failures: Mutex<Vec<(u64, i32, i32, String)>>,
    logs: Mutex<Vec<(i32, String)>>,
    fails: Mutex<Vec<String>>,
    timings: Mutex<Vec<ffi::mlperf_sample_timing>>,
    changed: Condvar,
}

/// A host whose callbacks record every completion, first token, log line and failure.
pub struct RecordingHost {
    recorded: Box<Recorded>,
    api: mlperf_host_api,
    /// What `api.run` points at, when set.
    run: Option<Box<ffi::mlperf_run_description>>,
}

// SAFETY: the raw pointer in `api` is the context, pointing at the boxed, Sync `Recorded`.
unsafe impl Send for RecordingHost {}
// SAFETY: as above.
unsafe impl Sync for RecordingHost {}

impl Default for RecordingHost {
    fn default() -> Self {
        Self::new()
    }
}

impl RecordingHost {
    /// A host of this plugin-api's ABI version.
    pub fn new() -> Self {
        Self::of_minor(ffi::ABI_MINOR)
    }

    /// A host of ABI 1.`minor`, its table as large as that minor's: before 1.2 it ends at
    /// `log`, without `fail`.
    pub fn of_minor(minor: u32) -> Self {
        let recorded = Box::<Recorded>::default();
        let (struct_size, fail_callback) = match minor {
            0 | 1 => (std::mem::offset_of!(mlperf_host_api, fail), None),
            2 => (ffi::HOST_SIZE_1_2, Some(fail as FailFn)),
            3 => (ffi::HOST_SIZE_1_3, Some(fail as FailFn)),
            4 => (ffi::HOST_SIZE_1_4, Some(fail as FailFn)),
            _ => (size_of::<mlperf_host_api>(), Some(fail as FailFn)),
        };
        let api = mlperf_host_api {
            struct_size,
            next: ptr::null(),
            abi_major: ffi::ABI_MAJOR,
            abi_minor: minor,
            // The box's heap address stays put when the RecordingHost moves.
            context: ptr::from_ref::<Recorded>(&recorded).cast_mut().cast(),
            complete: Some(complete),
            first_token: Some(first_token),
            log: Some(log),
            fail: fail_callback,
            run: ptr::null(),
            complete_named: (minor >= 3).then_some(complete_named as CompleteNamedFn),
            now_ns: (minor >= 4).then_some(now_ns as NowFn),
            report_timing: (minor >= 4).then_some(report_timing as ReportTimingFn),
            next_tokens: (minor >= 5).then_some(next_tokens as CompleteFn),
            fail_samples: (minor >= 5).then_some(fail_samples as FailSamplesFn),
        };
        RecordingHost {
            recorded,
            api,
            run: None,
        }
    }

    /// This host (of 1.3 or later) hands `run` to the instances it creates.
    pub fn with_run(mut self, run: ffi::mlperf_run_description) -> Self {
        let run = Box::new(run);
        self.api.run = ptr::from_ref(&*run);
        self.run = Some(run);
        self
    }

    /// This host lacks `complete_named` (as if it predated it): named responses reach it
    /// through `complete`.
    pub fn without_complete_named(mut self) -> Self {
        self.api.complete_named = None;
        self
    }

    pub fn api(&self) -> &mlperf_host_api {
        &self.api
    }

    pub fn completed(&self) -> Vec<Answer> {
        lock(&self.recorded.completed).clone()
    }

    pub fn first_tokens(&self) -> Vec<Answer> {
        lock(&self.recorded.first_tokens).clone()
    }

    /// The tokens after the first (ABI 1.5), as the plugin reported them, in order.
    pub fn next_tokens(&self) -> Vec<Answer> {
        lock(&self.recorded.next_tokens).clone()
    }

    /// The single samples' failures (ABI 1.5): id, kind, status and message, in order.
    pub fn sample_failures(&self) -> Vec<(u64, i32, i32, String)> {
        lock(&self.recorded.failures).clone()
    }

    pub fn logs(&self) -> Vec<(i32, String)> {
        lock(&self.recorded.logs).clone()
    }

    /// Every message the plugin passed to the host's `fail`, in order (a real host keeps only
    /// the first).
    pub fn fails(&self) -> Vec<String> {
        lock(&self.recorded.fails).clone()
    }

    /// Every timing record the plugin reported, in order.
    pub fn timings(&self) -> Vec<ffi::mlperf_sample_timing> {
        lock(&self.recorded.timings).clone()
    }

    /// Waits until the plugin called `fail` or `timeout` passed; returns the failures so far.
    pub fn wait_for_fail(&self, timeout: Duration) -> Vec<String> {
        let deadline = Instant::now() + timeout;
        let mut fails = lock(&self.recorded.fails);
        while fails.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            fails = self
                .recorded
                .changed
                .wait_timeout(fails, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        fails.clone()
    }

    /// Waits until at least `count` completions arrived or `timeout` passed; returns them all.
    pub fn wait_for_completions(&self, count: usize, timeout: Duration) -> Vec<Answer> {
        let deadline = Instant::now() + timeout;
        let mut completed = lock(&self.recorded.completed);
        while completed.len() < count {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            completed = self
                .recorded
                .changed
                .wait_timeout(completed, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        completed.clone()
    }
}

/// Never panics (a panic would unwind into the plugin): a poisoned lock is still usable here.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// # Safety
/// `responses` holds `count` responses strided by the first one's struct_size; with `named`,
/// `mlperf_named_response`s.
unsafe fn record(
    into: &Mutex<Vec<Answer>>,
    responses: *const mlperf_response,
    count: usize,
    named: bool,
) {
    if responses.is_null() || count == 0 {
        return;
    }
    let at = Instant::now();
    // SAFETY: the caller's contract.
    let stride = unsafe { (*responses).struct_size };
    let least = match named {
        true => size_of::<ffi::mlperf_named_response>(),
        false => size_of::<mlperf_response>(),
    };
    if stride < least {
        return;
    }
    let mut into = lock(into);
    for i in 0..count {
        // SAFETY: response i lies i * stride bytes in.
        let response = unsafe { &*responses.byte_add(i * stride) };
        // SAFETY: `length` bytes at `data`, valid during the callback.
        let data = unsafe { bytes(response.data, response.length) };
        let outputs = if named {
            // SAFETY: a named response: `n_outputs` outputs strided by their struct_size.
            unsafe {
                let named = &*responses
                    .byte_add(i * stride)
                    .cast::<ffi::mlperf_named_response>();
                outputs(named.outputs, named.n_outputs)
            }
        } else {
            Vec::new()
        };
        into.push(Answer {
            id: response.id,
            data,
            n_tokens: response.n_tokens,
            outputs,
            at,
        });
    }
}

/// # Safety
/// `data` is NULL or `length` readable bytes.
unsafe fn bytes(data: *const c_void, length: u64) -> Vec<u8> {
    if data.is_null() {
        return Vec::new();
    }
    // SAFETY: the caller's contract.
    unsafe { slice::from_raw_parts(data.cast::<u8>(), length as usize) }.to_vec()
}

/// # Safety
/// `outputs` is NULL or `count` outputs strided by the first one's struct_size.
unsafe fn outputs(outputs: *const ffi::mlperf_output, count: u64) -> Vec<(String, Vec<u8>)> {
    if outputs.is_null() || count == 0 {
        return Vec::new();
    }
    // SAFETY: the caller's contract.
    let stride = unsafe { (*outputs).struct_size };
    (0..count as usize)
        .map(|k| {
            // SAFETY: output k lies k * stride bytes in.
            let output = unsafe { &*outputs.byte_add(k * stride) };
            let name = if output.name.is_null() {
                String::new()
            } else {
                // SAFETY: a NUL-terminated name, valid during the callback.
                unsafe { CStr::from_ptr(output.name) }
                    .to_string_lossy()
                    .into_owned()
            };
            // SAFETY: `length` bytes at `data`, valid during the callback.
            (name, unsafe { bytes(output.data, output.length) })
        })
        .collect()
}

unsafe extern "C" fn complete(context: *mut c_void, responses: *const mlperf_response, n: usize) {
    // SAFETY: the context is the RecordingHost's `Recorded`; the plugin passes `n` responses.
    let recorded = unsafe { &*context.cast::<Recorded>() };
    // SAFETY: `responses` points to `n` responses, valid for this call.
    unsafe { record(&recorded.completed, responses, n, false) };
    recorded.changed.notify_all();
}

unsafe extern "C" fn complete_named(
    context: *mut c_void,
    responses: *const ffi::mlperf_named_response,
    n: usize,
) {
    // SAFETY: as in complete().
    let recorded = unsafe { &*context.cast::<Recorded>() };
    // SAFETY: `n` named responses, valid for this call.
    unsafe { record(&recorded.completed, responses.cast(), n, true) };
    recorded.changed.notify_all();
}

unsafe extern "C" fn first_token(
    context: *mut c_void,
    responses: *const mlperf_response,
    n: usize,
) {
    // SAFETY: as in complete().
    let recorded = unsafe { &*context.cast::<Recorded>() };
    // SAFETY: `responses` points to `n` responses, valid for this call.
    unsafe { record(&recorded.first_tokens, responses, n, false) };
}

unsafe extern "C" fn next_tokens(
    context: *mut c_void,
    responses: *const mlperf_response,
    n: usize,
) {
    // SAFETY: as in complete().
    let recorded = unsafe { &*context.cast::<Recorded>() };
    // SAFETY: `responses` points to `n` responses, valid for this call.
    unsafe { record(&recorded.next_tokens, responses, n, false) };
}

type FailSamplesFn = unsafe extern "C" fn(
    context: *mut c_void,
    failures: *const ffi::mlperf_sample_failure,
    count: usize,
);

unsafe extern "C" fn fail_samples(
    context: *mut c_void,
    failures: *const ffi::mlperf_sample_failure,
    n: usize,
) {
    // SAFETY: as in complete().
    let recorded = unsafe { &*context.cast::<Recorded>() };
    if failures.is_null() || n == 0 {
        return;
    }
    // SAFETY: `n` records strided by the first one's struct_size, valid for this call.
    let stride = unsafe { (*failures).struct_size };
    let mut into = lock(&recorded.failures);
    for i in 0..n {
        // SAFETY: record i lies i * stride bytes in; its message is `length` bytes.
        let failure = unsafe { &*failures.byte_add(i * stride) };
        let bytes = match failure.message.is_null() {
            true => &[][..],
            // SAFETY: as above.
            false => unsafe {
                slice::from_raw_parts(failure.message.cast::<u8>(), failure.length as usize)
            },
        };
        into.push((
            failure.id,
            failure.kind,
            failure.status,
            String::from_utf8_lossy(bytes).into_owned(),
        ));
    }
    drop(into);
    recorded.changed.notify_all();
}

type CompleteFn =
    unsafe extern "C" fn(context: *mut c_void, responses: *const mlperf_response, count: usize);

unsafe extern "C" fn log(context: *mut c_void, level: i32, message: *const c_char, length: usize) {
    // SAFETY: as in complete(); the message is `length` bytes.
    let recorded = unsafe { &*context.cast::<Recorded>() };
    // SAFETY: the plugin hands `length` bytes at `message`, valid for this call.
    let bytes = unsafe { slice::from_raw_parts(message.cast::<u8>(), length) };
    lock(&recorded.logs).push((level, String::from_utf8_lossy(bytes).into_owned()));
}

type FailFn = unsafe extern "C" fn(context: *mut c_void, message: *const c_char, length: usize);
type CompleteNamedFn = unsafe extern "C" fn(
    context: *mut c_void,
    responses: *const ffi::mlperf_named_response,
    count: usize,
);

unsafe extern "C" fn fail(context: *mut c_void, message: *const c_char, length: usize) {
    // SAFETY: as in log().
    let recorded = unsafe { &*context.cast::<Recorded>() };
    let bytes = match message.is_null() {
        true => &[][..],
        // SAFETY: the message is `length` bytes.
        false => unsafe { slice::from_raw_parts(message.cast::<u8>(), length) },
    };
    lock(&recorded.fails).push(String::from_utf8_lossy(bytes).into_owned());
    recorded.changed.notify_all();
}

type NowFn = unsafe extern "C" fn(context: *mut c_void) -> u64;
type ReportTimingFn = unsafe extern "C" fn(
    context: *mut c_void,
    timings: *const ffi::mlperf_sample_timing,
    count: usize,
);

/// This host's clock: ns since the first reading in the process (a test host needs only
/// a clock that goes forward).
unsafe extern "C" fn now_ns(_context: *mut c_void) -> u64 {
    static ORIGIN: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    ORIGIN.get_or_init(Instant::now).elapsed().as_nanos() as u64 + 1
}

unsafe extern "C" fn report_timing(
    context: *mut c_void,
    timings: *const ffi::mlperf_sample_timing,
    n: usize,
) {
    // SAFETY: as in complete().
    let recorded = unsafe { &*context.cast::<Recorded>() };
    if timings.is_null() || n == 0 {
        return;
    }
    // SAFETY: `n` records strided by the first one's struct_size, valid for this call.
    let stride = unsafe { (*timings).struct_size };
    if stride < size_of::<ffi::mlperf_sample_timing>() {
        return;
    }
    let mut into = lock(&recorded.timings);
    for i in 0..n {
        // SAFETY: record i lies i * stride bytes in.
        into.push(unsafe { *timings.byte_add(i * stride) });
    }
}

type SampleSetFn = unsafe extern "C" fn(
    instance: *mut c_void,
    samples: *const ffi::mlperf_sample,
    count: usize,
) -> *mut ffi::mlperf_error;

/// One plugin instance driven through the raw table; destroyed on drop.
pub struct RawInstance<'a> {
    api: &'a mlperf_plugin_api,
    instance: *mut c_void,
}

impl<'a> RawInstance<'a> {
    /// # Safety
    /// `api` is a plugin's table and `host` outlives the instance.
    pub unsafe fn create(
        api: &'a mlperf_plugin_api,
        host: &'a RecordingHost,
        config: &str,
    ) -> Result<Self, PluginError> {
        let create = api.create.expect("the table has create");
        let mut instance = ptr::null_mut();
        // SAFETY: the caller's contract; the config is `len` bytes.
        let error = unsafe {
            create(
                host.api(),
                config.as_ptr().cast(),
                config.len(),
                &mut instance,
            )
        };
        // SAFETY: an error from the plugin, released once here.
        match unsafe { PluginError::take(error) } {
            Some(error) => Err(error),
            None => Ok(RawInstance { api, instance }),
        }
    }

    /// The plugin's `void *instance`, for calls this type does not wrap.
    pub fn as_ptr(&self) -> *mut c_void {
        self.instance
    }

    /// `samples` must stay valid until completed.
    pub fn issue(&self, samples: &[ffi::mlperf_sample]) -> Result<(), PluginError> {
        let issue = self.api.issue_query.expect("the table has issue_query");
        // SAFETY: a live instance and `samples.len()` samples.
        let error = unsafe { issue(self.instance, samples.as_ptr(), samples.len()) };
        // SAFETY: released once here.
        unsafe { PluginError::take(error) }.map_or(Ok(()), Err)
    }

    /// `load_samples` (ABI 1.3); Ok without a call when the plugin's table has none.
    pub fn load(&self, samples: &[ffi::mlperf_sample]) -> Result<(), PluginError> {
        self.sample_set(self.load_samples_fn(), samples)
    }

    /// `unload_samples` (ABI 1.3); Ok without a call when the plugin's table has none.
    pub fn unload(&self, samples: &[ffi::mlperf_sample]) -> Result<(), PluginError> {
        self.sample_set(self.unload_samples_fn(), samples)
    }

    fn load_samples_fn(&self) -> Option<SampleSetFn> {
        (self.api.struct_size > ffi::TABLE_SIZE_1_2)
            .then_some(self.api.load_samples)
            .flatten()
    }

    fn unload_samples_fn(&self) -> Option<SampleSetFn> {
        (self.api.struct_size > ffi::TABLE_SIZE_1_2)
            .then_some(self.api.unload_samples)
            .flatten()
    }

    fn sample_set(
        &self,
        function: Option<SampleSetFn>,
        samples: &[ffi::mlperf_sample],
    ) -> Result<(), PluginError> {
        let Some(function) = function else {
            return Ok(());
        };
        // SAFETY: a live instance and `samples.len()` samples.
        let error = unsafe { function(self.instance, samples.as_ptr(), samples.len()) };
        // SAFETY: released once here.
        unsafe { PluginError::take(error) }.map_or(Ok(()), Err)
    }

    pub fn flush(&self) -> Result<(), PluginError> {
        let flush = self.api.flush_queries.expect("the table has flush_queries");
        // SAFETY: a live instance.
        let error = unsafe { flush(self.instance) };
        // SAFETY: released once here.
        unsafe { PluginError::take(error) }.map_or(Ok(()), Err)
    }

    pub fn attributes(&self) -> Result<Vec<(String, String)>, PluginError> {
        let Some(attributes) = self.api.attributes else {
            return Ok(Vec::new());
        };
        let mut table: *const mlperf_attribute = ptr::null();
        let mut count = 0;
        // SAFETY: a live instance and two out-pointers.
        let error = unsafe { attributes(self.instance, &mut table, &mut count) };
        // SAFETY: released once here.
        if let Some(error) = unsafe { PluginError::take(error) } {
            return Err(error);
        }
        if count == 0 {
            return Ok(Vec::new());
        }
        // SAFETY: `count` attributes of NUL-terminated strings, valid until destroy.
        let table = unsafe { slice::from_raw_parts(table, count) };
        // SAFETY: as above.
        let text = |p: *const c_char| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
        Ok(table.iter().map(|a| (text(a.key), text(a.value))).collect())
    }
}

/// What a meter's `power_info` said, its description copied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MeterInfo {
    pub scope: u32,
    pub flags: u32,
    pub description: String,
    pub period_ns: u64,
}

impl RawInstance<'_> {
    /// A power meter's `power_info`, into a struct prepared as a host prepares it.
    pub fn power_info(&self) -> Result<MeterInfo, PluginError> {
        let power_info = self.api.power_info.expect("the table has power_info");
        let mut info = ffi::mlperf_power_info {
            struct_size: size_of::<ffi::mlperf_power_info>(),
            next: ptr::null(),
            scope: ffi::POWER_SCOPE_COMPONENT,
            flags: 0,
            description: ptr::null(),
            period_ns: 0,
        };
        // SAFETY: a live instance and a struct of its struct_size.
        let error = unsafe { power_info(self.instance, &mut info) };
        // SAFETY: released once here.
        if let Some(error) = unsafe { PluginError::take(error) } {
            return Err(error);
        }
        let description = match info.description.is_null() {
            true => String::new(),
            // SAFETY: NUL-terminated, valid until destroy.
            false => unsafe { CStr::from_ptr(info.description) }
                .to_string_lossy()
                .into_owned(),
        };
        Ok(MeterInfo {
            scope: info.scope,
            flags: info.flags,
            description,
            period_ns: info.period_ns,
        })
    }

    /// A power meter's `read_power`, into a reading preset to NaN as a host presets it.
    pub fn read_power(&self) -> Result<ffi::mlperf_power_reading, PluginError> {
        let read_power = self.api.read_power.expect("the table has read_power");
        let mut reading = ffi::mlperf_power_reading {
            struct_size: size_of::<ffi::mlperf_power_reading>(),
            next: ptr::null(),
            watts: f64::NAN,
            volts: f64::NAN,
            amps: f64::NAN,
            power_factor: f64::NAN,
            energy_joules: f64::NAN,
        };
        // SAFETY: a live instance and a struct of its struct_size.
        let error = unsafe { read_power(self.instance, &mut reading) };
        // SAFETY: released once here.
        unsafe { PluginError::take(error) }.map_or(Ok(reading), Err)
    }
}

impl Drop for RawInstance<'_> {
    fn drop(&mut self) {
        if let Some(destroy) = self.api.destroy {
            // SAFETY: destroyed once, here.
            unsafe { destroy(self.instance) };
        }
    }
}

/// A run description of `scenario` (an `ffi::SCENARIO_*`) in performance mode: one sample per
/// query, 1024 of 50,000 samples loaded, 10 minutes, every bound and rate 0 and every flag
/// clear. Tests set the fields they look at.
pub fn run_description(scenario: u32) -> ffi::mlperf_run_description {
    ffi::mlperf_run_description {
        struct_size: size_of::<ffi::mlperf_run_description>(),
        next: ptr::null(),
        scenario,
        mode: ffi::MODE_PERFORMANCE,
        samples_per_query: 1,
        target_qps: 0.0,
        target_latency_ns: 0,
        target_latency_percentile: 0.99,
        expected_latency_ns: 0,
        min_duration_ms: 600_000,
        min_query_count: 1,
        performance_sample_count: 1024,
        total_sample_count: 50_000,
        flags: 0,
        issue_threads: 0,
        ttft_latency_ns: 0,
        tpot_latency_ns: 0,
        max_samples_per_call: 0,
        inputs: ptr::null(),
        n_inputs: 0,
        device: ptr::null(),
        instance_index: 0,
        instance_count: 1,
    }
}

/// A sample for `issue`, without shape.
pub fn sample(id: u64, index: u64, data: &[u8]) -> ffi::mlperf_sample {
    ffi::mlperf_sample {
        struct_size: size_of::<ffi::mlperf_sample>(),
        id,
        index,
        data: if data.is_empty() {
            ptr::null()
        } else {
            data.as_ptr().cast()
        },
        length: data.len() as u64,
        dtype: 1, // U8
        rank: 0,
        shape: ptr::null(),
    }
}
