//! The host as a plugin sees it: [`Completer`] for answers (and failures), [`Logger`] for log
//! lines, both copied out of the `mlperf_host_api` handed to `create` and valid until `destroy`.

use std::ffi::{c_char, c_void, CStr};
use std::marker::PhantomData;

use crate::ffi::{self, mlperf_host_api, mlperf_named_response, mlperf_output, mlperf_response};

use super::{DType, FailureKind, PluginError, RunDescription, SampleTiming};

type CompleteFn =
    unsafe extern "C" fn(context: *mut c_void, responses: *const mlperf_response, count: usize);
type LogFn =
    unsafe extern "C" fn(context: *mut c_void, level: i32, message: *const c_char, length: usize);
type FailFn = unsafe extern "C" fn(context: *mut c_void, message: *const c_char, length: usize);
type CompleteNamedFn = unsafe extern "C" fn(
    context: *mut c_void,
    responses: *const mlperf_named_response,
    count: usize,
);
type NowFn = unsafe extern "C" fn(context: *mut c_void) -> u64;
type FailSamplesFn = unsafe extern "C" fn(
    context: *mut c_void,
    failures: *const ffi::mlperf_sample_failure,
    count: usize,
);
type ReportTimingFn = unsafe extern "C" fn(
    context: *mut c_void,
    timings: *const ffi::mlperf_sample_timing,
    count: usize,
);

/// `sizeof(mlperf_host_api)` of ABI 1.0 (and 1.1), before `fail`: the smallest host table a
/// plugin of this major accepts.
const HOST_SIZE_1_0: usize = std::mem::offset_of!(mlperf_host_api, fail);
/// The host table's size up to and including `fail` (ABI 1.2).
const HOST_SIZE_WITH_FAIL: usize = HOST_SIZE_1_0 + size_of::<Option<FailFn>>();
/// The host table's size up to and including `run` (ABI 1.3).
const HOST_SIZE_WITH_RUN: usize = ffi::HOST_SIZE_1_2 + size_of::<*const ()>();

/// The host's callbacks, handed to [`SutPlugin::create`](super::SutPlugin::create), and the
/// test the instance is created for.
#[derive(Clone, Debug)]
pub struct Host {
    abi_version: (u32, u32),
    pub(crate) completer: Completer,
    logger: Logger,
    run: Option<RunDescription>,
}

impl Host {
    /// The host's table, checked. Without `needs_complete` (a power meter, which completes
    /// nothing) the host may leave `complete` NULL and the [`Completer`] does nothing.
    ///
    /// # Safety
    /// `host` is NULL or a valid `mlperf_host_api` whose context and callbacks stay usable
    /// until the instance is destroyed.
    pub(crate) unsafe fn from_raw_for(
        host: *const mlperf_host_api,
        needs_complete: bool,
    ) -> Result<Host, PluginError> {
        // SAFETY: the caller's contract.
        let host = unsafe { host.as_ref() }
            .ok_or_else(|| PluginError::invalid_argument("host API is NULL"))?;
        // Later minors only append: a table of 1.0's size serves, without what came later.
        if host.struct_size < HOST_SIZE_1_0 {
            return Err(PluginError::invalid_argument(format!(
                "host API struct_size {} is smaller than ABI {}.0's {}",
                host.struct_size,
                ffi::ABI_MAJOR,
                HOST_SIZE_1_0
            )));
        }
        // Appended in 1.2: only read when the host's table has it.
        let fail = match host.struct_size >= HOST_SIZE_WITH_FAIL {
            true => host.fail,
            false => None,
        };
        // Appended in 1.3.
        let run = match host.struct_size >= HOST_SIZE_WITH_RUN {
            // SAFETY: the host's description, valid until destroy (copied here).
            true => unsafe { RunDescription::from_raw(host.run) },
            false => None,
        };
        let complete_named = match host.struct_size >= ffi::HOST_SIZE_1_3 {
            true => host.complete_named,
            false => None,
        };
        // Appended in 1.4: the clock and the timing report come together.
        let (now_ns, report_timing) = match host.struct_size >= ffi::HOST_SIZE_1_4 {
            true => (host.now_ns, host.report_timing),
            false => (None, None),
        };
        // Appended in 1.5.
        let (next_tokens, fail_samples) = match host.struct_size >= size_of::<mlperf_host_api>() {
            true => (host.next_tokens, host.fail_samples),
            false => (None, None),
        };
        let complete = match host.complete {
            Some(complete) => complete,
            None if !needs_complete => complete_nothing,
            None => {
                return Err(PluginError::invalid_argument(
                    "host API has no complete callback",
                ))
            }
        };
        Ok(Host {
            abi_version: (host.abi_major, host.abi_minor),
            completer: Completer {
                context: host.context,
                complete,
                complete_named,
                now_ns,
                report_timing,
                first_token: host.first_token,
                next_tokens,
                fail_samples,
                fail,
                log: host.log,
            },
            logger: Logger {
                context: host.context,
                log: host.log,
            },
            run,
        })
    }

    /// The test this instance is created for; None from a host older than ABI 1.3, or when
    /// the instance serves no test (the host only reads its attributes): then pick defaults.
    pub fn run(&self) -> Option<&RunDescription> {
        self.run.as_ref()
    }

    /// The ABI version the host implements.
    pub fn abi_version(&self) -> (u32, u32) {
        self.abi_version
    }

    pub fn completer(&self) -> Completer {
        self.completer
    }

    pub fn logger(&self) -> Logger {
        self.logger
    }
}

/// Stands in for a host's missing `complete` in a meter's [`Host`].
unsafe extern "C" fn complete_nothing(
    _context: *mut c_void,
    _responses: *const mlperf_response,
    _count: usize,
) {
}

/// Reports answers to the host. Cheap to copy; callable from any thread, inline in
/// `issue_query` or later, until the instance is destroyed.
#[derive(Clone, Copy)]
pub struct Completer {
    context: *mut c_void,
    complete: CompleteFn,
    /// None when the host predates it (ABI 1.3).
    complete_named: Option<CompleteNamedFn>,
    /// None when the host predates them (ABI 1.4).
    now_ns: Option<NowFn>,
    report_timing: Option<ReportTimingFn>,
    first_token: Option<CompleteFn>,
    /// None when the host predates them (ABI 1.5).
    next_tokens: Option<CompleteFn>,
    fail_samples: Option<FailSamplesFn>,
    /// None when the host predates ABI 1.2.
    fail: Option<FailFn>,
    /// Where [`Completer::fail`] goes without a `fail` callback.
    log: Option<LogFn>,
}

// SAFETY: the header makes complete(), first_token(), fail() and log() thread-safe and callable
// from any thread; the context pointer is only ever passed back to them.
unsafe impl Send for Completer {}
// SAFETY: as above.
unsafe impl Sync for Completer {}

impl Completer {
    /// Samples finished. Each issued id must be completed exactly once.
    #[inline]
    pub fn complete(&self, responses: &[Response<'_>]) {
        if responses.is_empty() {
            return;
        }
        // SAFETY: Response is a transparent mlperf_response; the host copies what it keeps
        // before returning, so borrowed data suffices.
        unsafe { (self.complete)(self.context, responses.as_ptr().cast(), responses.len()) }
    }

    /// Samples finished, with named outputs. A host without `complete_named` (before ABI 1.3)
    /// gets them through `complete`, which reads each response's leading fields: its data.
    #[inline]
    pub fn complete_named(&self, responses: &[NamedResponse<'_>]) {
        if responses.is_empty() {
            return;
        }
        let (pointer, count) = (responses.as_ptr(), responses.len());
        match self.complete_named {
            // SAFETY: NamedResponse is a transparent mlperf_named_response; the host copies
            // what it keeps before returning.
            Some(complete_named) => unsafe { complete_named(self.context, pointer.cast(), count) },
            // SAFETY: a named response begins with a response's fields, and the host steps
            // through the array by its struct_size.
            None => unsafe { (self.complete)(self.context, pointer.cast(), count) },
        }
    }

    /// The host's clock (`CLOCK_MONOTONIC`, ns), for [`SampleTiming`]s; 0 from a host older
    /// than ABI 1.4, which takes no timing.
    #[inline]
    pub fn now_ns(&self) -> u64 {
        match self.now_ns {
            // SAFETY: the header makes now_ns callable from any thread with the context.
            Some(now_ns) => unsafe { now_ns(self.context) },
            None => 0,
        }
    }

    /// Where samples' time went, reported before they complete (see [`SampleTiming`]).
    /// Ignored by a host older than ABI 1.4.
    #[inline]
    pub fn report_timing(&self, timings: &[SampleTiming]) {
        let Some(report_timing) = self.report_timing else {
            return;
        };
        if timings.is_empty() {
            return;
        }
        // SAFETY: SampleTiming is a transparent mlperf_sample_timing; the host copies the
        // records before returning.
        unsafe { report_timing(self.context, timings.as_ptr().cast(), timings.len()) }
    }

    /// First tokens of a token run (each response's data = the first token's bytes). Does
    /// nothing if the host has no first_token callback.
    #[inline]
    pub fn first_token(&self, responses: &[Response<'_>]) {
        let Some(first_token) = self.first_token else {
            return;
        };
        if responses.is_empty() {
            return;
        }
        // SAFETY: as in complete().
        unsafe { first_token(self.context, responses.as_ptr().cast(), responses.len()) }
    }

    /// More tokens of streamed answers arrived, after each one's first (each response's
    /// `n_tokens` = how many came now; its data may be empty): call it as each piece of a
    /// stream arrives, since the host times the call. Ignored by a host older than ABI 1.5.
    #[inline]
    pub fn next_tokens(&self, responses: &[Response<'_>]) {
        let Some(next_tokens) = self.next_tokens else {
            return;
        };
        if responses.is_empty() {
            return;
        }
        // SAFETY: as in complete().
        unsafe { next_tokens(self.context, responses.as_ptr().cast(), responses.len()) }
    }

    /// The host takes single samples' failures ([`Completer::fail_sample`], ABI 1.5).
    #[inline]
    pub fn can_fail_samples(&self) -> bool {
        self.fail_samples.is_some()
    }

    /// Sample `id` failed on its own (its request refused, timed out, cut short): it is
    /// finished, not to be completed as well. A LoadGen run ends INVALID with `message`, a
    /// sweep counts it by `kind` and goes on. False (nothing reported) from a host older than
    /// ABI 1.5: call [`Completer::fail`] then.
    #[inline]
    pub fn fail_sample(&self, id: u64, kind: FailureKind, status: i32, message: &str) -> bool {
        let Some(fail_samples) = self.fail_samples else {
            return false;
        };
        let failure = ffi::mlperf_sample_failure {
            struct_size: size_of::<ffi::mlperf_sample_failure>(),
            id,
            kind: kind.as_raw(),
            status,
            message: message.as_ptr().cast(),
            length: message.len() as u64,
        };
        // SAFETY: one record, valid for the call; the host copies the message.
        unsafe { fail_samples(self.context, &failure, 1) };
        true
    }

    /// Tells the host that samples this plugin accepted can no longer be completed (a batch
    /// failed on a worker thread, a device or a remote server went away). The host stops
    /// issuing, gives up on the outstanding samples after a short drain and ends the run
    /// INVALID with `message`; it keeps the first failure reported. Callable from any thread,
    /// inline in `issue_query` or later, without waiting for the next `issue_query` or
    /// `flush_queries` (in Offline there is none). Samples still completed afterwards are
    /// accepted as usual.
    ///
    /// A host older than ABI 1.2 has no such callback: the message then goes to the host's log
    /// at [`Level::Error`], and the plugin should also return an error from its next
    /// `issue_query`/`flush_queries` so that such a host ends the run.
    pub fn fail(&self, message: &str) {
        match (self.fail, self.log) {
            // SAFETY: the header takes `length` UTF-8 bytes, not NUL-terminated, copied by
            // the host before it returns.
            (Some(fail), _) => unsafe {
                fail(self.context, message.as_ptr().cast(), message.len())
            },
            // SAFETY: as for Logger::log.
            (None, Some(log)) => unsafe {
                log(
                    self.context,
                    Level::Error as i32,
                    message.as_ptr().cast(),
                    message.len(),
                )
            },
            (None, None) => {}
        }
    }
}

impl std::fmt::Debug for Completer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Completer")
            .field("first_token", &self.first_token.is_some())
            .field("fail", &self.fail.is_some())
            .finish_non_exhaustive()
    }
}

/// The answer to one sample, borrowing its output bytes.
#[repr(transparent)]
#[derive(Clone, Copy)]
pub struct Response<'a> {
    raw: mlperf_response,
    _data: PhantomData<&'a [u8]>,
}

// SAFETY: a Response holds a shared borrow of `'a` bytes, like `&'a [u8]`.
unsafe impl Send for Response<'_> {}
// SAFETY: as above.
unsafe impl Sync for Response<'_> {}

impl<'a> Response<'a> {
    #[inline]
    pub fn new(id: u64, data: &'a [u8]) -> Self {
        Response {
            raw: mlperf_response {
                struct_size: size_of::<mlperf_response>(),
                id,
                data: if data.is_empty() {
                    std::ptr::null()
                } else {
                    data.as_ptr().cast()
                },
                length: data.len() as u64,
                n_tokens: 0,
            },
            _data: PhantomData,
        }
    }

    /// Since 1.3: the model's outputs by name, beside this response's data (what a host of
    /// 1.2, or a run that names no output, logs), for [`Completer::complete_named`].
    #[inline]
    pub fn with_outputs(self, outputs: &'a [Output<'a>]) -> NamedResponse<'a> {
        let raw = self.raw;
        NamedResponse {
            raw: mlperf_named_response {
                struct_size: size_of::<mlperf_named_response>(),
                id: raw.id,
                data: raw.data,
                length: raw.length,
                n_tokens: raw.n_tokens,
                outputs: if outputs.is_empty() {
                    std::ptr::null()
                } else {
                    outputs.as_ptr().cast()
                },
                n_outputs: outputs.len() as u64,
            },
            _data: PhantomData,
        }
    }

    /// For token runs: the number of tokens generated.
    #[inline]
    pub fn with_tokens(mut self, n_tokens: i64) -> Self {
        self.raw.n_tokens = n_tokens;
        self
    }

    #[inline]
    pub fn id(&self) -> u64 {
        self.raw.id
    }

    #[inline]
    pub fn n_tokens(&self) -> i64 {
        self.raw.n_tokens
    }

    #[inline]
    pub fn as_raw(&self) -> &mlperf_response {
        &self.raw
    }
}

/// A response with named outputs (since 1.3), made by [`Response::with_outputs`].
#[repr(transparent)]
#[derive(Clone, Copy)]
pub struct NamedResponse<'a> {
    raw: mlperf_named_response,
    _data: PhantomData<&'a [u8]>,
}

// SAFETY: a NamedResponse holds shared borrows of `'a` bytes, like `&'a [u8]`.
unsafe impl Send for NamedResponse<'_> {}
// SAFETY: as above.
unsafe impl Sync for NamedResponse<'_> {}

impl NamedResponse<'_> {
    #[inline]
    pub fn id(&self) -> u64 {
        self.raw.id
    }

    #[inline]
    pub fn as_raw(&self) -> &mlperf_named_response {
        &self.raw
    }
}

/// One named output of a [`NamedResponse`], borrowing its name and bytes.
#[repr(transparent)]
#[derive(Clone, Copy)]
pub struct Output<'a> {
    raw: mlperf_output,
    _data: PhantomData<&'a [u8]>,
}

// SAFETY: an Output holds shared borrows of `'a` bytes, like `&'a [u8]`.
unsafe impl Send for Output<'_> {}
// SAFETY: as above.
unsafe impl Sync for Output<'_> {}

impl<'a> Output<'a> {
    /// The output `name` holding `data` (element type and shape unknown: see
    /// [`Self::with_layout`]).
    #[inline]
    pub fn new(name: &'a CStr, data: &'a [u8]) -> Self {
        Output {
            raw: mlperf_output {
                struct_size: size_of::<mlperf_output>(),
                name: name.as_ptr(),
                data: if data.is_empty() {
                    std::ptr::null()
                } else {
                    data.as_ptr().cast()
                },
                length: data.len() as u64,
                dtype: DType::Unknown.to_raw(),
                rank: 0,
                shape: std::ptr::null(),
            },
            _data: PhantomData,
        }
    }

    /// Its element type and shape.
    #[inline]
    pub fn with_layout(mut self, dtype: DType, shape: &'a [i64]) -> Self {
        self.raw.dtype = dtype.to_raw();
        self.raw.rank = shape.len() as u32;
        self.raw.shape = if shape.is_empty() {
            std::ptr::null()
        } else {
            shape.as_ptr()
        };
        self
    }

    #[inline]
    pub fn as_raw(&self) -> &mlperf_output {
        &self.raw
    }
}

/// Severity of a log line (`mlperf_log_level`).
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Error = ffi::LOG_ERROR,
    Warn = ffi::LOG_WARN,
    Info = ffi::LOG_INFO,
    Debug = ffi::LOG_DEBUG,
    Trace = ffi::LOG_TRACE,
}

/// Sends log lines to the host (which routes them into its `tracing`). A no-op when the host
/// has no log callback.
#[derive(Clone, Copy)]
pub struct Logger {
    context: *mut c_void,
    log: Option<LogFn>,
}

// SAFETY: the host's callbacks are thread-safe and callable from any thread (see Completer).
unsafe impl Send for Logger {}
// SAFETY: as above.
unsafe impl Sync for Logger {}

impl Logger {
    pub fn log(&self, level: Level, message: &str) {
        if let Some(log) = self.log {
            // SAFETY: the header takes `length` UTF-8 bytes, not NUL-terminated.
            unsafe {
                log(
                    self.context,
                    level as i32,
                    message.as_ptr().cast(),
                    message.len(),
                )
            }
        }
    }
}

impl std::fmt::Debug for Logger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Logger")
            .field("log", &self.log.is_some())
            .finish_non_exhaustive()
    }
}
