//! The host's half of the ABI: the callbacks a plugin calls (completions, first tokens, log
//! lines, failures), turned into calls on the engine's `Completer` and into `tracing` events.
//! Nothing here may unwind into the plugin.

use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::{c_char, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use mlperf_plugin_api::ffi;

use super::completer_slot::CompleterSlot;
use crate::benchmark::postprocess::ResponseTransform;

use crate::loadgen::{AsSampleResponse, Completer, QuerySampleResponse, ResponseId};

/// What `mlperf_host_api.context` points at for one plugin instance.
pub(crate) struct HostContext {
    /// The completer of the test the instance serves, and a failure reported before it.
    pub(crate) completer: CompleterSlot,
    pub(crate) plugin: String,
    /// The plugin's destroy has returned (set only where the context outlives it: the plugin's
    /// own process); callbacks after that are counted, not served.
    destroyed: AtomicBool,
    late_callbacks: AtomicU64,
    /// The named outputs a response's logged bytes are made of (none: its data).
    logged_outputs: Box<[Box<[u8]>]>,
    /// What the host makes of each response's data before the engine takes it (a
    /// benchmark's post-processing); None: the data as the plugin gave it.
    postprocess: Option<ResponseTransform>,
    /// Each issued sample's index by its response id, while it is out, where the
    /// post-processing needs it (YOLO's records carry it, its boxes scale to the sample's
    /// size). A lock per sample, beside an NMS per sample.
    issued_samples: Option<Mutex<HashMap<u64, usize>>>,
    /// A sliding-window run's windows (3D-UNet): every response is an answer to one.
    pub(crate) window: Option<Arc<super::window::WindowState>>,
    /// Where the plugin's timing reports go, when the run divides its latencies.
    timing: OnceLock<Arc<dyn TimingReports>>,
    /// Where the tokens after each answer's first go, when a sweep times them.
    tokens: OnceLock<Arc<dyn TokenReports>>,
    /// Where single samples' failures go, when a sweep counts them (else they fail the run).
    failures: OnceLock<Arc<dyn FailureReports>>,
}

/// Takes a plugin's `fail_samples` (ABI 1.5): sample `id` failed on its own, at `now_ns`.
pub(crate) trait FailureReports: Send + Sync {
    fn sample_failed(&self, id: u64, kind: i32, status: i32, message: &str, now_ns: i64);
}

/// Takes a plugin's `next_tokens` (ABI 1.5): `tokens` more tokens of response `id` arrived at
/// `now_ns` (the host's clock, read once per call).
pub(crate) trait TokenReports: Send + Sync {
    fn next_tokens(&self, id: u64, tokens: i64, now_ns: i64);
    /// The first token of response `id` came at `now_ns`, before the host takes it (a plugin
    /// in its own process stamps it there); its first-token completion follows.
    fn first_token(&self, _id: u64, _now_ns: i64) {}
}

/// Takes a plugin's `report_timing` records (ABI 1.4).
pub(crate) trait TimingReports: Send + Sync {
    fn report(&self, timing: &ffi::mlperf_sample_timing);
}

impl TimingReports for crate::timing::TimingSink {
    #[inline]
    fn report(&self, timing: &ffi::mlperf_sample_timing) {
        self.table.report(
            timing.id,
            timing.dequeued_ns,
            timing.compute_start_ns,
            timing.compute_end_ns,
        );
    }
}

impl HostContext {
    pub(crate) fn new(
        plugin: String,
        logged_outputs: &[String],
        postprocess: Option<ResponseTransform>,
    ) -> Box<Self> {
        Box::new(HostContext {
            completer: CompleterSlot::default(),
            plugin: plugin.clone(),
            destroyed: AtomicBool::new(false),
            late_callbacks: AtomicU64::new(0),
            logged_outputs: logged_outputs
                .iter()
                .map(|name| name.as_bytes().into())
                .collect(),
            issued_samples: postprocess
                .as_ref()
                .filter(|transform| transform.needs_sample())
                .map(|_| Mutex::new(HashMap::new())),
            window: postprocess
                .as_ref()
                .filter(|transform| transform.is_sliding_window())
                .map(|_| super::window::WindowState::new(plugin.clone())),
            postprocess,
            timing: OnceLock::new(),
            tokens: OnceLock::new(),
            failures: OnceLock::new(),
        })
    }

    /// The samples about to be handed to the plugin, remembered by response id where the
    /// post-processing needs each response's sample.
    #[inline]
    pub(crate) fn issuing(&self, samples: &[crate::loadgen::QuerySample]) {
        if let Some(issued) = &self.issued_samples {
            let mut issued = issued.lock().unwrap_or_else(|p| p.into_inner());
            issued.extend(samples.iter().map(|sample| (sample.id.0, sample.index)));
        }
    }

    /// From now on the plugin's timing reports go to `reports` (set once per instance).
    pub(crate) fn report_timing_to(&self, reports: Arc<dyn TimingReports>) {
        let _ = self.timing.set(reports);
    }

    /// From now on the tokens after each answer's first go to `reports` (set once).
    pub(crate) fn report_tokens_to(&self, reports: Arc<dyn TokenReports>) {
        let _ = self.tokens.set(reports);
    }

    /// From now on single samples' failures go to `reports` (set once).
    pub(crate) fn report_failures_to(&self, reports: Arc<dyn FailureReports>) {
        let _ = self.failures.set(reports);
    }

    /// From now on callbacks are late: the plugin's destroy has returned.
    pub(crate) fn mark_destroyed(&self) {
        self.destroyed.store(true, Ordering::Release);
    }

    /// Callbacks that came after destroy returned.
    pub(crate) fn late_callbacks(&self) -> u64 {
        self.late_callbacks.load(Ordering::Acquire)
    }

    /// A callback arrives: true (and counted) when it comes after destroy returned.
    #[inline]
    fn late(&self) -> bool {
        if !self.destroyed.load(Ordering::Relaxed) {
            return false;
        }
        self.late_callbacks.fetch_add(1, Ordering::AcqRel);
        true
    }

    /// The plugin cannot finish samples it accepted: the engine stops issuing and ends the run
    /// INVALID with `message` (kept for the first issue when it comes before).
    pub(crate) fn fail(&self, message: String) {
        self.completer.fail(message, false);
    }
}

/// The host API table handed to the plugin; `context` and `run` must outlive the instance.
pub(crate) fn host_api(
    context: &HostContext,
    run: Option<&ffi::mlperf_run_description>,
) -> ffi::mlperf_host_api {
    ffi::mlperf_host_api {
        struct_size: std::mem::size_of::<ffi::mlperf_host_api>(),
        next: std::ptr::null(),
        abi_major: ffi::ABI_MAJOR,
        abi_minor: ffi::ABI_MINOR,
        context: context as *const HostContext as *mut c_void,
        complete: Some(host_complete),
        first_token: Some(host_first_token),
        log: Some(host_log),
        fail: Some(host_fail),
        run: run.map_or(std::ptr::null(), std::ptr::from_ref),
        complete_named: Some(host_complete_named),
        now_ns: Some(host_now_ns),
        report_timing: Some(host_report_timing),
        next_tokens: Some(host_next_tokens),
        fail_samples: Some(host_fail_samples),
    }
}

/// Responses are converted on the stack in batches of this many.
const BATCH: usize = 256;

/// The most bytes one response may claim. A larger length is a plugin's bug (a garbage or
/// negative length): its data is never read, and the run ends INVALID naming the sample.
pub(super) const MAX_RESPONSE_BYTES: u64 = 1 << 30;

thread_local! {
    /// The first response of the running callback that claimed more than
    /// [`MAX_RESPONSE_BYTES`] (its id and claimed length): noted where its data is read,
    /// reported when the callback ends. Both happen on the callback's thread, so a note
    /// never reaches another instance's run, and the per-response path carries only the
    /// comparison.
    static OVERSIZED: Cell<Option<(u64, u64)>> = const { Cell::new(None) };
}

/// The data of a response the plugin says holds `length` bytes at `data`; empty when the
/// length is refused (and noted for [`report_oversized`]).
///
/// # Safety
/// `data` is NULL or points to `length` readable bytes for `'a`, as the ABI requires.
#[inline]
unsafe fn response_data<'a>(id: u64, data: *const c_void, length: u64) -> &'a [u8] {
    if data.is_null() || length == 0 {
        return &[];
    }
    if length > MAX_RESPONSE_BYTES {
        note_oversized(id, length);
        return &[];
    }
    // SAFETY: the caller's contract; the length fits in memory.
    unsafe { std::slice::from_raw_parts(data as *const u8, length as usize) }
}

#[cold]
fn note_oversized(id: u64, length: u64) {
    OVERSIZED.with(|first| {
        if first.get().is_none() {
            first.set(Some((id, length)));
        }
    });
}

/// Fails the run when a response of this callback claimed too many bytes.
fn report_oversized(context: &HostContext) {
    if let Some((id, length)) = OVERSIZED.with(Cell::take) {
        context.fail(format!(
            "plugin {} completed sample id {id} with a response of {length} bytes (a response holds at most {MAX_RESPONSE_BYTES} bytes)",
            context.plugin
        ));
    }
}

/// A plugin's response, read by the engine in place. Only made by casting the array a plugin
/// passed to a callback, whose data pointers are valid for the call.
#[repr(transparent)]
struct PluginResponse(ffi::mlperf_response);

impl AsSampleResponse for PluginResponse {
    #[inline]
    fn as_response(&self) -> QuerySampleResponse<'_> {
        let raw = &self.0;
        // SAFETY: the plugin guarantees `length` readable bytes for the callback, which
        // outlives this borrow (see the type).
        let data = unsafe { response_data(raw.id, raw.data, raw.length) };
        QuerySampleResponse::with_tokens(ResponseId(raw.id), data, raw.n_tokens)
    }
}

/// The plugin's responses as a slice, when they are laid out as this host's `mlperf_response`
/// (the plugin's struct_size is ours); else `None`, and they are converted.
///
/// # Safety
/// As [`for_each_batch`].
unsafe fn in_place<'a>(
    responses: *const ffi::mlperf_response,
    count: usize,
) -> Option<&'a [PluginResponse]> {
    if responses.is_null() || count == 0 {
        return Some(&[]);
    }
    // SAFETY: at least one response, per the caller.
    let stride = unsafe { (*responses).struct_size };
    if stride != std::mem::size_of::<ffi::mlperf_response>() {
        return None;
    }
    // SAFETY: `count` responses of exactly this type, back to back; PluginResponse is
    // transparent over it.
    Some(unsafe { std::slice::from_raw_parts(responses as *const PluginResponse, count) })
}

/// Calls `deliver` with the plugin's responses as engine responses, batch by batch.
///
/// # Safety
/// `responses` must point to `count` responses laid out `struct_size` bytes apart, each data
/// pointer valid for its length for the duration of the call.
unsafe fn for_each_batch(
    responses: *const ffi::mlperf_response,
    count: usize,
    mut deliver: impl FnMut(&[QuerySampleResponse<'_>]),
) {
    if responses.is_null() || count == 0 {
        return;
    }
    // SAFETY: the caller guarantees at least one response.
    let stride = unsafe { (*responses).struct_size };
    // A named response (complete_named) begins with these fields; its outputs are not
    // read here.
    if stride < std::mem::size_of::<ffi::mlperf_response>() {
        return;
    }
    let convert = |i: usize| {
        // SAFETY: within the caller's array, `stride` bytes per element.
        let response =
            unsafe { &*((responses as *const u8).add(i * stride) as *const ffi::mlperf_response) };
        // SAFETY: the plugin guarantees `length` readable bytes for this call.
        let data = unsafe { response_data(response.id, response.data, response.length) };
        QuerySampleResponse::with_tokens(ResponseId(response.id), data, response.n_tokens)
    };
    // One response (SingleStream, Server) needs no batch array.
    if count == 1 {
        deliver(&[convert(0)]);
        return;
    }
    deliver_batches(count, convert, deliver);
}

/// The many-response path, out of line so the one-response path does not carry (and probe)
/// its stack frame.
#[inline(never)]
fn deliver_batches<'a>(
    count: usize,
    convert: impl Fn(usize) -> QuerySampleResponse<'a>,
    mut deliver: impl FnMut(&[QuerySampleResponse<'_>]),
) {
    let mut batch = [QuerySampleResponse::new(ResponseId(0), &[]); BATCH];
    let mut filled = 0;
    for i in 0..count {
        batch[filled] = convert(i);
        filled += 1;
        if filled == BATCH {
            deliver(&batch[..filled]);
            filled = 0;
        }
    }
    if filled > 0 {
        deliver(&batch[..filled]);
    }
}

/// Runs `deliver` with the test's completer, never unwinding into C: a panic of the host's
/// own code ends the run INVALID with its message, as a refused response does.
///
/// # Safety
/// `context` is the HostContext the table was made with.
unsafe fn with_context(context: *mut c_void, deliver: impl FnOnce(&Completer)) {
    // SAFETY: the caller's contract; the context outlives the instance.
    let context = unsafe { &*(context as *const HostContext) };
    if context.late() {
        return;
    }
    let delivered = catch_unwind(AssertUnwindSafe(|| {
        if let Some(completer) = context.completer.get() {
            deliver(completer);
        }
    }));
    if let Err(panic) = delivered {
        let _ = catch_unwind(AssertUnwindSafe(|| {
            context.fail(format!(
                "the host panicked taking responses of plugin {}: {}",
                context.plugin,
                panic_text(&panic)
            ))
        }));
    }
    let _ = catch_unwind(AssertUnwindSafe(|| report_oversized(context)));
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic without a message")
}

/// Hands the responses, converted, to `deliver` with the test's completer.
///
/// # Safety
/// `context` as [`with_context`]; `responses`/`count` as the ABI says.
unsafe fn with_completer(
    context: *mut c_void,
    responses: *const ffi::mlperf_response,
    count: usize,
    deliver: impl Fn(&Completer, &[QuerySampleResponse<'_>]),
) {
    // SAFETY: the caller's contract.
    unsafe {
        with_context(context, |completer| {
            for_each_batch(responses, count, |batch| deliver(completer, batch))
        })
    };
}

unsafe extern "C" fn host_complete(
    context: *mut c_void,
    responses: *const ffi::mlperf_response,
    count: usize,
) {
    // SAFETY: called by the plugin per the ABI's contract for `complete`.
    unsafe {
        if let Some(window) = &(*(context as *const HostContext)).window {
            return with_completer(context, responses, count, |_, batch| window.take(batch));
        }
        if let Some(transform) = postprocess_of(context) {
            if transform.needs_sample() {
                return complete_by_sample(context, responses, count, transform);
            }
            return complete_postprocessed(context, responses, count, transform);
        }
        if logs_named_outputs(context) {
            return complete_with_named_outputs(context, responses.cast(), count, false);
        }
        if let Some(responses) = in_place(responses, count) {
            return with_context(context, |completer| completer.complete_in_place(responses));
        }
        with_completer(context, responses, count, |completer, batch| {
            completer.query_samples_complete(batch)
        })
    };
}

/// The benchmark's post-processing of each response, when the host does it.
///
/// # Safety
/// `context` is the HostContext the table was made with.
#[inline]
unsafe fn postprocess_of<'a>(context: *mut c_void) -> Option<&'a ResponseTransform> {
    // SAFETY: the caller's contract.
    unsafe { &*(context as *const HostContext) }
        .postprocess
        .as_ref()
}

/// Each response's data post-processed as the benchmark's reference does it, then taken. A
/// response the post-processing cannot read is taken with no data, and the run ends INVALID
/// naming the sample.
///
/// # Safety
/// As [`host_complete`].
#[inline(never)]
unsafe fn complete_postprocessed(
    context: *mut c_void,
    responses: *const ffi::mlperf_response,
    count: usize,
    transform: &ResponseTransform,
) {
    // SAFETY: the caller's contract.
    let responses = unsafe { strided(responses, count) };
    // SAFETY: the caller's contract.
    let host = unsafe { &*(context as *const HostContext) };
    let mut failure = None;
    let logged: Vec<(u64, [u8; ResponseTransform::MAX_OUTPUT], usize, i64)> = responses
        .map(|response| {
            // SAFETY: the plugin's data, valid for the call.
            let data = unsafe { response_data(response.id, response.data, response.length) };
            let mut out = [0u8; ResponseTransform::MAX_OUTPUT];
            let length = transform.apply(data, &mut out).unwrap_or_else(|why| {
                failure.get_or_insert_with(|| {
                    format!(
                        "plugin {}: response {} cannot be post-processed: {why}",
                        host.plugin, response.id
                    )
                });
                0
            });
            (response.id, out, length, response.n_tokens)
        })
        .collect();
    if logged.is_empty() {
        return;
    }
    let batch: Vec<QuerySampleResponse<'_>> = logged
        .iter()
        .map(|(id, out, length, n_tokens)| {
            QuerySampleResponse::with_tokens(ResponseId(*id), &out[..*length], *n_tokens)
        })
        .collect();
    // SAFETY: the caller's contract.
    unsafe { complete_made(context, &batch, failure) };
}

/// Each response post-processed with its sample (the index the host remembered for its id
/// when it was issued), as [`complete_postprocessed`] does without one. Its logged bytes are
/// allocated: they are up to 300 detections' records, made by an NMS over every anchor.
///
/// # Safety
/// As [`host_complete`].
#[inline(never)]
unsafe fn complete_by_sample(
    context: *mut c_void,
    responses: *const ffi::mlperf_response,
    count: usize,
    transform: &ResponseTransform,
) {
    // SAFETY: the caller's contract.
    let responses = unsafe { strided(responses, count) };
    // SAFETY: the caller's contract.
    let host = unsafe { &*(context as *const HostContext) };
    let Some(issued) = &host.issued_samples else {
        return;
    };
    let mut failure = None;
    let logged: Vec<(u64, Vec<u8>, i64)> = responses
        .map(|response| {
            // SAFETY: the plugin's data, valid for the call.
            let data = unsafe { response_data(response.id, response.data, response.length) };
            let sample = issued
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&response.id);
            let mut out = Vec::new();
            let made = match sample {
                Some(sample) => transform.apply_to_sample(data, sample, &mut out),
                None => Err("its id was never issued, or it was answered already".into()),
            };
            if let Err(why) = made {
                out.clear();
                failure.get_or_insert_with(|| {
                    format!(
                        "plugin {}: response {} cannot be post-processed: {why}",
                        host.plugin, response.id
                    )
                });
            }
            (response.id, out, response.n_tokens)
        })
        .collect();
    if logged.is_empty() {
        return;
    }
    let batch: Vec<QuerySampleResponse<'_>> = logged
        .iter()
        .map(|(id, out, n_tokens)| {
            QuerySampleResponse::with_tokens(ResponseId(*id), out, *n_tokens)
        })
        .collect();
    // SAFETY: the caller's contract.
    unsafe { complete_made(context, &batch, failure) };
}

/// The run logs named outputs (`--logged-outputs`) rather than each response's data.
///
/// # Safety
/// `context` is the HostContext the table was made with.
#[inline]
unsafe fn logs_named_outputs(context: *mut c_void) -> bool {
    // SAFETY: the caller's contract.
    !unsafe { &*(context as *const HostContext) }
        .logged_outputs
        .is_empty()
}

/// The run logs named outputs: each response's logged bytes are those outputs, copied (in the
/// run's order) out of the plugin's response. A response without one of them is taken with no
/// data, and the run ends INVALID naming the sample and the output.
///
/// # Safety
/// As [`host_complete`].
#[inline(never)]
unsafe fn complete_with_named_outputs(
    context: *mut c_void,
    responses: *const ffi::mlperf_named_response,
    count: usize,
    named: bool,
) {
    if responses.is_null() || count == 0 {
        return;
    }
    // SAFETY: the plugin passes at least one response.
    let stride = unsafe { (*responses).struct_size };
    let least = match named {
        true => std::mem::size_of::<ffi::mlperf_named_response>(),
        false => std::mem::size_of::<ffi::mlperf_response>(),
    };
    if stride < least {
        return;
    }
    // SAFETY: the caller's contract.
    let host = unsafe { &*(context as *const HostContext) };
    let mut missing = None;
    let logged: Vec<(u64, Vec<u8>, i64)> = (0..count)
        .map(|i| {
            // SAFETY: response i lies i * stride bytes in.
            let response = unsafe { &*responses.byte_add(i * stride) };
            let outputs = match named {
                // SAFETY: a named response's outputs, valid for the call.
                true => unsafe { named_outputs(response.outputs, response.n_outputs) },
                // A plain response (complete) names none; only its leading fields are read.
                false => Vec::new(),
            };
            let mut bytes = Vec::new();
            for wanted in host.logged_outputs.iter() {
                match outputs.iter().find(|(name, _)| name == &&wanted[..]) {
                    Some((_, output)) => {
                        // SAFETY: the plugin's output, valid for the call.
                        bytes.extend_from_slice(unsafe {
                            response_data(response.id, output.data, output.length)
                        })
                    }
                    None => {
                        missing.get_or_insert_with(|| {
                            missing_output(&host.plugin, response.id, wanted, &outputs)
                        });
                        bytes.clear();
                        break;
                    }
                }
            }
            (response.id, bytes, response.n_tokens)
        })
        .collect();
    let batch: Vec<QuerySampleResponse<'_>> = logged
        .iter()
        .map(|(id, bytes, n_tokens)| {
            QuerySampleResponse::with_tokens(ResponseId(*id), bytes, *n_tokens)
        })
        .collect();
    // SAFETY: the caller's contract.
    unsafe { complete_made(context, &batch, missing) };
}

/// Takes responses whose logged bytes the host made (post-processed, or named outputs
/// gathered), after failing the run with `failure` when one could not be made.
///
/// # Safety
/// `context` as [`with_context`].
unsafe fn complete_made(
    context: *mut c_void,
    batch: &[QuerySampleResponse<'_>],
    failure: Option<String>,
) {
    // SAFETY: the caller's contract.
    unsafe {
        with_context(context, |completer| {
            if let Some(message) = failure {
                completer.fail(message);
            }
            completer.query_samples_complete(batch)
        })
    };
}

/// The named outputs of a response: (name bytes, output).
///
/// # Safety
/// `outputs` is NULL or `count` outputs strided by the first one's struct_size, with
/// NUL-terminated names, valid for `'a`.
unsafe fn named_outputs<'a>(
    outputs: *const ffi::mlperf_output,
    count: u64,
) -> Vec<(&'a [u8], &'a ffi::mlperf_output)> {
    if outputs.is_null() || count == 0 {
        return Vec::new();
    }
    // SAFETY: the caller's contract.
    let stride = unsafe { (*outputs).struct_size };
    if stride < std::mem::size_of::<ffi::mlperf_output>() {
        return Vec::new();
    }
    (0..count as usize)
        .map(|k| {
            // SAFETY: output k lies k * stride bytes in.
            let output = unsafe { &*outputs.byte_add(k * stride) };
            let name = if output.name.is_null() {
                &[][..]
            } else {
                // SAFETY: NUL-terminated, per the caller.
                unsafe { std::ffi::CStr::from_ptr(output.name) }.to_bytes()
            };
            (name, output)
        })
        .collect()
}

#[cold]
fn missing_output(
    plugin: &str,
    id: u64,
    wanted: &[u8],
    outputs: &[(&[u8], &ffi::mlperf_output)],
) -> String {
    let wanted = String::from_utf8_lossy(wanted);
    let had = if outputs.is_empty() {
        "it named none (a plugin names them through complete_named, since ABI 1.3)".to_owned()
    } else {
        let names: Vec<String> = outputs
            .iter()
            .map(|(name, _)| format!("'{}'", String::from_utf8_lossy(name)))
            .collect();
        format!("it named {}", names.join(", "))
    };
    format!("plugin {plugin} completed sample id {id} without the output '{wanted}' the run logs: {had}")
}

unsafe extern "C" fn host_complete_named(
    context: *mut c_void,
    responses: *const ffi::mlperf_named_response,
    count: usize,
) {
    // SAFETY: called by the plugin per the ABI's contract for `complete_named`.
    unsafe {
        if logs_named_outputs(context) {
            return complete_with_named_outputs(context, responses, count, true);
        }
        // The run logs each response's data: read as a response (a named one begins so).
        with_completer(context, responses.cast(), count, |completer, batch| {
            completer.query_samples_complete(batch)
        })
    };
}

unsafe extern "C" fn host_first_token(
    context: *mut c_void,
    responses: *const ffi::mlperf_response,
    count: usize,
) {
    // SAFETY: called by the plugin per the ABI's contract for `first_token`.
    unsafe {
        with_completer(context, responses, count, |completer, batch| {
            completer.first_token_complete(batch)
        })
    };
}

unsafe extern "C" fn host_next_tokens(
    context: *mut c_void,
    responses: *const ffi::mlperf_response,
    count: usize,
) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let now_ns = crate::loadgen::monotonic_ns();
        // SAFETY: as in host_complete.
        let context = unsafe { &*(context as *const HostContext) };
        if context.late() {
            return;
        }
        let Some(reports) = context.tokens.get() else {
            return;
        };
        // SAFETY: `count` responses, per the ABI, valid for the call.
        for response in unsafe { strided(responses, count) } {
            reports.next_tokens(response.id, response.n_tokens, now_ns);
        }
    }));
}

unsafe extern "C" fn host_fail_samples(
    context: *mut c_void,
    failures: *const ffi::mlperf_sample_failure,
    count: usize,
) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let now_ns = crate::loadgen::monotonic_ns();
        // SAFETY: as in host_complete.
        let context = unsafe { &*(context as *const HostContext) };
        if context.late() {
            return;
        }
        // SAFETY: `count` records, per the ABI, valid for the call.
        for failure in unsafe { strided(failures, count) } {
            let length = usize::try_from(failure.length).unwrap_or(0);
            // SAFETY: the message is `length` bytes, per the ABI.
            let text = unsafe { message_text(failure.message, length) };
            match context.failures.get() {
                Some(reports) => {
                    reports.sample_failed(failure.id, failure.kind, failure.status, &text, now_ns)
                }
                // A LoadGen run cannot lose a sample: the run fails, as with fail().
                None => context.fail(format!("plugin {} failed: {text}", context.plugin)),
            }
        }
    }));
}

/// The `count` records at `records`, strided by the first one's `struct_size` (every ABI record
/// begins with it): none when `records` is NULL, or when that size is smaller than `T` (a
/// plugin's bug: its records would be read past their end).
///
/// # Safety
/// `records` is NULL or points to `count` records of `struct_size` bytes each, valid for `'a`.
unsafe fn strided<'a, T: 'a>(records: *const T, count: usize) -> impl Iterator<Item = &'a T> {
    let stride = match records.is_null() || count == 0 {
        true => 0,
        // SAFETY: a record, per the caller; its first field is its struct_size.
        false => unsafe { *records.cast::<usize>() },
    };
    let count = if stride < std::mem::size_of::<T>() {
        0
    } else {
        count
    };
    // SAFETY: record k lies k * stride bytes in, per the caller.
    (0..count).map(move |k| unsafe { &*records.byte_add(k * stride) })
}

/// A plugin's message: `length` bytes of UTF-8, not NUL-terminated (invalid UTF-8 replaced).
///
/// # Safety
/// `message` is NULL or points to `length` readable bytes.
unsafe fn message_text(message: *const c_char, length: usize) -> String {
    if message.is_null() {
        return String::new();
    }
    // SAFETY: the caller's contract.
    String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(message as *const u8, length) })
        .into_owned()
}

unsafe extern "C" fn host_fail(context: *mut c_void, message: *const c_char, length: usize) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: as in host_complete.
        let context = unsafe { &*(context as *const HostContext) };
        if context.late() {
            return;
        }
        // SAFETY: the plugin passes `length` bytes, per the ABI.
        let text = unsafe { message_text(message, length) };
        context.fail(format!("plugin {} failed: {text}", context.plugin));
    }));
}

unsafe extern "C" fn host_now_ns(_context: *mut c_void) -> u64 {
    crate::loadgen::monotonic_ns() as u64
}

unsafe extern "C" fn host_report_timing(
    context: *mut c_void,
    timings: *const ffi::mlperf_sample_timing,
    count: usize,
) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: as in host_complete.
        let context = unsafe { &*(context as *const HostContext) };
        if context.late() {
            return;
        }
        let Some(reports) = context.timing.get() else {
            return;
        };
        // SAFETY: `count` records, per the ABI, valid for the call.
        for timing in unsafe { strided(timings, count) } {
            reports.report(timing);
        }
    }));
}

unsafe extern "C" fn host_log(
    context: *mut c_void,
    level: i32,
    message: *const c_char,
    length: usize,
) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: as in host_complete.
        let context = unsafe { &*(context as *const HostContext) };
        if context.late() {
            return;
        }
        // SAFETY: the plugin passes `length` bytes, per the ABI.
        let text = unsafe { message_text(message, length) };
        let plugin = context.plugin.as_str();
        match level {
            ffi::LOG_ERROR => tracing::error!(plugin, "{text}"),
            ffi::LOG_WARN => tracing::warn!(plugin, "{text}"),
            ffi::LOG_INFO => tracing::info!(plugin, "{text}"),
            ffi::LOG_DEBUG => tracing::debug!(plugin, "{text}"),
            _ => tracing::trace!(plugin, "{text}"),
        }
    }));
}

/// Reads and releases a plugin's error object: `(code, message)`, or `None` for success.
///
/// # Safety
/// `error` is NULL or an error object from the plugin, not yet released.
pub(crate) unsafe fn take_error(error: *mut ffi::mlperf_error) -> Option<(i32, String)> {
    if error.is_null() {
        return None;
    }
    // SAFETY: a live error object, per the caller.
    let (code, message, release) = unsafe {
        let e = &*error;
        let message = if e.message.is_null() {
            String::from("(no message)")
        } else {
            std::ffi::CStr::from_ptr(e.message)
                .to_string_lossy()
                .into_owned()
        };
        (e.code, message, e.release)
    };
    if let Some(release) = release {
        // SAFETY: released exactly once, by its receiver, as the ABI asks.
        unsafe { release(error) };
    }
    Some((code, message))
}
