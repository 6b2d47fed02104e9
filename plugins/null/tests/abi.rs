//! The built null plugin (`libmlperf_plugin_null.so`) loaded with libloading and driven through
//! the raw ABI only, as the host drives any plugin.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

use ::mlperf_plugin_api::ffi::{self, mlperf_plugin_api, mlperf_plugin_entry_fn, mlperf_sample};
use ::mlperf_plugin_api::layout::{check_layout, LayoutFn, LAYOUT_SYMBOL};
use ::mlperf_plugin_api::sdk::PluginError;
use ::mlperf_plugin_api::testing::{sample, Answer, RawInstance, RecordingHost};
use libloading::Library;

const WAIT: Duration = Duration::from_secs(20);

/// The cdylib cargo built for this test: `cargo test` leaves it in target/<profile>/deps,
/// next to the test binary (only `cargo build` copies it up to target/<profile>).
fn library_path() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let deps = exe.parent().expect("target/<profile>/deps");
    let name = format!(
        "{}mlperf_plugin_null{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    let path = deps.join(&name);
    assert!(path.is_file(), "{} was not built", path.display());
    path
}

/// Loaded once and kept for the whole test process (unloading is not needed here).
fn library() -> &'static Library {
    static LIBRARY: OnceLock<Library> = OnceLock::new();
    LIBRARY.get_or_init(|| {
        let path = library_path();
        // SAFETY: our own plugin; loading runs no initialisers beyond Rust's std.
        unsafe { Library::new(&path) }.unwrap_or_else(|e| panic!("load {}: {e}", path.display()))
    })
}

fn entry(major: u32, minor: u32) -> *const mlperf_plugin_api {
    // SAFETY: the symbol has the header's entry signature.
    unsafe {
        let entry = library()
            .get::<mlperf_plugin_entry_fn>(ffi::ENTRY_SYMBOL)
            .expect("entry symbol");
        entry(major, minor)
    }
}

fn table() -> &'static mlperf_plugin_api {
    // SAFETY: the entry returns NULL or its static table, alive while the library is loaded.
    unsafe { entry(ffi::ABI_MAJOR, ffi::ABI_MINOR).as_ref() }.expect("a table for our major")
}

fn create<'a>(host: &'a RecordingHost, config: &str) -> Result<RawInstance<'a>, PluginError> {
    // SAFETY: the table of a loaded plugin; `host` outlives the instance.
    unsafe { RawInstance::create(table(), host, config) }
}

/// Samples with ids 1000 + index for indices `indices`.
fn samples(indices: impl IntoIterator<Item = u64>) -> Vec<mlperf_sample> {
    indices
        .into_iter()
        .map(|i| sample(1000 + i, i, b""))
        .collect()
}

/// id → (data, n_tokens), asserting each id arrived once.
fn by_id(answers: &[Answer]) -> BTreeMap<u64, (Vec<u8>, i64)> {
    let mut map = BTreeMap::new();
    for a in answers {
        let previous = map.insert(a.id, (a.data.clone(), a.n_tokens));
        assert!(previous.is_none(), "id {} completed twice", a.id);
    }
    map
}

#[test]
fn entry_negotiates_and_refuses_another_major() {
    let api = table();
    assert_eq!(api.struct_size, size_of::<mlperf_plugin_api>());
    assert_eq!((api.abi_major, api.abi_minor), (1, 5));
    assert_eq!(api.kind, ffi::KIND_SUT);
    assert!(api.power_info.is_none() && api.read_power.is_none());
    assert!(api.load_samples.is_some() && api.unload_samples.is_some());
    assert!(
        api.devices.is_some(),
        "the SDK lists devices (none unless configured)"
    );
    // SAFETY: static NUL-terminated strings.
    let name = unsafe { std::ffi::CStr::from_ptr(api.name) };
    assert_eq!(name.to_str().unwrap(), "null");
    assert_ne!(api.capabilities & ffi::CAP_ASYNC_COMPLETION, 0);
    assert!(entry(2, 0).is_null());
    assert!(entry(0, 1).is_null());
    assert_eq!(entry(1, 3), std::ptr::from_ref(api));
}

#[test]
fn layout_descriptor_is_exported_and_matches() {
    // SAFETY: the symbol has LayoutFn's signature.
    let layout = unsafe { library().get::<LayoutFn>(LAYOUT_SYMBOL) }.expect("layout symbol");
    check_layout(layout()).unwrap();
}

#[test]
fn inline_answers_each_sample_with_its_index() {
    let host = RecordingHost::new();
    let instance = create(&host, "").unwrap();
    instance.issue(&samples([0, 1, 7, 300, 70_000])).unwrap();
    // Inline: everything is complete when issue_query returns.
    let got = by_id(&host.completed());
    let expected: BTreeMap<_, _> = [0u64, 1, 7, 300, 70_000]
        .map(|i| (1000 + i, ((i as u32).to_le_bytes().to_vec(), 0)))
        .into();
    assert_eq!(got, expected);
    assert!(host.first_tokens().is_empty());
    instance.flush().unwrap();
    let attributes: BTreeMap<_, _> = instance.attributes().unwrap().into_iter().collect();
    assert_eq!(attributes["vendor"], "mlperf-host");
    assert_eq!(attributes["device"], "cpu");
    assert_eq!(attributes["precision"], "none");
    assert_eq!(attributes["workers"], "0");
    let logs = host.logs();
    assert!(logs
        .iter()
        .any(|(level, line)| *level == ffi::LOG_INFO && line.contains("0 worker")));
}

/// Lets two threads issue into one instance: the null plugin declares CAP_CONCURRENT_ISSUE.
struct Concurrent<'a>(&'a RawInstance<'a>);
// SAFETY: the plugin accepts concurrent issue_query calls (checked in the test).
unsafe impl Sync for Concurrent<'_> {}

#[test]
fn workers_complete_every_id_once_from_concurrent_issuers() {
    assert_ne!(table().capabilities & ffi::CAP_CONCURRENT_ISSUE, 0);
    let host = RecordingHost::new();
    let instance = create(&host, "workers = 3").unwrap();
    // 40 queries of 1..=10 samples, ids all distinct, issued by two threads.
    let query = |q: u64| samples(q * 10..q * 10 + 1 + q % 10);
    let total: usize = (0..40).map(|q| query(q).len()).sum();
    let shared = Concurrent(&instance);
    thread::scope(|scope| {
        for first in [0, 20] {
            let shared = &shared;
            scope.spawn(move || {
                for q in first..first + 20 {
                    // No sample data: nothing the plugin reads outlives the call.
                    shared.0.issue(&query(q)).unwrap();
                }
            });
        }
    });
    let answers = host.wait_for_completions(total, WAIT);
    let got = by_id(&answers);
    assert_eq!(got.len(), total);
    for (id, (data, _)) in &got {
        assert_eq!(data, &((id - 1000) as u32).to_le_bytes());
    }
    drop(instance); // destroy joins the workers
    assert_eq!(host.completed().len(), total, "no completion after destroy");
}

#[test]
fn destroy_waits_for_queued_work() {
    let host = RecordingHost::new();
    let instance = create(&host, "workers = 2\nlatency_us = 20000").unwrap();
    instance.issue(&samples(0..4)).unwrap();
    assert!(host.completed().len() < 4, "completions come later");
    drop(instance);
    // destroy returned only after the workers stopped, so everything has arrived.
    assert_eq!(host.completed().len(), 4);
}

#[test]
fn latency_is_fixed_plus_per_index() {
    let host = RecordingHost::new();
    let instance = create(
        &host,
        "workers = 1\nlatency_us = 2000\nlatency_per_index_us = 1000",
    )
    .unwrap();
    let issued = Instant::now();
    instance.issue(&samples([0, 5, 10])).unwrap();
    let answers = host.wait_for_completions(3, WAIT);
    assert_eq!(answers.len(), 3);
    for answer in answers {
        let index = answer.id - 1000;
        let least = Duration::from_micros(2000 + 1000 * index);
        assert!(
            answer.at - issued >= least,
            "index {index} after {:?}",
            answer.at - issued
        );
    }

    let inline = create(&host, "latency_us = 3000").unwrap();
    let started = Instant::now();
    inline.issue(&samples([1])).unwrap();
    assert!(
        started.elapsed() >= Duration::from_micros(3000),
        "inline waits in issue_query"
    );
}

#[test]
fn token_mode_reports_first_tokens_then_counts() {
    let host = RecordingHost::new();
    let instance = create(&host, "tokens = true\nworkers = 2").unwrap();
    instance.issue(&samples(0..10)).unwrap();
    let answers = host.wait_for_completions(10, WAIT);
    let done = by_id(&answers);
    let first = by_id(&host.first_tokens());
    assert_eq!(first.len(), 10);
    for index in 0..10u64 {
        let id = 1000 + index;
        assert_eq!(
            done[&id],
            (
                (index as u32).to_le_bytes().to_vec(),
                2 + (index % 7) as i64
            )
        );
        assert_eq!(first[&id].0, (index as u32).to_le_bytes());
    }
    let first_at: BTreeMap<_, _> = host.first_tokens().iter().map(|a| (a.id, a.at)).collect();
    for answer in &answers {
        assert!(
            first_at[&answer.id] <= answer.at,
            "first token before completion"
        );
    }
}

#[test]
fn panic_after_turns_into_a_panic_error_with_the_message() {
    let host = RecordingHost::new();
    let instance = create(&host, "panic_after = 3").unwrap();
    instance.issue(&samples(0..3)).unwrap();
    let error = instance.issue(&samples([3])).unwrap_err();
    assert_eq!(error.code, ffi::ERROR_PANIC);
    assert!(
        error.message.contains("panic_after = 3"),
        "{}",
        error.message
    );
    // Later samples are served again.
    instance.issue(&samples([4])).unwrap();
    assert_eq!(host.completed().len(), 4);
}

#[test]
fn faults_complete_twice_or_never() {
    let host = RecordingHost::new();
    let instance = create(&host, "complete_twice_after = 1\nnever_complete_after = 2").unwrap();
    instance.issue(&samples(0..4)).unwrap();
    let ids: Vec<u64> = host.completed().iter().map(|a| a.id).collect();
    assert_eq!(ids, [1000, 1001, 1001, 1003]);
}

#[test]
fn fail_after_loses_the_rest_and_tells_the_host() {
    let message = "null plugin: fail_after = 2 reached, samples lost";
    // Inline: the failure is reported within issue_query, which still succeeds.
    let host = RecordingHost::new();
    let instance = create(&host, "fail_after = 2").unwrap();
    instance.issue(&samples(0..4)).unwrap();
    let ids: Vec<u64> = host.completed().iter().map(|a| a.id).collect();
    assert_eq!(ids, [1000, 1001]);
    assert_eq!(host.fails(), [message]);
    // From a worker thread, after issue_query returned.
    let host = RecordingHost::new();
    let instance = create(&host, "workers = 1\nfail_after = 2").unwrap();
    instance.issue(&samples(0..4)).unwrap();
    assert_eq!(host.wait_for_fail(WAIT), [message]);
    drop(instance);
    assert_eq!(host.completed().len(), 2);
}

#[test]
fn bad_config_is_refused_with_its_reason() {
    let host = RecordingHost::new();
    let error = create(&host, "workers = \"many\"").map(|_| ()).unwrap_err();
    assert_eq!(error.code, ffi::ERROR_INVALID_CONFIG);
    assert!(error.message.contains("workers"), "{}", error.message);
    let error = create(&host, "colour = 1").map(|_| ()).unwrap_err();
    assert!(error.message.contains("colour"), "{}", error.message);
}

/// The meter's table, behind the library's second entry.
fn meter_table() -> &'static mlperf_plugin_api {
    // SAFETY: the symbol has the header's entry signature; the table is static while the
    // library is loaded.
    unsafe {
        let entry = library()
            .get::<mlperf_plugin_entry_fn>(ffi::POWER_ENTRY_SYMBOL)
            .expect("power entry symbol");
        assert!(entry(2, 0).is_null());
        entry(ffi::ABI_MAJOR, ffi::ABI_MINOR).as_ref()
    }
    .expect("a meter table for our major")
}

#[test]
fn the_second_entry_is_a_simulated_meter() {
    let api = meter_table();
    assert_eq!(api.kind, ffi::KIND_POWER);
    assert_eq!(api.struct_size, size_of::<mlperf_plugin_api>());
    assert!(api.issue_query.is_none() && api.flush_queries.is_none());
    let host = RecordingHost::new();
    // SAFETY: the meter's table; `host` outlives the instance.
    let meter =
        unsafe { RawInstance::create(api, &host, "watts = 50\nperiod_ms = 20\nwall = true") }
            .unwrap();
    let info = meter.power_info().unwrap();
    assert_eq!(info.scope, ffi::POWER_SCOPE_WALL);
    assert_eq!(
        info.flags,
        ffi::POWER_SIMULATED | ffi::POWER_HAS_ENERGY_COUNTER
    );
    assert_eq!(info.period_ns, 20_000_000);
    assert!(
        info.description.contains("simulated draw of 50 W"),
        "{info:?}"
    );

    let first = meter.read_power().unwrap();
    thread::sleep(Duration::from_millis(50));
    let second = meter.read_power().unwrap();
    assert_eq!((first.watts, second.watts), (50.0, 50.0));
    assert!(first.volts.is_nan() && first.amps.is_nan() && first.power_factor.is_nan());
    // 50 W for at least the 50 ms slept.
    let joules = second.energy_joules - first.energy_joules;
    assert!((2.5..5.0).contains(&joules), "{joules} J");
    let attributes: BTreeMap<_, _> = meter.attributes().unwrap().into_iter().collect();
    assert_eq!(attributes["device"], "simulated");
    assert!(host
        .logs()
        .iter()
        .any(|(_, line)| line.contains("null meter")));
}

#[test]
fn meter_faults_and_bad_config_are_errors() {
    let api = meter_table();
    let host = RecordingHost::new();
    // SAFETY: as above.
    let create = |config: &str| unsafe { RawInstance::create(api, &host, config) };
    let meter =
        create("fail_after_reads = 1\npanic_after_reads = 2\nenergy_counter = false").unwrap();
    let reading = meter.read_power().unwrap();
    assert!(reading.energy_joules.is_nan());
    let error = meter.read_power().unwrap_err();
    assert_eq!(error.code, ffi::ERROR_DEVICE);
    assert!(error.message.contains("fail_after_reads = 1"), "{error}");
    let error = meter.read_power().unwrap_err();
    assert_eq!(error.code, ffi::ERROR_PANIC);
    assert!(error.message.contains("panic_after_reads = 2"), "{error}");
    // After a panic the meter refuses, rather than read from a half-updated state.
    let error = meter.read_power().unwrap_err();
    assert!(
        error.message.contains("panicked in an earlier call"),
        "{error}"
    );
    drop(meter);
    let error = create("workers = 2").map(|_| ()).unwrap_err();
    assert_eq!(error.code, ffi::ERROR_INVALID_CONFIG);
    assert!(error.message.contains("null meter config"), "{error}");
}
