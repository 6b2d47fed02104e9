//! A plugin instance as the engine's system under test.

use std::ffi::c_void;
use std::sync::{Arc, Mutex, RwLock};

use mlperf_plugin_api::ffi;

use super::batching::{issue_in_calls, Gatherer};
use super::data_format::InputTable;
use super::devices::DeviceCopy;
use super::error::PluginError;
use super::host_api::{host_api, take_error, HostContext};
use super::instance::PluginBackend;
use super::loader::{c_string, Plugin};
use super::run::RunDescription;
use super::sample_memory::SampleMemory;
use super::timed::TimedPreprocess;
use super::window::WindowIssuer;
use crate::loadgen::{Completer, QuerySample, QuerySampleResponse, ResponseId, SystemUnderTest};
use crate::samples::{LoadedSamples, Preprocessing, SampleArena};
use crate::timing::{TimingSink, TimingSinkSlot};
use mlperf_loadgen::TestScenario;

/// One created plugin instance. Dropping it destroys the instance (which stops the plugin's
/// threads) before the library can be unloaded.
pub struct PluginSut {
    // Field order matters on drop: the gathering thread stops and the instance goes first
    // (see Drop), the library last.
    instance: *mut c_void,
    /// Server with --plugin-batch: the thread gathering queries into calls.
    gatherer: Option<Gatherer>,
    /// A sliding-window run (3D-UNet): the thread handing each sample's windows over.
    window: Option<WindowIssuer>,
    /// The most samples per issue_query call (0: whole queries).
    max_per_call: usize,
    table: *const ffi::mlperf_plugin_api,
    // The table the plugin was given, and the run description it points at; the plugin may
    // keep both pointers until destroy.
    _host: Box<ffi::mlperf_host_api>,
    _run: Option<Box<ffi::mlperf_run_description>>,
    /// The host's copy of the device the run description points at (ABI 1.4).
    _device: Option<DeviceCopy>,
    /// Taken around issue_query when several threads issue to a plugin without
    /// MLPERF_CAP_CONCURRENT_ISSUE.
    issue_turns: Option<Mutex<()>>,
    context: Box<HostContext>,
    /// The hand-over buffer of large queries, possibly prepared ahead.
    samples: Mutex<Staged>,
    /// Loaded sample data the issued samples point into (none: samples carry no data).
    arena: Option<Arc<SampleArena>>,
    /// Preprocessing run on each issued sample, inside the timed path.
    timed: Option<TimedPreprocess>,
    /// Where hand-overs are noted, when the run divides its latencies.
    timing: TimingSinkSlot,
    /// The plugin's allocator for the loaded sets (ABI 1.4), and the set copied into it.
    memory: Option<SampleMemory>,
    own_set: RwLock<Option<LoadedSamples>>,
    /// The named inputs within every sample, which the run description points at (none: a
    /// sample is one tensor).
    _inputs: Option<InputTable>,
    /// The plugin was handed a 1.2 host table: no 1.3 call is made either.
    as_host_of_1_2: bool,
    name: String,
    attributes: Vec<(String, String)>,
    provenance: Vec<(String, String)>,
    _library: Arc<libloading::Library>,
}

// SAFETY: the instance is only used through the ABI, whose functions the plugin makes safe to
// call from the host's threads (concurrent issue only with MLPERF_CAP_CONCURRENT_ISSUE: without
// it, several issuing threads take turns through `issue_turns`); the completer is set once.
unsafe impl Send for PluginSut {}
// SAFETY: as for Send.
unsafe impl Sync for PluginSut {}

impl PluginSut {
    /// Creates an instance of `plugin` configured by `config_toml`, for the test `run`
    /// describes (None: the instance serves no test).
    pub fn create(
        plugin: &Plugin,
        config_toml: &str,
        run: Option<&RunDescription>,
    ) -> Result<PluginSut, PluginError> {
        plugin.require_sut()?;
        let table = plugin.table();
        let name = plugin.info.name.clone();
        let format = run.map(RunDescription::format);
        let context = HostContext::new(
            name.clone(),
            format.map_or(&[][..], |f| &f.logged_outputs[..]),
            format.and_then(|f| f.postprocess.clone()),
        );
        let inputs = format.and_then(|f| InputTable::new(&f.inputs));
        let device = run
            .and_then(RunDescription::device)
            .map(|d| DeviceCopy::new(&d.device));
        let run_raw = run.map(|run| {
            let mut raw = run.to_raw();
            if let Some(table) = &inputs {
                (raw.inputs, raw.n_inputs) = table.handle();
            }
            if let Some(device) = &device {
                raw.device = device.as_ptr();
            }
            if run.is_as_host_of_1_3() {
                // A 1.3 description ends before the device, and a plugin that follows what
                // lies past its end anyway faults there (isolated: its check fails).
                raw.struct_size = ffi::RUN_SIZE_1_3;
                raw.device = std::ptr::dangling();
            }
            Box::new(raw)
        });
        let mut host = Box::new(host_api(&context, run_raw.as_deref()));
        let as_host_of_1_2 = run.is_some_and(RunDescription::is_as_host_of_1_2);
        if as_host_of_1_2 {
            // A 1.2 table: `run` lies past its end, and a plugin that follows it anyway
            // faults there (isolated: its check fails with the signal).
            host.struct_size = ffi::HOST_SIZE_1_2;
            host.abi_minor = 2;
            host.run = std::ptr::dangling();
        } else if run.is_some_and(RunDescription::is_as_host_of_1_3) {
            // A 1.3 table ends before the clock and the timing report.
            host.struct_size = ffi::HOST_SIZE_1_3;
            host.abi_minor = 3;
        }
        let as_host_of_1_3 = run.is_some_and(RunDescription::is_as_host_of_1_3);
        let call_error =
            |function: &'static str, (code, message): (i32, String)| PluginError::Call {
                plugin: name.clone(),
                function,
                code,
                message,
            };
        if let Some(init) = table.init {
            // SAFETY: the host table lives in `host` for as long as the instance.
            if let Some(error) = unsafe { take_error(init(&*host)) } {
                return Err(call_error("init", error));
            }
        }
        let mut instance: *mut c_void = std::ptr::null_mut();
        let create = table.create.expect("checked by require_sut");
        // SAFETY: per the ABI; the config bytes live across the call.
        let error = unsafe {
            create(
                &*host,
                config_toml.as_ptr() as *const std::ffi::c_char,
                config_toml.len(),
                &mut instance,
            )
        };
        // SAFETY: the plugin's error object, if any.
        if let Some(error) = unsafe { take_error(error) } {
            return Err(call_error("create", error));
        }
        let batching = run.map(RunDescription::batching).unwrap_or_default();
        let windowed = context.window.is_some();
        let mut sut = PluginSut {
            instance,
            gatherer: None,
            window: None,
            max_per_call: batching.max_samples,
            table: plugin.api,
            _host: host,
            _run: run_raw,
            _device: device,
            issue_turns: (run.is_some_and(RunDescription::concurrent_issue)
                && plugin.table().capabilities & ffi::CAP_CONCURRENT_ISSUE == 0)
                .then(|| Mutex::new(())),
            context,
            samples: Mutex::new(Staged::default()),
            arena: None,
            timed: None,
            timing: TimingSinkSlot::default(),
            // Hosts before 1.4 never ask for sample memory.
            // The host cuts a sliding-window run's windows out of its own memory.
            memory: (!as_host_of_1_2
                && !as_host_of_1_3
                && !windowed
                && !run.is_some_and(RunDescription::samples_in_host_memory))
            .then(|| SampleMemory::of(table))
            .flatten(),
            own_set: RwLock::new(None),
            _inputs: inputs,
            as_host_of_1_2,
            name: name.clone(),
            attributes: Vec::new(),
            provenance: Vec::new(),
            _library: Arc::clone(&plugin.library),
        };
        // The instance is the PluginSut's from here: an error drops it, which destroys it.
        let unstarted = |thread: &str, e: std::io::Error| PluginError::Call {
            plugin: name.clone(),
            function: "create",
            code: ffi::ERROR_RESOURCE_EXHAUSTED,
            message: format!("cannot start the host's {thread} thread: {e}"),
        };
        let issue = table.issue_query.expect("checked by require_sut");
        if let Some(state) = &sut.context.window {
            let window =
                WindowIssuer::start(Arc::clone(state), instance, issue, batching.max_samples)
                    .map_err(|e| unstarted("sliding-window", e))?;
            sut.window = Some(window);
        } else if batching.is_on() && run.is_some_and(|run| run.scenario() == TestScenario::Server)
        {
            let gatherer =
                Gatherer::start(batching, name.clone(), instance, issue, sut.timing.clone())
                    .map_err(|e| unstarted("batching", e))?;
            sut.gatherer = Some(gatherer);
        }
        sut.attributes = sut
            .read_attributes()
            .map_err(|e| call_error("attributes", e))?;
        let info = &plugin.info;
        sut.provenance = vec![
            ("plugin_path".into(), info.path.display().to_string()),
            ("plugin_sha256".into(), info.sha256.clone()),
            ("plugin_abi_version".into(), info.abi.clone()),
            ("plugin_name".into(), info.name.clone()),
            ("plugin_version".into(), info.version.clone()),
            ("plugin_capabilities".into(), info.capabilities.join(",")),
        ];
        sut.provenance.extend(
            sut.attributes
                .iter()
                .map(|(key, value)| (format!("plugin_attribute_{key}"), value.clone())),
        );
        Ok(sut)
    }

    fn table(&self) -> &ffi::mlperf_plugin_api {
        // SAFETY: a checked table inside the library this instance keeps loaded.
        unsafe { &*self.table }
    }

    fn read_attributes(&self) -> Result<Vec<(String, String)>, (i32, String)> {
        let Some(attributes) = self.table().attributes else {
            return Ok(Vec::new());
        };
        let mut list: *const ffi::mlperf_attribute = std::ptr::null();
        let mut count = 0usize;
        // SAFETY: per the ABI; the list stays valid until destroy, and is copied here.
        if let Some(error) = unsafe { take_error(attributes(self.instance, &mut list, &mut count)) }
        {
            return Err(error);
        }
        if list.is_null() {
            return Ok(Vec::new());
        }
        // SAFETY: `count` attributes at `list`, per the plugin.
        let list = unsafe { std::slice::from_raw_parts(list, count) };
        Ok(list
            .iter()
            .map(|a| (c_string(a.key), c_string(a.value)))
            .collect())
    }

    /// The plugin's timing reports go to `reports` (the instance's process forwards them).
    pub(crate) fn report_timing_to(&self, reports: Arc<dyn super::host_api::TimingReports>) {
        self.context.report_timing_to(reports);
    }

    /// The tokens after each answer's first go to `reports` (a sweep's inter-token times);
    /// an isolated plugin's stay in its process.
    pub(crate) fn report_tokens_to(&self, reports: Arc<dyn super::host_api::TokenReports>) {
        self.context.report_tokens_to(reports);
    }

    /// Single samples' failures go to `reports` (a sweep counts them by kind).
    pub(crate) fn report_failures_to(&self, reports: Arc<dyn super::host_api::FailureReports>) {
        self.context.report_failures_to(reports);
    }

    /// Runs `preprocessing` on every issued sample before the plugin sees it, inside the timed
    /// path (the arena holds the raw samples).
    pub fn preprocess_timed(&mut self, preprocessing: Arc<Preprocessing>) {
        self.timed = Some(TimedPreprocess::new(preprocessing));
    }

    fn table_sample_set(&self, load: bool) -> Option<SampleSetFn> {
        let table = self.table();
        if table.struct_size <= ffi::TABLE_SIZE_1_2 || self.as_host_of_1_2 {
            return None;
        }
        match load {
            true => table.load_samples,
            false => table.unload_samples,
        }
    }

    fn sample_set(
        &self,
        function: &'static str,
        call: Option<SampleSetFn>,
        indices: &[usize],
    ) -> Result<(), PluginError> {
        let Some(call) = call else {
            return Ok(());
        };
        let loaded = self.loaded();
        let samples: Vec<ffi::mlperf_sample> = indices
            .iter()
            .map(|&index| {
                let sample = QuerySample {
                    id: ResponseId(0),
                    index,
                };
                to_ffi(&sample, loaded.get())
            })
            .collect();
        drop(loaded);
        // SAFETY: per the ABI; the samples point into the loaded set, which stays until the
        // next load replaces it (after this set's unload).
        let error = unsafe { call(self.instance, samples.as_ptr(), samples.len()) };
        // SAFETY: the plugin's error object, if any.
        match unsafe { take_error(error) } {
            None => Ok(()),
            Some((code, message)) => Err(PluginError::SampleSet {
                plugin: self.name.clone(),
                function,
                samples: indices.len(),
                code,
                message,
            }),
        }
    }

    /// The plugin has `load_samples` or `unload_samples` (ABI 1.3).
    pub fn takes_sample_sets(&self) -> bool {
        self.memory.is_some()
            || self.table_sample_set(true).is_some()
            || self.table_sample_set(false).is_some()
    }

    /// The loaded set the plugin's samples point into: the copy in its own memory, or the
    /// host's.
    #[inline]
    fn loaded(&self) -> Loaded<'_> {
        if self.memory.is_some() {
            let own = self.own_set.read().unwrap_or_else(|p| p.into_inner());
            if own.is_some() {
                return Loaded::Own(own);
            }
        }
        Loaded::Host(self.arena.as_deref().and_then(SampleArena::read))
    }

    fn report(&self, function: &str, error: Option<(i32, String)>) {
        if let Some((code, message)) = error {
            let text = format!(
                "plugin {} {function} failed (error {code}): {message}",
                self.name
            );
            match self.context.completer.get() {
                Some(completer) => completer.fail(text),
                None => tracing::error!("{text}"),
            }
        }
    }
}

impl SystemUnderTest for PluginSut {
    fn name(&self) -> &str {
        &self.name
    }

    fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
        if self.context.completer.arm(completer) {
            // The plugin failed before its first query: it gets none.
            return refuse(samples, completer);
        }
        let _turn = self
            .issue_turns
            .as_ref()
            .map(|turns| turns.lock().unwrap_or_else(|p| p.into_inner()));
        let issue = self.table().issue_query.expect("checked by require_sut");
        self.context.issuing(samples);
        if let Some(window) = &self.window {
            return self.issue_windowed(window, samples, completer);
        }
        if let Some(timed) = &self.timed {
            return self.issue_timed(timed, samples, completer);
        }
        let (error, accepted) = if samples.len() <= SMALL_QUERY {
            // SingleStream, Server and MultiStream queries go from the stack: no lock.
            let mut small = [blank_sample(); SMALL_QUERY];
            let loaded = self.loaded();
            for (slot, sample) in small.iter_mut().zip(samples) {
                *slot = to_ffi(sample, loaded.get());
            }
            drop(loaded);
            if let Some(gatherer) = &self.gatherer {
                return gatherer.push(&small[..samples.len()], completer);
            }
            // SAFETY: the samples live across the call; ids stay valid until completed.
            unsafe {
                issue_in_calls(
                    issue,
                    self.instance,
                    &small[..samples.len()],
                    self.max_per_call,
                    self.timing.get(),
                )
            }
        } else {
            let mut staged = self.samples.lock().unwrap_or_else(|p| p.into_inner());
            if staged.query.take() != Some(Staged::key(samples)) {
                staged.fill(samples, self.loaded().get());
            }
            // SAFETY: as above.
            unsafe {
                issue_in_calls(
                    issue,
                    self.instance,
                    &staged.buffer,
                    self.max_per_call,
                    self.timing.get(),
                )
            }
        };
        // The failure first: a completion sink in another process receives them in order,
        // and must not see the test end on the refused samples before it.
        let failed = error.is_some();
        self.report("issue_query", error);
        if failed {
            refuse(&samples[accepted..], completer);
        }
    }

    fn prepare_query(&self, samples: &[QuerySample]) {
        if samples.len() > SMALL_QUERY && self.timed.is_none() && self.window.is_none() {
            let mut staged = self.samples.lock().unwrap_or_else(|p| p.into_inner());
            staged.fill(samples, self.loaded().get());
            staged.query = Some(Staged::key(samples));
        }
    }

    fn flush_queries(&self) {
        if let Some(gatherer) = &self.gatherer {
            gatherer.flush();
        }
        let flush = self.table().flush_queries.expect("checked by require_sut");
        // SAFETY: per the ABI.
        let error = unsafe { flush(self.instance) };
        // SAFETY: the plugin's error object, if any.
        self.report("flush_queries", unsafe { take_error(error) });
    }
}

impl PluginSut {
    /// A sliding-window run: the samples' volumes go to the window thread, which hands the
    /// plugin their windows.
    fn issue_windowed(
        &self,
        window: &WindowIssuer,
        samples: &[QuerySample],
        completer: &Completer,
    ) {
        let loaded = self.loaded();
        let handed: Vec<ffi::mlperf_sample> = samples
            .iter()
            .map(|sample| to_ffi(sample, loaded.get()))
            .collect();
        drop(loaded);
        window.issue(&handed, completer);
    }

    fn issue_timed(&self, timed: &TimedPreprocess, samples: &[QuerySample], completer: &Completer) {
        let issue = self.table().issue_query.expect("checked by require_sut");
        let mut error = None;
        let preprocessed = timed.issue(samples, self.arena.as_deref(), completer, |handover| {
            if let Some(timing) = self.timing.get() {
                timing.handed(handover);
            }
            // SAFETY: the samples live across the call; their data until they complete.
            error = unsafe { take_error(issue(self.instance, handover.as_ptr(), handover.len())) };
        });
        match preprocessed {
            Ok(()) => {
                // As in issue_query: the failure before the refused samples.
                let failed = error.is_some();
                self.report("issue_query", error);
                if failed {
                    refuse(samples, completer);
                }
            }
            Err(failure) => {
                completer.fail(format!("timed preprocessing failed: {failure}"));
                refuse(samples, completer);
            }
        }
    }
}

/// Accounts for samples the plugin never accepted, so the drain does not wait for them (the run
/// ends INVALID).
pub(crate) fn refuse(samples: &[QuerySample], completer: &Completer) {
    let empty: Vec<QuerySampleResponse<'_>> = samples
        .iter()
        .map(|s| QuerySampleResponse::new(s.id, &[]))
        .collect();
    completer.query_samples_complete(&empty);
}

/// A large query's samples in ABI form, converted ahead when the engine prepared the query.
#[derive(Default)]
struct Staged {
    buffer: Vec<ffi::mlperf_sample>,
    /// The query the buffer holds: its first sample id and length.
    query: Option<(u64, usize)>,
}

impl Staged {
    fn key(samples: &[QuerySample]) -> (u64, usize) {
        (samples.first().map_or(0, |s| s.id.0), samples.len())
    }

    fn fill(&mut self, samples: &[QuerySample], loaded: Option<&LoadedSamples>) {
        self.buffer.clear();
        self.buffer
            .extend(samples.iter().map(|s| to_ffi(s, loaded)));
    }
}

type SampleSetFn = unsafe extern "C" fn(
    instance: *mut c_void,
    samples: *const ffi::mlperf_sample,
    count: usize,
) -> *mut ffi::mlperf_error;

/// Queries up to this size are handed over from the stack.
const SMALL_QUERY: usize = 8;

const fn blank_sample() -> ffi::mlperf_sample {
    ffi::mlperf_sample {
        struct_size: std::mem::size_of::<ffi::mlperf_sample>(),
        id: 0,
        index: 0,
        data: std::ptr::null(),
        length: 0,
        dtype: 0,
        rank: 0,
        shape: std::ptr::null(),
    }
}

/// A sample as the ABI carries it, pointing into the loaded samples when there are any. The
/// pointers stay valid after the read guard is gone: the arena's memory is only replaced by a
/// later load, after this sample completed (see `samples::arena`).
#[inline]
fn to_ffi(sample: &QuerySample, loaded: Option<&LoadedSamples>) -> ffi::mlperf_sample {
    let mut raw = ffi::mlperf_sample {
        id: sample.id.0,
        index: sample.index as u64,
        ..blank_sample()
    };
    if let Some(handed) = loaded.and_then(|l| l.handed(sample.index)) {
        raw.data = handed.data as *const c_void;
        raw.length = handed.length as u64;
        raw.dtype = handed.dtype.to_raw();
        raw.rank = handed.shape.len() as u32;
        raw.shape = handed.shape.as_ptr();
    }
    raw
}

/// A read guard on the set issued samples point into.
enum Loaded<'a> {
    Own(std::sync::RwLockReadGuard<'a, Option<LoadedSamples>>),
    Host(Option<std::sync::RwLockReadGuard<'a, LoadedSamples>>),
}

impl Loaded<'_> {
    #[inline]
    fn get(&self) -> Option<&LoadedSamples> {
        match self {
            Loaded::Own(own) => own.as_ref(),
            Loaded::Host(host) => host.as_deref(),
        }
    }
}

impl PluginSut {
    /// Gives the set's copy back to the plugin (free_samples), if it holds one.
    fn free_own_set(&self) {
        let set = self
            .own_set
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        drop(set);
    }

    /// Destroys the instance, then counts the plugin's callbacks for `grace` more: a thread
    /// that outlives destroy (it should have been joined) calls the host late. For the
    /// plugin's own process, which exits next: the host table, its context and the library
    /// are kept (never freed nor unloaded), so that such a thread finds them still there.
    pub(crate) fn destroy_counting_late_callbacks(self, grace: std::time::Duration) -> u64 {
        let mut sut = std::mem::ManuallyDrop::new(self);
        drop(sut.gatherer.take());
        drop(sut.window.take());
        sut.free_own_set();
        if let Some(destroy) = sut.table().destroy {
            // SAFETY: destroyed once: the value is never dropped (no second destroy in Drop).
            unsafe { destroy(sut.instance) };
        }
        sut.context.mark_destroyed();
        std::thread::sleep(grace);
        sut.context.late_callbacks()
    }
}

impl PluginBackend for PluginSut {
    /// Hands issued samples their data from `arena` (filled by the sample library's loads).
    fn read_samples_from(&mut self, arena: Arc<SampleArena>) {
        self.arena = Some(arena);
    }

    /// Sizes (and touches) the buffer a query's samples are handed over in, so a large
    /// Offline query does not pay for fresh memory inside its timed window. Returns false,
    /// reserving nothing, when the memory cannot be had.
    fn reserve_samples(&self, samples: usize) -> bool {
        let mut staged = self.samples.lock().unwrap_or_else(|p| p.into_inner());
        staged.buffer.clear();
        staged.query = None;
        if staged.buffer.try_reserve_exact(samples).is_err() {
            return false;
        }
        staged.buffer.resize(samples, blank_sample());
        staged.buffer.clear();
        true
    }

    /// Tells the plugin LoadGen loaded the samples of `indices` (their data in the arena by
    /// now): its `load_samples` (ABI 1.3), if it has one. The error names the call.
    /// With the plugin's own sample memory (ABI 1.4), the set is first copied into it.
    fn load_samples(&self, indices: &[usize]) -> Result<(), PluginError> {
        if let Some(memory) = self.memory {
            let copy = match self.arena.as_deref().and_then(SampleArena::read) {
                Some(set) => memory.copy_in(self.instance, &self.name, &set)?,
                None => None,
            };
            if let Some((_, kind)) = &copy {
                tracing::debug!(plugin = %self.name, kind, "loaded set copied into the plugin's memory");
            }
            *self.own_set.write().unwrap_or_else(|p| p.into_inner()) = copy.map(|(set, _)| set);
        }
        self.sample_set("load_samples", self.table_sample_set(true), indices)
    }

    /// Tells the plugin the set of `indices` is released: its `unload_samples` (ABI 1.3).
    /// The set's copy in the plugin's memory goes back to it after its unload_samples.
    fn unload_samples(&self, indices: &[usize]) -> Result<(), PluginError> {
        let unloaded = self.sample_set("unload_samples", self.table_sample_set(false), indices);
        self.free_own_set();
        unloaded
    }

    /// The plugin's MLPERF_CAP_* bits.
    fn capabilities(&self) -> u64 {
        self.table().capabilities
    }

    fn note_timing(&self, sink: TimingSink) {
        self.report_timing_to(Arc::new(sink.clone()));
        let _ = self.timing.set(sink);
    }

    /// The plugin's attributes (vendor, device, driver, precision, ...).
    fn attributes(&self) -> &[(String, String)] {
        &self.attributes
    }

    /// Path, sha256, ABI version, name, version, capabilities and attributes, for the logs.
    fn provenance(&self) -> Vec<(String, String)> {
        self.provenance.clone()
    }
}

impl Drop for PluginSut {
    fn drop(&mut self) {
        // The gathering and window threads call issue_query: they stop before the instance
        // goes.
        drop(self.gatherer.take());
        drop(self.window.take());
        // free_samples needs the instance: the set goes first.
        self.free_own_set();
        if let Some(destroy) = self.table().destroy {
            // SAFETY: destroyed once; returns after the plugin's threads have stopped, so no
            // callback can reach `context` or `host` after this.
            unsafe { destroy(self.instance) };
        }
    }
}
