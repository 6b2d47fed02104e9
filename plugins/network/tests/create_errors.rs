//! The built plugin, loaded as the host loads it and driven through the raw ABI: its table, and
//! create() refusing what it cannot use before anything runs, each refusal naming the key or
//! the endpoint. (Runs against real servers are in host/tests/all/network_runs.rs.)

use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use ::mlperf_plugin_api::ffi::{self, mlperf_plugin_api, mlperf_plugin_entry_fn};
use ::mlperf_plugin_api::sdk::PluginError;
use ::mlperf_plugin_api::testing::{RawInstance, RecordingHost};
use libloading::Library;

/// The cdylib cargo built for this test, beside the test binary in target/<profile>/deps.
fn plugin_path() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let name = format!(
        "{}mlperf_plugin_network{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    let path = exe.parent().expect("target/<profile>/deps").join(name);
    assert!(path.is_file(), "{} was not built", path.display());
    path
}

fn table() -> &'static mlperf_plugin_api {
    static LIBRARY: OnceLock<Library> = OnceLock::new();
    let library = LIBRARY.get_or_init(|| {
        // SAFETY: our own plugin; loading it runs no initialisers beyond Rust's std.
        unsafe { Library::new(plugin_path()) }.expect("load the plugin")
    });
    // SAFETY: the entry symbol has the header's signature and returns NULL or a static table.
    unsafe {
        let entry = library
            .get::<mlperf_plugin_entry_fn>(ffi::ENTRY_SYMBOL)
            .expect("entry symbol");
        entry(ffi::ABI_MAJOR, ffi::ABI_MINOR).as_ref()
    }
    .expect("a table for our major")
}

fn create_error(config: &str) -> PluginError {
    let host = RecordingHost::new();
    // SAFETY: the table of a loaded plugin; `host` outlives the instance.
    let outcome = unsafe { RawInstance::create(table(), &host, config) }.map(|_| ());
    match outcome {
        Ok(()) => panic!("create succeeded with {config:?}"),
        Err(error) => error,
    }
}

fn assert_mentions(error: &PluginError, words: &[&str]) {
    for word in words {
        assert!(
            error.message.contains(word),
            "{word:?} is not in: {}",
            error.message
        );
    }
}

/// A port nothing listens on (bound and released).
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[test]
fn the_table_names_a_network_sut_and_its_capabilities() {
    let api = table();
    // SAFETY: static NUL-terminated strings.
    let name = unsafe { std::ffi::CStr::from_ptr(api.name) };
    assert!(name.to_str().unwrap().contains("Network SUT"));
    // Tokens: with protocol = "openai" it reports first tokens and token counts.
    let wanted = ffi::CAP_ASYNC_COMPLETION
        | ffi::CAP_CONCURRENT_ISSUE
        | ffi::CAP_NEEDS_SAMPLE_DATA
        | ffi::CAP_TOKENS;
    assert_eq!(api.capabilities, wanted);
}

#[test]
fn bad_settings_name_their_key() {
    let error = create_error("");
    assert_eq!(error.code, ffi::ERROR_INVALID_CONFIG);
    assert_mentions(&error, &["`endpoints` is missing"]);
    let error = create_error("endpoints = ['127.0.0.1:1']\nmodel = 'm'\nbalance = 'random'");
    assert_eq!(error.code, ffi::ERROR_INVALID_CONFIG);
    assert_mentions(&error, &["line 3", "random"]);
    let error = create_error("endpoints = ['https://127.0.0.1:1']\nmodel = 'm'");
    assert_eq!(error.code, ffi::ERROR_INVALID_CONFIG);
    assert_mentions(&error, &["endpoints", "no TLS"]);
    // The tokenizer is read before any endpoint is asked.
    let error = create_error(&format!(
        "endpoints = ['127.0.0.1:{}']\nmodel = 'm'\nprotocol = 'openai'\n\
         tokenizer = '/nonexistent/tokenizer.json'",
        closed_port()
    ));
    assert_eq!(error.code, ffi::ERROR_INVALID_CONFIG);
    assert_mentions(
        &error,
        &["tokenizer", "/nonexistent/tokenizer.json", "cannot read"],
    );
}

#[test]
fn an_endpoint_nobody_listens_on_is_refused_naming_it() {
    for protocol in ["http", "grpc"] {
        let port = closed_port();
        let error = create_error(&format!(
            "endpoints = ['127.0.0.1:{port}']\nmodel = 'm'\nprotocol = '{protocol}'"
        ));
        assert_eq!(error.code, ffi::ERROR_DEVICE, "{protocol}");
        assert_mentions(
            &error,
            &[&format!("endpoint 127.0.0.1:{port}"), "is the server live"],
        );
        assert!(
            error.message.to_lowercase().contains("connection refused")
                || error.message.contains("Unavailable"),
            "{protocol}: {}",
            error.message
        );
    }
}

#[test]
fn an_endpoint_that_never_answers_times_out_at_create() {
    // A real socket that accepts connections and never answers them.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let held = std::thread::spawn(move || {
        let mut open = Vec::new();
        for stream in listener.incoming().take(1) {
            open.push(stream);
            std::thread::sleep(Duration::from_secs(3));
        }
    });
    let started = Instant::now();
    let error = create_error(&format!(
        "endpoints = ['127.0.0.1:{port}']\nmodel = 'm'\ntimeout_ms = 300"
    ));
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_mentions(
        &error,
        &[
            &format!("endpoint 127.0.0.1:{port}"),
            "no answer within 300 ms",
        ],
    );
    held.join().unwrap();
}

#[test]
fn an_answer_larger_than_max_response_bytes_is_refused_not_read() {
    // A server answering every request with a body of 1 MiB.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        use std::io::{Read, Write};
        for stream in listener.incoming().take(1) {
            let mut stream = stream.unwrap();
            let mut request = [0u8; 4096];
            let _ = stream.read(&mut request);
            let body = vec![b' '; 1 << 20];
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
        }
    });
    let error = create_error(&format!(
        "endpoints = ['127.0.0.1:{port}']\nmodel = 'm'\nmax_response_bytes = 4096"
    ));
    assert_mentions(
        &error,
        &[
            &format!("endpoint 127.0.0.1:{port}"),
            "larger than max_response_bytes = 4096",
        ],
    );
    server.join().unwrap();
    let error = create_error("endpoints = ['127.0.0.1:1']\nmodel = 'm'\nmax_response_bytes = 10");
    assert_eq!(error.code, ffi::ERROR_INVALID_CONFIG);
    assert_mentions(&error, &["max_response_bytes = 10", "out of range"]);
}
