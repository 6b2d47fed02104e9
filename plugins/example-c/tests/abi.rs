//! Drives `libmlperf_example_c.so` through the raw ABI, as the host will: `dlopen`, the entry
//! symbol, the `mlperf_plugin_api` table and a test `mlperf_host_api` whose `complete`
//! callback records every completion from whatever thread makes it.

use std::collections::HashMap;
use std::ffi::{c_char, c_void, CStr};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::{self, ThreadId};
use std::time::{Duration, Instant};

use libloading::Library;
use mlperf_plugin_api::ffi::{
    self, mlperf_attribute, mlperf_error, mlperf_host_api, mlperf_plugin_entry_fn, mlperf_response,
    mlperf_sample,
};
use mlperf_plugin_api::testing::run_description;
use mlperf_plugin_example_c::PLUGIN_PATH;

// ---- The library ------------------------------------------------------------------------------

struct Plugin {
    api: *const ffi::mlperf_plugin_api,
    _library: Library,
}

impl Plugin {
    fn load() -> Plugin {
        // SAFETY: the library is our own example plugin; its initialisers do nothing.
        let library = unsafe { Library::new(PLUGIN_PATH) }.expect("load the example plugin");
        // SAFETY: the symbol has the ABI's entry type.
        let api = unsafe {
            let entry = library
                .get::<mlperf_plugin_entry_fn>(ffi::ENTRY_SYMBOL)
                .expect("entry symbol");
            entry(ffi::ABI_MAJOR, ffi::ABI_MINOR)
        };
        assert!(!api.is_null(), "the plugin refused ABI 1.5");
        Plugin {
            api,
            _library: library,
        }
    }

    fn entry(&self, major: u32, minor: u32) -> *const ffi::mlperf_plugin_api {
        // SAFETY: as in load.
        unsafe {
            let entry = self
                ._library
                .get::<mlperf_plugin_entry_fn>(ffi::ENTRY_SYMBOL)
                .expect("entry symbol");
            entry(major, minor)
        }
    }

    fn api(&self) -> &ffi::mlperf_plugin_api {
        // SAFETY: a static table inside the library, which self keeps loaded.
        unsafe { &*self.api }
    }

    fn create(&self, config: &str) -> Result<Instance<'_>, PluginError> {
        self.create_with(config.as_bytes(), |_| {})
    }

    /// Creates an instance from `config` after letting `edit` change the host table.
    fn create_with(
        &self,
        config: &[u8],
        edit: impl FnOnce(&mut mlperf_host_api),
    ) -> Result<Instance<'_>, PluginError> {
        let recorder = Arc::new(Recorder::default());
        let mut host = Box::new(mlperf_host_api {
            struct_size: size_of::<mlperf_host_api>(),
            next: ptr::null(),
            abi_major: ffi::ABI_MAJOR,
            abi_minor: ffi::ABI_MINOR,
            context: Arc::as_ptr(&recorder) as *mut c_void,
            complete: Some(on_complete),
            first_token: None,
            log: Some(on_log),
            fail: None,
            run: ptr::null(),
            complete_named: None,
            now_ns: None,
            report_timing: None,
            next_tokens: None,
            fail_samples: None,
        });
        edit(&mut host);
        let mut instance = ptr::null_mut();
        // SAFETY: the host table and the config outlive the call; the recorder outlives the
        // instance (Instance drops the instance first).
        let error = unsafe {
            (self.api().create.expect("create"))(
                &*host,
                config.as_ptr().cast::<c_char>(),
                config.len(),
                &mut instance,
            )
        };
        if let Some(error) = take_error(error) {
            assert!(instance.is_null(), "a failed create left an instance");
            return Err(error);
        }
        assert!(!instance.is_null());
        Ok(Instance {
            plugin: self,
            instance,
            recorder,
            _host: host,
        })
    }
}

#[derive(Debug)]
struct PluginError {
    code: i32,
    message: String,
}

/// Reads an error object and releases it through its own `release`.
fn take_error(error: *mut mlperf_error) -> Option<PluginError> {
    if error.is_null() {
        return None;
    }
    // SAFETY: a non-NULL error from the plugin is valid until released, once, below.
    unsafe {
        assert!((*error).struct_size >= size_of::<mlperf_error>());
        let message = CStr::from_ptr((*error).message)
            .to_str()
            .expect("UTF-8 message")
            .to_owned();
        let code = (*error).code;
        ((*error).release.expect("release"))(error);
        Some(PluginError { code, message })
    }
}

// ---- The test host ----------------------------------------------------------------------------

/// Locks, ignoring poison: a failed assertion on the test thread must not turn into a panic in
/// a callback on a plugin thread (which would abort the process at the C boundary).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[derive(Debug, Clone)]
struct Completion {
    payload: Vec<u8>,
    thread: ThreadId,
    at: Instant,
}

#[derive(Default)]
struct Recorder {
    completions: Mutex<HashMap<u64, Vec<Completion>>>,
    completed: AtomicUsize,
    changed: Condvar,
    logs: Mutex<Vec<(i32, String)>>,
    /// Anything the callbacks found wrong (they must not panic across the C boundary).
    problems: Mutex<Vec<String>>,
    /// Set once destroy has returned: any callback after that is a problem.
    destroyed: AtomicBool,
}

impl Recorder {
    fn problem(&self, what: String) {
        lock(&self.problems).push(what);
    }

    /// Waits until `count` completions have arrived (or panics after a generous timeout).
    fn wait_for(&self, count: usize) {
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut completions = lock(&self.completions);
        while self.completed.load(Ordering::SeqCst) < count {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "only {} of {count} completions arrived",
                self.completed.load(Ordering::SeqCst)
            );
            completions = self.changed.wait_timeout(completions, left).unwrap().0;
        }
    }
}

unsafe extern "C" fn on_complete(
    context: *mut c_void,
    responses: *const mlperf_response,
    count: usize,
) {
    // SAFETY: context is the Recorder that create_with installed, alive until after destroy.
    let recorder = unsafe { &*(context as *const Recorder) };
    if recorder.destroyed.load(Ordering::SeqCst) {
        recorder.problem(format!("complete({count}) after destroy returned"));
    }
    if count == 0 || responses.is_null() {
        recorder.problem(format!(
            "complete with count {count}, responses {responses:?}"
        ));
        return;
    }
    let now = Instant::now();
    let thread = thread::current().id();
    let mut completions = lock(&recorder.completions);
    for i in 0..count {
        // SAFETY: the plugin passes count responses, valid during this call.
        let response = unsafe { &*responses.add(i) };
        if response.struct_size != size_of::<mlperf_response>() {
            recorder.problem(format!("response struct_size {}", response.struct_size));
        }
        let payload = if response.data.is_null() {
            Vec::new()
        } else {
            // SAFETY: length bytes at data, valid during this call.
            unsafe {
                std::slice::from_raw_parts(response.data.cast::<u8>(), response.length as usize)
            }
            .to_vec()
        };
        completions
            .entry(response.id)
            .or_default()
            .push(Completion {
                payload,
                thread,
                at: now,
            });
    }
    recorder.completed.fetch_add(count, Ordering::SeqCst);
    recorder.changed.notify_all();
}

unsafe extern "C" fn on_log(
    context: *mut c_void,
    level: i32,
    message: *const c_char,
    length: usize,
) {
    // SAFETY: as in on_complete.
    let recorder = unsafe { &*(context as *const Recorder) };
    // SAFETY: the plugin hands `length` bytes at `message`, valid for this call.
    let bytes = unsafe { std::slice::from_raw_parts(message.cast::<u8>(), length) };
    lock(&recorder.logs).push((level, String::from_utf8_lossy(bytes).into_owned()));
}

// ---- An instance ------------------------------------------------------------------------------

struct Instance<'a> {
    plugin: &'a Plugin,
    instance: *mut c_void,
    recorder: Arc<Recorder>,
    _host: Box<mlperf_host_api>,
}

// SAFETY: the example's issue_query is thread-safe (it sets CAP_CONCURRENT_ISSUE).
unsafe impl Sync for Instance<'_> {}

impl Instance<'_> {
    fn issue(&self, samples: &[mlperf_sample]) -> Option<PluginError> {
        // SAFETY: samples outlive the call (the example copies what it needs).
        take_error(unsafe {
            (self.plugin.api().issue_query.expect("issue_query"))(
                self.instance,
                samples.as_ptr(),
                samples.len(),
            )
        })
    }

    /// `load_samples` (`load`) or `unload_samples`.
    fn sample_set(&self, load: bool, samples: &[mlperf_sample]) -> Option<PluginError> {
        let api = self.plugin.api();
        let call = match load {
            true => api.load_samples,
            false => api.unload_samples,
        };
        // SAFETY: samples outlive the call.
        take_error(unsafe {
            (call.expect("sample set call"))(self.instance, samples.as_ptr(), samples.len())
        })
    }

    fn attributes(&self) -> HashMap<String, String> {
        let mut attributes: *const mlperf_attribute = ptr::null();
        let mut count = 0;
        // SAFETY: out-pointers to locals; the strings live until destroy.
        let error = unsafe {
            (self.plugin.api().attributes.expect("attributes"))(
                self.instance,
                &mut attributes,
                &mut count,
            )
        };
        assert!(take_error(error).is_none());
        (0..count)
            .map(|i| {
                // SAFETY: count attributes of NUL-terminated strings.
                unsafe {
                    let attribute = &*attributes.add(i);
                    (
                        CStr::from_ptr(attribute.key).to_str().unwrap().to_owned(),
                        CStr::from_ptr(attribute.value).to_str().unwrap().to_owned(),
                    )
                }
            })
            .collect()
    }

    /// Destroys the instance; returns the recorder for the checks after destroy.
    fn destroy(mut self) -> Arc<Recorder> {
        let instance = std::mem::replace(&mut self.instance, ptr::null_mut());
        // SAFETY: created by this plugin, destroyed once.
        unsafe { (self.plugin.api().destroy.expect("destroy"))(instance) };
        self.recorder.destroyed.store(true, Ordering::SeqCst);
        self.recorder.clone()
    }

    fn logs(&self) -> Vec<(i32, String)> {
        lock(&self.recorder.logs).clone()
    }
}

impl Drop for Instance<'_> {
    fn drop(&mut self) {
        if !self.instance.is_null() {
            // SAFETY: as in destroy.
            unsafe { (self.plugin.api().destroy.expect("destroy"))(self.instance) };
            self.recorder.destroyed.store(true, Ordering::SeqCst);
        }
    }
}

fn samples(first_id: u64, count: usize) -> Vec<mlperf_sample> {
    (0..count as u64)
        .map(|i| sample(first_id + i, (first_id + i) * 7919 % 100_003))
        .collect()
}

fn sample(id: u64, index: u64) -> mlperf_sample {
    mlperf_sample {
        struct_size: size_of::<mlperf_sample>(),
        id,
        index,
        data: ptr::null(),
        length: 0,
        dtype: 0,
        rank: 0,
        shape: ptr::null(),
    }
}

/// Every sample completed exactly once, with its index as 4 little-endian bytes, and nothing
/// else completed; returns the completions by id.
fn check_exactly_once(recorder: &Recorder, issued: &[mlperf_sample]) -> HashMap<u64, Completion> {
    let problems = lock(&recorder.problems).clone();
    assert!(problems.is_empty(), "{problems:?}");
    let completions = lock(&recorder.completions);
    assert_eq!(completions.len(), issued.len(), "completed ids");
    issued
        .iter()
        .map(|sample| {
            let got = completions
                .get(&sample.id)
                .unwrap_or_else(|| panic!("id {} never completed", sample.id));
            assert_eq!(
                got.len(),
                1,
                "id {} completed {} times",
                sample.id,
                got.len()
            );
            assert_eq!(
                got[0].payload,
                (sample.index as u32).to_le_bytes(),
                "payload of id {}",
                sample.id
            );
            (sample.id, got[0].clone())
        })
        .collect()
}

// ---- Tests ------------------------------------------------------------------------------------

#[test]
fn entry_answers_abi_1_3_and_refuses_other_majors() {
    let plugin = Plugin::load();
    assert!(plugin.entry(0, 0).is_null());
    assert!(plugin.entry(2, 0).is_null());
    assert!(plugin.entry(u32::MAX, 0).is_null());
    // A host of a later 1.x minor gets the 1.5 table.
    assert_eq!(plugin.entry(1, 7), plugin.api);

    let api = plugin.api();
    assert_eq!(api.struct_size, size_of::<ffi::mlperf_plugin_api>());
    assert!(api.next.is_null());
    assert_eq!((api.abi_major, api.abi_minor), (1, 5));
    assert_eq!(api.kind, ffi::KIND_SUT);
    // SAFETY: static NUL-terminated strings.
    let (name, version) = unsafe { (CStr::from_ptr(api.name), CStr::from_ptr(api.version)) };
    assert_eq!(name.to_str().unwrap(), "example-c");
    assert!(!version.to_str().unwrap().is_empty());
    assert_eq!(
        api.capabilities,
        ffi::CAP_ASYNC_COMPLETION | ffi::CAP_CONCURRENT_ISSUE,
        "async (worker mode) and concurrent issue; no sample data needed"
    );
    assert!(api.init.is_none(), "the example needs no library-wide init");
    assert!(api.create.is_some() && api.destroy.is_some() && api.attributes.is_some());
    assert!(api.issue_query.is_some() && api.flush_queries.is_some());
    assert!(api.power_info.is_none() && api.read_power.is_none());
    assert!(api.load_samples.is_some() && api.unload_samples.is_some());
}

#[test]
fn the_second_entry_is_a_power_meter() {
    use mlperf_plugin_api::testing::{RawInstance, RecordingHost};

    // SAFETY: the library is our own example plugin; the symbol has the ABI's entry type and
    // returns NULL or a static table, alive while `library` is loaded.
    let library = unsafe { Library::new(PLUGIN_PATH) }.expect("load the example plugin");
    // SAFETY: as above.
    let api = unsafe {
        let entry = library
            .get::<mlperf_plugin_entry_fn>(ffi::POWER_ENTRY_SYMBOL)
            .expect("power entry symbol");
        assert!(entry(2, 0).is_null());
        &*entry(ffi::ABI_MAJOR, ffi::ABI_MINOR)
    };
    assert_eq!(api.kind, ffi::KIND_POWER);
    assert_eq!((api.abi_major, api.abi_minor), (1, 5));
    assert_eq!(api.struct_size, size_of::<ffi::mlperf_plugin_api>());
    assert!(api.issue_query.is_none() && api.flush_queries.is_none());

    let host = RecordingHost::new();
    // SAFETY: the meter's table; `host` outlives the instance.
    let meter = unsafe { RawInstance::create(api, &host, "watts = 60\ndevice = \"npu7\"") }
        .map_err(|e| e.to_string())
        .unwrap();
    let info = meter.power_info().unwrap();
    assert_eq!(info.scope, ffi::POWER_SCOPE_COMPONENT);
    assert_eq!(
        info.flags,
        ffi::POWER_HAS_ENERGY_COUNTER | ffi::POWER_SIMULATED
    );
    assert_eq!(info.description, "npu7 board power (simulated)");
    assert_eq!(info.period_ns, 100_000_000);
    let first = meter.read_power().unwrap();
    thread::sleep(Duration::from_millis(50));
    let second = meter.read_power().unwrap();
    assert_eq!((first.watts, second.watts), (60.0, 60.0));
    assert!(first.volts.is_nan() && first.amps.is_nan() && first.power_factor.is_nan());
    let joules = second.energy_joules - first.energy_joules;
    assert!(
        (3.0..6.0).contains(&joules),
        "{joules} J at 60 W over 50 ms"
    );
    assert!(meter.attributes().unwrap().is_empty());

    // SAFETY: as above.
    let error = unsafe { RawInstance::create(api, &host, "watts = 0") }
        .map(|_| ())
        .unwrap_err();
    assert_eq!(error.code, ffi::ERROR_INVALID_CONFIG);
    assert!(error.message.contains("`watts`"), "{}", error.message);
}

#[test]
fn inline_mode_completes_every_sample_once_before_issue_query_returns() {
    let plugin = Plugin::load();
    for config in ["", "workers = 0\nlatency_us = 0\n"] {
        let instance = plugin.create(config).unwrap();
        let mut issued = Vec::new();
        // A batch larger than the inline chunk, then a single sample, then an empty query.
        for batch in [samples(1, 1000), samples(5000, 1), Vec::new()] {
            let before = instance.recorder.completed.load(Ordering::SeqCst);
            assert!(instance.issue(&batch).is_none());
            let after = instance.recorder.completed.load(Ordering::SeqCst);
            assert_eq!(after - before, batch.len(), "completed inline");
            issued.extend(batch);
        }
        let completions = check_exactly_once(&instance.recorder, &issued);
        let here = thread::current().id();
        assert!(completions.values().all(|c| c.thread == here));
        // SAFETY: a live instance.
        let flushed = unsafe { (plugin.api().flush_queries.unwrap())(instance.instance) };
        assert!(take_error(flushed).is_none());
        let recorder = instance.destroy();
        assert_eq!(recorder.completed.load(Ordering::SeqCst), issued.len());
    }
}

#[test]
fn workers_complete_after_the_latency_from_their_own_threads() {
    let plugin = Plugin::load();
    let instance = plugin
        .create("workers = 2\nlatency_us = 2000\nmax_batch = 8\n")
        .unwrap();
    let mut issued = Vec::new();
    let mut issued_at = HashMap::new();
    for (first, count) in [(1, 100), (1000, 1), (2000, 37)] {
        let batch = samples(first, count);
        let at = Instant::now();
        assert!(instance.issue(&batch).is_none());
        for sample in &batch {
            issued_at.insert(sample.id, at);
        }
        issued.extend(batch);
    }
    // SAFETY: a live instance.
    let flushed = unsafe { (plugin.api().flush_queries.unwrap())(instance.instance) };
    assert!(take_error(flushed).is_none());
    instance.recorder.wait_for(issued.len());
    let completions = check_exactly_once(&instance.recorder, &issued);

    let here = thread::current().id();
    let threads: std::collections::HashSet<_> = completions.values().map(|c| c.thread).collect();
    assert!(!threads.contains(&here), "completed on the issuing thread");
    assert!(
        threads.len() <= 2,
        "{} completing threads for 2 workers",
        threads.len()
    );
    for (id, completion) in &completions {
        let waited = completion.at.duration_since(issued_at[id]);
        assert!(
            waited >= Duration::from_micros(2000),
            "id {id} completed after {waited:?}"
        );
    }
    let recorder = instance.destroy();
    thread::sleep(Duration::from_millis(20));
    assert!(lock(&recorder.problems).is_empty());
}

#[test]
fn single_stream_one_sample_at_a_time() {
    // SingleStream: the next query is issued only after the previous one completed, so a worker
    // that missed a wake-up would stall the run.
    let plugin = Plugin::load();
    for config in [
        "workers = 0",
        "workers = 1\nlatency_us = 200",
        "workers = 3",
    ] {
        let instance = plugin.create(config).unwrap();
        let issued = samples(1, 50);
        for (n, sample) in issued.iter().enumerate() {
            assert!(instance.issue(std::slice::from_ref(sample)).is_none());
            instance.recorder.wait_for(n + 1);
        }
        check_exactly_once(&instance.recorder, &issued);
    }
}

#[test]
fn samples_are_strided_by_their_struct_size() {
    // A host built against a later minor passes larger sample structs.
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct LaterSample {
        base: mlperf_sample,
        appended: [u64; 3],
    }
    let plugin = Plugin::load();
    for config in ["workers = 0", "workers = 1"] {
        let instance = plugin.create(config).unwrap();
        let later: Vec<LaterSample> = samples(1, 50)
            .into_iter()
            .map(|mut base| {
                base.struct_size = size_of::<LaterSample>();
                LaterSample {
                    base,
                    appended: [u64::MAX; 3],
                }
            })
            .collect();
        let issued: Vec<mlperf_sample> = later.iter().map(|s| s.base).collect();
        // SAFETY: later outlives the call; each element starts with an mlperf_sample.
        let error = unsafe {
            (plugin.api().issue_query.unwrap())(
                instance.instance,
                later.as_ptr().cast::<mlperf_sample>(),
                later.len(),
            )
        };
        assert!(take_error(error).is_none());
        instance.recorder.wait_for(issued.len());
        check_exactly_once(&instance.recorder, &issued);
    }
}

#[test]
fn a_too_small_sample_struct_is_an_invalid_argument() {
    let plugin = Plugin::load();
    let instance = plugin.create("").unwrap();
    let mut bad = samples(1, 2);
    bad[0].struct_size = 8;
    let error = instance.issue(&bad).expect("an error");
    assert_eq!(error.code, ffi::ERROR_INVALID_ARGUMENT);
    assert!(error.message.contains("struct_size"), "{}", error.message);
    assert_eq!(instance.recorder.completed.load(Ordering::SeqCst), 0);
}

#[test]
fn concurrent_issue_from_several_host_threads() {
    let plugin = Plugin::load();
    for config in ["workers = 0", "workers = 2\nlatency_us = 100"] {
        let instance = plugin.create(config).unwrap();
        // Four host threads, each issuing its own 250 samples in queries of 10.
        let first_id = |t: u64| 1 + t * 10_000;
        thread::scope(|scope| {
            for t in 0..4 {
                let instance = &instance;
                scope.spawn(move || {
                    for chunk in samples(first_id(t), 250).chunks(10) {
                        assert!(instance.issue(chunk).is_none());
                    }
                });
            }
        });
        let issued: Vec<mlperf_sample> = (0..4).flat_map(|t| samples(first_id(t), 250)).collect();
        instance.recorder.wait_for(issued.len());
        check_exactly_once(&instance.recorder, &issued);
    }
}

#[test]
fn destroy_joins_the_workers_and_no_callback_follows() {
    let plugin = Plugin::load();
    // 200 queued samples that the simulated device holds for 10 s: destroy cuts the wait short,
    // completes what is still queued without the latency and joins the workers.
    let instance = plugin
        .create("workers = 2\nlatency_us = 10000000\nmax_batch = 1\n")
        .unwrap();
    let issued = samples(1, 200);
    assert!(instance.issue(&issued).is_none());
    let started = Instant::now();
    let recorder = instance.destroy();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(2), "destroy took {took:?}");
    // Every issued id completed exactly once, all before destroy returned.
    assert_eq!(recorder.completed.load(Ordering::SeqCst), issued.len());
    check_exactly_once(&recorder, &issued);
    // Nothing after destroy (on_complete records a problem if it is called now).
    thread::sleep(Duration::from_millis(150));
    assert_eq!(recorder.completed.load(Ordering::SeqCst), issued.len());
    assert!(lock(&recorder.problems).is_empty());

    // Destroying an idle instance with sleeping workers is prompt too.
    let instance = plugin.create("workers = 8").unwrap();
    let started = Instant::now();
    instance.destroy();
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[test]
fn malformed_config_is_an_error_naming_the_key() {
    let plugin = Plugin::load();
    let cases = [
        ("workers = many", "`workers`"),
        ("workers = -1", "`workers`"),
        ("workers = 1000", "`workers`"),
        ("workers = 99999999999999999999999999", "`workers`"),
        ("workers =", "`workers`"),
        ("latency_us = 1.5", "`latency_us`"),
        (
            "# settings\nworkers = 2\nlatency_us = \"fast\"",
            "`latency_us`",
        ),
        ("max_batch = 0", "`max_batch`"),
        ("device = npu0", "`device`"),
        ("device = \"unterminated", "`device`"),
        ("workers 4", "line 1"),
        ("\n\nlatency_us", "line 3"),
    ];
    for (config, named) in cases {
        let error = match plugin.create(config) {
            Ok(_) => panic!("config {config:?} was accepted"),
            Err(error) => error,
        };
        assert_eq!(
            error.code,
            ffi::ERROR_INVALID_CONFIG,
            "{config:?}: {error:?}"
        );
        assert!(
            error.message.contains(named),
            "{config:?}: message {:?} does not name {named}",
            error.message
        );
        assert!(
            error.message.starts_with("example-c: "),
            "{}",
            error.message
        );
    }
}

#[test]
fn unknown_keys_tables_and_comments_are_ignored() {
    let plugin = Plugin::load();
    let config = "\
# A plugin config may carry settings for others.
model = \"resnet50\"        # unknown: ignored
batch.size = 4              # dotted: ignored
workers = 1_0               # ten workers
device = \"npu#1\"          # a # inside a string is not a comment

[calibration]
workers = \"not ours\"      # under a table: ignored
";
    let instance = plugin.create(config).unwrap();
    let attributes = instance.attributes();
    assert_eq!(attributes["device"], "npu#1");
    assert_eq!(attributes["vendor"], "mlperf-host example");
    assert_eq!(attributes["precision"], "int32");
    assert_eq!(attributes.len(), 3);
    let logs = instance.logs();
    assert_eq!(logs.len(), 1, "{logs:?}");
    assert_eq!(logs[0].0, ffi::LOG_INFO);
    assert!(logs[0].1.contains("10 worker thread(s)"), "{logs:?}");
    assert!(logs[0].1.contains("device npu#1"), "{logs:?}");
}

#[test]
fn config_text_is_read_by_length_not_to_a_nul() {
    let plugin = Plugin::load();
    // Only the first 11 bytes are the config: "workers = 2"; the "5" after them is not.
    let buffer = b"workers = 25";
    let instance = plugin.create_with(&buffer[..11], |_| {}).unwrap();
    assert!(
        instance.logs()[0].1.contains(" 2 worker thread(s)"),
        "{:?}",
        instance.logs()
    );
    drop(instance);
    // No config at all: the defaults (inline, device cpu-simulated).
    let instance = plugin.create_with(&[], |_| {}).unwrap();
    assert_eq!(instance.attributes()["device"], "cpu-simulated");
    assert!(instance.logs()[0].1.contains(" 0 worker thread(s)"));
}

#[test]
fn an_unusable_host_table_is_refused() {
    let plugin = Plugin::load();
    type Edit = fn(&mut mlperf_host_api);
    let edits: [(&str, Edit); 3] = [
        ("no complete", |host| host.complete = None),
        ("another major", |host| host.abi_major = 2),
        ("too small", |host| host.struct_size = 16),
    ];
    for (what, edit) in edits {
        let error = match plugin.create_with(b"workers = 1", edit) {
            Ok(_) => panic!("{what}: accepted"),
            Err(error) => error,
        };
        assert_eq!(error.code, ffi::ERROR_INVALID_ARGUMENT, "{what}: {error:?}");
        assert!(
            error.message.contains("host table"),
            "{what}: {}",
            error.message
        );
    }
    // A host of ABI 1.0 without a log callback is fine: the plugin just does not log.
    let instance = plugin
        .create_with(b"workers = 1", |host| host.log = None)
        .unwrap();
    let issued = samples(1, 3);
    assert!(instance.issue(&issued).is_none());
    instance.recorder.wait_for(3);
    check_exactly_once(&instance.recorder, &issued);
}

#[test]
fn only_samples_of_the_loaded_set_may_be_issued() {
    let plugin = Plugin::load();
    let set = |indices: std::ops::Range<u64>| -> Vec<mlperf_sample> {
        indices.map(|index| sample(0, index)).collect()
    };
    for config in ["workers = 0", "workers = 1"] {
        let instance = plugin.create(config).unwrap();
        // Before any set is handed over (a 1.2 host never does) any sample goes.
        assert!(instance.issue(&[sample(1, 4000)]).is_none());
        assert!(instance.sample_set(true, &set(0..5)).is_none());
        assert!(instance.issue(&[sample(2, 2)]).is_none());
        let refused = instance
            .issue(&[sample(3, 3), sample(4, 9)])
            .expect("index 9 is not loaded");
        assert_eq!(refused.code, ffi::ERROR_INVALID_ARGUMENT);
        assert!(
            refused
                .message
                .contains("sample index 9 is not in the loaded set"),
            "{}",
            refused.message
        );
        assert!(instance.sample_set(false, &set(0..5)).is_none());
        // A set far beyond the first grows what the plugin tracks.
        assert!(instance.sample_set(true, &set(5000..5010)).is_none());
        assert!(
            instance.issue(&[sample(5, 2)]).is_some(),
            "index 2 was unloaded"
        );
        assert!(instance.issue(&[sample(6, 5009)]).is_none());
        instance.recorder.wait_for(3);
    }
}

#[test]
fn the_run_description_is_read_only_from_a_host_table_that_has_it() {
    let plugin = Plugin::load();
    let run = Box::new(ffi::mlperf_run_description {
        samples_per_query: 24_576,
        target_qps: 2000.0,
        target_latency_percentile: 0.9,
        ..run_description(ffi::SCENARIO_OFFLINE)
    });
    let described = plugin.create_with(b"", |host| host.run = &*run).unwrap();
    let logs = lock(&described.recorder.logs).clone();
    assert!(
        logs.iter().any(|(_, line)| line
            == "example-c: run: Offline, 24576 sample(s) per query, target 2000.0 qps, latency bound 0 ns at p90.0, 1024 of 50000 samples loaded at once"),
        "{logs:?}"
    );
    // A 1.2 host's table ends before `run`: whatever lies there is not read.
    let older = plugin
        .create_with(b"", |host| {
            host.struct_size = ffi::HOST_SIZE_1_2;
            host.run = &*run;
        })
        .unwrap();
    let logs = lock(&older.recorder.logs).clone();
    assert!(
        !logs.iter().any(|(_, line)| line.contains("run:")),
        "{logs:?}"
    );
}
