//! The SDK through the raw ABI: a small plugin exported with `export_plugin!` into this test
//! binary, driven only through its entry symbol and function table, as the host drives one.

use std::ffi::{CStr, CString};
use std::mem::offset_of;
use std::time::Duration;

use ::mlperf_plugin_api::ffi::{self, mlperf_plugin_api, mlperf_sample};
use ::mlperf_plugin_api::layout::check_layout;
use ::mlperf_plugin_api::sdk::{
    Completer, DType, Device, DeviceKind, FailureKind, Host, Input, Level, Logger, NamedResponse,
    Output, PluginError, Response, Sample, SutPlugin,
};
use ::mlperf_plugin_api::testing::{run_description, sample, RawInstance, RecordingHost};

/// Echoes each sample's data back with n_tokens = rank; config "panic"/"fail" break create,
/// index 666 panics in issue_query, samples of index 777 are lost (reported through the
/// completer's fail, from another thread), flush fails.
struct Echo {
    logger: Logger,
    /// The run's named inputs, each echoed as an output of its name.
    inputs: Vec<(CString, Input)>,
}

impl SutPlugin for Echo {
    fn create(config: &str, host: &Host) -> Result<Self, PluginError> {
        match config {
            "panic" => panic!("create was told to panic"),
            "fail" => Err(PluginError::invalid_config("create was told to fail")),
            _ => {
                host.logger()
                    .log(Level::Info, &format!("echo created with {config:?}"));
                let run = match host.run() {
                    Some(run) => format!(
                        "run: {:?} {:?}, {} per query, {} qps, bound {:?} at {}, {} of {} loaded",
                        run.scenario,
                        run.mode,
                        run.samples_per_query,
                        run.target_qps,
                        run.target_latency,
                        run.target_latency_percentile,
                        run.performance_sample_count,
                        run.total_sample_count
                    ),
                    None => "run: none".into(),
                };
                host.logger().log(Level::Info, &run);
                if let Some(run) = host.run() {
                    let device = match &run.device {
                        Some(d) => format!("{} {} {:?} {:?}", d.ordinal, d.name, d.kind, d.id),
                        None => "none".into(),
                    };
                    host.logger().log(
                        Level::Debug,
                        &format!(
                            "device: {device}, instance {} of {}",
                            run.instance_index, run.instance_count
                        ),
                    );
                }
                let inputs = host.run().map_or_else(Vec::new, |run| {
                    run.inputs
                        .iter()
                        .map(|input| (CString::new(input.name.clone()).unwrap(), input.clone()))
                        .collect()
                });
                Ok(Echo {
                    logger: host.logger(),
                    inputs,
                })
            }
        }
    }

    fn issue_query(
        &self,
        samples: &[Sample<'_>],
        completer: &Completer,
    ) -> Result<(), PluginError> {
        if samples.iter().any(|s| s.index() == 666) {
            panic!("boom at index 666");
        }
        // Index 888: the sample fails on its own (a busy server), as the host allows.
        for busy in samples.iter().filter(|s| s.index() == 888) {
            if !completer.fail_sample(busy.id(), FailureKind::Status, 503, "busy") {
                completer.fail("busy");
            }
        }
        let responses: Vec<Response<'_>> = samples
            .iter()
            .filter(|s| s.index() != 777 && s.index() != 888)
            .map(|s| {
                assert_eq!(s.dtype(), DType::U8);
                Response::new(s.id(), s.data()).with_tokens(s.shape().len() as i64)
            })
            .collect();
        completer.first_token(&responses[..responses.len().min(1)]);
        // The first answer streams on: 1 token, then 2 in one piece.
        if let Some(first) = responses.first() {
            completer.next_tokens(&[Response::new(first.id(), b"").with_tokens(1)]);
            completer.next_tokens(&[Response::new(first.id(), b"").with_tokens(2)]);
        }
        if self.inputs.is_empty() {
            completer.complete(&responses);
        } else {
            // Each named input of the run comes back as an output of its name.
            let outputs: Vec<Vec<Output<'_>>> = samples
                .iter()
                .map(|s| {
                    self.inputs
                        .iter()
                        .map(|(name, input)| {
                            Output::new(name, input.data(s)).with_layout(input.dtype, &input.shape)
                        })
                        .collect()
                })
                .collect();
            let named: Vec<NamedResponse<'_>> = responses
                .iter()
                .zip(&outputs)
                .map(|(response, outputs)| response.with_outputs(outputs))
                .collect();
            completer.complete_named(&named);
        }
        let lost: Vec<u64> = samples
            .iter()
            .filter(|s| s.index() == 777)
            .map(|s| s.id())
            .collect();
        if !lost.is_empty() {
            let completer = *completer;
            std::thread::spawn(move || completer.fail(&format!("lost samples {lost:?}")))
                .join()
                .unwrap();
        }
        Ok(())
    }

    fn load_samples(&self, samples: &[Sample<'_>]) -> Result<(), PluginError> {
        if samples.iter().any(|s| s.index() == 666) {
            return Err(PluginError::device("cannot stage index 666"));
        }
        let indices: Vec<u64> = samples.iter().map(|s| s.index()).collect();
        let bytes: usize = samples.iter().map(|s| s.data().len()).sum();
        self.logger
            .log(Level::Info, &format!("loaded {indices:?} ({bytes} bytes)"));
        Ok(())
    }

    fn unload_samples(&self, samples: &[Sample<'_>]) -> Result<(), PluginError> {
        let indices: Vec<u64> = samples.iter().map(|s| s.index()).collect();
        self.logger
            .log(Level::Info, &format!("unloaded {indices:?}"));
        Ok(())
    }

    fn flush_queries(&self) -> Result<(), PluginError> {
        self.logger.log(Level::Warn, "flush fails");
        Err(PluginError::device("flush failed"))
    }

    fn devices(config: &str) -> Result<Vec<Device>, PluginError> {
        match config {
            "two devices" => Ok((0..2)
                .map(|ordinal| Device {
                    ordinal: 10 + ordinal,
                    kind: DeviceKind::Npu,
                    name: format!("npu{ordinal}"),
                    id: (ordinal == 0).then(|| "pci-0000:17:00.0".to_string()),
                    memory_bytes: 16 << 30,
                })
                .collect()),
            "fail" => Err(PluginError::invalid_config("devices was told to fail")),
            _ => Ok(Vec::new()),
        }
    }

    fn attributes(&self) -> Vec<(String, String)> {
        vec![
            ("vendor".into(), "test".into()),
            ("device".into(), "none".into()),
        ]
    }
}

::mlperf_plugin_api::export_plugin!(
    Echo,
    name = "echo",
    version = "9.9",
    capabilities = ffi::CAP_CONCURRENT_ISSUE,
);

// The two symbols export_plugin! wrote into this binary. The layout is opaque to C; only
// Rust reads it, hence the allow.
#[allow(improper_ctypes)]
extern "C" {
    fn mlperf_plugin_entry(host_abi_major: u32, host_abi_minor: u32) -> *const mlperf_plugin_api;
    fn mlperf_plugin_layout() -> &'static abi_stable::type_layout::TypeLayout;
}

fn table() -> &'static mlperf_plugin_api {
    // SAFETY: the entry returns NULL or its static table.
    unsafe { mlperf_plugin_entry(ffi::ABI_MAJOR, ffi::ABI_MINOR).as_ref() }.expect("table")
}

#[test]
fn entry_negotiates_the_version() {
    let api = table();
    assert_eq!(api.struct_size, size_of::<mlperf_plugin_api>());
    assert_eq!(
        (api.abi_major, api.abi_minor),
        (ffi::ABI_MAJOR, ffi::ABI_MINOR)
    );
    assert_eq!(api.kind, ffi::KIND_SUT);
    assert_eq!(api.capabilities, ffi::CAP_CONCURRENT_ISSUE);
    // SAFETY: static NUL-terminated strings in the table.
    let (name, version) = unsafe { (CStr::from_ptr(api.name), CStr::from_ptr(api.version)) };
    assert_eq!(
        (name.to_str().unwrap(), version.to_str().unwrap()),
        ("echo", "9.9")
    );
    assert!(api.init.is_none());
    // SAFETY: plain calls of the entry.
    unsafe {
        // A later minor of the same major is served (the host uses what both know).
        assert_eq!(mlperf_plugin_entry(ffi::ABI_MAJOR, 7), ptr(api));
        assert!(mlperf_plugin_entry(ffi::ABI_MAJOR + 1, 0).is_null());
        assert!(mlperf_plugin_entry(0, 9).is_null());
    }
}

fn ptr(api: &mlperf_plugin_api) -> *const mlperf_plugin_api {
    api
}

#[test]
fn layout_symbol_checks_ok() {
    // SAFETY: the symbol's signature is LayoutFn.
    let layout = unsafe { mlperf_plugin_layout() };
    check_layout(layout).unwrap();
}

#[test]
fn issues_and_completes_through_the_table() {
    let host = RecordingHost::new();
    // SAFETY: our own table; `host` outlives the instance.
    let instance = unsafe { RawInstance::create(table(), &host, "x = 1") }.unwrap();
    let shape = [2i64, 2];
    let mut samples = vec![
        sample(11, 0, b"abcd"),
        sample(12, 1, b""),
        sample(13, 2, b"z"),
    ];
    samples[0].rank = 2;
    samples[0].shape = shape.as_ptr();
    instance.issue(&samples).unwrap();
    let done = host.completed();
    let got: Vec<_> = done
        .iter()
        .map(|a| (a.id, a.data.as_slice(), a.n_tokens))
        .collect();
    assert_eq!(
        got,
        [(11, &b"abcd"[..], 2), (12, &b""[..], 0), (13, &b"z"[..], 0)]
    );
    assert_eq!(host.first_tokens().len(), 1);
    assert_eq!(
        instance.attributes().unwrap(),
        [
            ("vendor".into(), "test".into()),
            ("device".into(), "none".into())
        ]
    );
    // Asked again, the same table comes back.
    assert_eq!(instance.attributes().unwrap().len(), 2);
    let flush = instance.flush().unwrap_err();
    assert_eq!(flush, PluginError::device("flush failed"));
    assert_eq!(
        host.logs(),
        [
            (ffi::LOG_INFO, "echo created with \"x = 1\"".to_owned()),
            (ffi::LOG_INFO, "run: none".to_owned()),
            (ffi::LOG_WARN, "flush fails".to_owned())
        ]
    );
}

#[test]
fn tokens_after_the_first_reach_a_host_of_1_5_and_are_skipped_for_older_hosts() {
    for (minor, expected) in [(5, vec![(21, 1), (21, 2)]), (4, vec![])] {
        let host = RecordingHost::of_minor(minor);
        // SAFETY: our own table; `host` outlives the instance.
        let instance = unsafe { RawInstance::create(table(), &host, "") }.unwrap();
        instance
            .issue(&[sample(21, 0, b"ab"), sample(22, 1, b"c")])
            .unwrap();
        let next: Vec<(u64, i64)> = host
            .next_tokens()
            .iter()
            .map(|a| (a.id, a.n_tokens))
            .collect();
        assert_eq!(next, expected, "host of 1.{minor}");
        // Between the first token and the end, in order.
        let first = host.first_tokens()[0].at;
        let end = host.completed()[0].at;
        assert!(host
            .next_tokens()
            .iter()
            .all(|a| a.at >= first && a.at <= end));
        assert_eq!(host.completed().len(), 2);
    }
}

#[test]
fn a_single_samples_failure_reaches_a_host_of_1_5_and_is_a_run_failure_for_older_hosts() {
    let host = RecordingHost::of_minor(5);
    // SAFETY: our own table; `host` outlives the instance.
    let instance = unsafe { RawInstance::create(table(), &host, "") }.unwrap();
    instance
        .issue(&[sample(31, 888, b""), sample(32, 1, b"c")])
        .unwrap();
    assert_eq!(
        host.sample_failures(),
        [(31, ffi::FAILURE_STATUS, 503, "busy".to_string())]
    );
    assert!(host.fails().is_empty());
    let completed: Vec<u64> = host.completed().iter().map(|a| a.id).collect();
    assert_eq!(completed, [32]);
    drop(instance);

    let host = RecordingHost::of_minor(4);
    // SAFETY: as above.
    let instance = unsafe { RawInstance::create(table(), &host, "") }.unwrap();
    instance.issue(&[sample(41, 888, b"")]).unwrap();
    assert!(host.sample_failures().is_empty());
    assert_eq!(host.fails(), ["busy"]);
}

#[test]
fn longer_samples_of_a_later_minor_are_read_by_their_stride() {
    #[repr(C)]
    struct Wider {
        sample: mlperf_sample,
        added_later: u64,
    }
    let host = RecordingHost::new();
    // SAFETY: as above.
    let instance = unsafe { RawInstance::create(table(), &host, "") }.unwrap();
    let wide = |id, data: &'static [u8]| {
        let mut sample = sample(id, id, data);
        sample.struct_size = size_of::<Wider>();
        Wider {
            sample,
            added_later: u64::MAX,
        }
    };
    let samples = [wide(1, b"one"), wide(2, b"two")];
    let api = table();
    // SAFETY: two samples strided by their struct_size.
    let error =
        unsafe { (api.issue_query.unwrap())(instance.as_ptr(), samples.as_ptr().cast(), 2) };
    // SAFETY: released once here.
    assert_eq!(unsafe { PluginError::take(error) }, None);
    let got: Vec<_> = host
        .completed()
        .into_iter()
        .map(|a| (a.id, a.data))
        .collect();
    assert_eq!(got, [(1, b"one".to_vec()), (2, b"two".to_vec())]);
}

/// A run whose samples hold two inputs of 2 bytes each: `ids`, then `mask`.
fn run_of_two_inputs(
    row_shape: &[i64; 1],
) -> (ffi::mlperf_run_description, Box<[ffi::mlperf_input; 2]>) {
    let input = |name: &'static CStr, offset| ffi::mlperf_input {
        struct_size: size_of::<ffi::mlperf_input>(),
        name: name.as_ptr(),
        offset,
        length: 2,
        dtype: DType::U8.to_raw(),
        rank: 1,
        shape: row_shape.as_ptr(),
    };
    let inputs = Box::new([input(c"ids", 0), input(c"mask", 2)]);
    let run = ffi::mlperf_run_description {
        inputs: inputs.as_ptr(),
        n_inputs: 2,
        ..run_description(ffi::SCENARIO_OFFLINE)
    };
    (run, inputs)
}

#[test]
fn named_inputs_reach_the_plugin_and_named_outputs_the_host() {
    let row_shape = [2i64];
    let (run, _inputs) = run_of_two_inputs(&row_shape);
    let host = RecordingHost::new().with_run(run);
    // SAFETY: as above.
    let instance = unsafe { RawInstance::create(table(), &host, "") }.unwrap();
    instance
        .issue(&[sample(21, 5, b"abcd"), sample(22, 6, b"wxyz")])
        .unwrap();
    let done = host.completed();
    let got: Vec<_> = done
        .iter()
        .map(|a| (a.data.clone(), a.outputs.clone()))
        .collect();
    let output = |name: &str, bytes: &[u8]| (name.to_owned(), bytes.to_vec());
    assert_eq!(
        got,
        [
            (
                b"abcd".to_vec(),
                vec![output("ids", b"ab"), output("mask", b"cd")]
            ),
            (
                b"wxyz".to_vec(),
                vec![output("ids", b"wx"), output("mask", b"yz")]
            ),
        ]
    );
}

#[test]
fn named_responses_reach_a_host_without_complete_named_through_complete() {
    let row_shape = [2i64];
    let (run, _inputs) = run_of_two_inputs(&row_shape);
    let host = RecordingHost::new().with_run(run).without_complete_named();
    // SAFETY: as above.
    let instance = unsafe { RawInstance::create(table(), &host, "") }.unwrap();
    instance.issue(&[sample(31, 1, b"abcd")]).unwrap();
    // Read by its leading fields: the data, no outputs.
    let done = host.completed();
    assert_eq!(done.len(), 1);
    assert_eq!((done[0].id, &done[0].data[..]), (31, &b"abcd"[..]));
    assert!(done[0].outputs.is_empty());
}

#[test]
fn a_panic_in_issue_query_becomes_an_error_with_its_message() {
    let host = RecordingHost::new();
    // SAFETY: as above.
    let instance = unsafe { RawInstance::create(table(), &host, "") }.unwrap();
    let error = instance.issue(&[sample(1, 666, b"")]).unwrap_err();
    assert_eq!(error, PluginError::panic("boom at index 666"));
    // The instance still works afterwards.
    instance.issue(&[sample(2, 1, b"ok")]).unwrap();
    assert_eq!(host.wait_for_completions(1, Duration::ZERO).len(), 1);
}

#[test]
fn create_reports_errors_panics_and_bad_input() {
    let host = RecordingHost::new();
    let create = |config: &str| {
        // SAFETY: as above.
        unsafe { RawInstance::create(table(), &host, config) }.map(|_| ())
    };
    assert_eq!(
        create("fail").unwrap_err(),
        PluginError::invalid_config("create was told to fail")
    );
    assert_eq!(
        create("panic").unwrap_err(),
        PluginError::panic("create was told to panic")
    );
    let api = table();
    let mut instance = std::ptr::null_mut();
    let not_utf8 = [0xffu8, 0xfe];
    // SAFETY: two bytes of config and an out-pointer.
    let error =
        unsafe { (api.create.unwrap())(host.api(), not_utf8.as_ptr().cast(), 2, &mut instance) };
    // SAFETY: released once here.
    let error = unsafe { PluginError::take(error) }.unwrap();
    assert_eq!(error.code, ffi::ERROR_INVALID_CONFIG);
    assert!(error.message.contains("UTF-8"), "{}", error.message);
    assert!(instance.is_null());
}

#[test]
fn bad_pointers_are_refused_not_followed() {
    let api = table();
    let host = RecordingHost::new();
    let mut small = ffi::mlperf_host_api { ..*host.api() };
    small.struct_size = 8;
    let mut instance = std::ptr::null_mut();
    // SAFETY: every call passes pointers the shims must check before use.
    let errors = unsafe {
        [
            (api.create.unwrap())(&small, std::ptr::null(), 0, &mut instance),
            (api.create.unwrap())(std::ptr::null(), std::ptr::null(), 0, &mut instance),
            (api.issue_query.unwrap())(std::ptr::null_mut(), std::ptr::null(), 0),
            (api.flush_queries.unwrap())(std::ptr::null_mut()),
        ]
    };
    for error in errors {
        // SAFETY: released once here.
        let error = unsafe { PluginError::take(error) }.expect("an error");
        assert_eq!(error.code, ffi::ERROR_INVALID_ARGUMENT, "{}", error.message);
    }
    // SAFETY: destroy accepts NULL.
    unsafe { (api.destroy.unwrap())(std::ptr::null_mut()) };
}

#[test]
fn fail_reaches_the_host_from_any_thread() {
    let host = RecordingHost::new();
    // SAFETY: as above.
    let instance = unsafe { RawInstance::create(table(), &host, "") }.unwrap();
    instance
        .issue(&[sample(1, 0, b"a"), sample(2, 777, b""), sample(3, 777, b"")])
        .unwrap();
    let completed: Vec<u64> = host.completed().iter().map(|a| a.id).collect();
    assert_eq!(completed, [1]);
    assert_eq!(host.fails(), ["lost samples [2, 3]"]);
    // Reported as a failure, not as a log line.
    assert!(host
        .logs()
        .iter()
        .all(|(level, _)| *level != ffi::LOG_ERROR));
    // Samples completed afterwards are still delivered.
    instance.issue(&[sample(4, 1, b"b")]).unwrap();
    assert_eq!(host.completed().len(), 2);
}

#[test]
fn without_the_hosts_fail_it_is_logged_as_an_error() {
    // A host of ABI 1.1: its table ends at `log`. A 1.2 plugin still works with it.
    let host = RecordingHost::of_minor(1);
    assert_eq!(
        host.api().struct_size,
        offset_of!(ffi::mlperf_host_api, fail)
    );
    assert!(host.api().fail.is_none());
    // SAFETY: as above.
    let instance = unsafe { RawInstance::create(table(), &host, "") }.unwrap();
    instance
        .issue(&[sample(1, 0, b"a"), sample(2, 777, b"")])
        .unwrap();
    assert_eq!(host.completed().len(), 1);
    assert!(host.fails().is_empty());
    assert_eq!(
        host.logs().last().unwrap(),
        &(ffi::LOG_ERROR, "lost samples [2]".to_owned())
    );
    drop(instance);

    // `fail` is not read past the host's struct_size, whatever lies there.
    let host = RecordingHost::new();
    let short = ffi::mlperf_host_api {
        struct_size: offset_of!(ffi::mlperf_host_api, fail),
        ..*host.api()
    };
    assert!(short.fail.is_some());
    let api = table();
    let mut instance = std::ptr::null_mut();
    // SAFETY: a host table whose context (host's) outlives the instance, destroyed below;
    // one sample, alive across the call.
    unsafe {
        let error = (api.create.unwrap())(&short, std::ptr::null(), 0, &mut instance);
        assert_eq!(PluginError::take(error), None);
        let lost = [sample(5, 777, b"")];
        let error = (api.issue_query.unwrap())(instance, lost.as_ptr(), 1);
        assert_eq!(PluginError::take(error), None);
        (api.destroy.unwrap())(instance);
    }
    assert!(host.fails().is_empty());
    assert_eq!(
        host.logs().last().unwrap(),
        &(ffi::LOG_ERROR, "lost samples [5]".to_owned())
    );
}

fn server_run() -> ffi::mlperf_run_description {
    ffi::mlperf_run_description {
        target_qps: 250.0,
        target_latency_ns: 15_000_000,
        min_query_count: 100,
        ..run_description(ffi::SCENARIO_SERVER)
    }
}

fn debug_lines(host: &RecordingHost) -> Vec<String> {
    host.logs()
        .into_iter()
        .filter(|(level, _)| *level == ffi::LOG_DEBUG)
        .map(|(_, line)| line)
        .collect()
}

fn info_lines(host: &RecordingHost) -> Vec<String> {
    host.logs()
        .into_iter()
        .filter(|(level, _)| *level == ffi::LOG_INFO)
        .map(|(_, line)| line)
        .collect()
}

#[test]
fn the_run_description_and_the_loaded_set_reach_the_plugin() {
    let host = RecordingHost::new().with_run(server_run());
    // SAFETY: the table of this binary's plugin; the host outlives the instance.
    let instance = unsafe { RawInstance::create(table(), &host, "") }.unwrap();
    instance
        .load(&[sample(0, 3, b"abc"), sample(0, 5, b"de")])
        .unwrap();
    instance
        .unload(&[sample(0, 3, b"abc"), sample(0, 5, b"de")])
        .unwrap();
    let error = instance.load(&[sample(0, 666, b"x")]).unwrap_err();
    assert!(
        error.message.contains("cannot stage index 666"),
        "{error:?}"
    );
    assert_eq!(
        info_lines(&host)[1..],
        [
            "run: Server Performance, 1 per query, 250 qps, bound 15ms at 0.99, 1024 of 50000 loaded",
            "loaded [3, 5] (5 bytes)",
            "unloaded [3, 5]",
        ]
    );
}

#[test]
fn a_host_of_1_2_has_no_run_description_however_its_table_is_filled() {
    // The pointer lies past the 1.2 table's struct_size: the plugin must not read it.
    let host = RecordingHost::of_minor(2).with_run(server_run());
    // SAFETY: as above.
    let _instance = unsafe { RawInstance::create(table(), &host, "") }.unwrap();
    assert_eq!(info_lines(&host)[1], "run: none");

    // A description of a scenario this SDK does not know is none either.
    let mut unknown = server_run();
    unknown.scenario = 9;
    let host = RecordingHost::new().with_run(unknown);
    // SAFETY: as above.
    let _instance = unsafe { RawInstance::create(table(), &host, "") }.unwrap();
    assert_eq!(info_lines(&host)[1], "run: none");
}

/// A listed device: ordinal, kind, name, id, memory.
type Listed = (u32, u32, String, Option<String>, u64);

/// The SDK's `devices` through the table, as the host lists them.
fn listed(config: &str) -> Result<Vec<Listed>, (i32, String)> {
    let list = table().devices.expect("the SDK fills devices");
    let host = RecordingHost::new();
    let mut devices: *const ffi::mlperf_device = std::ptr::null();
    let mut count = 0usize;
    // SAFETY: per the ABI; the config lives across the call.
    let error = unsafe {
        list(
            host.api(),
            config.as_ptr().cast(),
            config.len(),
            &mut devices,
            &mut count,
        )
    };
    if let Some(error) = std::ptr::NonNull::new(error) {
        // SAFETY: the plugin's error object, released once here.
        let read = unsafe {
            let e = error.as_ptr();
            let read = (
                (*e).code,
                CStr::from_ptr((*e).message).to_string_lossy().into_owned(),
            );
            ((*e).release.unwrap())(e);
            read
        };
        return Err(read);
    }
    let text = |p: *const std::ffi::c_char| {
        // SAFETY: NUL-terminated strings of the list.
        (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    };
    Ok((0..count)
        .map(|k| {
            // SAFETY: `count` devices, each struct_size apart.
            let d = unsafe { &*devices.byte_add(k * (*devices).struct_size) };
            (
                d.ordinal,
                d.kind,
                text(d.name).unwrap(),
                text(d.id),
                d.memory_bytes,
            )
        })
        .collect())
}

#[test]
fn devices_are_listed_through_the_table_and_an_instance_reads_its_own() {
    assert_eq!(listed(""), Ok(vec![]));
    assert_eq!(
        listed("two devices"),
        Ok(vec![
            (
                10,
                ffi::DEVICE_NPU,
                "npu0".into(),
                Some("pci-0000:17:00.0".into()),
                16 << 30
            ),
            (11, ffi::DEVICE_NPU, "npu1".into(), None, 16 << 30),
        ])
    );
    assert_eq!(
        listed("fail"),
        Err((ffi::ERROR_INVALID_CONFIG, "devices was told to fail".into()))
    );

    let name = c"npu1";
    let device = ffi::mlperf_device {
        struct_size: size_of::<ffi::mlperf_device>(),
        next: std::ptr::null(),
        ordinal: 11,
        kind: ffi::DEVICE_NPU,
        name: name.as_ptr(),
        id: std::ptr::null(),
        memory_bytes: 16 << 30,
    };
    let run = ffi::mlperf_run_description {
        device: &device,
        instance_index: 1,
        instance_count: 2,
        ..server_run()
    };
    let host = RecordingHost::new().with_run(run);
    // SAFETY: as above; the device outlives the instance.
    let instance = unsafe { RawInstance::create(table(), &host, "") }.unwrap();
    drop(instance);
    assert_eq!(
        debug_lines(&host),
        ["device: 11 npu1 Npu None, instance 1 of 2"]
    );

    // A 1.3 host's description ends before the device: what lies past it is not read.
    let run = ffi::mlperf_run_description {
        struct_size: ffi::RUN_SIZE_1_3,
        device: std::ptr::dangling(),
        instance_index: 7,
        instance_count: 9,
        ..server_run()
    };
    let host = RecordingHost::new().with_run(run);
    // SAFETY: as above; the dangling device must not be followed.
    let _instance = unsafe { RawInstance::create(table(), &host, "") }.unwrap();
    assert_eq!(debug_lines(&host), ["device: none, instance 0 of 1"]);
}
