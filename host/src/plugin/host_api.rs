//! The host's half of the ABI: the callbacks a plugin calls (completions, first tokens, log
//! lines, failures), turned into calls on the engine's `Completer` and into `tracing` events.
//! Nothing here may unwind into the plugin.

use std::ffi::{c_char, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, OnceLock};

use mlperf_plugin_api::ffi;

use crate::loadgen::{AsSampleResponse, Completer, QuerySampleResponse, ResponseId};

/// What `mlperf_host_api.context` points at for one plugin instance.
pub(crate) struct HostContext {
    /// Set at the first issue: the completer of the test the instance serves.
    pub(crate) completer: OnceLock<Completer>,
    pub(crate) plugin: String,
    /// The first failure the plugin reported before there was a completer (from create, or a
    /// thread of its own before the first issue): handed to the engine at the first issue.
    early_failure: Mutex<Option<String>>,
}

impl HostContext {
    pub(crate) fn new(plugin: String) -> Box<Self> {
        Box::new(HostContext {
            completer: OnceLock::new(),
            plugin,
            early_failure: Mutex::new(None),
        })
    }

    /// The plugin cannot finish samples it accepted: the engine stops issuing and ends the run
    /// INVALID with `message`. Before the first issue it is kept for [`Self::take_early_failure`].
    pub(crate) fn fail(&self, message: String) {
        if let Some(completer) = self.completer.get() {
            return completer.fail(message);
        }
        {
            let mut early = self.early_failure.lock().unwrap_or_else(|p| p.into_inner());
            early.get_or_insert(message);
        }
        // The first issue may have set the completer (and looked for a failure) meanwhile.
        if let Some(completer) = self.completer.get() {
            if let Some(message) = self.take_early_failure() {
                completer.fail(message);
            }
        }
    }

    /// A failure reported before the completer was set, once: the caller hands it to the
    /// completer it has just set.
    pub(crate) fn take_early_failure(&self) -> Option<String> {
        self.early_failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }
}

/// The host API table handed to the plugin; `context` must outlive the instance.
pub(crate) fn host_api(context: &HostContext) -> ffi::mlperf_host_api {
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
    }
}

/// Responses are converted on the stack in batches of this many.
const BATCH: usize = 256;

/// A plugin's response, read by the engine in place. Only made by casting the array a plugin
/// passed to a callback, whose data pointers are valid for the call.
#[repr(transparent)]
struct PluginResponse(ffi::mlperf_response);

impl AsSampleResponse for PluginResponse {
    #[inline]
    fn as_response(&self) -> QuerySampleResponse<'_> {
        let raw = &self.0;
        let data: &[u8] = if raw.data.is_null() || raw.length == 0 {
            &[]
        } else {
            // SAFETY: the plugin guarantees `length` readable bytes for the callback, which
            // outlives this borrow (see the type).
            unsafe { std::slice::from_raw_parts(raw.data as *const u8, raw.length as usize) }
        };
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
    if stride < std::mem::size_of::<ffi::mlperf_response>() {
        return;
    }
    let convert = |i: usize| {
        // SAFETY: within the caller's array, `stride` bytes per element.
        let response =
            unsafe { &*((responses as *const u8).add(i * stride) as *const ffi::mlperf_response) };
        let data: &[u8] = if response.data.is_null() || response.length == 0 {
            &[]
        } else {
            // SAFETY: the plugin guarantees `length` readable bytes for this call.
            unsafe {
                std::slice::from_raw_parts(response.data as *const u8, response.length as usize)
            }
        };
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

/// Runs `deliver` with the test's completer, never unwinding into C.
///
/// # Safety
/// `context` is the HostContext the table was made with.
unsafe fn with_context(context: *mut c_void, deliver: impl FnOnce(&Completer)) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the caller's contract; the context outlives the instance.
        let context = unsafe { &*(context as *const HostContext) };
        if let Some(completer) = context.completer.get() {
            deliver(completer);
        }
    }));
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
        if let Some(responses) = in_place(responses, count) {
            return with_context(context, |completer| completer.complete_in_place(responses));
        }
        with_completer(context, responses, count, |completer, batch| {
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
        // SAFETY: the plugin passes `length` bytes, per the ABI.
        let text = unsafe { message_text(message, length) };
        context.fail(format!("plugin {} failed: {text}", context.plugin));
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
