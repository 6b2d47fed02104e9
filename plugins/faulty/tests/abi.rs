//! Loads `libmlperf_faulty.so` through the raw ABI: its config is checked at create (a bad value
//! names its key and line), and the faults that leave the process alive strike at the sample
//! counted across calls. The others (crashes, exits, hangs) are the host's tests'.

use libloading::Library;
use mlperf_plugin_api::ffi::{self, mlperf_plugin_entry_fn};
use mlperf_plugin_api::testing::{sample, RawInstance, RecordingHost};
use mlperf_plugin_faulty::PLUGIN_PATH;

fn load() -> Library {
    // SAFETY: our own plugin; its library has no initialisers.
    unsafe { Library::new(PLUGIN_PATH) }.expect("load the faulty plugin")
}

fn api(library: &Library) -> &ffi::mlperf_plugin_api {
    // SAFETY: the entry has the ABI's type and returns NULL or a static table, alive while
    // `library` is loaded.
    unsafe {
        let entry = library
            .get::<mlperf_plugin_entry_fn>(ffi::ENTRY_SYMBOL)
            .expect("entry symbol");
        entry(ffi::ABI_MAJOR, ffi::ABI_MINOR)
            .as_ref()
            .expect("a table for ABI 1.5")
    }
}

#[test]
fn create_refuses_a_bad_value_naming_its_key_and_takes_a_good_config() {
    let library = load();
    let api = api(&library);
    let host = RecordingHost::new();
    for (config, named) in [
        ("fault = nonsense", "`fault` (line 1)"),
        ("fault = \"nonsense\"", "`fault` (line 1)"),
        ("# faults\n\nat_sample = x", "`at_sample` (line 3)"),
        ("at_sample = \"x\"", "`at_sample` (line 1)"),
        ("at_sample = 0", "`at_sample`"),
        ("exit_status = 256", "`exit_status`"),
        ("echo = yes", "`echo`"),
        ("leak_bytes = 0", "`leak_bytes`"),
        ("hang_ms = 86400001", "`hang_ms`"),
        ("fault", "line 1"),
    ] {
        // SAFETY: the plugin's table; `host` outlives the instance.
        let error = match unsafe { RawInstance::create(api, &host, config) } {
            Ok(_) => panic!("{config:?} was accepted"),
            Err(error) => error,
        };
        assert_eq!(error.code, ffi::ERROR_INVALID_CONFIG, "{config:?}");
        assert!(
            error.message.starts_with("faulty: ") && error.message.contains(named),
            "{config:?}: {}",
            error.message
        );
    }
    for config in [
        "",
        // As the host writes `--plugin-set fault=segfault --plugin-set at_sample=50`.
        "at_sample = 50\nfault = \"segfault\"\n",
        "fault = hold # bare\necho = true\nexit_status = 3\nresponse_length = 18446744073709551615",
        "model = \"x\"\n[other]\nfault = nonsense\n",
    ] {
        // SAFETY: as above.
        let created = unsafe { RawInstance::create(api, &host, config) };
        assert!(created.is_ok(), "{config:?}: {:?}", created.err());
    }
}

#[test]
fn the_faults_that_return_strike_at_the_nth_sample_across_calls() {
    let library = load();
    let api = api(&library);
    let data = [7u8, 8, 9];
    let samples: Vec<_> = (1..=4).map(|id| sample(id, id - 1, &data)).collect();
    let ids = |host: &RecordingHost| host.completed().iter().map(|a| a.id).collect::<Vec<_>>();

    let run = |config: &str, check: &dyn Fn(&RawInstance, &RecordingHost)| {
        let host = RecordingHost::new();
        // SAFETY: the plugin's table; `host` outlives the instance.
        let instance = unsafe { RawInstance::create(api, &host, config) }.unwrap();
        check(&instance, &host);
    };
    run("echo = true", &|instance, host| {
        instance.issue(&samples).unwrap();
        assert_eq!(ids(host), [1, 2, 3, 4]);
        assert!(host.completed().iter().all(|a| a.data == data));
    });
    run("", &|instance, host| {
        instance.issue(&samples).unwrap();
        assert!(host.completed().iter().all(|a| a.data == [1]));
    });
    run("fault = hold\nat_sample = 3", &|instance, host| {
        instance.issue(&samples[..2]).unwrap();
        instance.issue(&samples[2..]).unwrap();
        assert_eq!(ids(host), [1, 2]);
    });
    run("fault = fail_issue\nat_sample = 4", &|instance, host| {
        instance.issue(&samples[..2]).unwrap();
        let error = instance.issue(&samples[2..]).unwrap_err();
        assert_eq!(error.code, ffi::ERROR_DEVICE);
        assert!(error.message.contains("fail_issue"), "{}", error.message);
        assert_eq!(ids(host), [1, 2], "none of the failed call's samples");
    });
    run(
        "fault = garbage_response\nat_sample = 2",
        &|instance, host| {
            instance.issue(&samples).unwrap();
            assert_eq!(ids(host), [1, 2, 2, 0, 3, 4]);
        },
    );
    run("fault = leak\nleak_bytes = 65536", &|instance, host| {
        instance.issue(&samples).unwrap();
        assert_eq!(ids(host), [1, 2, 3, 4]);
    });
    run(
        "fault = hang_issue\nat_sample = 2\nhang_ms = 200",
        &|instance, host| {
            let started = std::time::Instant::now();
            instance.issue(&samples).unwrap();
            // The hang ends, and the call then goes on as if nothing happened.
            assert!(started.elapsed() >= std::time::Duration::from_millis(200));
            assert_eq!(ids(host), [1, 2, 3, 4]);
        },
    );
}
