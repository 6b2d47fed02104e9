//! One official test: a system under test and a sample library as callbacks, `StartTest`, and
//! the completion calls a SUT makes from any thread.

use std::ffi::{c_char, c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::TestSettings;
use crate::{c_string, ffi, require_built, text, Error, QuerySample, QuerySampleResponse};

/// The system under test. `issue_query` is called from the official LoadGen's threads and may
/// complete inline or later, from any thread, through [`query_samples_complete`]. It must not
/// panic: a panic here aborts the process (it cannot unwind into C++).
pub trait SystemUnderTest: Sync {
    fn name(&self) -> &str;
    fn issue_query(&self, samples: &[QuerySample]);
    fn flush_queries(&self);
}

/// The query sample library. Loads are called from the thread that runs [`start_test`].
pub trait QuerySampleLibrary {
    fn name(&self) -> &str;
    fn total_sample_count(&self) -> usize;
    fn performance_sample_count(&self) -> usize;
    fn load_samples_to_ram(&mut self, indices: &[usize]);
    fn unload_samples_from_ram(&mut self, indices: &[usize]);
}

/// Where and how the official LoadGen writes its logs (its `LogOutputSettings` and trace).
#[derive(Clone, Debug)]
pub struct LogOutput {
    pub outdir: PathBuf,
    pub prefix: String,
    pub suffix: String,
    pub prefix_with_datetime: bool,
    pub copy_detail_to_stdout: bool,
    pub copy_summary_to_stdout: bool,
    /// mlperf_log_trace.json.
    pub enable_trace: bool,
}

impl LogOutput {
    /// The official file names (`mlperf_log_*`) in `outdir`, no trace.
    pub fn in_dir(outdir: &Path) -> LogOutput {
        LogOutput {
            outdir: outdir.to_path_buf(),
            prefix: "mlperf_log_".into(),
            suffix: String::new(),
            prefix_with_datetime: false,
            copy_detail_to_stdout: false,
            copy_summary_to_stdout: false,
            enable_trace: false,
        }
    }
}

/// Runs one test on the official LoadGen; returns when its `StartTest` returns, with the logs
/// written. `audit_config`, when given, is the audit.config it reads (none is read otherwise).
pub fn start_test(
    sut: &dyn SystemUnderTest,
    qsl: &mut dyn QuerySampleLibrary,
    settings: &TestSettings,
    log: &LogOutput,
    audit_config: Option<&Path>,
) -> Result<(), Error> {
    require_built()?;
    let sut_name = sut.name().to_string();
    let qsl_name = qsl.name().to_string();
    let (total, performance) = (qsl.total_sample_count(), qsl.performance_sample_count());
    let mut sut_context: &dyn SystemUnderTest = sut;
    let mut qsl_context: &mut dyn QuerySampleLibrary = qsl;
    let sut_table = ffi::Sut {
        context: &mut sut_context as *mut &dyn SystemUnderTest as *mut c_void,
        name: sut_name.as_ptr() as *const c_char,
        name_length: sut_name.len(),
        issue_query: issue_query_callback,
        flush_queries: flush_queries_callback,
    };
    let qsl_table = ffi::Qsl {
        context: &mut qsl_context as *mut &mut dyn QuerySampleLibrary as *mut c_void,
        name: qsl_name.as_ptr() as *const c_char,
        name_length: qsl_name.len(),
        total_sample_count: total,
        performance_sample_count: performance,
        load_samples: load_samples_callback,
        unload_samples: unload_samples_callback,
    };
    let log_strings = LogStrings::new(log)?;
    let log_table = log_strings.table(log);
    let audit = c_string(
        &audit_config
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
    )?;
    let mut error = [0 as c_char; 512];
    // SAFETY: the tables, their contexts and strings outlive the call, which blocks until the
    // test is over; the callbacks below match the bridge's signatures.
    let code = unsafe {
        ffi::mlh_start_test(
            &sut_table,
            &qsl_table,
            settings.as_ptr(),
            &log_table,
            audit.as_ptr(),
            error.as_mut_ptr(),
            error.len(),
        )
    };
    if code != ffi::OK {
        return Err(Error::StartTest(text(&error)));
    }
    Ok(())
}

/// The strings of a [`LogOutput`] as C strings, alive while the bridge reads them.
struct LogStrings {
    outdir: CString,
    prefix: CString,
    suffix: CString,
}

impl LogStrings {
    fn new(log: &LogOutput) -> Result<LogStrings, Error> {
        Ok(LogStrings {
            outdir: c_string(&log.outdir.display().to_string())?,
            prefix: c_string(&log.prefix)?,
            suffix: c_string(&log.suffix)?,
        })
    }

    fn table(&self, log: &LogOutput) -> ffi::LogSettings {
        ffi::LogSettings {
            outdir: self.outdir.as_ptr(),
            prefix: self.prefix.as_ptr(),
            suffix: self.suffix.as_ptr(),
            prefix_with_datetime: log.prefix_with_datetime.into(),
            copy_detail_to_stdout: log.copy_detail_to_stdout.into(),
            copy_summary_to_stdout: log.copy_summary_to_stdout.into(),
            enable_trace: log.enable_trace.into(),
        }
    }
}

/// Runs one test with the C++ null SUT compiled beside the library (glue/null_sut.cc: samples
/// completed inline, or by one worker thread fed through a mutex and condition variable), the
/// baseline of engine benchmarks. Returns the time from the call to the first issue.
pub fn run_cpp_null_sut(
    settings: &TestSettings,
    log: &LogOutput,
    qsl_samples: usize,
    worker: bool,
) -> Result<Duration, Error> {
    require_built()?;
    let log_strings = LogStrings::new(log)?;
    let log_table = log_strings.table(log);
    let mut first_issue_ns = 0u64;
    let mut error = [0 as c_char; 512];
    // SAFETY: the settings object and log table outlive the call, which blocks until the
    // test is over.
    let code = unsafe {
        ffi::mlh_run_cpp_null_sut(
            settings.as_ptr(),
            &log_table,
            qsl_samples,
            worker.into(),
            &mut first_issue_ns,
            error.as_mut_ptr(),
            error.len(),
        )
    };
    if code != ffi::OK {
        return Err(Error::StartTest(text(&error)));
    }
    Ok(Duration::from_nanos(first_issue_ns))
}

/// Reports finished samples to the running official test.
///
/// # Safety
/// Each id must be one the running test issued and not yet completed (the official LoadGen
/// reads it as a pointer), and each `data`/`size` must be readable for the call.
pub unsafe fn query_samples_complete(responses: &mut [QuerySampleResponse]) {
    if responses.is_empty() || !crate::is_available() {
        return;
    }
    // SAFETY: the caller's contract.
    unsafe { ffi::mlh_query_samples_complete(responses.as_mut_ptr(), responses.len()) }
}

/// Reports the first token of samples of a token run (time to first token).
///
/// # Safety
/// As [`query_samples_complete`].
pub unsafe fn first_token_complete(responses: &mut [QuerySampleResponse]) {
    if responses.is_empty() || !crate::is_available() {
        return;
    }
    // SAFETY: the caller's contract.
    unsafe { ffi::mlh_first_token_complete(responses.as_mut_ptr(), responses.len()) }
}

/// A panic cannot unwind into C++: it ends the process with its message.
fn no_unwind(what: &str, call: impl FnOnce()) {
    if let Err(panic) = catch_unwind(AssertUnwindSafe(call)) {
        let message = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        eprintln!("error: {what} panicked under the official LoadGen: {message}");
        std::process::abort();
    }
}

/// # Safety
/// `samples` points to `count` samples, `context` to the `&dyn SystemUnderTest` of
/// [`start_test`].
unsafe extern "C" fn issue_query_callback(
    context: *mut c_void,
    samples: *const QuerySample,
    count: usize,
) {
    no_unwind("issue_query", || {
        // SAFETY: the caller's contract.
        let sut = unsafe { *(context as *const &dyn SystemUnderTest) };
        let samples = if count == 0 {
            &[][..]
        } else {
            // SAFETY: the caller's contract; QuerySample mirrors mlperf::QuerySample.
            unsafe { std::slice::from_raw_parts(samples, count) }
        };
        sut.issue_query(samples);
    });
}

unsafe extern "C" fn flush_queries_callback(context: *mut c_void) {
    no_unwind("flush_queries", || {
        // SAFETY: as in issue_query_callback.
        let sut = unsafe { *(context as *const &dyn SystemUnderTest) };
        sut.flush_queries();
    });
}

/// # Safety
/// `indices` points to `count` indices, `context` to the `&mut dyn QuerySampleLibrary` of
/// [`start_test`], called from that thread only.
unsafe extern "C" fn load_samples_callback(context: *mut c_void, indices: *const usize, n: usize) {
    no_unwind("load_samples_to_ram", || {
        // SAFETY: the caller's contract.
        let (qsl, indices) = unsafe { library_call(context, indices, n) };
        qsl.load_samples_to_ram(indices);
    });
}

unsafe extern "C" fn unload_samples_callback(
    context: *mut c_void,
    indices: *const usize,
    n: usize,
) {
    no_unwind("unload_samples_from_ram", || {
        // SAFETY: as in load_samples_callback.
        let (qsl, indices) = unsafe { library_call(context, indices, n) };
        qsl.unload_samples_from_ram(indices);
    });
}

/// # Safety
/// As [`load_samples_callback`].
unsafe fn library_call<'a>(
    context: *mut c_void,
    indices: *const usize,
    count: usize,
) -> (&'a mut dyn QuerySampleLibrary, &'a [usize]) {
    // SAFETY: the caller's contract: the only live reference, on the test's thread.
    let qsl = unsafe { &mut **(context as *mut &mut dyn QuerySampleLibrary) };
    let indices = if count == 0 {
        &[][..]
    } else {
        // SAFETY: the caller's contract.
        unsafe { std::slice::from_raw_parts(indices, count) }
    };
    (qsl, indices)
}

/// The official `AbortTest`: stops issuing and flushes and closes the logs. Called from another
/// thread than the test's; the test itself returns only when its samples complete.
pub fn abort_test() {
    if crate::is_available() {
        // SAFETY: no arguments; the bridge catches any exception.
        unsafe { ffi::mlh_abort_test() }
    }
}

/// Ends the process now, with `status`, after flushing Rust's standard output. No exit
/// handlers run: the official library's static logger would join threads a stuck test holds.
pub fn exit_immediately(status: i32) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: _exit takes any status and does not return.
    unsafe { ffi::exit_now(status) }
}
