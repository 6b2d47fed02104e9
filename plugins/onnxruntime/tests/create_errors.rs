//! create() refusing what it cannot use, each with a message naming the key, value or file.
//! No test here loads ONNX Runtime successfully (the library is loaded once per process, and
//! these must see a process without it); tests/inference.rs has the ones that need it.

mod common;

use std::path::PathBuf;

use ::mlperf_plugin_api::ffi;
use common::{assert_mentions, create_error, model, plugin_path, table, toml_path};

/// A file in a directory of this process's own, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str, bytes: &[u8]) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("ort-plugin-tests-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        Scratch(path)
    }
}

impl std::ops::Deref for Scratch {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(self.0.parent().unwrap());
    }
}

#[test]
fn the_table_declares_the_capabilities() {
    let api = table();
    // SAFETY: static NUL-terminated strings.
    let name = unsafe { std::ffi::CStr::from_ptr(api.name) };
    assert_eq!(name.to_str().unwrap(), "onnxruntime");
    let wanted = ffi::CAP_ASYNC_COMPLETION
        | ffi::CAP_CONCURRENT_ISSUE
        | ffi::CAP_NATIVE_BATCHING
        | ffi::CAP_NEEDS_SAMPLE_DATA
        | ffi::CAP_SAMPLE_TIMING;
    assert_eq!(api.capabilities, wanted);
}

#[test]
fn bad_config_text_names_the_key() {
    let error = create_error("");
    assert_eq!(error.code, ffi::ERROR_INVALID_CONFIG);
    assert_mentions(&error, &["`model` is missing"]);
    let error = create_error("model = 'm.onnx'\nbatch = 4");
    assert_mentions(&error, &["batch", "line 2"]);
    let error = create_error("model = 'm.onnx'\nprovider = 'tpu'");
    assert_mentions(&error, &["tpu"]);
}

#[test]
fn a_missing_model_is_named() {
    let error =
        create_error("model = '/nowhere/model.onnx'\nlibrary = '/nowhere/libonnxruntime.so'");
    assert_eq!(error.code, ffi::ERROR_INVALID_CONFIG);
    assert_mentions(&error, &["model = \"/nowhere/model.onnx\"", "No such file"]);
}

#[test]
fn a_garbage_model_is_named() {
    let garbage = Scratch::new(
        "garbage.onnx",
        b"this is not a protobuf, let alone a model\n",
    );
    let error = create_error(&format!("model = {}", toml_path(&garbage)));
    assert_eq!(error.code, ffi::ERROR_INVALID_CONFIG);
    assert_mentions(
        &error,
        &[&garbage.display().to_string(), "is not an ONNX model"],
    );
    let empty = Scratch::new("empty.onnx", b"");
    let error = create_error(&format!("model = {}", toml_path(&empty)));
    assert_mentions(&error, &["empty.onnx", "no graph"]);
}

#[test]
fn a_missing_library_is_named() {
    let error = create_error(&format!(
        "model = {}\nlibrary = '/nowhere/libonnxruntime.so.1.31.1'",
        toml_path(&model("f32"))
    ));
    assert_eq!(error.code, ffi::ERROR_INVALID_CONFIG);
    assert_mentions(
        &error,
        &[
            "library = \"/nowhere/libonnxruntime.so.1.31.1\"",
            "No such file",
        ],
    );
    let error = create_error(&format!(
        "model = {}\nlibrary = {}",
        toml_path(&model("f32")),
        toml_path(&std::env::temp_dir())
    ));
    assert_mentions(&error, &["is not a file"]);
}

#[test]
fn a_file_that_is_not_a_library_is_named() {
    let not_a_library = Scratch::new("libonnxruntime.so.1.31.1", b"hello");
    let error = create_error(&format!(
        "model = {}\nlibrary = {}",
        toml_path(&model("f32")),
        toml_path(&not_a_library)
    ));
    assert_eq!(error.code, ffi::ERROR_INVALID_CONFIG);
    assert_mentions(
        &error,
        &[
            &not_a_library.display().to_string(),
            "cannot use library",
            "as ONNX Runtime",
        ],
    );
}

#[test]
fn a_shared_library_that_is_not_onnx_runtime_is_named() {
    // The plugin itself: a real shared library, without OrtGetApiBase.
    let error = create_error(&format!(
        "model = {}\nlibrary = {}",
        toml_path(&model("f32")),
        toml_path(&plugin_path())
    ));
    assert_eq!(error.code, ffi::ERROR_INVALID_CONFIG);
    assert_mentions(&error, &["OrtGetApiBase", "libmlperf_plugin_onnxruntime"]);
}

#[test]
fn no_library_at_all_says_how_to_name_one() {
    if std::env::var_os("ORT_DYLIB_PATH").is_some_and(|v| !v.is_empty()) {
        eprintln!("SKIPPED no_library_at_all_says_how_to_name_one: ORT_DYLIB_PATH is set");
        return;
    }
    let error = create_error(&format!("model = {}", toml_path(&model("f32"))));
    assert_eq!(error.code, ffi::ERROR_INVALID_CONFIG);
    assert_mentions(&error, &["`library`", "ORT_DYLIB_PATH"]);
}

#[test]
fn a_library_older_than_ort_needs_is_refused_with_both_versions() {
    // Opt in with an older libonnxruntime (e.g. 1.20's): none ships with the tests.
    let Some(old) = std::env::var_os("ORT_TEST_OLD_LIBRARY") else {
        eprintln!(
            "SKIPPED a_library_older_than_ort_needs_is_refused_with_both_versions: set \
             ORT_TEST_OLD_LIBRARY to an ONNX Runtime older than 1.31 to run it"
        );
        return;
    };
    let old = PathBuf::from(old);
    let error = create_error(&format!(
        "model = {}\nlibrary = {}",
        toml_path(&model("f32")),
        toml_path(&old)
    ));
    assert_eq!(error.code, ffi::ERROR_INVALID_CONFIG);
    assert_mentions(
        &error,
        &[&old.display().to_string(), "expected version >= '1.31.x'"],
    );
}

#[test]
fn the_inference_tests_find_onnx_runtime_in_a_venv() {
    let venv = std::env::temp_dir().join(format!("ort-plugin-tests-{}-venv", std::process::id()));
    let capi = venv.join("lib/python3.11/site-packages/onnxruntime/capi");
    std::fs::create_dir_all(&capi).unwrap();
    assert_eq!(common::venv_library(&venv), None);
    std::fs::write(capi.join("libonnxruntime.so.1.31.1"), b"").unwrap();
    std::fs::write(capi.join("libonnxruntime_providers_shared.so"), b"").unwrap();
    assert_eq!(
        common::venv_library(&venv),
        Some(capi.join("libonnxruntime.so.1.31.1"))
    );
    std::fs::remove_dir_all(&venv).unwrap();
}
